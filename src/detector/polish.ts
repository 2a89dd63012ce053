/**
 * The polished-vs-generated head (issue 31, `polished_probability`): which AI-touched texts are a
 * person's own text polished or rewritten by an AI, and which an AI wrote.
 *
 * Besides the document model's dense and hashed features, the head reads a few signals of its own
 * (`POLISH_EXTRA_NAMES`): a polished text keeps its author's structure and content and takes the
 * AI's word choice, so its evidence is uneven from sentence to sentence and its overall AI score
 * lower than a generated text's. They are computed from the same LMs as the document model's
 * features, so they cost one more pass over the text's tokens, not another model.
 */
import type { ArtifactArrays, ArtifactHeader } from './artifact.ts';
import {
  DENSE_DIM,
  HASH_DIM,
  isWordToken,
  tokenIds,
  tokenize,
  type FeatureVector,
  type LMContext,
  type TokenEvidence,
} from './features.ts';
import { forestMargin, type Forest } from './gbdt.ts';
import { UNK, bigramPair } from './lm.ts';

/**
 * The head's own signals, in this order:
 * - `raw`: the document model's raw score (how AI-like the whole text reads);
 * - `s_diff_*`: the word-LM evidence (mean log p_AI − log p_human of a sentence's tokens) of each
 *   sentence: spread, lowest, highest, and the share of sentences on the AI side;
 * - `oov`: the share of word tokens outside the vocabulary (a person's misspellings and rare names
 *   that a light polish keeps and a generator does not write).
 * The same per sentence from the document model's hashed weights (its lexical evidence) did no better
 * in cross-validation and took most of the time these take (docs/detector.md), so it is not here.
 */
export const POLISH_EXTRA_NAMES = ['raw', 's_diff_std', 's_diff_min', 's_diff_max', 's_diff_ai_share', 'oov'] as const;
export type PolishExtraName = (typeof POLISH_EXTRA_NAMES)[number];

/** A sentence needs this many word tokens to count in the per-sentence statistics. */
const MIN_SENTENCE_WORDS = 4;

/**
 * The head's own signals of a lower-cased normalised text (as `extractFeatures` reads it) under the
 * LMs `lm`, with the document's raw score `raw`. Sentences end at `.`, `!` and `?` tokens, as the
 * stylometry features count them. `evidence`, when the features of the same text carry it
 * (`FeatureVector.tokens`), spares tokenising and scoring the text again: the same numbers.
 */
export function polishExtras(lower: string, lm: LMContext, raw: number, evidence?: TokenEvidence): Float64Array {
  const out = new Float64Array(POLISH_EXTRA_NAMES.length);
  out[0] = raw;
  const tokens = evidence?.tokens ?? tokenize(lower);
  const ids = evidence?.ids ?? tokenIds(tokens, lm.vocab);
  const diff = evidence?.diff;
  const pair = bigramPair(lm.human, lm.ai);
  let n = 0;
  let sum = 0;
  let tokensIn = 0;
  let sentences = 0;
  let aiSide = 0;
  let sumSq = 0;
  let total = 0;
  let min = Infinity;
  let max = -Infinity;
  let words = 0;
  let unknown = 0;
  const close = (): void => {
    if (n >= MIN_SENTENCE_WORDS) {
      const m = sum / tokensIn;
      sentences++;
      total += m;
      sumSq += m * m;
      if (m > 0) aiSide++;
      if (m < min) min = m;
      if (m > max) max = m;
    }
    n = 0;
    sum = 0;
    tokensIn = 0;
  };
  for (let t = 1; t < ids.length; t++) {
    if (diff) sum += diff[t - 1]!;
    else {
      pair.logProbs(ids[t - 1]!, ids[t]!);
      sum += pair.a - pair.h;
    }
    tokensIn++;
    const tok = tokens[t - 1]!;
    if (isWordToken(tok)) {
      n++;
      words++;
      if (ids[t] === UNK) unknown++;
    } else if (tok === '.' || tok === '!' || tok === '?') close();
  }
  close();
  if (sentences > 0) {
    const mean = total / sentences;
    out[1] = Math.sqrt(Math.max(0, sumSq / sentences - mean * mean));
    out[2] = min;
    out[3] = max;
    out[4] = aiSide / sentences;
  }
  out[5] = words > 0 ? unknown / words : 0;
  return out;
}

