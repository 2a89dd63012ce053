/**
 * A loaded model: LMs, linear weights, trees and calibration. `rawLogit` is the uncalibrated score
 * shared by training (cross-fitted evaluation) and the detector.
 */
import type { ArtifactArrays, ArtifactHeader, AssistantBar, GroupCalibration } from './artifact.ts';
import { assistantBarFor, assistantHeadFrom, assistantMargin, type AssistantHead } from './assistant.ts';
import {
  extractFeatures,
  DENSE_DIM,
  HASH_DIM,
  HASHED_ASSISTANT,
  HASHED_DOCUMENT,
  HASHED_POLISH,
  HASHED_SHORT_LEX,
  HASHED_STRIDE,
  Vocabulary,
  type FeatureVector,
  type HashedColumn,
  type LMContext,
  type ShortLexWeights,
} from './features.ts';
import { forestMargin, type Forest } from './gbdt.ts';
import { CharLM } from './charlm.ts';
import { BigramLM, type BigramArrays } from './lm.ts';
import { needsExtras, polishExtras, polishHeadFrom, polishRaw, type PolishHead } from './polish.ts';
import type { PosContext, PosLMArrays } from './pos.ts';
import type { Language, Mode } from './types.ts';

export interface LinearWeights {
  bias: number;
  /** Weights of the standardised dense features. */
  dense: Float32Array;
  /** Weights of the hashed sparse features (length HASH_DIM). */
  sparse: Float32Array;
  mean: Float64Array;
  std: Float64Array;
}

export function linearScore(f: FeatureVector, w: LinearWeights): number {
  let s = w.bias;
  for (let i = 0; i < DENSE_DIM; i++) s += w.dense[i]! * ((f.dense[i]! - w.mean[i]!) / w.std[i]!);
  for (let i = 0; i < f.idx.length; i++) s += w.sparse[f.idx[i]!]! * f.val[i]!;
  return s;
}

/**
 * `linearScore` of two weight sets over one feature vector in one pass: each sum takes the same
 * terms in the same order as `linearScore`'s, so each is `linearScore`'s bit for bit, and the
 * sparse weights of both are read together (the features' indices are scattered over 2^18 weights
 * each, so the reads miss the cache, and two independent misses overlap). With the interleaved
 * table, also the assistant head's hashed sum (its column of the table; 0 otherwise), from the
 * same cache lines.
 */
export function linearScorePair(f: FeatureVector, w1: LinearWeights, w2: LinearWeights, hashed?: Float32Array): [number, number, number] {
  let s1 = w1.bias;
  let s2 = w2.bias;
  const dense = f.dense;
  for (let i = 0; i < DENSE_DIM; i++) {
    s1 += w1.dense[i]! * ((dense[i]! - w1.mean[i]!) / w1.std[i]!);
    s2 += w2.dense[i]! * ((dense[i]! - w2.mean[i]!) / w2.std[i]!);
  }
  const idx = f.idx;
  const val = f.val;
  if (hashed) {
    // w1's and w2's hashed weights interleaved as in `LMContext.hashed` (the same numbers).
    let s3 = 0;
    for (let i = 0; i < idx.length; i++) {
      const j = HASHED_STRIDE * idx[i]!;
      const v = val[i]!;
      s1 += hashed[j + HASHED_DOCUMENT]! * v;
      s2 += hashed[j + HASHED_POLISH]! * v;
      s3 += hashed[j + HASHED_ASSISTANT]! * v;
    }
    return [s1, s2, s3];
  }
  const sparse1 = w1.sparse;
  const sparse2 = w2.sparse;
  for (let i = 0; i < idx.length; i++) {
    const j = idx[i]!;
    const v = val[i]!;
    s1 += sparse1[j]! * v;
    s2 += sparse2[j]! * v;
  }
  return [s1, s2, 0];
}

/** `LMContext.hashed`: the short-text lexical model's, the document model's, the polish head's and the assistant head's hashed weights, interleaved. */
export function interleaveHashed(
  shortLex: Float32Array,
  document: Float32Array,
  polish: Float32Array,
  assistant?: Float32Array,
): Float32Array {
  const table = new Float32Array(HASHED_STRIDE * HASH_DIM);
  for (let j = 0; j < HASH_DIM; j++) {
    table[HASHED_STRIDE * j + HASHED_SHORT_LEX] = shortLex[j]!;
    table[HASHED_STRIDE * j + HASHED_DOCUMENT] = document[j]!;
    table[HASHED_STRIDE * j + HASHED_POLISH] = polish[j]!;
    table[HASHED_STRIDE * j + HASHED_ASSISTANT] = assistant?.[j] ?? 0;
  }
  return table;
}

