/**
 * Out-of-fold copies of the shipped document model, for fitting what is stacked on its raw score.
 *
 * `npm run train` cross-fits: a training text's LM features come from LMs built without its fold,
 * and its calibration score from a linear model and trees trained without its fold. Anything
 * fitted on top of the raw score (the sentence and span model of `npm run train:segments`) needs
 * the same honesty, or it learns from scores the shipped model gives texts it has memorised. This
 * rebuilds the per-fold models exactly as `npm run train` does (same folds, vocabulary, tagger,
 * hyper-parameters, read from the artifact), and keeps them so each training text can be scored
 * piece by piece by the model of its own fold.
 */
import type { ArtifactArrays, ArtifactHeader } from '../../src/detector/artifact.ts';
import { DENSE_DIM, extractFeatures, tokenIds, tokenize, type FeatureVector, type LMContext } from '../../src/detector/features.ts';
import { forestMargin, trainForest, type Forest, type GBDTOptions } from '../../src/detector/gbdt.ts';
import { BigramLM, buildBigramLM, buildCrossMoments, type BigramArrays, type BuildOptions } from '../../src/detector/lm.ts';
import { blendScores, linearScore, posContextFrom, stackedInput, type LinearWeights } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { buildPosLM, tagSequence, type PosLMArrays, type PosLMOptions, type PosTagger } from '../../src/detector/pos.ts';
import { loadBrown, stableHash, trainLogistic, type CorpusRow, type LROptions, type TrainRow } from '../../src/detector/training.ts';
import type { Language } from '../../src/detector/types.ts';

/** Exponent of the per-source balancing of sample weights (`npm run train`'s default; not stored in the artifact). */
const BALANCE = 0.5;

/** One fold's model as plain arrays (so it can be cached with `v8.serialize`). */
export interface FoldModelData {
  human: BigramArrays;
  ai: BigramArrays;
  cross: { mu: Float32Array; sigma2: Float32Array };
  posHuman: PosLMArrays;
  posAi: PosLMArrays;
  weights: LinearWeights;
  forest: Forest | undefined;
  linearWeight: number;
}

export interface FoldModels {
  folds: number;
  /** The fold of a training text (as `npm run train` assigns it). */
  foldOf(row: CorpusRow): number;
  /** Fold k's LMs and tagger, as `LoadedModel.lm` holds the shipped ones. */
  lm: LMContext[];
  /** Raw score of a piece of normalised text under fold model k (the computation of `LoadedModel.rawLogit`). */
  rawLogit(k: number, text: string, language: Language): { raw: number; features: FeatureVector };
}

interface Doc {
  row: CorpusRow;
  lower: string;
  ids: Uint16Array;
  tags: Uint8Array;
  fold: number;
  y: 0 | 1;
}

