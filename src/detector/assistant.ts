/**
 * The assistant head (issue 38): a second reader of the document model's features, trained by
 * `npm run train:assistant` on one assistant family's texts (`v5-*`, a 2026 chat assistant) against
 * human texts, each mirror's own human twin first.
 *
 * Why a head and not a retrain: retraining the document model with the family (docs/detector.md,
 * "Today's assistants") learnt to rank it, but moved every older source's scores with it and lowered
 * what is found on them. The head leaves the document model's score as it is and only ever raises
 * it, and only where its own out-of-fold bars say it is sure enough: from `veto` a text is not
 * cleared as human, from `fire` it is likely AI. The bars were set on held-out human texts of every
 * source, so the humans it lifts are counted, source by source.
 */
import type { ArtifactArrays, ArtifactHeader, AssistantBar } from './artifact.ts';
import { DENSE_DIM, HASH_DIM, type FeatureVector } from './features.ts';
import { forestMargin, type Forest } from './gbdt.ts';
import type { Language } from './types.ts';

/** The head's linear part: over the standardised dense features and the raw score (÷ `rawScale`), and the hashed features. */
export interface AssistantLinear {
  bias: number;
  /** DENSE_DIM + 1 weights: the dense features', then the raw score's. */
  dense: Float32Array;
  /** Per hashed feature (length HASH_DIM). */
  sparse: Float32Array;
  rawScale: number;
  /** The document model's standardisation of the dense features. */
  mean: ArrayLike<number>;
  std: ArrayLike<number>;
}

export interface AssistantHead {
  linear: AssistantLinear;
  /** Trees over [dense features, raw score, linear logit], their margin blended with the logit. */
  forest: Forest | undefined;
  linearWeight: number;
  /** Per language, ascending by `minWords`; a language or length without a bar is left to the document model. */
  bars: Record<string, AssistantBar[]>;
}

/** Highest probability the head gives on its own: it never claims certainty. */
const LIFT_CAP = 0.999;
/**
 * Between the veto and fire bars the probability rises with this power of the margin's way from one
 * to the other: the people the head vetoes sit near the veto bar and move least, the family's texts
 * further up move most (a straight rise, tried, lifted more of the older sources' people over their AI texts).
 */
const VETO_RISE = 2;

export function assistantHeadFrom(header: ArtifactHeader, arrays: ArtifactArrays): AssistantHead | undefined {
  const a = header.assistant;
  if (!a) return undefined;
  const dense = arrays['assistant.dense'] as Float32Array | undefined;
  const sparse = arrays['assistant.sparse'] as Float32Array | undefined;
  if (!dense || !sparse || dense.length !== DENSE_DIM + 1 || sparse.length !== HASH_DIM)
    throw new Error(`Model artifact ${header.version} lacks the weights of its assistant head.`);
  let forest: Forest | undefined;
  if (a.forest) {
    const feat = arrays['assistant.gb.feature'];
    const threshold = arrays['assistant.gb.threshold'] as Float32Array | undefined;
    const leaf = arrays['assistant.gb.leaf'] as Float32Array | undefined;
    if (!feat || !threshold || !leaf || a.forest.nFeatures !== DENSE_DIM + 2)
      throw new Error(`Model artifact ${header.version} lacks the trees of its assistant head, or they read another feature layout.`);
    forest = { ...a.forest, feature: new Int32Array(feat.buffer, feat.byteOffset, feat.length), threshold, leaf };
  }
  return {
    linear: {
      bias: a.bias,
      dense,
      sparse,
      rawScale: a.rawScale,
      mean: Float64Array.from(header.dense.mean),
      std: Float64Array.from(header.dense.std),
    },
    forest,
    linearWeight: a.linearWeight,
    bars: a.bars,
  };
}

/**
 * The artifact as its document model alone: the head's header and arrays taken out, the version the
 * document model had (`trainedOn.documentModel`). `npm run train:assistant` refits a head on it, and
 * tests of the document model's own rules read it.
 */
export function withoutAssistantHead(header: ArtifactHeader, arrays: ArtifactArrays): { header: ArtifactHeader; arrays: ArtifactArrays } {
  const a = header.assistant;
  if (!a) return { header, arrays };
  const { assistant: _head, ...rest } = header;
  const kept = Object.fromEntries(Object.entries(arrays).filter(([name]) => !name.startsWith('assistant.')));
  return { header: { ...rest, version: String(a.trainedOn.documentModel) }, arrays: kept };
}

/** The head's hashed sum of a vector (at run time it comes from the shared table, `linearScorePair`). */
export function assistantSparseSum(sparse: Float32Array, f: Pick<FeatureVector, 'idx' | 'val'>): number {
  let s = 0;
  for (let i = 0; i < f.idx.length; i++) s += sparse[f.idx[i]!]! * f.val[i]!;
  return s;
}