/** The trees' input: the raw dense features followed by the linear model's logit. */
export function stackedInput(f: FeatureVector, linearLogit: number, out = new Float64Array(DENSE_DIM + 1)): Float64Array {
  out.set(f.dense);
  out[DENSE_DIM] = linearLogit;
  return out;
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Probabilities leave the engine at four decimals (the API's precision). */
export function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

export function calibrate(logit: number, c: GroupCalibration): number {
  return sigmoid(c.a * logit + c.b);
}

/** The array `prefix.name` of an artifact; a missing one means the artifact predates this code. */
function arrayOf<T extends Float32Array | Uint32Array>(arrays: ArtifactArrays, prefix: string, name: string): T {
  const a = arrays[`${prefix}.${name}`];
  if (!a) throw new Error(`Model artifact lacks the array ${prefix}.${name}; retrain with \`npm run train\`.`);
  return a as T;
}

export function lmArraysFrom(arrays: ArtifactArrays, prefix: string): BigramArrays {
  return {
    keys: arrayOf<Uint32Array>(arrays, prefix, 'keys'),
    logp: arrayOf<Float32Array>(arrays, prefix, 'logp'),
    logGamma: arrayOf<Float32Array>(arrays, prefix, 'logGamma'),
    logUni: arrayOf<Float32Array>(arrays, prefix, 'logUni'),
    mu: arrayOf<Float32Array>(arrays, prefix, 'mu'),
    sigma2: arrayOf<Float32Array>(arrays, prefix, 'sigma2'),
  };
}

/** A character LM of an artifact (`prefix` `char.human` or `char.ai`). */
export function charLMFrom(arrays: ArtifactArrays, prefix: string): CharLM {
  return new CharLM({
    ctxKeys: arrayOf<Uint32Array>(arrays, prefix, 'ctxKeys'),
    ctxLogGamma: arrayOf<Float32Array>(arrays, prefix, 'ctxLogGamma'),
    ctxMu: arrayOf<Float32Array>(arrays, prefix, 'ctxMu'),
    ctxSigma2: arrayOf<Float32Array>(arrays, prefix, 'ctxSigma2'),
    keys: arrayOf<Uint32Array>(arrays, prefix, 'keys'),
    logp: arrayOf<Float32Array>(arrays, prefix, 'logp'),
    logUni: arrayOf<Float32Array>(arrays, prefix, 'logUni'),
  });
}

/** The short-text lexical model of an artifact. */
export function shortLexFrom(arrays: ArtifactArrays): ShortLexWeights {
  return { bias: arrayOf<Float32Array>(arrays, 'shortlex', 'bias')[0]!, weights: arrayOf<Float32Array>(arrays, 'shortlex', 'weights') };
}

/** The tagger and tag LMs of an artifact; a model without them predates the part-of-speech features. */
export function posContextFrom(header: Pick<ArtifactHeader, 'pos' | 'version'>, arrays: ArtifactArrays): PosContext {
  const p = header.pos;
  const need = (name: string): Float32Array | Uint32Array => {
    const a = arrays[name];
    if (!a) throw new Error(`Model artifact ${header.version} lacks the array ${name}.`);
    return a;
  };
  if (!p) throw new Error(`Model artifact ${header.version} lacks its part-of-speech tagger; retrain with \`npm run train\`.`);
  const lm = (side: string): PosLMArrays => ({
    logp: need(`pos.${side}.logp`) as Float32Array,
    mu: need(`pos.${side}.mu`) as Float32Array,
    sigma2: need(`pos.${side}.sigma2`) as Float32Array,
  });
  return {
    tagger: { nTags: p.tags.length, vocabTag: need('pos.vocabTag') as Uint32Array, suffix: new Map(p.suffix), defaultTag: p.defaultTag },
    human: lm('human'),
    ai: lm('ai'),
  };
}

/**
 * The trees' margin blended with the linear logit they were stacked on. Held out by source, the
 * linear model transfers better than the trees (which learn interactions of one source's style)
 * and the trees are better in domain; an even blend was better than either held out by source and by
 * generator (CHANGELOG.md, `scripts/probe-lm.ts`).
 */
export function blendScores(treeMargin: number, linearLogit: number, linearWeight: number): number {
  return (1 - linearWeight) * treeMargin + linearWeight * linearLogit;
}

export class LoadedModel {
  readonly version: string;
  readonly lm: LMContext;
  readonly weights: LinearWeights;
  readonly header: ArtifactHeader;
  readonly forest: Forest | undefined;
  private readonly linearWeight: number;
  /** The polished-vs-generated head (`header.polish`), when the artifact has one. */
  private readonly polish: PolishHead | undefined;
  /** The polish head's linear sum of a run-time vector, taken with the document model's (`rawLogit`). */
  readonly #polishBase = new WeakMap<FeatureVector, number>();
  readonly #assistantInput = new Float64Array(DENSE_DIM + 2);
  /** The assistant head's hashed sum of a run-time vector, taken in the same pass. */
  readonly #assistantHashed = new WeakMap<FeatureVector, number>();
  private readonly stack = new Float64Array(DENSE_DIM + 1);
  /** The assistant head (`header.assistant`), when the artifact has one. */
  private readonly assistant: AssistantHead | undefined;

  constructor(header: ArtifactHeader, arrays: ArtifactArrays) {
    this.header = header;
    this.version = header.version;
    if (header.hashBits !== Math.log2(HASH_DIM) || header.dense.names.length !== DENSE_DIM) {
      throw new Error(
        `Model ${header.version} was trained with a different feature layout than this code; retrain with \`npm run train\`.`,
      );
    }
    // Answers as a Map of each word to its position would (src/detector/features.ts).
    const vocab = new Vocabulary(header.vocab);
    this.lm = {
      pos: posContextFrom(header, arrays),
      vocab,
      human: new BigramLM(lmArraysFrom(arrays, 'human')),
      ai: new BigramLM(lmArraysFrom(arrays, 'ai')),
      cross: {
        mu: arrays['cross.mu'] as Float32Array,
        sigma2: arrays['cross.sigma2'] as Float32Array,
      },
      char: { human: charLMFrom(arrays, 'char.human'), ai: charLMFrom(arrays, 'char.ai') },
      shortLex: shortLexFrom(arrays),
    };
    if (!this.lm.cross.mu || !this.lm.cross.sigma2) throw new Error('Model artifact lacks the cross moments.');
    const dense = arrays['w.dense'] as Float32Array | undefined;
    const sparse = arrays['w.sparse'] as Float32Array | undefined;
    if (!dense || !sparse) throw new Error('Model artifact lacks its weights.');
    this.weights = {
      bias: header.bias,
      dense,
      sparse,
      mean: Float64Array.from(header.dense.mean),
      std: Float64Array.from(header.dense.std),
    };
    this.linearWeight = header.forest?.linearWeight ?? 0;
    this.polish = polishHeadFrom(header, arrays);
    this.assistant = assistantHeadFrom(header, arrays);
    if (this.assistant && !this.polish)
      throw new Error(`Model artifact ${header.version}: an assistant head needs the polish head's table.`);
    if (this.polish) this.lm.hashed = interleaveHashed(this.lm.shortLex.weights, sparse, this.polish.sparse, this.assistant?.linear.sparse);
    if (header.forest) {
      const feat = arrays['gb.feature'];
      const thr = arrays['gb.threshold'] as Float32Array | undefined;
      const leaf = arrays['gb.leaf'] as Float32Array | undefined;
      if (!feat || !thr || !leaf) throw new Error('Model artifact lacks its trees.');
      this.forest = {
        ...header.forest,
        feature: new Int32Array(feat.buffer, feat.byteOffset, feat.length),
        threshold: thr,
        leaf,
      };
    }
  }

  features(lower: string, language: Language): FeatureVector {
    return extractFeatures(lower, language, this.lm, true);
  }

  /**
   * Uncalibrated score: the trees' margin over [dense features, linear logit] blended with that logit, or the logit alone.
   * For a run-time vector (`f.tokens`) the polish head's bias, dense and hashed sum is taken in the
   * same pass (`linearScorePair`) and kept for `polishedProbability` of the same vector.
   */
  rawLogit(f: FeatureVector): number {
    if (this.polish && f.tokens) {
      const [lin, polishBase, assistantHashed] = linearScorePair(f, this.weights, this.polish, this.lm.hashed);
      this.#polishBase.set(f, polishBase);
      if (this.assistant) this.#assistantHashed.set(f, assistantHashed);
      return this.#raw(f, lin);
    }
    return this.#raw(f, linearScore(f, this.weights));
  }

  #raw(f: FeatureVector, lin: number): number {
    if (!this.forest) return lin;
    const margin = forestMargin(this.forest, stackedInput(f, lin, this.stack));
    return blendScores(margin, lin, this.linearWeight);
  }

  /**
   * Probability that an AI-touched text is a human's text polished or rewritten by an AI rather than
   * AI-written (0.5 = the operating point); undefined for an artifact without the head. `lower` is
   * the text `f` was extracted from and `raw` its `rawLogit`, which the head's own signals read.
   */
  polishedProbability(f: FeatureVector, lower: string, raw: number): number | undefined {
    const h = this.polish;
    if (!h) return undefined;
    const extras = needsExtras(h) ? polishExtras(lower, this.lm, raw, f.tokens) : undefined;
    return sigmoid(h.a * polishRaw(h, f, extras, this.#polishBase.get(f)) + h.b);
  }

  /**
   * The assistant head's margin of a vector and its `rawLogit`, with the bar it is read against, for
   * a text of the head's languages and lengths; undefined otherwise (and for an artifact without the head).
   */
  assistantReading(f: FeatureVector, raw: number, language: Language): { margin: number; bar: AssistantBar } | undefined {
    const bar = this.assistant && assistantBarFor(this.assistant, language, f.words);
    return bar && { margin: this.assistantMarginOf(f, raw)!, bar };
  }

  /** Whether the assistant head has a bar for passages read on their own in `language` (`AssistantBar.passage`). */
  hasAssistantPassageBar(language: Language): boolean {
    return this.assistant?.bars[language]?.some((b) => b.passage !== undefined) ?? false;
  }

  /** The assistant head's hashed weights, as the sentence model reads them (its column of the interleaved table); undefined without the head. */
  get assistantColumn(): HashedColumn | undefined {
    return this.assistant && this.lm.hashed ? { sparse: this.lm.hashed, stride: HASHED_STRIDE, offset: HASHED_ASSISTANT } : undefined;
  }

  /** The assistant head's margin of a vector and its `rawLogit`, for bars of the caller's own (an author's); undefined without the head. */
  assistantMarginOf(f: FeatureVector, raw: number): number | undefined {
    const head = this.assistant;
    return head && assistantMargin(head, f, raw, this.#assistantHashed.get(f), this.#assistantInput);
  }

  calibrationFor(language: Language, mode: Mode): GroupCalibration {
    const c = this.header.calibration;
    const found = c[`${language}:${mode}`] ?? c[`${language}:*`] ?? c['*:*'];
    if (!found) throw new Error(`Model ${this.version} has no calibration for ${language}/${mode}.`);
    return found;
  }

  /** Whether `language:mode` had its own calibration data (else a fallback is used). */
  hasOwnCalibration(language: Language, mode: Mode): boolean {
    return this.header.calibration[`${language}:${mode}`] !== undefined;
  }

  /** The out-of-domain score of a feature vector (0 when the artifact has no check for the language). */
  oodScore(f: FeatureVector, language: Language): { score: number; threshold: number; maxWords: number } | undefined {
    const o = this.header.ood?.[language];
    if (!o) return undefined;
    return { score: oodScore(f.dense, o), threshold: o.threshold, maxWords: o.maxWords };
  }
}

/** Mean squared clipped z-score of the chosen dense features (training and run time share this). */
export function oodScore(dense: ArrayLike<number>, o: { features: number[]; mean: number[]; std: number[]; clip: number }): number {
  let s = 0;
  for (let j = 0; j < o.features.length; j++) {
    const z = Math.max(-o.clip, Math.min(o.clip, (dense[o.features[j]!]! - o.mean[j]!) / o.std[j]!));
    s += z * z;
  }
  return s / Math.max(1, o.features.length);
}
