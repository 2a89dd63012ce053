/**
 * Out-of-fold copies of the shipped document model, for fitting what is stacked on its raw score.
 *
 * `npm run train` cross-fits: a training text's LM features come from LMs built without its fold,
 * and its calibration score from a linear model and trees trained without its fold. Anything
 * fitted on top of the raw score (the sentence and span model of `npm run train:segments`) needs
 * the same honesty, or it learns from scores the shipped model gives texts it has memorised.
 * `npm run train -- --fold-models FILE` writes its per-fold models; this turns them into scorers,
 * so each training text can be scored piece by piece by the model of its own fold.
 */
import type { ArtifactArrays, ArtifactHeader } from '../../src/detector/artifact.ts';
import { DENSE_DIM, extractFeatures, type FeatureVector, type LMContext, type ShortLexWeights } from '../../src/detector/features.ts';
import { forestMargin, type Forest } from '../../src/detector/gbdt.ts';
import { CharLM, type CharLMArrays } from '../../src/detector/charlm.ts';
import { BigramLM, type BigramArrays } from '../../src/detector/lm.ts';
import { blendScores, linearScore, posContextFrom, stackedInput, type LinearWeights } from '../../src/detector/model.ts';
import { lowerForFeatures } from '../../src/detector/normalize.ts';
import type { PosLMArrays, PosTagger } from '../../src/detector/pos.ts';
import { foldOf, type CorpusRow } from '../../src/detector/training.ts';
import type { Language } from '../../src/detector/types.ts';

/** One fold's model as plain arrays (so it can be cached with `v8.serialize`). */
export interface FoldModelData {
  human: BigramArrays;
  ai: BigramArrays;
  cross: { mu: Float32Array; sigma2: Float32Array };
  posHuman: PosLMArrays;
  posAi: PosLMArrays;
  charHuman: CharLMArrays;
  charAi: CharLMArrays;
  shortLex: ShortLexWeights;
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

function lmContext(
  vocab: Map<string, number>,
  tagger: PosTagger,
  d: Pick<FoldModelData, 'human' | 'ai' | 'cross' | 'posHuman' | 'posAi' | 'charHuman' | 'charAi' | 'shortLex'>,
): LMContext {
  return {
    vocab,
    human: new BigramLM(d.human),
    ai: new BigramLM(d.ai),
    cross: d.cross,
    pos: { tagger, human: d.posHuman, ai: d.posAi },
    char: { human: new CharLM(d.charHuman), ai: new CharLM(d.charAi) },
    shortLex: d.shortLex,
  };
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
    foldOf: (row) => foldOf(row, folds),
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
