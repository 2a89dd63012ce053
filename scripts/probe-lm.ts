/**
 * `npx tsx scripts/probe-lm.ts [--sources a,b] [--char-order N] [--markdown]`: would a stronger
 * language model than the shipped word bigrams give the detector new evidence on sources it has
 * never seen?
 *
 * For every source of corpus-train + extra-train in turn, human-side LMs are built on Brown plus
 * the human texts of the *other* sources and AI-side LMs on the other sources' AI texts (as
 * `npm run train -- --loso` does), and the held-out source's texts are ranked by one number: the
 * mean AI−human log-probability ratio per token. Printed per source: the AUROC of that ratio under
 * the shipped word-bigram LM (`src/detector/lm.ts`), a word-trigram LM backing off to it, the
 * trigram's gain over the bigram as a feature on its own, and a character n-gram LM.
 *
 * The trigram and character models live here only: they are an experiment, not part of the engine
 * (CHANGELOG.md, `scripts/probe-lm.ts`). Runs ~12 min on 2 cores, most of it the character models.
 */
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenIds, tokenize } from '../src/detector/features.ts';
import { BigramLM, UNK, buildBigramLM } from '../src/detector/lm.ts';
import { auroc } from '../src/detector/metrics.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { buildVocab, loadBrown, readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const ONLY = arg('--sources')?.split(',');
const CHAR_ORDER = Number(arg('--char-order') ?? 5);
const MARKDOWN = process.argv.includes('--markdown');
/** The settings of the shipped LMs (scripts/train.ts), so the bigram column is the engine's own. */
const BIGRAM_OPTS = { discount: 0.75, minCount: 2, unigramK: 0.1 };
const DISCOUNT = 0.75;

/**
 * Word trigrams with interpolated absolute discounting over a bigram LM:
 * p(w | u v) = max(c(u v w) − D, 0) / c(u v) + γ(u v) · p_bigram(w | v), γ(u v) = D · N₁₊(u v ·) / c(u v).
 */
class TrigramLM {
  private readonly counts = new Map<number, number>();
  private readonly contexts = new Map<number, { total: number; types: number }>();

  constructor(
    sequences: Uint16Array[],
    private readonly bigram: BigramLM,
  ) {
    for (const seq of sequences) {
      for (let i = 2; i < seq.length; i++) {
        const ctx = seq[i - 2]! * 65536 + seq[i - 1]!;
        const key = ctx * 65536 + seq[i]!;
        const c = this.counts.get(key) ?? 0;
        this.counts.set(key, c + 1);
        const stats = this.contexts.get(ctx) ?? { total: 0, types: 0 };
        stats.total++;
        if (c === 0) stats.types++;
        this.contexts.set(ctx, stats);
      }
    }
  }

  logProb(u: number, v: number, w: number): number {
    const backOff = this.bigram.logProb(v, w);
    if (u === UNK || v === UNK) return backOff;
    const ctx = u * 65536 + v;
    const stats = this.contexts.get(ctx);
    if (!stats) return backOff;
    const c = this.counts.get(ctx * 65536 + w) ?? 0;
    return Math.log(Math.max(c - DISCOUNT, 0) / stats.total + ((DISCOUNT * stats.types) / stats.total) * Math.exp(backOff));
  }
}

/** Character n-grams (orders 1..N) with the same interpolated absolute discounting, down to a uniform distribution. */
class CharLM {
  private readonly counts: Array<Map<string, number>> = [];
  private readonly contexts: Array<Map<string, { total: number; types: number }>> = [];
  private readonly alphabet: number;

  constructor(
    texts: string[],
    private readonly order: number,
  ) {
    const chars = new Set<string>();
    for (let n = 0; n < order; n++) {
      this.counts.push(new Map());
      this.contexts.push(new Map());
    }
    for (const text of texts) {
      for (let i = 0; i < text.length; i++) {
        chars.add(text[i]!);
        for (let n = 0; n < order && n <= i; n++) {
          const gram = text.slice(i - n, i + 1);
          const c = this.counts[n]!.get(gram) ?? 0;
          this.counts[n]!.set(gram, c + 1);
          const ctx = gram.slice(0, n);
          const stats = this.contexts[n]!.get(ctx) ?? { total: 0, types: 0 };
          stats.total++;
          if (c === 0) stats.types++;
          this.contexts[n]!.set(ctx, stats);
        }
      }
    }
    // One more symbol for characters never seen in training.
    this.alphabet = chars.size + 1;
  }

  /** Mean log-probability per character. */
  meanLogProb(text: string): number {
    let sum = 0;
    for (let i = 0; i < text.length; i++) {
      let p = 1 / this.alphabet;
      for (let n = 0; n < this.order && n <= i; n++) {
        const ctx = text.slice(i - n, i);
        const stats = this.contexts[n]!.get(ctx);
        if (!stats) break;
        const c = this.counts[n]!.get(ctx + text[i]!) ?? 0;
        p = Math.max(c - DISCOUNT, 0) / stats.total + ((DISCOUNT * stats.types) / stats.total) * p;
      }
      sum += Math.log(p);
    }
    return sum / Math.max(1, text.length);
  }
}

