/**
 * Sentence segments and generated spans.
 *
 * A text is cut into sentences (merged and capped so the answer stays bounded), each sentence is
 * scored on its own cheap evidence, and a two-state sequence model (human / generated, a hidden
 * Markov model whose switches are rare) turns those noisy per-sentence scores into a posterior per
 * sentence. A context model (gradient-boosted trees) then reads each sentence's ratio and posterior
 * next to its neighbours', the run it sits in and the document's spread of them, and gives the
 * sentence's probability; nothing in it uses the document's score. Runs of generated-looking
 * sentences become spans. The parameters come from `models/segments.json` (`npm run
 * train:segments`), fitted on mixed documents built from the training corpora.
 */
import { forestMargin, type Forest } from './gbdt.ts';
import {
  functionWordIds,
  hashedWeightSums,
  isFunctionWordAt,
  isWordToken,
  tokenIds,
  tokenize,
  type HashedColumn,
  type LMContext,
} from './features.ts';
import { UNK, bigramPair } from './lm.ts';
import { round4 } from './model.ts';
import { lowerForFeatures } from './normalize.ts';
import { POS_BOS, tagSequence } from './pos.ts';
import type { Composition, Confidence, GeneratedSpan, Language, SegmentScore } from './types.ts';

/** A sentence shorter than this many words joins a neighbour (a heading, "Thanks!", one letter per line). */
export const MIN_SEGMENT_WORDS = 3;
/**
 * Most segments one answer carries. Past it, neighbouring sentences are grouped (equal counts per
 * group), so a text of one character per line cannot produce tens of thousands of segments.
 */
export const MAX_SEGMENTS = 400;

/** Chunks handed to Intl.Segmenter: V8's sentence iteration gets very slow on long strings. */
const SEGMENT_CHUNK = 2000;

const segmenters = new Map<Language, Intl.Segmenter>();
function segmenterFor(language: Language): Intl.Segmenter {
  let s = segmenters.get(language);
  if (!s) {
    s = new Intl.Segmenter(language, { granularity: 'sentence' });
    segmenters.set(language, s);
  }
  return s;
}

/**
 * Sentence ranges of `text` (Intl.Segmenter). Long texts are cut into chunks at a line break or a
 * sentence end followed by a space (where a sentence boundary is nearly certain) and segmented
 * chunk by chunk.
 */
export function sentenceRanges(text: string, language: Language): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const segmenter = segmenterFor(language);
  let base = 0;
  while (base < text.length) {
    let end = text.length;
    if (end - base > SEGMENT_CHUNK * 1.5) {
      end = base + SEGMENT_CHUNK;
      let cut = -1;
      for (let k = end; k > base + SEGMENT_CHUNK / 2; k--) {
        const ch = text.charCodeAt(k);
        const prev = text.charCodeAt(k - 1);
        if (ch === 0x0a || (ch === 0x20 && (prev === 0x2e || prev === 0x21 || prev === 0x3f))) {
          cut = k + 1;
          break;
        }
      }
      // No sentence end nearby (one enormous sentence): cut at a space, or anywhere.
      if (cut < 0) {
        const sp = text.lastIndexOf(' ', end);
        cut = sp > base ? sp + 1 : end;
      }
      end = cut;
    }
    const chunk = text.slice(base, end);
    for (const seg of segmenter.segment(chunk)) out.push([base + seg.index, base + seg.index + seg.segment.length]);
    base = end;
  }
  return out;
}

/** A range [start, end) of the normalised text, trimmed, with its rough word count. */
export interface SegmentRange {
  start: number;
  end: number;
  words: number;
}

const RE_WORD = /[\p{L}\p{N}]+/gu;

function roughWords(text: string, start: number, end: number): number {
  RE_WORD.lastIndex = 0;
  const m = text.slice(start, end).match(RE_WORD);
  return m ? m.length : 0;
}

/**
 * The segments of a normalised text: its sentences, trimmed; a sentence of fewer than
 * MIN_SEGMENT_WORDS words joins the next one when a line break ends it (a heading, a list item, a
 * text broken after every word) and the previous one otherwise; and when more than MAX_SEGMENTS
 * remain, consecutive ones are grouped so that at most MAX_SEGMENTS are left.
 */
export function segmentRanges(text: string, language: Language): SegmentRange[] {
  const pieces: SegmentRange[] = [];
  let pending: SegmentRange | undefined;
  for (const [s0, e0] of sentenceRanges(text, language)) {
    let s = s0;
    let e = e0;
    while (s < e && text.charCodeAt(s) <= 0x20) s++;
    while (e > s && text.charCodeAt(e - 1) <= 0x20) e--;
    if (s >= e) continue;
    let piece: SegmentRange = { start: s, end: e, words: roughWords(text, s, e) };
    if (pending) {
      piece = { start: pending.start, end: piece.end, words: pending.words + piece.words };
      pending = undefined;
    }
    if (piece.words >= MIN_SEGMENT_WORDS) {
      pieces.push(piece);
      continue;
    }
    const endsLine = e0 > e && text.slice(e, e0).includes('\n');
    const last = pieces.at(-1);
    if (last && !endsLine) {
      last.end = piece.end;
      last.words += piece.words;
    } else pending = piece;
  }
  if (pending) {
    const last = pieces.at(-1);
    if (last) {
      last.end = pending.end;
      last.words += pending.words;
    } else pieces.push(pending);
  }
  if (pieces.length <= MAX_SEGMENTS) return pieces;
  const per = Math.ceil(pieces.length / MAX_SEGMENTS);
  const grouped: SegmentRange[] = [];
  for (let i = 0; i < pieces.length; i += per) {
    const group = pieces.slice(i, i + per);
    grouped.push({ start: group[0]!.start, end: group.at(-1)!.end, words: group.reduce((a, g) => a + g.words, 0) });
  }
  return grouped;
}

/**
 * What one sentence says by itself, as additive sums over its tokens and characters (so the sums
 * of a run of sentences describe the run): from the document model's own parts, the AI-vs-human
 * word-bigram log-ratio (split into the ~300 most frequent tokens and the rest, as the document
 * features are), the Fast-DetectGPT terms under both LMs, the tag-trigram log-ratio (English only,
 * as in the document features) and the linear model's hashed-feature weights; plus a few counts
 * for sentence shape; and the assistant head's hashed-feature weights (its family's words and
 * characters: the document model's evidence reads that family as human, issue 38). Index with the
 * `EV_*` constants.
 */
