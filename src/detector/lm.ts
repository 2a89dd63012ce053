/**
 * Smoothed word-bigram language model: interpolated absolute discounting over a unigram model,
 * with rare bigrams pruned so the artifact stays small.
 *
 *   p(w | v) = max(c(v,w) − D, 0) / c(v) + γ(v) · p_uni(w)      (only kept bigrams have the first term)
 *
 * Because p is an explicit distribution over the vocabulary for every context word v, the
 * Fast-DetectGPT moments μ(v) = Σ_w p(w|v) log p(w|v) and σ²(v) = Σ_w p(w|v) log² p(w|v) − μ(v)²
 * are computed once at training time (see `buildBigramLM`), so the analytic criterion costs two
 * array reads per token at run time.
 */

/** Token ids 0 and 1 are reserved. */
export const UNK = 0;
export const BOS = 1;

export interface BigramArrays {
  /** Sorted keys `(v << 16) | w` of the kept bigrams (v ≥ 1, so no key is 0). */
  keys: Uint32Array;
  /** log p(w | v) of each kept bigram, already interpolated. */
  logp: Float32Array;
  /** Per context id: log γ(v), the weight left for the unigram back-off. */
  logGamma: Float32Array;
  /** Per id: log p_uni(w). */
  logUni: Float32Array;
  /** Per context id: μ(v), expected log-probability of the next token. */
  mu: Float32Array;
  /** Per context id: σ²(v), variance of the next token's log-probability. */
  sigma2: Float32Array;
}

export class BigramLM {
  readonly arrays: BigramArrays;
  // Built on first use: the detector reads both models through `BigramPair`, which has its own
  // table, so this one is only made where one model is read on its own (training).
  private table: { keys: Uint32Array; vals: Float32Array; mask: number } | undefined;

  constructor(arrays: BigramArrays) {
    this.arrays = arrays;
  }

  private build(): { keys: Uint32Array; vals: Float32Array; mask: number } {
    // Open addressing with linear probing: built in a few ms, faster than a Map per lookup.
    const { keys, logp } = this.arrays;
    let cap = 1;
    while (cap < keys.length * 2) cap <<= 1;
    const table = { keys: new Uint32Array(cap), vals: new Float32Array(cap), mask: cap - 1 };
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      let h = hashKey(k) & table.mask;
      while (table.keys[h] !== 0) h = (h + 1) & table.mask;
      table.keys[h] = k;
      table.vals[h] = logp[i]!;
    }
    this.table = table;
    return table;
  }

  logProb(prev: number, cur: number): number {
    if (prev !== UNK) {
      const table = this.table ?? this.build();
      const key = ((prev << 16) | cur) >>> 0;
      let h = hashKey(key) & table.mask;
      for (;;) {
        const k = table.keys[h]!;
        if (k === key) return table.vals[h]!;
        if (k === 0) break;
        h = (h + 1) & table.mask;
      }
    }
    return this.arrays.logGamma[prev]! + this.arrays.logUni[cur]!;
  }
}

function hashKey(k: number): number {
  return (Math.imul(k ^ (k >>> 15), 0x2c1b3c6d) >>> 12) ^ Math.imul(k, 0x297a2d39);
}

/** Options of `buildBigramLM`. */
export interface BuildOptions {
  /** Absolute discount D. */
  discount: number;
  /** Bigrams seen fewer times are pruned (their mass goes to the back-off). */
  minCount: number;
  /** Add-k smoothing of the unigram model. */
  unigramK: number;
}

