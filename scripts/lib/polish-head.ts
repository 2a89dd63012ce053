/**
 * Fitting the polished-vs-generated head (`src/detector/polish.ts`), shared by `npm run train` (which
 * fits it with the document model, or alone with `--refit-polish`) and `scripts/polish-cv.ts` (which
 * chooses its settings by grouped cross-validation on train).
 */
import type { ArtifactHeader } from '../../src/detector/artifact.ts';
import { DENSE_DIM, type FeatureVector } from '../../src/detector/features.ts';
import { trainForest, type GBDTOptions } from '../../src/detector/gbdt.ts';
import {
  POLISH_EXTRA_NAMES,
  polishLinear,
  polishRaw,
  polishTreeInput,
  type PolishExtraName,
  type PolishHead,
} from '../../src/detector/polish.ts';
import { adagradLogistic, fitPlatt, stableHash, type CorpusRow } from '../../src/detector/training.ts';
import { balancedCellWeights } from './weights.ts';

/**
 * The head's label of an AI text: 1 for a human's text polished, edited or rewritten by an AI (v4
 * `contribution` polished / rewritten, the MixSet `polish of human text` / `rewrite of human text`
 * generators, and with `rewrites` the sources whose AI texts are rewrites of a human text: the
 * Learning-to-Rewrite sources and the Turkish satire rewritten as news), 0 for text an AI wrote (AI
 * text paraphrased or humanised by an AI counts as AI-written).
 */
export function polishLabel(row: CorpusRow, rewrites = false): 0 | 1 {
  if (row.contribution === 'polished' || row.contribution === 'rewritten') return 1;
  if (row.contribution) return 0;
  if (rewrites && (row.source.startsWith('l2r-') || row.source === 'tr-satire-rewrite')) return 1;
  return /polish of human text|rewrite of human text/i.test(row.generator) ? 1 : 0;
}

/**
 * Whether a text sets the head's operating point (`calibratePolish`): the polishes the first head was
 * fitted on. An assistant family's polishes (`mirror_of`, v5) train the head but do not move it: they
 * are harder to tell, and reading 85% of them as polished would headline more written texts so.
 */
export function isPolishReference(row: CorpusRow): boolean {
  return polishLabel(row) === 1 && row.mirror_of === undefined;
}

export interface PolishSample {
  row: CorpusRow;
  /** The document model's features of the text (cross-fitted in training). */
  f: FeatureVector;
  /** `polishExtras` of the text (under the same fold's LMs and weights). */
  extras: Float64Array;
  y: 0 | 1;
}

export interface PolishFitOptions {
  epochs: number;
  lr: number;
  l2Dense: number;
  l2Sparse: number;
  /** Multiplies the hashed features (0: the head reads no hashed features). */
  sparseScale: number;
  seed: number;
  /** Exponent of the (source, label) cell balancing (see `polishWeights`). */
  balance: number;
  /** The extras the head reads (names of POLISH_EXTRA_NAMES). */
  extras: readonly PolishExtraName[];
  /** Trees over [dense, extras] blended with the linear logit (`linearWeight`), or none. */
  trees?: GBDTOptions & { linearWeight: number };
}

/** Each (source, label) cell weighs (mean cell size / its size)^balance, then both labels weigh the same in total (mean 1). */
export function polishWeights(samples: readonly PolishSample[], balance: number): number[] {
  return balancedCellWeights(
    samples,
    (s) => `${s.row.source}|${s.y}`,
    (s) => s.y,
    balance,
  );
}

/**
 * Fits the head (uncalibrated: a = 1, b = 0) on `samples`. The linear part is AdaGrad logistic
 * regression over the standardised dense features (`mean` / `std`, the detector's), the chosen
 * extras (standardised on these samples) and the hashed features, as `trainLogistic` fits the
 * document model.
 */