export const EVIDENCE_SIZE = 18;
export const EV_TOKENS = 0;
export const EV_WORDS = 1;
export const EV_LM_FREQUENT = 2;
export const EV_LM_RARE = 3;
export const EV_POS = 4;
export const EV_FDG_H = 5;
export const EV_FDG_H_VAR = 6;
export const EV_FDG_A = 7;
export const EV_FDG_A_VAR = 8;
export const EV_SPARSE_WORD = 9;
export const EV_SPARSE_WORD_N = 10;
export const EV_SPARSE_CHAR = 11;
export const EV_SPARSE_CHAR_N = 12;
export const EV_COMMAS = 13;
export const EV_LETTERS = 14;
export const EV_FUNCTION_WORDS = 15;
export const EV_FAMILY_WORD = 16;
export const EV_FAMILY_CHAR = 17;

/** Vocabulary ids below this are the most frequent tokens (function words, punctuation), as in features.ts. */
const FREQ_IDS = 302;

/**
 * The evidence sums of one sentence (`lower`: its normalised text, lower-cased for features), added
 * into `out` at `offset`; `family` is the assistant head's column of hashed weights (none: 0).
 */
export function sentenceEvidence(
  lower: string,
  language: Language,
  lm: LMContext,
  sparse: Float32Array,
  out: Float64Array = new Float64Array(EVIDENCE_SIZE),
  offset = 0,
  sparseStride = 1,
  sparseOffset = 0,
  family?: HashedColumn,
): Float64Array {
  const tokens = tokenize(lower);
  const ids = tokenIds(tokens, lm.vocab);
  const H = lm.human.arrays;
  const A = lm.ai.arrays;
  let words = 0;
  let lmFrequent = 0;
  let lmRare = 0;
  let fdgH = 0;
  let fdgHVar = 0;
  let fdgA = 0;
  let fdgAVar = 0;
  let commas = 0;
  let letters = 0;
  let functionWords = 0;
  const bigrams = bigramPair(lm.human, lm.ai);
  // A token in the vocabulary is checked by its id, the rest by its text (features.ts).
  const fwIds = functionWordIds(lm.vocab, language);
  for (let t = 1; t < ids.length; t++) {
    const prev = ids[t - 1]!;
    const cur = ids[t]!;
    bigrams.logProbs(prev, cur);
    const h = bigrams.h;
    const a = bigrams.a;
    if (cur < FREQ_IDS && cur !== UNK) lmFrequent += a - h;
    else lmRare += a - h;
    fdgH += h - H.mu[prev]!;
    fdgHVar += H.sigma2[prev]!;
    fdgA += a - A.mu[prev]!;
    fdgAVar += A.sigma2[prev]!;
    const tok = tokens[t - 1]!;
    if (isWordToken(tok)) {
      words++;
      letters += tok.length;
      if (isFunctionWordAt(tok, cur, fwIds, language)) functionWords++;
    } else if (tok === ',') commas++;
  }
  let pos = 0;
  if (language === 'en') {
    const tags = tagSequence(tokens, ids, lm.pos.tagger);
    const T = lm.pos.tagger.nTags;
    const PH = lm.pos.human.logp;
    const PA = lm.pos.ai.logp;
    let a = POS_BOS;
    let b = POS_BOS;
    for (let i = 0; i < tags.length; i++) {
      const c = tags[i]!;
      const at = (a * T + b) * T + c;
      pos += PA[at]! - PH[at]!;
      a = b;
      b = c;
    }
  }
  const hashed = hashedWeightSums(lower, tokens, sparse, sparseStride, sparseOffset, family);
  out[offset + EV_TOKENS]! += tokens.length;
  out[offset + EV_WORDS]! += words;
  out[offset + EV_LM_FREQUENT]! += lmFrequent;
  out[offset + EV_LM_RARE]! += lmRare;
  out[offset + EV_POS]! += pos;
  out[offset + EV_FDG_H]! += fdgH;
  out[offset + EV_FDG_H_VAR]! += fdgHVar;
  out[offset + EV_FDG_A]! += fdgA;
  out[offset + EV_FDG_A_VAR]! += fdgAVar;
  out[offset + EV_SPARSE_WORD]! += hashed.word;
  out[offset + EV_SPARSE_WORD_N]! += hashed.wordN;
  out[offset + EV_SPARSE_CHAR]! += hashed.char;
  out[offset + EV_SPARSE_CHAR_N]! += hashed.charN;
  out[offset + EV_COMMAS]! += commas;
  out[offset + EV_LETTERS]! += letters;
  out[offset + EV_FUNCTION_WORDS]! += functionWords;
  out[offset + EV_FAMILY_WORD]! += hashed.familyWord;
  out[offset + EV_FAMILY_CHAR]! += hashed.familyChar;
  return out;
}

/**
 * Features of a run of text from its pooled evidence sums (`sums[offset … offset + EVIDENCE_SIZE)`):
 * per-token rates of each signal, the block-normalised hashed-weight scores, shape rates, the log
 * of the token count, and every rate times that log (a short run's rates are noisier). The
 * assistant head's sums are read apart (`familyRunFeatures`): fitted into one ratio with the rest,
 * the family's texts, which read as human to the document model's evidence, pulled the ratio's
 * weights on that evidence down (the older sources' mixed training documents 0.906 → 0.899).
 */
const RUN_RATES = 11;
export const RUN_FEATURES = 2 * RUN_RATES + 1;
export function runFeatures(sums: ArrayLike<number>, offset = 0, out: Float64Array = new Float64Array(RUN_FEATURES)): Float64Array {
  const at = (k: number) => sums[offset + k]!;
  const t = Math.max(1, at(EV_TOKENS));
  const w = Math.max(1, at(EV_WORDS));
  const lt = Math.log(t);
  out[0] = at(EV_LM_FREQUENT) / t;
  out[1] = at(EV_LM_RARE) / t;
  out[2] = at(EV_POS) / t;
  out[3] = at(EV_FDG_H) / Math.sqrt(Math.max(1e-9, at(EV_FDG_H_VAR))) / Math.sqrt(t);
  out[4] = at(EV_FDG_A) / Math.sqrt(Math.max(1e-9, at(EV_FDG_A_VAR))) / Math.sqrt(t);
  out[5] = at(EV_SPARSE_WORD) / Math.sqrt(Math.max(1, at(EV_SPARSE_WORD_N)));
  out[6] = at(EV_SPARSE_CHAR) / Math.sqrt(Math.max(1, at(EV_SPARSE_CHAR_N)));
  out[7] = at(EV_COMMAS) / w;
  out[8] = at(EV_LETTERS) / w;
  out[9] = at(EV_FUNCTION_WORDS) / w;
  out[10] = at(EV_WORDS) / t;
  out[RUN_RATES] = lt;
  for (let j = 0; j < RUN_RATES; j++) out[RUN_RATES + 1 + j] = out[j]! * lt;
  return out;
}

