/**
 * The texts the assistant head (`src/detector/assistant.ts`) is fitted and measured on, each with the
 * document model's features and raw score as `npm run train:assistant` reads them:
 *
 * - train: every training text of the older corpora and of the family (`v5-train`), scored by the
 *   fold model that did not see it (the per-fold models of the run that built the shipped model,
 *   `npm run train -- --fold-models FILE`): a mirror shares its twin's fold, so neither was in the
 *   LMs that score them;
 * - dev: every dev text, scored by the shipped model itself, as the service scores it.
 *
 * Shortcuts are neutralised as `npm run train` does, a mirror by the rule of its twin's source.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import type { ArtifactArrays, ArtifactHeader } from '../../src/detector/artifact.ts';
import type { LoadedModel } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { readJsonl, type CorpusRow } from '../../src/detector/training.ts';
import type { Language } from '../../src/detector/types.ts';
import { foldModels, type FoldModelData } from './fold-models.ts';
import { neutralise } from './shortcuts.ts';

/** The older corpora (what the document model was trained on) and the family's file. */
export const OLDER_CORPORA = ['corpus', 'extra', 'v3', 'v4'] as const;
export const FAMILY_CORPUS = 'v5';

export interface FamilyRow extends CorpusRow {
  task?: string;
  mirror_of?: string;
  domain?: string;
}

export interface AssistantSample {
  id: string;
  /** The corpus file (`corpus`, …, `v5`). */
  file: string;
  source: string;
  mode: string;
  language: Language;
  generator: string;
  /** 0 human, 1 the family's text, 2 another AI text (measured, not fitted on). */
  kind: 0 | 1 | 2;
  task?: string;
  mirrorOf?: string;
  words: number;
  dense: Float64Array;
  /** The hashed sparse features (`FeatureVector.idx` / `val`). */
  idx: Int32Array;
  val: Float32Array;
  raw: number;
  /** The fold that did not see it (train only). */
  fold: number;
}

/** Rows neutralised as `npm run train` neutralises them: a mirror by its twin's source's rule. */
export function neutralisedRows(rows: FamilyRow[]): FamilyRow[] {
  const asDomain = rows.map((r) => (r.domain ? { ...r, source: r.domain } : r));
  const kept = neutralise(asDomain).rows as FamilyRow[];
  const sourceOf = new Map(rows.map((r) => [r.id, r.source]));
  return kept.map((r) => (r.source === sourceOf.get(r.id) ? r : { ...r, source: sourceOf.get(r.id)! }));
}

function sample(
  row: FamilyRow,
  file: string,
  features: { dense: Float64Array; idx: Int32Array; val: Float32Array; words: number },
  raw: number,
  fold: number,
): AssistantSample {
  return {
    id: row.id,
    file,
    source: row.source,
    mode: row.mode,
    language: row.language,
    generator: row.generator,
    kind: row.label === 'human' ? 0 : file === FAMILY_CORPUS ? 1 : 2,
    ...(row.task ? { task: row.task } : {}),
    ...(row.mirror_of ? { mirrorOf: row.mirror_of } : {}),
    words: features.words,
    dense: features.dense,
    idx: features.idx,
    val: features.val,
    raw,
    fold,
  };
}

const FILES = [...OLDER_CORPORA, FAMILY_CORPUS];

/** The training texts, cross-fitted by the fold models in `foldCache`. */
export function trainSamples(
  data: string,
  header: ArtifactHeader,
  arrays: ArtifactArrays,
  foldCache: string,
  log: (msg: string) => void,
): AssistantSample[] {
  const fm = foldModels(header, arrays, v8.deserialize(readFileSync(foldCache)) as FoldModelData[]);
  const out: AssistantSample[] = [];
  for (const file of FILES) {
    const rows = neutralisedRows(readJsonl<FamilyRow>(join(data, `${file}-train.jsonl`)));
    rows.forEach((row, n) => {
      const k = fm.foldOf(row);
      const { raw, features } = fm.rawLogit(k, normalize(row.text).text, row.language);
      out.push(sample(row, file, features, raw, k));
      if (n % 5000 === 0) log(`${file}-train: ${n} of ${rows.length}`);
    });
  }
  return out;
}

/** The dev texts, scored by the shipped model (in the record's language). */
export function devSamples(data: string, model: LoadedModel): AssistantSample[] {
  const out: AssistantSample[] = [];
  for (const file of FILES) {
    for (const row of readJsonl<FamilyRow>(join(data, `${file}-dev.jsonl`))) {
      const f = model.features(lowerForFeatures(normalize(row.text).text, row.language), row.language);
      out.push(sample(row, file, f, model.rawLogit(f), -1));
    }
  }
  return out;
}