export function fitPolishHead(
  samples: readonly PolishSample[],
  weights: readonly number[],
  mean: Float64Array,
  std: Float64Array,
  o: PolishFitOptions,
): PolishHead {
  const index = o.extras.map((n) => POLISH_EXTRA_NAMES.indexOf(n));
  const ne = index.length;
  const eMean = index.map((k) => samples.reduce((a, s) => a + s.extras[k]!, 0) / samples.length);
  const eStd = index.map((k, j) => Math.sqrt(samples.reduce((a, s) => a + (s.extras[k]! - eMean[j]!) ** 2, 0) / samples.length) || 1);
  const dim = DENSE_DIM + ne;
  const zs = samples.map((s) => {
    const z = new Float64Array(dim);
    for (let k = 0; k < DENSE_DIM; k++) z[k] = (s.f.dense[k]! - mean[k]!) / std[k]!;
    for (let j = 0; j < ne; j++) z[DENSE_DIM + j] = (s.extras[index[j]!]! - eMean[j]!) / eStd[j]!;
    return z;
  });
  const fit = adagradLogistic(
    samples.map((s, r) => ({ z: zs[r]!, f: s.f, y: s.y, w: weights[r]! })),
    dim,
    o,
  );
  const head: PolishHead = {
    bias: fit.bias,
    a: 1,
    b: 0,
    dense: fit.dense.slice(0, DENSE_DIM),
    sparse: fit.sparse,
    mean,
    std,
    ...(ne > 0 ? { extra: { index, mean: eMean, std: eStd, weights: Array.from(fit.dense.subarray(DENSE_DIM)) } } : {}),
  };
  if (o.trees) {
    const forest = trainForest(
      samples.map((s) => polishTreeInput(head, s.f, s.extras)),
      samples.map((s) => s.y),
      [...weights],
      o.trees,
    );
    head.forest = { ...forest, linearWeight: o.trees.linearWeight };
  }
  return head;
}

/** The head's uncalibrated score of a sample. */
export function polishScore(h: PolishHead, s: Pick<PolishSample, 'f' | 'extras'>): number {
  return h.forest ? polishRaw(h, s.f, s.extras) : polishLinear(h, s.f, s.extras);
}

/**
 * Platt scaling of out-of-fold scores, shifted so that 0.5 is the point at which `recall` of the
 * polished texts that `reference` marks read as polished.
 */
export function calibratePolish(
  oof: readonly number[],
  labels: readonly number[],
  weights: readonly number[],
  recall: number,
  reference: readonly boolean[],
): { a: number; b: number } {
  const platt = fitPlatt([...oof], [...labels], [...weights]);
  const polished = oof
    .map((s, j) => (labels[j] === 1 && reference[j] ? platt.a * s + platt.b : Number.NaN))
    .filter((x) => !Number.isNaN(x))
    .sort((x, z) => x - z);
  const cut = polished[Math.min(polished.length - 1, Math.floor((1 - recall) * polished.length))] ?? 0;
  return { a: platt.a, b: platt.b - cut };
}

/**
 * Out-of-fold scores of `samples` under folds `foldOf` (the head fitted without each fold in turn);
 * the weights of each round are those of its own training samples.
 */
export function outOfFold(
  samples: readonly PolishSample[],
  foldOf: readonly number[],
  folds: number,
  mean: Float64Array,
  std: Float64Array,
  o: PolishFitOptions,
): number[] {
  const oof = new Array<number>(samples.length).fill(0);
  for (let k = 0; k < folds; k++) {
    const idx = samples.map((_, i) => i).filter((i) => foldOf[i] !== k);
    const train = idx.map((i) => samples[i]!);
    const head = fitPolishHead(train, polishWeights(train, o.balance), mean, std, { ...o, seed: o.seed + k });
    samples.forEach((s, i) => {
      if (foldOf[i] === k) oof[i] = polishScore(head, s);
    });
  }
  return oof;
}

/**
 * Groups of AI texts made from one human original: within a family of sources (APT-Eval and MixSet
 * share their originals), texts whose content words (4+ letters) overlap by Jaccard ≥ 0.3 are joined.
 */