/** Features of a run for the family ratio: the assistant head's block-normalised word and character scores, the log of the token count, and each score times it. */
export const FAMILY_RUN_FEATURES = 5;
export function familyRunFeatures(
  sums: ArrayLike<number>,
  offset = 0,
  out: Float64Array = new Float64Array(FAMILY_RUN_FEATURES),
): Float64Array {
  const at = (k: number) => sums[offset + k]!;
  const lt = Math.log(Math.max(1, at(EV_TOKENS)));
  out[0] = at(EV_FAMILY_WORD) / Math.sqrt(Math.max(1, at(EV_SPARSE_WORD_N)));
  out[1] = at(EV_FAMILY_CHAR) / Math.sqrt(Math.max(1, at(EV_SPARSE_CHAR_N)));
  out[2] = lt;
  out[3] = out[0]! * lt;
  out[4] = out[1]! * lt;
  return out;
}

/** The fitted sentence and span model (`models/segments.json`, written by `npm run train:segments`). */
export interface SegmentModel {
  format: 'textdetect-segments';
  formatVersion: typeof SEGMENT_FORMAT_VERSION;
  /** Content-derived id (`ts<formatVersion>-<12 hex>`). */
  version: string;
  /**
   * The document model's raw scorer it was fitted on: raw logits of a few probe texts. A later
   * recalibration of that model leaves them unchanged; retraining it does not, and then this
   * model no longer applies.
   */
  scorer: {
    model: string;
    /**
     * `familySum`: the assistant head's hashed weights summed over the probe text (`hashedWeightSums`,
     * words and characters), which the sentence evidence reads: another head, and this model no longer applies.
     */
    probes: Array<{ text: string; language: Language; rawLogit: number; familySum?: number }>;
  };
  /** Logistic model over `runFeatures` (standardised): the log-likelihood ratio AI vs human of one sentence. */
  emission: {
    mean: number[];
    std: number[];
    weights: number[];
    bias: number;
    /** Sentence-length bands (lower word bounds) of the emission Gaussians. */
    bands: number[];
    /** Per band: mean of a human / AI sentence's ratio and their common spread. */
    muHuman: number[];
    muAi: number[];
    sd: number[];
  };
  /**
   * Logistic model over `familyRunFeatures` (standardised): the log-likelihood ratio of one sentence
   * (or run) being the assistant family's rather than a person's, from the head's hashed weights.
   * Absent: the sentence model was fitted without a head, and its family features are MISSING.
   */
  family?: { mean: number[]; std: number[]; weights: number[]; bias: number };
  /** Two-state hidden Markov model with a per-document shift of every sentence's ratio. */
  sequence: { switchProb: number; offsetSd: number; offsetSteps: number };
  /**
   * Gradient-boosted trees over `contextFeatures` (`features` of them per sentence, as this code
   * builds them): a sentence's margin, generated vs human.
   */
  context: {
    features: number;
    depth: number;
    base: number;
    /** Per tree, per internal node: feature index (−1 = no split) and threshold (go left when ≤). */
    feature: number[];
    threshold: number[];
    /** Per tree, per leaf. */
    leaf: number[];
  };
  /** Platt scaling of the context model's margin, per sentence-length band (lower word bounds). */
  calibration: Array<{ minWords: number; a: number; b: number }>;
  spans: {
    /** A sentence at or above this probability belongs to a generated-looking run. */
    sentenceThreshold: number;
    /** A run of generated-looking sentences shorter than this many words is not reported as a span. */
    minWords: number;
    /** A span scored as a document at or above this probability is at least `medium` confidence. */
    mediumProbability: number;
    /**
     * `high` needs the span to pass a document's `likely_ai` bar and its sentences' mean
     * probability to reach this (a human text's most AI-looking stretch can pass the first alone).
     */
    highMeanSentence: number;
    /**
     * How `generated_share` is estimated: `spans`, the words inside spans; `expected`, when there
     * is a span, every sentence's probability weighted by its words (a span's edges and a missed
     * sentence then count by how likely they are generated, not all or nothing). Absent: `spans`.
     */
    shareRule?: 'spans' | 'expected';
  };
  training: Record<string, unknown>;
}

function bandOf(bounds: readonly number[], words: number): number {
  let b = 0;
  while (b + 1 < bounds.length && words >= bounds[b + 1]!) b++;
  return b;
}

/** The log-likelihood ratio (AI vs human) of a run of text from its evidence sums at `offset`; `f` is scratch space. */
function runRatio(model: SegmentModel, sums: ArrayLike<number>, offset: number, f: Float64Array): number {
  const e = model.emission;
  runFeatures(sums, offset, f);
  let s = e.bias;
  for (let j = 0; j < RUN_FEATURES; j++) s += e.weights[j]! * ((f[j]! - e.mean[j]!) / e.std[j]!);
  return s;
}

/** The family ratio of a run of text from its evidence sums at `offset` (`SegmentModel.family`); `f` is scratch space. */
function familyRunRatio(family: NonNullable<SegmentModel['family']>, sums: ArrayLike<number>, offset: number, f: Float64Array): number {
  familyRunFeatures(sums, offset, f);
  let s = family.bias;
  for (let j = 0; j < FAMILY_RUN_FEATURES; j++) s += family.weights[j]! * ((f[j]! - family.mean[j]!) / family.std[j]!);
  return s;
}

/**
 * The assistant head's hashed weights summed over a probe's text (`lower`: normalised and lower-cased
 * for features), words and characters: what `train:segments` writes as a probe's `familySum` and
 * the detector checks its head against.
 */
export function probeFamilySum(lower: string, family: HashedColumn): number {
  const sums = hashedWeightSums(lower, tokenize(lower), family.sparse, family.stride, family.offset);
  return sums.word + sums.char;
}

/** Each sentence's family ratio (`SegmentModel.family`); undefined without one. */
export function familyRatios(model: SegmentModel, evidence: Float64Array, n: number): Float64Array | undefined {
  const family = model.family;
  if (!family) return undefined;
  const out = new Float64Array(n);
  const f = new Float64Array(FAMILY_RUN_FEATURES);
  for (let i = 0; i < n; i++) out[i] = familyRunRatio(family, evidence, i * EVIDENCE_SIZE, f);
  return out;
}

/** Each sentence's log-likelihood ratio (AI vs human) from its evidence sums (`evidence`: n × EVIDENCE_SIZE). */
export function sentenceRatios(model: SegmentModel, evidence: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n);
  const f = new Float64Array(RUN_FEATURES);
  for (let i = 0; i < n; i++) out[i] = runRatio(model, evidence, i * EVIDENCE_SIZE, f);
  return out;
}