/** Rebuilds the per-fold models of `npm run train` (a few minutes: LMs, linear models and trees per fold). */
export function buildFoldModelData(
  header: ArtifactHeader,
  arrays: ArtifactArrays,
  trainRows: CorpusRow[],
  log: (msg: string) => void,
): FoldModelData[] {
  const t = header.training as {
    folds: number;
    seed: number;
    lm: BuildOptions;
    pos: PosLMOptions;
    classifier: LROptions;
    trees: GBDTOptions | null;
  };
  const folds = t.folds;
  const vocab = new Map(header.vocab.map((w, i) => [w, i] as [string, number]));
  const tagger = posContextFrom(header, arrays).tagger;
  const brownTokens = loadBrown().map((text) => tokenize(lowerForFeatures(normalize(text).text, 'en')));
  const brownIds = brownTokens.map((tokens) => tokenIds(tokens, vocab));
  const brownTags = brownTokens.map((tokens, i) => tagSequence(tokens, brownIds[i]!, tagger));
  const docs: Doc[] = trainRows.map((row) => {
    const lower = lowerForFeatures(normalize(row.text).text, row.language);
    const tokens = tokenize(lower);
    const ids = tokenIds(tokens, vocab);
    return { row, lower, ids, tags: tagSequence(tokens, ids, tagger), fold: stableHash(row.id) % folds, y: row.label === 'ai' ? 1 : 0 };
  });

  const lmData: Array<Pick<FoldModelData, 'human' | 'ai' | 'cross' | 'posHuman' | 'posAi'>> = [];
  const feats: FeatureVector[] = new Array(docs.length);
  for (let k = 0; k < folds; k++) {
    const human = docs.filter((d) => d.fold !== k && d.y === 0);
    const ai = docs.filter((d) => d.fold !== k && d.y === 1);
    const h = buildBigramLM([...brownIds, ...human.map((d) => d.ids)], vocab.size, t.lm);
    const a = buildBigramLM(
      ai.map((d) => d.ids),
      vocab.size,
      t.lm,
    );
    const data = {
      human: h,
      ai: a,
      cross: buildCrossMoments(a, h),
      posHuman: buildPosLM([...brownTags, ...human.map((d) => d.tags)], tagger.nTags, t.pos),
      posAi: buildPosLM(
        ai.map((d) => d.tags),
        tagger.nTags,
        t.pos,
      ),
    };
    lmData.push(data);
    const ctx = lmContext(vocab, tagger, data);
    docs.forEach((d, i) => {
      if (d.fold === k) feats[i] = extractFeatures(d.lower, d.row.language, ctx);
    });
    log(`fold ${k + 1}/${folds}: LMs and features`);
  }

  const mean = new Float64Array(DENSE_DIM);
  const std = new Float64Array(DENSE_DIM);
  for (const f of feats) for (let j = 0; j < DENSE_DIM; j++) mean[j]! += f.dense[j]!;
  for (let j = 0; j < DENSE_DIM; j++) mean[j]! /= feats.length;
  for (const f of feats) for (let j = 0; j < DENSE_DIM; j++) std[j]! += (f.dense[j]! - mean[j]!) ** 2;
  for (let j = 0; j < DENSE_DIM; j++) std[j] = Math.sqrt(std[j]! / feats.length) || 1;
  const cell = (d: Doc): string => `${d.row.source}|${d.row.mode}|${d.y}`;
  const counts = new Map<string, number>();
  for (const d of docs) counts.set(cell(d), (counts.get(cell(d)) ?? 0) + 1);
  const meanSize = docs.length / counts.size;
  const w0 = docs.map((d) => (meanSize / counts.get(cell(d))!) ** BALANCE);
  const avg = w0.reduce((a, b) => a + b, 0) / w0.length;
  const rows: TrainRow[] = docs.map((d, i) => {
    const f = feats[i]!;
    const z = new Float64Array(DENSE_DIM);
    for (let j = 0; j < DENSE_DIM; j++) z[j] = (f.dense[j]! - mean[j]!) / std[j]!;
    return { f, z, y: d.y, w: w0[i]! / avg };
  });

  const weights: LinearWeights[] = [];
  const oof = new Array<number>(docs.length);
  for (let k = 0; k < folds; k++) {
    const w = trainLogistic(
      rows.filter((_, i) => docs[i]!.fold !== k),
      mean,
      std,
      { ...t.classifier, seed: t.seed + k },
    );
    weights.push(w);
    docs.forEach((d, i) => {
      if (d.fold === k) oof[i] = linearScore(feats[i]!, w);
    });
  }
  log('fold linear models');
  const forests: Array<Forest | undefined> = [];
  const linearWeight = header.forest?.linearWeight ?? 0;
  if (t.trees && header.forest) {
    const xs = docs.map((_, i) => stackedInput(feats[i]!, oof[i]!));
    for (let k = 0; k < folds; k++) {
      const idx = docs.map((_, i) => i).filter((i) => docs[i]!.fold !== k);
      forests.push(
        trainForest(
          idx.map((i) => xs[i]!),
          idx.map((i) => docs[i]!.y),
          idx.map((i) => rows[i]!.w),
          t.trees,
        ),
      );
      log(`fold ${k + 1}/${folds}: trees`);
    }
  } else for (let k = 0; k < folds; k++) forests.push(undefined);

  return lmData.map((data, k) => ({ ...data, weights: weights[k]!, forest: forests[k], linearWeight }));
}

function lmContext(
  vocab: Map<string, number>,
  tagger: PosTagger,
  d: Pick<FoldModelData, 'human' | 'ai' | 'cross' | 'posHuman' | 'posAi'>,
): LMContext {
  return { vocab, human: new BigramLM(d.human), ai: new BigramLM(d.ai), cross: d.cross, pos: { tagger, human: d.posHuman, ai: d.posAi } };
}

/** Scorers over fold models built by `buildFoldModelData` (or read back from a cache). */
export function foldModels(header: ArtifactHeader, arrays: ArtifactArrays, data: FoldModelData[]): FoldModels {
  const vocab = new Map(header.vocab.map((w, i) => [w, i] as [string, number]));
  const tagger = posContextFrom(header, arrays).tagger;
  const lm = data.map((d) => lmContext(vocab, tagger, d));
  const stack = new Float64Array(DENSE_DIM + 1);
  const folds = data.length;
  return {
    folds,
    foldOf: (row) => stableHash(row.id) % folds,
    lm,
    rawLogit(k, text, language) {
      const m = data[k]!;
      const features = extractFeatures(lowerForFeatures(text, language), language, lm[k]!);
      const lin = linearScore(features, m.weights);
      if (!m.forest) return { raw: lin, features };
      return { raw: blendScores(forestMargin(m.forest, stackedInput(features, lin, stack)), lin, m.linearWeight), features };
    },
  };
}