function groupsOf(rows: readonly CorpusRow[]): string[] {
  const family = (r: CorpusRow): string | undefined => {
    if (r.source === 'apt-polished' || r.source === 'mixset-revised') return 'mixset';
    if (['gede-essays', 'imbd-revised', 'tr-satire-rewrite'].includes(r.source) || r.source.startsWith('l2r-')) return r.source;
    return undefined;
  };
  const parent = rows.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const byFamily = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const f = family(r);
    if (f) byFamily.set(f, [...(byFamily.get(f) ?? []), i]);
  });
  for (const members of byFamily.values()) {
    const sets = members.map((i) => new Set(rows[i]!.text.toLowerCase().match(/\p{L}{4,}/gu) ?? []));
    for (let a = 0; a < members.length; a++)
      for (let b = a + 1; b < members.length; b++) {
        const A = sets[a]!;
        const B = sets[b]!;
        let inter = 0;
        for (const w of A) if (B.has(w)) inter++;
        const union = A.size + B.size - inter;
        if (union > 0 && inter / union >= 0.3) parent[find(members[a]!)] = find(members[b]!);
      }
  }
  return rows.map((r, i) => rows[find(i)]!.id ?? r.id);
}

/** The fold of each text for the head's own cross-validation: by group (`groupsOf`), so a group's texts share a fold. */
export function polishFolds(rows: readonly CorpusRow[], folds: number): number[] {
  return groupsOf(rows).map((g) => stableHash(`polish:${g}`) % folds);
}

export const POLISH_FOLDS = 4;

/**
 * The head fitted on `samples` with `o`, calibrated on its own out-of-fold scores over group folds
 * (`polishFolds`): Platt scaling, shifted so that 0.5 is where `recall` of the polished texts read
 * as polished. Those are the texts the first head was fitted on (v4's polished and rewritten texts
 * and MixSet's polishes; `polishLabel` without the rewrite sources), so that the operating point,
 * and POLISHED_THRESHOLD above it, keep their meaning when the rewrite sources train the head too.
 * Also returns those out-of-fold probabilities.
 */
export function trainPolishHead(
  samples: readonly PolishSample[],
  mean: Float64Array,
  std: Float64Array,
  o: PolishFitOptions,
  recall: number,
): { head: PolishHead; oof: number[] } {
  const folds = polishFolds(
    samples.map((s) => s.row),
    POLISH_FOLDS,
  );
  const oofRaw = outOfFold(samples, folds, POLISH_FOLDS, mean, std, o);
  const weights = polishWeights(samples, o.balance);
  const head = fitPolishHead(samples, weights, mean, std, o);
  const { a, b } = calibratePolish(
    oofRaw,
    samples.map((s) => s.y),
    weights,
    recall,
    samples.map((s) => isPolishReference(s.row)),
  );
  head.a = a;
  head.b = b;
  return { head, oof: oofRaw.map((s) => 1 / (1 + Math.exp(-(a * s + b)))) };
}

/** The head as an artifact stores it: `header.polish` and the `polish.*` arrays. */
export function polishArtifact(h: PolishHead): {
  header: NonNullable<ArtifactHeader['polish']>;
  arrays: Record<string, Float32Array | Uint32Array>;
} {
  const f = h.forest;
  return {
    header: {
      bias: h.bias,
      a: h.a,
      b: h.b,
      ...(h.extra
        ? {
            extra: {
              names: h.extra.index.map((k) => POLISH_EXTRA_NAMES[k]!),
              mean: h.extra.mean,
              std: h.extra.std,
              weights: h.extra.weights,
            },
          }
        : {}),
      ...(f ? { forest: { depth: f.depth, nTrees: f.nTrees, nFeatures: f.nFeatures, base: f.base, linearWeight: f.linearWeight } } : {}),
    },
    arrays: {
      'polish.dense': h.dense,
      'polish.sparse': h.sparse,
      ...(f
        ? {
            'polish.gb.feature': new Uint32Array(f.feature.buffer, f.feature.byteOffset, f.feature.length),
            'polish.gb.threshold': f.threshold,
            'polish.gb.leaf': f.leaf,
          }
        : {}),
    },
  };
}