export function logSumExp(x: number, y: number): number {
  const m = x > y ? x : y;
  if (m === -Infinity) return m;
  if (m === Infinity || Number.isNaN(m)) return m + Math.log(Math.exp(x - m) + Math.exp(y - m));
  // One of the two is m, and exp(m − m) is exactly 1: one exp instead of two, the same sum.
  const other = x > y ? y : x;
  return m + Math.log(1 + Math.exp(other - m));
}

/**
 * Posterior probability that each sentence is generated, given every sentence's ratio. The hidden
 * state (human / generated) switches between neighbouring sentences with `switchProb`; a sentence's
 * ratio is Gaussian around its state's mean (per length band) plus a shift δ shared by the whole
 * document, δ ~ N(0, offsetSd²) integrated on a grid, so a text whose sentences all lean one way by
 * its genre's habit is not read as generated throughout, while a change within it still stands out.
 * Forward–backward per grid point: O(sentences × grid).
 */
export function sequencePosteriors(model: SegmentModel, ratios: Float64Array, words: ArrayLike<number>): Float64Array {
  const n = ratios.length;
  const { switchProb, offsetSd, offsetSteps } = model.sequence;
  const e = model.emission;
  const out = new Float64Array(n);
  if (n === 0) return out;
  const grid = offsetSd > 0 ? 2 * offsetSteps + 1 : 1;
  const lsw = Math.log(switchProb);
  const lst = Math.log(1 - switchProb);
  const muA = new Float64Array(n);
  const muH = new Float64Array(n);
  const inv2v = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const b = bandOf(e.bands, words[i]!);
    muA[i] = e.muAi[b]!;
    muH[i] = e.muHuman[b]!;
    inv2v[i] = 1 / (2 * e.sd[b]! * e.sd[b]!);
  }
  const fA = new Float64Array(n);
  const fH = new Float64Array(n);
  const bA = new Float64Array(n);
  const bH = new Float64Array(n);
  const eA = new Float64Array(n);
  const eH = new Float64Array(n);
  const logWeights = new Float64Array(grid);
  const posts = new Float64Array(grid * n);
  for (let g = 0; g < grid; g++) {
    // Grid over ±3 standard deviations of the shift.
    const delta = grid === 1 ? 0 : ((g - offsetSteps) / offsetSteps) * 3 * offsetSd;
    for (let i = 0; i < n; i++) {
      const x = ratios[i]! - delta;
      eA[i] = -((x - muA[i]!) ** 2) * inv2v[i]!;
      eH[i] = -((x - muH[i]!) ** 2) * inv2v[i]!;
    }
    fA[0] = Math.log(0.5) + eA[0]!;
    fH[0] = Math.log(0.5) + eH[0]!;
    for (let i = 1; i < n; i++) {
      fA[i] = logSumExp(fA[i - 1]! + lst, fH[i - 1]! + lsw) + eA[i]!;
      fH[i] = logSumExp(fH[i - 1]! + lst, fA[i - 1]! + lsw) + eH[i]!;
    }
    bA[n - 1] = 0;
    bH[n - 1] = 0;
    for (let i = n - 2; i >= 0; i--) {
      bA[i] = logSumExp(lst + eA[i + 1]! + bA[i + 1]!, lsw + eH[i + 1]! + bH[i + 1]!);
      bH[i] = logSumExp(lst + eH[i + 1]! + bH[i + 1]!, lsw + eA[i + 1]! + bA[i + 1]!);
    }
    const ll = logSumExp(fA[n - 1]!, fH[n - 1]!);
    logWeights[g] = ll - (grid === 1 ? 0 : (delta * delta) / (2 * offsetSd * offsetSd));
    for (let i = 0; i < n; i++) posts[g * n + i] = Math.exp(fA[i]! + bA[i]! - ll);
  }
  let max = -Infinity;
  for (let g = 0; g < grid; g++) if (logWeights[g]! > max) max = logWeights[g]!;
  let total = 0;
  for (let g = 0; g < grid; g++) {
    logWeights[g] = Math.exp(logWeights[g]! - max);
    total += logWeights[g]!;
  }
  for (let g = 0; g < grid; g++) {
    const w = logWeights[g]! / total;
    for (let i = 0; i < n; i++) out[i]! += w * posts[g * n + i]!;
  }
  return out;
}

/** Calibrated probability of one sentence from its context margin (Platt scaling of its sentence-length band). */
export function calibrateSentence(model: SegmentModel, margin: number, words: number): number {
  const bands = model.calibration;
  let c = bands[0]!;
  for (const band of bands) if (words >= band.minWords) c = band;
  return 1 / (1 + Math.exp(-(c.a * margin + c.b)));
}

/**
 * Features of every sentence for the context model (n × CONTEXT_FEATURES, row-major), from the
 * sentences' evidence sums and words. The trees were fitted to exactly these, so a change here
 * needs `npm run train:segments` (the model file records the count and is refused when it differs).
 */
export const CONTEXT_FEATURES = 98;
/** Stands for a neighbour past either end of the text: below every real value, so trees can tell it apart. */
const MISSING = -1000;
/** Sequence models with rarer and more frequent switches than the fitted one, as extra views of the same ratios. */
const SLOW_SWITCH = 0.03;
const FAST_SWITCH = 0.3;
const NEIGHBOURS = [-3, -2, -1, 1, 2, 3];
const WINDOWS = [1, 2, 4];
/** The family ratio's context features: the sentence's, its windows' means, either side and the step between, the text's, its windows pooled. */
const FAMILY_CONTEXT = 1 + WINDOWS.length + 3 + 1 + WINDOWS.length;

function clippedLogit(p: number): number {
  const q = Math.min(1 - 1e-5, Math.max(1e-5, p));
  return Math.log(q / (1 - q));
}

/**
 * Everything here comes from the sentence pass (evidence sums, the ratio model, the sequence
 * model) and from the language: nothing from the document model's score, so a sentence is not
 * shaded by the document it sits in, and nothing from the mode. The mode is the caller's choice of
 * calibration, not a property of the text; as a feature it stood for the training sources of each
 * mode (general: tweets, rewrites, continuations the document model is at chance on), and the
 * same text sent as `general` got every sentence shifted towards AI and lost its boundary.
 */