/** Builds the model from token-id sequences (each starting with BOS). Training-time only. */
export function buildBigramLM(sequences: Iterable<Uint16Array>, vocabSize: number, opts: BuildOptions): BigramArrays {
  const uni = new Float64Array(vocabSize);
  const ctxTotal = new Float64Array(vocabSize);
  const pairs = new Map<number, number>();
  let total = 0;
  for (const seq of sequences) {
    for (let i = 1; i < seq.length; i++) {
      const v = seq[i - 1]!;
      const w = seq[i]!;
      uni[w]! += 1;
      total++;
      if (v === UNK) continue;
      ctxTotal[v]! += 1;
      const key = ((v << 16) | w) >>> 0;
      pairs.set(key, (pairs.get(key) ?? 0) + 1);
    }
  }
  const logUni = new Float32Array(vocabSize);
  const pUni = new Float64Array(vocabSize);
  const denom = total + opts.unigramK * vocabSize;
  let U = 0;
  let U2 = 0;
  for (let w = 0; w < vocabSize; w++) {
    const p = (uni[w]! + opts.unigramK) / denom;
    pUni[w] = p;
    const lp = Math.log(p);
    logUni[w] = lp;
    U += p * lp;
    U2 += p * lp * lp;
  }
  const kept: number[] = [];
  for (const [key, c] of pairs) if (c >= opts.minCount) kept.push(key);
  kept.sort((a, b) => a - b);
  const keys = Uint32Array.from(kept);
  const D = opts.discount;
  // γ(v) = 1 − Σ_kept (c − D) / c(v)
  const gamma = new Float64Array(vocabSize).fill(1);
  for (const key of keys) {
    const v = key >>> 16;
    const c = pairs.get(key)!;
    gamma[v]! -= (c - D) / ctxTotal[v]!;
  }
  const logp = new Float32Array(keys.length);
  const sumPlogP = new Float64Array(vocabSize);
  const sumPlog2P = new Float64Array(vocabSize);
  const PK = new Float64Array(vocabSize);
  const UK = new Float64Array(vocabSize);
  const U2K = new Float64Array(vocabSize);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = key >>> 16;
    const w = key & 0xffff;
    const c = pairs.get(key)!;
    const p = (c - D) / ctxTotal[v]! + gamma[v]! * pUni[w]!;
    const lp = Math.log(p);
    logp[i] = lp;
    sumPlogP[v]! += p * lp;
    sumPlog2P[v]! += p * lp * lp;
    const pu = pUni[w]!;
    const lu = Math.log(pu);
    PK[v]! += pu;
    UK[v]! += pu * lu;
    U2K[v]! += pu * lu * lu;
  }
  const logGamma = new Float32Array(vocabSize);
  const mu = new Float32Array(vocabSize);
  const sigma2 = new Float32Array(vocabSize);
  for (let v = 0; v < vocabSize; v++) {
    const g = Math.max(gamma[v]!, 1e-12);
    const lg = Math.log(g);
    logGamma[v] = lg;
    // Unseen successors w carry γ·p_uni(w): closed forms of their share of E[log p] and E[log² p].
    const rest = 1 - PK[v]!;
    const m = sumPlogP[v]! + g * (rest * lg + (U - UK[v]!));
    const e2 = sumPlog2P[v]! + g * (rest * lg * lg + 2 * lg * (U - UK[v]!) + (U2 - U2K[v]!));
    mu[v] = m;
    sigma2[v] = Math.max(e2 - m * m, 1e-6);
  }
  return { keys, logp, logGamma, logUni, mu, sigma2 };
}

/**
 * Cross moments for the Fast-DetectGPT criterion with the AI model as sampling model q and the
 * human model as scoring model p (and for a Binoculars-style ratio):
 *   μ×(v) = Σ_w q(w|v) log p(w|v),  σ²×(v) = Σ_w q(w|v) log² p(w|v) − μ×(v)².
 * Successors kept in either model are summed explicitly; all others have q = γ_q·q_uni and
 * p = γ_p·p_uni, whose share has a closed form from three global sums. Training-time only.
 */
export function buildCrossMoments(q: BigramArrays, p: BigramArrays): { mu: Float32Array; sigma2: Float32Array } {
  const V = q.logUni.length;
  const qLM = new BigramLM(q);
  const pLM = new BigramLM(p);
  let L1 = 0;
  let L2 = 0;
  for (let w = 0; w < V; w++) {
    const qu = Math.exp(q.logUni[w]!);
    const lp = p.logUni[w]!;
    L1 += qu * lp;
    L2 += qu * lp * lp;
  }
  // Successor sets per context, merged from both sorted key lists.
  const succ = new Map<number, number[]>();
  for (const keys of [q.keys, p.keys]) {
    for (let i = 0; i < keys.length; i++) {
      const v = keys[i]! >>> 16;
      const w = keys[i]! & 0xffff;
      const list = succ.get(v);
      if (list) list.push(w);
      else succ.set(v, [w]);
    }
  }
  const mu = new Float32Array(V);
  const sigma2 = new Float32Array(V);
  for (let v = 0; v < V; v++) {
    const lgq = q.logGamma[v]!;
    const lgp = p.logGamma[v]!;
    const gq = Math.exp(lgq);
    let sumE = 0,
      sumE2 = 0,
      PS = 0,
      L1S = 0,
      L2S = 0;
    const list = succ.get(v);
    if (list) {
      list.sort((a, b) => a - b);
      let prev = -1;
      for (const w of list) {
        if (w === prev) continue;
        prev = w;
        const qw = Math.exp(qLM.logProb(v, w));
        const lpw = pLM.logProb(v, w);
        sumE += qw * lpw;
        sumE2 += qw * lpw * lpw;
        const qu = Math.exp(q.logUni[w]!);
        const lu = p.logUni[w]!;
        PS += qu;
        L1S += qu * lu;
        L2S += qu * lu * lu;
      }
    }
    const rest = Math.max(0, 1 - PS);
    const m = sumE + gq * (rest * lgp + (L1 - L1S));
    const e2 = sumE2 + gq * (rest * lgp * lgp + 2 * lgp * (L1 - L1S) + (L2 - L2S));
    mu[v] = m;
    sigma2[v] = Math.max(e2 - m * m, 1e-6);
  }
  return { mu, sigma2 };
}