/** The linear logit: bias and dense terms, then the hashed sum (`assistantSparseSum`), in that order in training and at run time. */
export function assistantLinear(h: AssistantLinear, dense: ArrayLike<number>, raw: number, sparseSum: number): number {
  let x = h.bias;
  for (let k = 0; k < DENSE_DIM; k++) x += h.dense[k]! * ((dense[k]! - h.mean[k]!) / h.std[k]!);
  x += h.dense[DENSE_DIM]! * (raw / h.rawScale);
  return x + sparseSum;
}

/** The trees' input: the dense features, the raw score and the linear logit. */
export function assistantTreeInput(
  dense: ArrayLike<number>,
  raw: number,
  linear: number,
  out: Float64Array = new Float64Array(DENSE_DIM + 2),
): Float64Array {
  for (let k = 0; k < DENSE_DIM; k++) out[k] = dense[k]!;
  out[DENSE_DIM] = raw;
  out[DENSE_DIM + 1] = linear;
  return out;
}

/** The head's margin from its linear logit (`assistantLinear`); `scratch` holds the trees' input. */
export function assistantBlend(
  head: Pick<AssistantHead, 'forest' | 'linearWeight'>,
  dense: ArrayLike<number>,
  raw: number,
  linear: number,
  scratch?: Float64Array,
): number {
  if (!head.forest) return linear;
  return (1 - head.linearWeight) * forestMargin(head.forest, assistantTreeInput(dense, raw, linear, scratch)) + head.linearWeight * linear;
}

/** The head's margin of a vector and its raw score; `sparseSum` when the caller already has it. */
export function assistantMargin(head: AssistantHead, f: FeatureVector, raw: number, sparseSum?: number, scratch?: Float64Array): number {
  const linear = assistantLinear(head.linear, f.dense, raw, sparseSum ?? assistantSparseSum(head.linear.sparse, f));
  return assistantBlend(head, f.dense, raw, linear, scratch);
}

/** The bar of a text of `words` words in `language`, if the head reads such texts. */
export function assistantBarFor(head: Pick<AssistantHead, 'bars'>, language: Language, words: number): AssistantBar | undefined {
  let bar: AssistantBar | undefined;
  for (const b of head.bars[language] ?? []) if (words >= b.minWords) bar = b;
  return bar;
}

/**
 * The bar a part of a text (a run of sentences, a passage) is confirmed against: its `fire` where the
 * head made the whole text likely AI, elsewhere the stricter `passage` (a part is the stretch picked
 * for looking generated: from `fire`, 55 words of a person's dev text joined with another were a
 * `high` span); without a passage bar the part is only kept from being cleared.
 */
export function confirmingBar(bar: AssistantBar, wholeReadByHead: boolean): AssistantBar {
  return wholeReadByHead ? bar : { ...bar, fire: bar.passage };
}

const ceil4 = (x: number): number => Math.ceil(x * 10000 - 1e-9) / 10000;

/**
 * The probability after the head: `p` itself under the veto bar; from it at least the `likely_human`
 * threshold (the text is not cleared), rising towards the bar's `ceiling` as the margin nears the
 * fire bar, or the `rise` of a band that only ranks (VETO_RISE), so the texts the head vetoes are
 * ranked by how sure it is, yet stay under the point where the older sources' people are called AI
 * at 1%; without a ceiling, at that threshold and no higher. From the fire bar at least the `likely_ai` threshold, rising with the margin towards
 * LIFT_CAP. Never lower than `p`, at four decimals as `p` is, and the verdict read off it agrees with the bars.
 */
export function liftedProbability(
  p: number,
  margin: number,
  bar: Pick<AssistantBar, 'veto' | 'fire' | 'ceiling' | 'rise'>,
  aiThreshold: number,
  humanThreshold: number,
): number {
  if (margin < bar.veto) return p;
  if (bar.fire === undefined || margin < bar.fire) {
    const floor = ceil4(humanThreshold);
    // Never up to likely_ai from a veto: the top stays a step under its threshold.
    const top = Math.min(bar.ceiling ?? 0, Math.floor(aiThreshold * 10000 - 1) / 10000);
    // A band that only ranks (`rise`) reaches its ceiling there and stays at it above.
    const end = bar.fire ?? bar.rise;
    if (end === undefined || top <= floor) return Math.max(p, floor);
    const way = Math.min(1, (margin - bar.veto) / (end - bar.veto));
    return Math.max(p, Math.min(top, ceil4(floor + (top - floor) * way ** VETO_RISE)));
  }
  const lifted = ceil4(aiThreshold + (LIFT_CAP - aiThreshold) * (1 - Math.exp(bar.fire - margin)));
  return Math.max(p, lifted, ceil4(aiThreshold));
}