export function contextFeatures(
  model: SegmentModel,
  evidence: Float64Array,
  words: ArrayLike<number>,
  n: number,
  language: Language,
): Float64Array {
  const out = new Float64Array(n * CONTEXT_FEATURES);
  if (n === 0) return out;
  const r = sentenceRatios(model, evidence, n);
  const withSwitch = (switchProb: number): SegmentModel => ({ ...model, sequence: { ...model.sequence, switchProb } });
  const q = sequencePosteriors(model, r, words).map(clippedLogit);
  const qSlow = sequencePosteriors(withSwitch(SLOW_SWITCH), r, words).map(clippedLogit);
  const qFast = sequencePosteriors(withSwitch(FAST_SWITCH), r, words).map(clippedLogit);

  // Prefix sums, for window and one-sided means.
  const pr = new Float64Array(n + 1);
  const pq = new Float64Array(n + 1);
  const pqs = new Float64Array(n + 1);
  const pw = new Float64Array(n + 1);
  const pwr = new Float64Array(n + 1);
  let r2 = 0;
  let q2 = 0;
  let generated = 0;
  for (let i = 0; i < n; i++) {
    pr[i + 1] = pr[i]! + r[i]!;
    pq[i + 1] = pq[i]! + q[i]!;
    pqs[i + 1] = pqs[i]! + qSlow[i]!;
    pw[i + 1] = pw[i]! + words[i]!;
    pwr[i + 1] = pwr[i]! + words[i]! * r[i]!;
    r2 += r[i]! * r[i]!;
    q2 += q[i]! * q[i]!;
    if (q[i]! >= 0) generated++;
  }
  /** Mean of `p`'s series over sentences [a, b), clamped to the text; MISSING when empty. */
  const mean = (p: Float64Array, a: number, b: number): number => {
    const lo = Math.max(0, a);
    const hi = Math.min(n, b);
    return hi > lo ? (p[hi]! - p[lo]!) / (hi - lo) : MISSING;
  };
  const meanR = pr[n]! / n;
  const sdR = Math.sqrt(Math.max(0, r2 / n - meanR * meanR));
  const meanQ = pq[n]! / n;
  const sdQ = Math.sqrt(Math.max(0, q2 / n - meanQ * meanQ));
  const weightedR = pw[n]! > 0 ? pwr[n]! / pw[n]! : meanR;
  const sorted = Float64Array.from(r).sort();

  // Runs of sentences on the same side of the fitted sequence model's 50%.
  const runStart = new Int32Array(n);
  const runEnd = new Int32Array(n);
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && q[j + 1]! >= 0 === q[i]! >= 0) j++;
    for (let k = i; k <= j; k++) {
      runStart[k] = i;
      runEnd[k] = j;
    }
    i = j + 1;
  }

  // Evidence sums pooled over a stretch of sentences, scored by the ratio model (fitted on runs as
  // well as single sentences): a window's evidence read as one piece, not an average of noisy parts.
  const pe = new Float64Array((n + 1) * EVIDENCE_SIZE);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < EVIDENCE_SIZE; j++) pe[(i + 1) * EVIDENCE_SIZE + j] = pe[i * EVIDENCE_SIZE + j]! + evidence[i * EVIDENCE_SIZE + j]!;
  const pooled = new Float64Array(EVIDENCE_SIZE);
  const pooledF = new Float64Array(RUN_FEATURES);
  /** Fills `pooled` with the sums of sentences [a, b), clamped to the text; false when that is empty. */
  const pool = (a: number, b: number): boolean => {
    const lo = Math.max(0, a);
    const hi = Math.min(n, b);
    if (hi <= lo) return false;
    for (let j = 0; j < EVIDENCE_SIZE; j++) pooled[j] = pe[hi * EVIDENCE_SIZE + j]! - pe[lo * EVIDENCE_SIZE + j]!;
    return true;
  };
  const pooledRatio = (a: number, b: number): number => (pool(a, b) ? runRatio(model, pooled, 0, pooledF) : MISSING);
  const documentRatio = pooledRatio(0, n);

  // The family ratio (the assistant head's weights, read apart from the rest): the sentence's, its
  // windows' (mean and pooled), either side of it, and the text's.
  const rf = familyRatios(model, evidence, n);
  const prf = new Float64Array(n + 1);
  if (rf) for (let i = 0; i < n; i++) prf[i + 1] = prf[i]! + rf[i]!;
  const familyF = new Float64Array(FAMILY_RUN_FEATURES);
  const pooledFamily = (a: number, b: number): number =>
    model.family && pool(a, b) ? familyRunRatio(model.family, pooled, 0, familyF) : MISSING;
  const documentFamily = rf ? mean(prf, 0, n) : MISSING;

  const rates = new Float64Array(RUN_FEATURES);
  for (let i = 0; i < n; i++) {
    const o = i * CONTEXT_FEATURES;
    let k = o;
    out[k++] = r[i]!;
    out[k++] = q[i]!;
    out[k++] = qSlow[i]!;
    out[k++] = qFast[i]!;
    for (const d of NEIGHBOURS) out[k++] = i + d >= 0 && i + d < n ? r[i + d]! : MISSING;
    for (const d of NEIGHBOURS) out[k++] = i + d >= 0 && i + d < n ? q[i + d]! : MISSING;
    for (const h of WINDOWS) out[k++] = mean(pr, i - h, i + h + 1);
    for (const h of WINDOWS) out[k++] = mean(pq, i - h, i + h + 1);
    out[k++] = mean(pqs, i - 2, i + 3);
    // Either side of the sentence: a change of author shows as a step between them.
    for (const p of [pr, pq]) {
      const left = mean(p, i - 3, i);
      const right = mean(p, i + 1, i + 4);
      out[k++] = left;
      out[k++] = right;
      out[k++] = left === MISSING || right === MISSING ? 0 : right - left;
    }
    out[k++] = i > 0 ? r[i]! - r[i - 1]! : 0;
    out[k++] = i + 1 < n ? r[i]! - r[i + 1]! : 0;
    out[k++] = i > 0 ? q[i]! - q[i - 1]! : 0;
    out[k++] = i + 1 < n ? q[i]! - q[i + 1]! : 0;
    const a = runStart[i]!;
    const b = runEnd[i]!;
    out[k++] = b - a + 1;
    out[k++] = Math.log1p(pw[b + 1]! - pw[a]!);
    out[k++] = i - a;
    out[k++] = b - i;
    out[k++] = mean(pr, a, b + 1);
    out[k++] = mean(pq, a, b + 1);
    out[k++] = a > 0 ? mean(pr, runStart[a - 1]!, a) : MISSING;
    out[k++] = b + 1 < n ? mean(pr, b + 1, runEnd[b + 1]! + 1) : MISSING;
    out[k++] = a === 0 ? 1 : 0;
    out[k++] = b === n - 1 ? 1 : 0;
    out[k++] = n > 1 ? i / (n - 1) : 0.5;
    out[k++] = i;
    out[k++] = n - 1 - i;
    out[k++] = n;
    out[k++] = words[i]!;
    out[k++] = Math.log1p(words[i]!);
    out[k++] = i > 0 ? words[i - 1]! : MISSING;
    out[k++] = i + 1 < n ? words[i + 1]! : MISSING;
    out[k++] = meanR;
    out[k++] = sdR;
    out[k++] = (r[i]! - meanR) / Math.max(sdR, 1e-3);
    out[k++] = meanQ;
    out[k++] = sdQ;
    out[k++] = generated / n;
    out[k++] = weightedR;
    runFeatures(evidence, i * EVIDENCE_SIZE, rates);
    for (let j = 0; j < 12; j++) out[k++] = rates[j]!;
    const lo = Math.max(0, i - 2);
    const hi = Math.min(n, i + 3);
    out[k++] = pw[hi]! - pw[lo]! > 0 ? (pwr[hi]! - pwr[lo]!) / (pw[hi]! - pw[lo]!) : r[i]!;
    let max = -Infinity;
    let min = Infinity;
    for (let j = lo; j < hi; j++) {
      if (r[j]! > max) max = r[j]!;
      if (r[j]! < min) min = r[j]!;
    }
    out[k++] = max;
    out[k++] = min;
    // The text split just before / just after this sentence: how different the two sides are.
    out[k++] = i > 0 ? mean(pr, i, n) - mean(pr, 0, i) : 0;
    out[k++] = i + 1 < n ? mean(pr, i + 1, n) - mean(pr, 0, i + 1) : 0;
    out[k++] = mean(pr, 0, i + 1);
    out[k++] = mean(pr, i, n);
    // Rank of the sentence's ratio in its text (0 = lowest).
    let lo2 = 0;
    let hi2 = n;
    while (lo2 < hi2) {
      const mid = (lo2 + hi2) >> 1;
      if (sorted[mid]! < r[i]!) lo2 = mid + 1;
      else hi2 = mid;
    }
    out[k++] = n > 1 ? lo2 / (n - 1) : 0.5;
    for (const h of WINDOWS) out[k++] = pooledRatio(i - h, i + h + 1);
    out[k++] = pooledRatio(i - 3, i);
    out[k++] = pooledRatio(i + 1, i + 4);
    out[k++] = pooledRatio(a, b + 1);
    out[k++] = documentRatio;
    // The rest of the text around this sentence's run, pooled: what the other author looks like.
    if (a === 0 && b === n - 1) out[k++] = MISSING;
    else {
      for (let j = 0; j < EVIDENCE_SIZE; j++)
        pooled[j] = pe[n * EVIDENCE_SIZE + j]! - pe[(b + 1) * EVIDENCE_SIZE + j]! + pe[a * EVIDENCE_SIZE + j]!;
      out[k++] = runRatio(model, pooled, 0, pooledF);
    }
    if (rf) {
      out[k++] = rf[i]!;
      for (const h of WINDOWS) out[k++] = mean(prf, i - h, i + h + 1);
      const left = mean(prf, i - 3, i);
      const right = mean(prf, i + 1, i + 4);
      out[k++] = left;
      out[k++] = right;
      out[k++] = left === MISSING || right === MISSING ? 0 : right - left;
      out[k++] = documentFamily;
      for (const h of WINDOWS) out[k++] = pooledFamily(i - h, i + h + 1);
    } else for (let j = 0; j < FAMILY_CONTEXT; j++) out[k++] = MISSING;
    out[k++] = language === 'tr' ? 1 : 0;
    if (k - o !== CONTEXT_FEATURES) throw new Error(`contextFeatures built ${k - o} features, expected ${CONTEXT_FEATURES}`);
  }
  return out;
}

