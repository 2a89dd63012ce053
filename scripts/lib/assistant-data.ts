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
import type { AssistantHead } from '../../src/detector/assistant.ts';
import type { LoadedModel } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { passageBounds, segmentRanges } from '../../src/detector/segments.ts';
import { readJsonl, type CorpusRow } from '../../src/detector/training.ts';
import type { Language } from '../../src/detector/types.ts';
import { foldModels, type FoldModelData } from './fold-models.ts';
import { neutralise } from './shortcuts.ts';
import { hasTells, injectTells, stripTells } from './tells.ts';

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
  /**
   * A copy made for the word tells (train only, `scripts/lib/tells.ts`): a family text with its tells
   * taken out (`stripped`), or a person's text with tells put in (`injected`, source `<source>+tells`).
   * Or one passage of a person's text of two or more (`passage`, `segments.ts` `passageBounds`),
   * read on its own: never fitted on, it sets the bar of passages (`AssistantBar.passage`).
   */
  variant?: 'stripped' | 'injected' | 'passage';
  /** A passage's text: the id of the text it is part of. */
  of?: string;
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

/** Share of English human training texts given an injected copy (deterministic by id). */
const INJECTED_SHARE = 1 / 3;

/** Whether a person's text gets an injected copy: English, one in three by its id. */
function injects(row: FamilyRow): boolean {
  if (row.label !== 'human' || row.language !== 'en') return false;
  let h = 0;
  for (let i = 0; i < row.id.length; i++) h = (Math.imul(h, 31) + row.id.charCodeAt(i)) >>> 0;
  return (h % 1000) / 1000 < INJECTED_SHARE;
}

/**
 * The training texts, cross-fitted by the fold models in `foldCache`, with the word tells' copies
 * (`variant`): each family text that has tells, stripped of them; a third of the English human
 * texts, with tells put in; and the passages of every English human text of two passages or more.
 * A copy keeps its original's fold, so it is never read by a fold model or a head that saw the original.
 */
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
      const norm = normalize(row.text).text;
      const { raw, features } = fm.rawLogit(k, norm, row.language);
      out.push(sample(row, file, features, raw, k));
      // A copy or a passage is not a mirror: it has no twin.
      const { mirror_of: _twin, ...original } = row;
      const family = file === FAMILY_CORPUS && row.label === 'ai';
      const copy = family && hasTells(row.text) ? stripTells(row.text) : injects(row) ? injectTells(row.text, row.id) : undefined;
      if (copy !== undefined) {
        const variant = family ? 'stripped' : 'injected';
        const c = fm.rawLogit(k, normalize(copy).text, row.language);
        const s = sample({ ...original, id: `${row.id}~${variant}` }, file, c.features, c.raw, k);
        out.push({ ...s, variant, ...(variant === 'injected' ? { source: `${row.source}+tells` } : {}) });
      }
      if (row.label === 'human' && row.language === 'en') {
        const ranges = segmentRanges(norm, row.language);
        const passages = passageBounds(ranges.map((r) => r.words));
        if (passages.length >= 2)
          passages.forEach((p, j) => {
            const c = fm.rawLogit(k, norm.slice(ranges[p.first]!.start, ranges[p.last]!.end), row.language);
            out.push({
              ...sample({ ...original, id: `${row.id}~passage${j}` }, file, c.features, c.raw, k),
              variant: 'passage',
              of: row.id,
            });
          });
      }
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

/**
 * The head of each fold (`npm run train:assistant -- --fold-heads FILE`), fitted without that fold's
 * texts, so `npm run train:segments` reads each training text with a head that did not see it (its
 * sentences' hashed weights, and its runs scored as documents against the shipped head's bars).
 * `model`: the artifact the shipped head is in.
 */
export interface FoldHeads {
  model: string;
  heads: Record<number, Omit<AssistantHead, 'bars'>>;
}