const rows = ['corpus', 'extra'].flatMap((f) => readJsonl<CorpusRow>(join(DATA, `${f}-train.jsonl`)));
const lower = rows.map((r) => lowerForFeatures(normalize(r.text).text, r.language));
const tokens = lower.map(tokenize);
const brownLower = loadBrown().map((t) => lowerForFeatures(normalize(t).text, 'en'));
const brownTokens = brownLower.map(tokenize);
// One vocabulary for every fold, built as training builds it: it only maps words to ids.
const vocabList = buildVocab([...brownTokens, ...tokens], 65536, 2);
const vocab = new Map(vocabList.map((w, i) => [w, i] as [string, number]));
const ids = tokens.map((t) => tokenIds(t, vocab));
const brownIds = brownTokens.map((t) => tokenIds(t, vocab));
// Digits are content, not style (the hashed character features fold them too); whitespace runs count as one space.
const charText = (s: string): string => s.replace(/\s+/g, ' ').replace(/\p{N}/gu, '0');
const chars = lower.map(charText);
const brownChars = brownLower.map(charText);

interface ProbeRow {
  source: string;
  n: number;
  bigram: number;
  trigram: number;
  trigramGain: number;
  char: number;
}

const results: ProbeRow[] = [];
const sources = [...new Set(rows.map((r) => r.source))].sort();
for (const source of sources) {
  if (ONLY && !ONLY.includes(source)) continue;
  const started = Date.now();
  const rest = (label: 'human' | 'ai'): number[] => rows.flatMap((r, i) => (r.source !== source && r.label === label ? [i] : []));
  const humans = rest('human');
  const ais = rest('ai');
  const humanSeqs = [...brownIds, ...humans.map((i) => ids[i]!)];
  const aiSeqs = ais.map((i) => ids[i]!);
  const bigramH = new BigramLM(buildBigramLM(humanSeqs, vocab.size, BIGRAM_OPTS));
  const bigramA = new BigramLM(buildBigramLM(aiSeqs, vocab.size, BIGRAM_OPTS));
  const trigramH = new TrigramLM(humanSeqs, bigramH);
  const trigramA = new TrigramLM(aiSeqs, bigramA);
  const charH = new CharLM([...brownChars, ...humans.map((i) => chars[i]!)], CHAR_ORDER);
  const charA = new CharLM(
    ais.map((i) => chars[i]!),
    CHAR_ORDER,
  );
  const bi: number[] = [];
  const tri: number[] = [];
  const gain: number[] = [];
  const ch: number[] = [];
  const y: number[] = [];
  rows.forEach((r, i) => {
    if (r.source !== source) return;
    const seq = ids[i]!;
    let b = 0;
    let t = 0;
    for (let k = 1; k < seq.length; k++) {
      const u = k >= 2 ? seq[k - 2]! : UNK;
      b += bigramA.logProb(seq[k - 1]!, seq[k]!) - bigramH.logProb(seq[k - 1]!, seq[k]!);
      t += trigramA.logProb(u, seq[k - 1]!, seq[k]!) - trigramH.logProb(u, seq[k - 1]!, seq[k]!);
    }
    const n = Math.max(1, seq.length - 1);
    bi.push(b / n);
    tri.push(t / n);
    gain.push((t - b) / n);
    ch.push(charA.meanLogProb(chars[i]!) - charH.meanLogProb(chars[i]!));
    y.push(r.label === 'ai' ? 1 : 0);
  });
  const row = { source, n: y.length, bigram: auroc(bi, y), trigram: auroc(tri, y), trigramGain: auroc(gain, y), char: auroc(ch, y) };
  results.push(row);
  console.error(`[probe] ${source}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const header = ['held-out source', 'n', 'word bigram (shipped)', 'word trigram', 'trigram − bigram alone', `char ${CHAR_ORDER}-gram`];
const lines = results.map((r) => [
  r.source,
  String(r.n),
  r.bigram.toFixed(3),
  r.trigram.toFixed(3),
  r.trigramGain.toFixed(3),
  r.char.toFixed(3),
]);
if (MARKDOWN) {
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
} else {
  console.log(header.join('\t'));
  for (const l of lines) console.log(l.join('\t'));
}
const better = (pick: (r: ProbeRow) => number): string =>
  `${results.filter((r) => pick(r) >= r.bigram + 0.02).length} better by ≥ 0.02, ${results.filter((r) => pick(r) <= r.bigram - 0.02).length} worse by ≥ 0.02`;
console.log(`\nAUROC of the mean AI−human log-ratio on each held-out source, ${results.length} sources.`);
console.log(`word trigram vs bigram: ${better((r) => r.trigram)}; char ${CHAR_ORDER}-gram vs bigram: ${better((r) => r.char)}`);
console.log(
  `sources ≥ 0.85: bigram ${results.filter((r) => r.bigram >= 0.85).length}, trigram ${results.filter((r) => r.trigram >= 0.85).length}, char ${results.filter((r) => r.char >= 0.85).length}`,
);