/** The context model's trees, as gbdt.ts evaluates them. */
export function contextForest(model: SegmentModel): Forest {
  const c = model.context;
  const internal = (1 << c.depth) - 1;
  return {
    depth: c.depth,
    nFeatures: c.features,
    feature: Int32Array.from(c.feature),
    threshold: Float32Array.from(c.threshold),
    leaf: Float32Array.from(c.leaf),
    nTrees: c.feature.length / internal,
    base: c.base,
  };
}

/** Each sentence's context margin (generated vs human), before calibration. */
export function sentenceMargins(
  model: SegmentModel,
  evidence: Float64Array,
  words: ArrayLike<number>,
  n: number,
  language: Language,
  forest = contextForest(model),
): Float64Array {
  const x = contextFeatures(model, evidence, words, n, language);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = forestMargin(forest, x.subarray(i * CONTEXT_FEATURES, (i + 1) * CONTEXT_FEATURES));
  return out;
}

/**
 * The `formatVersion` this code reads and writes. 1 had no context model (the posterior was
 * calibrated directly); 2 had the mode among the context features; 3 did not read the assistant
 * head's hashed weights.
 */
export const SEGMENT_FORMAT_VERSION = 4;

/** Reads and checks `models/segments.json`. */
export function parseSegmentModel(json: string, path = 'segments.json'): SegmentModel {
  let m: SegmentModel;
  try {
    m = JSON.parse(json) as SegmentModel;
  } catch {
    throw new Error(`${path} is not valid JSON; rebuild it with \`npm run train:segments\`.`);
  }
  if (m?.format === 'textdetect-segments' && m.formatVersion !== SEGMENT_FORMAT_VERSION) {
    throw new Error(
      `${path} is a sentence model of format ${JSON.stringify(m.formatVersion)}; this code reads format ${SEGMENT_FORMAT_VERSION}. Rebuild it with \`npm run train:segments\`.`,
    );
  }
  const c = m?.context;
  const internal = c && Number.isInteger(c.depth) && c.depth > 0 && c.depth < 16 ? (1 << c.depth) - 1 : 0;
  const contextOk =
    internal > 0 &&
    c.features === CONTEXT_FEATURES &&
    typeof c.base === 'number' &&
    Array.isArray(c.feature) &&
    Array.isArray(c.threshold) &&
    Array.isArray(c.leaf) &&
    c.feature.length % internal === 0 &&
    c.threshold.length === c.feature.length &&
    c.leaf.length === (c.feature.length / internal) * (internal + 1) &&
    c.feature.every((f) => Number.isInteger(f) && f >= -1 && f < CONTEXT_FEATURES);
  const ok =
    m?.format === 'textdetect-segments' &&
    contextOk &&
    Array.isArray(m.emission?.weights) &&
    m.emission.weights.length === RUN_FEATURES &&
    m.emission.mean.length === RUN_FEATURES &&
    m.emission.std.length === RUN_FEATURES &&
    m.emission.bands.length === m.emission.muAi.length &&
    m.emission.bands.length === m.emission.muHuman.length &&
    m.emission.bands.length === m.emission.sd.length &&
    (m.family === undefined ||
      (m.family.weights?.length === FAMILY_RUN_FEATURES &&
        m.family.mean?.length === FAMILY_RUN_FEATURES &&
        m.family.std?.length === FAMILY_RUN_FEATURES &&
        typeof m.family.bias === 'number')) &&
    typeof m.spans?.highMeanSentence === 'number' &&
    typeof m.spans.sentenceThreshold === 'number' &&
    (m.spans.shareRule === undefined || m.spans.shareRule === 'spans' || m.spans.shareRule === 'expected') &&
    m.sequence?.switchProb > 0 &&
    m.sequence.switchProb < 1 &&
    Array.isArray(m.calibration) &&
    m.calibration.length > 0 &&
    Array.isArray(m.scorer?.probes);
  if (!ok) throw new Error(`${path} is not a sentence model this code can use; rebuild it with \`npm run train:segments\`.`);
  return m;
}