/**
 * The human and the AI bigram model in one table: the features read both models' log p of every
 * token, so one probe finds a bigram for both. Each value is the model's own (its stored float32,
 * or the same back-off sum), so `logProbs` gives exactly each model's `logProb`.
 */
export class BigramPair {
  readonly human: BigramLM;
  readonly ai: BigramLM;
  /** Per slot: key, human log p, AI log p, which models hold the bigram (bit 1 human, bit 2 AI). */
  private readonly keys: Uint32Array;
  private readonly vals: Float32Array;
  private readonly mask: number;
  /** The last `logProbs` call's answers. */
  h = 0;
  a = 0;

  constructor(human: BigramLM, ai: BigramLM) {
    this.human = human;
    this.ai = ai;
    // Both models' bigrams merged in key order (each model's keys are sorted), each put in once.
    const H = human.arrays.keys;
    const A = ai.arrays.keys;
    let union = 0;
    for (let i = 0, j = 0; i < H.length || j < A.length; union++) {
      const x = i < H.length ? H[i]! : 0xffffffff;
      const y = j < A.length ? A[j]! : 0xffffffff;
      if (x <= y) i++;
      if (y <= x) j++;
    }
    let cap = 1;
    while (cap * 0.7 < union) cap <<= 1;
    const buffer = new ArrayBuffer(cap * 16);
    const K = new Uint32Array(buffer);
    const V = new Float32Array(buffer);
    this.keys = K;
    this.vals = V;
    this.mask = cap - 1;
    for (let i = 0, j = 0; i < H.length || j < A.length; ) {
      const x = i < H.length ? H[i]! : 0xffffffff;
      const y = j < A.length ? A[j]! : 0xffffffff;
      const key = x <= y ? x : y;
      let h = hashKey(key) & this.mask;
      while (K[h * 4] !== 0) h = (h + 1) & this.mask;
      K[h * 4] = key;
      let bits = 0;
      if (x === key) {
        V[h * 4 + 1] = human.arrays.logp[i++]!;
        bits |= 1;
      }
      if (y === key) {
        V[h * 4 + 2] = ai.arrays.logp[j++]!;
        bits |= 2;
      }
      K[h * 4 + 3] = bits;
    }
  }

  /** Sets `h` and `a` to the human and the AI model's `logProb(prev, cur)`. */
  logProbs(prev: number, cur: number): void {
    let bits = 0;
    let at = 0;
    if (prev !== UNK) {
      const key = ((prev << 16) | cur) >>> 0;
      let h = hashKey(key) & this.mask;
      for (;;) {
        at = h * 4;
        const k = this.keys[at]!;
        if (k === key) {
          bits = this.keys[at + 3]!;
          break;
        }
        if (k === 0) break;
        h = (h + 1) & this.mask;
      }
    }
    const H = this.human.arrays;
    const A = this.ai.arrays;
    this.h = bits & 1 ? this.vals[at + 1]! : H.logGamma[prev]! + H.logUni[cur]!;
    this.a = bits & 2 ? this.vals[at + 2]! : A.logGamma[prev]! + A.logUni[cur]!;
  }
}

const bigramPairs = new WeakMap<BigramLM, { ai: BigramLM; pair: BigramPair }>();
/** The pair of two models, built once per model object. */
export function bigramPair(human: BigramLM, ai: BigramLM): BigramPair {
  const cached = bigramPairs.get(human);
  if (cached?.ai === ai) return cached.pair;
  const pair = new BigramPair(human, ai);
  bigramPairs.set(human, { ai, pair });
  return pair;
}
