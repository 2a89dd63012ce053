/**
 * Part-of-speech view of a text: a most-frequent-tag lexicon tagger (built at training time from
 * the tagged Brown corpus, with a suffix rule for unknown words) and smoothed tag-trigram LMs of
 * human and AI text. Word identity is what a supervised n-gram detector over-learns from the
 * generators it saw; tag sequences describe syntax, which may transfer better to unseen ones.
 *
 * Run-time cost: one array read per token for the tag (the tag of every vocabulary word is
 * precomputed) and three array reads per token for the two LMs and their moments.
 */
import { UNK } from './lm.ts';

/** Tag id 0 is the sentence/text start; real tags are 1 … nTags − 1. */
export const POS_BOS = 0;

export interface PosLMArrays {
  /** log p(c | a, b) at index (a·T + b)·T + c. */
  logp: Float32Array;
  /** Per context (a·T + b): E log p and Var log p of the next tag (Fast-DetectGPT moments). */
  mu: Float32Array;
  sigma2: Float32Array;
}

export interface PosTagger {
  nTags: number;
  /** Tag id of every vocabulary id (the unknown-word id gets the default tag). */
  vocabTag: Uint32Array;
  /** Word ending (1–3 letters) → tag id, learnt from rare Brown words; longest match wins. */
  suffix: Map<string, number>;
  defaultTag: number;
}

export interface PosContext {
  tagger: PosTagger;
  human: PosLMArrays;
  ai: PosLMArrays;
}

/** Tag of an out-of-vocabulary token: the longest known ending, else the default (a noun). */
export function suffixTag(tok: string, tagger: PosTagger): number {
  for (let len = Math.min(3, tok.length - 1); len >= 1; len--) {
    const t = tagger.suffix.get(tok.slice(-len));
    if (t !== undefined) return t;
  }
  return tagger.defaultTag;
}

export function tagSequence(tokens: string[], ids: Uint16Array, tagger: PosTagger): Uint8Array {
  const out = new Uint8Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const id = ids[i + 1]!;
    out[i] = id === UNK ? suffixTag(tokens[i]!, tagger) : tagger.vocabTag[id]!;
  }
  return out;
}

/** Options of `buildPosLM`. */
export interface PosLMOptions {
  /** Interpolation strengths: the higher, the more the trigram leans on the bigram (and bigram on unigram). */
  k2: number;
  k1: number;
}

/**
 * Tag trigram LM, recursively interpolated (Witten–Bell-like with fixed strengths):
 *   p(c|a,b) = (n(a,b,c) + k2·p(c|b)) / (n(a,b) + k2),  p(c|b) = (n(b,c) + k1·p(c)) / (n(b) + k1),
 *   p(c) = (n(c) + 1) / (N + T − 1)  over the real tags (the start tag is never predicted).
 */
export function buildPosLM(seqs: Uint8Array[], nTags: number, o: PosLMOptions): PosLMArrays {
  const T = nTags;
  const c1 = new Float64Array(T);
  const c2 = new Float64Array(T * T);
  const c3 = new Float64Array(T * T * T);
  for (const s of seqs) {
    let a = POS_BOS,
      b = POS_BOS;
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      c1[c]! += 1;
      c2[b * T + c]! += 1;
      c3[(a * T + b) * T + c]! += 1;
      a = b;
      b = c;
    }
  }
  let N = 0;
  for (let c = 1; c < T; c++) N += c1[c]!;
  const p1 = new Float64Array(T);
  for (let c = 1; c < T; c++) p1[c] = (c1[c]! + 1) / (N + T - 1);
  const p2 = new Float64Array(T * T);
  for (let b = 0; b < T; b++) {
    let nb = 0;
    for (let c = 1; c < T; c++) nb += c2[b * T + c]!;
    for (let c = 1; c < T; c++) p2[b * T + c] = (c2[b * T + c]! + o.k1 * p1[c]!) / (nb + o.k1);
  }
  const logp = new Float32Array(T * T * T);
  const mu = new Float32Array(T * T);
  const sigma2 = new Float32Array(T * T);
  for (let a = 0; a < T; a++) {
    for (let b = 0; b < T; b++) {
      const ctx = a * T + b;
      let nab = 0;
      for (let c = 1; c < T; c++) nab += c3[ctx * T + c]!;
      let m = 0,
        m2 = 0;
      for (let c = 1; c < T; c++) {
        const p = (c3[ctx * T + c]! + o.k2 * p2[b * T + c]!) / (nab + o.k2);
        const lp = Math.log(p);
        logp[ctx * T + c] = lp;
        m += p * lp;
        m2 += p * lp * lp;
      }
      logp[ctx * T] = -30; // the start tag is never a next tag
      mu[ctx] = m;
      sigma2[ctx] = Math.max(1e-9, m2 - m * m);
    }
  }
  return { logp, mu, sigma2 };
}

export const POS_FEATURE_NAMES = ['posH_mean', 'posA_mean', 'posD_mean', 'posD_std', 'pos_fdg_H', 'pos_fdg_A'] as const;

/** Writes the POS features into `out` from index `k`; returns the next index. */
export function posFeatures(tokens: string[], ids: Uint16Array, pos: PosContext, out: Float64Array, k: number): number {
  const tags = tagSequence(tokens, ids, pos.tagger);
  const T = pos.tagger.nTags;
  const H = pos.human,
    A = pos.ai;
  const n = tags.length;
  let sH = 0,
    sA = 0,
    sD = 0,
    sD2 = 0,
    muH = 0,
    s2H = 0,
    muA = 0,
    s2A = 0;
  let a = POS_BOS,
    b = POS_BOS;
  for (let i = 0; i < n; i++) {
    const c = tags[i]!;
    const ctx = a * T + b;
    const h = H.logp[ctx * T + c]!;
    const x = A.logp[ctx * T + c]!;
    sH += h;
    sA += x;
    sD += x - h;
    sD2 += (x - h) * (x - h);
    muH += H.mu[ctx]!;
    s2H += H.sigma2[ctx]!;
    muA += A.mu[ctx]!;
    s2A += A.sigma2[ctx]!;
    a = b;
    b = c;
  }
  const nn = Math.max(1, n);
  const mD = sD / nn;
  out[k++] = sH / nn;
  out[k++] = sA / nn;
  out[k++] = mD;
  out[k++] = Math.sqrt(Math.max(0, sD2 / nn - mD * mD));
  out[k++] = n > 0 ? (sH - muH) / Math.sqrt(s2H) / Math.sqrt(nn) : 0;
  out[k++] = n > 0 ? (sA - muA) / Math.sqrt(s2A) / Math.sqrt(nn) : 0;
  return k;
}