/** What the engine knows about the document that the segments need. */
export interface SegmentInput {
  /** The submitted string (offsets point into it). */
  original: string;
  /** Its normalised text and the map from every normalised character back to the original. */
  normText: string;
  map: Int32Array;
  language: Language;
  lm: LMContext;
  /** The linear model's weights of the hashed features: feature j's at `sparseStride * j + sparseOffset` (default 1 and 0). */
  sparse: Float32Array;
  sparseStride?: number;
  sparseOffset?: number;
  /** The assistant head's hashed weights (the probes' `familySum` pin which head); none: its evidence is 0. */
  family?: HashedColumn;
  /** The document's calibrated probability and whether its verdict is `likely_ai`. */
  documentProbability: number;
  documentLikelyAi: boolean;
  /**
   * The assistant head keeps the document from being cleared (its veto): with no span, its
   * composition is then `uncertain`, never `human`, whatever its probability.
   */
  documentNotHuman?: boolean;
  /**
   * The document is under the evidence floor (`too_little_evidence`): its sentences are scored, but
   * no span, share or composition is read from so little (the composition is `uncertain`, the share null).
   */
  belowEvidenceFloor?: boolean;
  /**
   * Scores a stretch of the normalised text as if it were a document of its own: calibrated like a
   * document of its length, and whether that document would be called likely AI.
   */
  scoreAsDocument(normStart: number, normEnd: number): { probability: number; likelyAi: boolean };
  /** The context model's trees, unpacked once (`contextForest`); unpacked per call when absent. */
  forest?: Forest;
  /**
   * Given only when the assistant head alone made the document `likely_ai`, or keeps it from being
   * cleared (issue 38): reads a stretch of the normalised text with the head, as a document of its
   * own. The sentence model never saw that family (its sentences of an assistant's text mostly score
   * as a person's), so the passages it wrote are found by the head instead (`assistantSpans`).
   */
  readPassage?(normStart: number, normEnd: number): PassageReading;
  /** The head made the whole document `likely_ai` (else it only vetoed it; `assistantSpans`' `wholeRead`). */
  headReadWhole?: boolean;
}

/** The assistant head's reading of a passage scored as a document of its own. */
export interface PassageReading {
  /** Its probability after the head (`liftedProbability`). */
  probability: number;
  /**
   * The head's margin reaches its bar for a text of the passage's length: `fire` in a document it made
   * `likely_ai`, `passage` in one it only vetoed.
   */
  fires: boolean;
}

/**
 * Words per passage the head reads on its own: its bars are set on texts of 40–100 and 100+ words,
 * and the 100+ band's fire bar catches four times as many of the family's texts (v5-dev, `mirror`).
 */
export const PASSAGE_WORDS = 100;

interface SentenceSpan {
  first: number;
  last: number;
  probability: number;
  confidence: Confidence;
}

/** Sentences gathered into passages of PASSAGE_WORDS words or more, a shorter remainder joined to the last: each passage's first and last sentence. */
export function passageBounds(words: ArrayLike<number>): Array<{ first: number; last: number }> {
  const passages: Array<{ first: number; last: number }> = [];
  for (let i = 0, first = 0, count = 0; i < words.length; i++) {
    count += words[i]!;
    if (count >= PASSAGE_WORDS) {
      passages.push({ first, last: i });
      first = i + 1;
      count = 0;
    } else if (i === words.length - 1) {
      if (passages.length > 0) passages[passages.length - 1]!.last = i;
      else passages.push({ first, last: i });
    }
  }
  return passages;
}

/**
 * The runs of passages (`passageBounds`) the head fires on, each a `high` span scored as a document
 * of its own.
 *
 * `wholeRead`: the head made the whole document `likely_ai`. Then a text of one passage is one span,
 * and when the head fires on no passage alone (the evidence is spread thin) the whole text is one
 * `low` span: read whole it is an assistant's, but no part of it stands out. Otherwise (a document
 * it only keeps from being cleared, read passage by passage against the stricter `passage` bar) only
 * the passages it fires on are spans.
 *
 * Why not also the passages it only vetoes: in documents of a person's text followed or preceded by
 * the assistant's that the head made `likely_ai`, runs through vetoed passages covered 73% of the
 * person's words, runs of fired passages 21% (docs/detector.md, section 14).
 */
export function assistantSpans(
  ranges: readonly SegmentRange[],
  words: ArrayLike<number>,
  documentProbability: number,
  read: (normStart: number, normEnd: number) => PassageReading,
  wholeRead = true,
): SentenceSpan[] {
  const n = ranges.length;
  if (n === 0) return [];
  const passages = passageBounds(words);
  const whole = { first: 0, last: n - 1, probability: documentProbability };
  if (passages.length < 2) return wholeRead ? [{ ...whole, confidence: 'high' }] : [];
  const readings = passages.map((p) => read(ranges[p.first]!.start, ranges[p.last]!.end));
  const spans: SentenceSpan[] = [];
  for (let i = 0; i < passages.length; ) {
    if (!readings[i]!.fires) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < passages.length && readings[j + 1]!.fires) j++;
    const [first, last] = [passages[i]!.first, passages[j]!.last];
    const probability =
      first === 0 && last === n - 1 && wholeRead
        ? documentProbability
        : i === j
          ? readings[i]!.probability
          : read(ranges[first]!.start, ranges[last]!.end).probability;
    spans.push({ first, last, probability, confidence: 'high' });
    i = j + 1;
  }
  return spans.length > 0 || !wholeRead ? spans : [{ ...whole, confidence: 'low' }];
}