/** The head as stored in an artifact (`header.polish` and the `polish.*` arrays). */
export interface PolishHead {
  bias: number;
  /** Platt scaling of the logit, shifted so that 0.5 is the training's operating point. */
  a: number;
  b: number;
  /** Weights of the standardised dense features (the detector's mean / std). */
  dense: Float32Array;
  /** Weights of the hashed sparse features (length HASH_DIM). */
  sparse: Float32Array;
  mean: Float64Array;
  std: Float64Array;
  /** The head's own signals it reads (indices into POLISH_EXTRA_NAMES), their standardisation and weights. */
  extra?: { index: number[]; mean: number[]; std: number[]; weights: number[] };
  /** Trees over [dense features, the extras read], their margin blended with the linear logit. */
  forest?: Forest & { linearWeight: number };
}

/** Whether the head reads the signals that `polishExtras` computes. */
export function needsExtras(h: PolishHead): boolean {
  return (h.extra?.index.length ?? 0) > 0 || h.forest !== undefined;
}

/**
 * The linear logit of the head. `base`: its bias, dense and hashed terms already summed in that
 * order (`linearScorePair` with the document model's weights), so only its own signals are added.
 */
export function polishLinear(h: PolishHead, f: FeatureVector, extras: Float64Array | undefined, base?: number): number {
  let s: number;
  if (base !== undefined) s = base;
  else {
    s = h.bias;
    for (let i = 0; i < DENSE_DIM; i++) s += h.dense[i]! * ((f.dense[i]! - h.mean[i]!) / h.std[i]!);
    for (let i = 0; i < f.idx.length; i++) s += h.sparse[f.idx[i]!]! * f.val[i]!;
  }
  const e = h.extra;
  if (e && extras) for (let j = 0; j < e.index.length; j++) s += e.weights[j]! * ((extras[e.index[j]!]! - e.mean[j]!) / e.std[j]!);
  return s;
}

/**
 * The trees' input: dense features, then the extras the head reads. Not the linear logit: the trees
 * and the linear part are fitted side by side on the same texts, and a logit fitted on a tree's own
 * training texts would be trusted more than it deserves on new ones.
 */
export function polishTreeInput(h: Pick<PolishHead, 'extra'>, f: FeatureVector, extras: Float64Array | undefined): Float64Array {
  const index = h.extra?.index ?? [];
  const x = new Float64Array(DENSE_DIM + index.length);
  x.set(f.dense);
  for (let j = 0; j < index.length; j++) x[DENSE_DIM + j] = extras?.[index[j]!] ?? 0;
  return x;
}

/** The head's uncalibrated score: the linear logit, or the trees' margin blended with it. */
export function polishRaw(h: PolishHead, f: FeatureVector, extras: Float64Array | undefined, base?: number): number {
  const lin = polishLinear(h, f, extras, base);
  if (!h.forest) return lin;
  const margin = forestMargin(h.forest, polishTreeInput(h, f, extras));
  return (1 - h.forest.linearWeight) * margin + h.forest.linearWeight * lin;
}

/** The head of an artifact, or undefined for one trained before the head existed. */
export function polishHeadFrom(header: ArtifactHeader, arrays: ArtifactArrays): PolishHead | undefined {
  const p = header.polish;
  if (!p) return undefined;
  const dense = arrays['polish.dense'] as Float32Array | undefined;
  const sparse = arrays['polish.sparse'] as Float32Array | undefined;
  if (!dense || !sparse || dense.length !== DENSE_DIM || sparse.length !== HASH_DIM)
    throw new Error('Model artifact lacks the weights of its polish head.');
  let extra: PolishHead['extra'];
  if (p.extra) {
    const index = p.extra.names.map((n) => {
      const k = POLISH_EXTRA_NAMES.indexOf(n as PolishExtraName);
      if (k < 0) throw new Error(`Model artifact ${header.version}: its polish head reads an unknown signal ${n}; update the code.`);
      return k;
    });
    extra = { index, mean: p.extra.mean, std: p.extra.std, weights: p.extra.weights };
  }
  let forest: PolishHead['forest'];
  if (p.forest) {
    const feat = arrays['polish.gb.feature'];
    const thr = arrays['polish.gb.threshold'] as Float32Array | undefined;
    const leaf = arrays['polish.gb.leaf'] as Float32Array | undefined;
    if (!feat || !thr || !leaf) throw new Error('Model artifact lacks the trees of its polish head.');
    forest = { ...p.forest, feature: new Int32Array(feat.buffer, feat.byteOffset, feat.length), threshold: thr, leaf };
  }
  return {
    bias: p.bias,
    a: p.a,
    b: p.b,
    dense,
    sparse,
    mean: Float64Array.from(header.dense.mean),
    std: Float64Array.from(header.dense.std),
    ...(extra ? { extra } : {}),
    ...(forest ? { forest } : {}),
  };
}