const CONFIDENCE_RANK: Record<Confidence, number> = { low: 0, medium: 1, high: 2 };

export interface SegmentsResult {
  segments: SegmentScore[];
  spans: GeneratedSpan[];
  /** Null under the evidence floor, where no share is estimated. */
  share: number | null;
  composition: Composition;
}

const RE_SPACE_CHAR = /[\s\p{Cf}]/u;

/** Sentences with their probabilities, the generated spans, their share of the words, and what the text is made of. */
export function scoreSegments(model: SegmentModel, input: SegmentInput): SegmentsResult {
  const { original, normText, map, language } = input;
  const ranges = segmentRanges(normText, language);
  const n = ranges.length;
  const evidence = new Float64Array(n * EVIDENCE_SIZE);
  const words = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const r = ranges[i]!;
    sentenceEvidence(
      lowerForFeatures(normText.slice(r.start, r.end), language),
      language,
      input.lm,
      input.sparse,
      evidence,
      i * EVIDENCE_SIZE,
      input.sparseStride,
      input.sparseOffset,
      input.family,
    );
    words[i] = evidence[i * EVIDENCE_SIZE + EV_WORDS]!;
  }
  const margins = sentenceMargins(model, evidence, words, n, language, input.forest);
  const segments: SegmentScore[] = [];
  for (let i = 0; i < n; i++) {
    const r = ranges[i]!;
    let start = map[r.start]!;
    let end = map[r.end]!;
    // map[end] is where the next kept character starts; drop the invisible/space characters between.
    while (end > start && RE_SPACE_CHAR.test(original[end - 1]!)) end--;
    while (start < end && RE_SPACE_CHAR.test(original[start]!)) start++;
    const p = round4(calibrateSentence(model, margins[i]!, words[i]!));
    segments.push({ start, end, text: original.slice(start, end), ai_probability: p });
  }
  // Too few words to judge the text is too few to judge its parts: a sentence at 0.65 beside
  // "human, 0% generated" would tell two stories about a text the engine gives no verdict.
  if (input.belowEvidenceFloor) return { segments, spans: [], share: null, composition: 'uncertain' };

  let totalWords = 0;
  for (let i = 0; i < n; i++) totalWords += words[i]!;
  const runs: SentenceSpan[] = [];
  for (let i = 0; i < n; ) {
    const threshold = model.spans.sentenceThreshold;
    if (segments[i]!.ai_probability < threshold) {
      i++;
      continue;
    }
    let j = i;
    let runWords = words[i]!;
    while (j + 1 < n && segments[j + 1]!.ai_probability >= threshold) runWords += words[++j]!;
    if (runWords >= model.spans.minWords) {
      const whole = i === 0 && j === n - 1;
      const scored = whole
        ? { probability: input.documentProbability, likelyAi: input.documentLikelyAi }
        : input.scoreAsDocument(ranges[i]!.start, ranges[j]!.end);
      // The run scored as a document must also lean AI: sentences can drift above 50% together
      // in a human text where the text as a whole does not look generated.
      if (scored.probability < 0.5) {
        i = j + 1;
        continue;
      }
      let meanSentence = 0;
      for (let k = i; k <= j; k++) meanSentence += segments[k]!.ai_probability / (j - i + 1);
      const confidence: Confidence =
        scored.likelyAi && meanSentence >= model.spans.highMeanSentence
          ? 'high'
          : scored.probability >= model.spans.mediumProbability
            ? 'medium'
            : 'low';
      runs.push({ first: i, last: j, probability: round4(scored.probability), confidence });
    }
    i = j + 1;
  }
  // The head's passages where the sentence model found nothing it is sure of, and beside what it
  // found in a text of two passages or more: the sentence model reads the head's weights sentence by
  // sentence, the head a passage whole, and each finds parts of the family's text the other misses.
  // Not in a text of one passage the sentence model has spans in: there they are finer than the
  // head's, which would be the whole text (in a person's minutes followed by a generated paragraph,
  // it would take in the minutes). Sentences inside a span the head is sure of count whole in the
  // expected share.
  const byHead = new Uint8Array(n);
  const sure = runs.some((r) => r.confidence !== 'low');
  if (input.readPassage && (!sure || passageBounds(words).length > 1)) {
    const found = assistantSpans(ranges, words, input.documentProbability, input.readPassage, input.headReadWhole ?? true);
    // Not a `low` span over the whole: that one says no part stands out, so it claims no words (and
    // beside the sentence model's spans it would join them into one over the whole text).
    const kept = sure ? found.filter((s) => s.confidence !== 'low') : found;
    for (const s of kept) if (s.confidence !== 'low') byHead.fill(1, s.first, s.last + 1);
    runs.push(...kept);
    runs.sort((a, b) => a.first - b.first);
  }
  // One span per stretch: a run of the sentence model's inside or beside one of the head's joins it.
  const merged: SentenceSpan[] = [];
  for (const r of runs) {
    const last = merged.at(-1);
    if (last && r.first <= last.last + 1) {
      last.last = Math.max(last.last, r.last);
      last.probability = Math.max(last.probability, r.probability);
      if (CONFIDENCE_RANK[r.confidence] > CONFIDENCE_RANK[last.confidence]) last.confidence = r.confidence;
    } else merged.push({ ...r });
  }
  let spanWords = 0;
  const spans: GeneratedSpan[] = merged.map((r) => {
    for (let k = r.first; k <= r.last; k++) spanWords += words[k]!;
    return { start: segments[r.first]!.start, end: segments[r.last]!.end, ai_probability: round4(r.probability), confidence: r.confidence };
  });
  const spanShare = totalWords > 0 ? spanWords / totalWords : 0;
  let share = spanShare;
  if (model.spans.shareRule === 'expected' && spans.length > 0 && totalWords > 0) {
    let expected = 0;
    for (let i = 0; i < n; i++) expected += (byHead[i] ? 1 : segments[i]!.ai_probability) * words[i]!;
    share = expected / totalWords;
  }
  let composition: Composition;
  if (spans.length === 0) composition = input.documentProbability < 0.5 && !input.documentNotHuman ? 'human' : 'uncertain';
  else if (spans.every((s) => s.confidence === 'low')) composition = 'uncertain';
  // Generated throughout: the spans cover nearly every word (the expected share of a fully
  // generated text stays below 1, as its sentences' probabilities do).
  else composition = spanShare >= ALL_GENERATED_SHARE ? 'ai' : 'partly_ai';
  return { segments, spans, share: round4(share), composition };
}

/** From this share of the words in confident spans, the text is called generated throughout (`ai`). */
const ALL_GENERATED_SHARE = 0.9;
