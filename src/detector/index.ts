/**
 * Detector engine entry point. `createDetector()` loads the committed model artifact
 * (`models/detector.bin`, resolved relative to this module, not the working directory).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readArtifact } from './artifact.ts';
import { withoutAssistantHead } from './assistant.ts';
import { readAuthorModel } from './author.ts';
import { TextDetector } from './engine.ts';
import type { HashedColumn } from './features.ts';
import { LoadedModel } from './model.ts';
import { lowerForFeatures, normalize } from './normalize.ts';
import { parseSegmentModel, probeFamilySum, type SegmentModel } from './segments.ts';
import type { Detector } from './types.ts';

export * from './types.ts';

/**
 * Path of the artifact that `npm run train` writes and the repository commits. This module runs from
 * `src/detector/` (tsx, tests) or from `dist/src/detector/` (the build, an installed package), and the
 * artifact stays at the package root in both cases, so the first existing candidate wins.
 */
export const DEFAULT_MODEL_PATH = packagePath('models/detector.bin');
/** The author-level calibration that `npm run train:author` writes, found the same way. */
export const DEFAULT_AUTHOR_MODEL_PATH = packagePath('models/author.json');
/** The sentence model that `npm run train:segments` writes next to it. */
export const DEFAULT_SEGMENT_MODEL_PATH = packagePath('models/segments.json');

function packagePath(file: string): string {
  const candidates = [`../../${file}`, `../../../${file}`].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
}

export interface CreateDetectorOptions {
  /** Path of a model artifact written by `npm run train`; default the committed `models/detector.bin`. */
  model?: string;
  /** Path of an author model written by `npm run train:author`; default the committed `models/author.json`. */
  authorModel?: string;
  /** Path of the sentence model (`npm run train:segments`); default the committed `models/segments.json`. */
  segmentModel?: string;
  /**
   * `false`: read the artifact's document model alone, without its assistant head (`assistant.ts`),
   * as it answered before the head was fitted on it; default `true`.
   */
  assistantHead?: boolean;
}

/**
 * Loads a model artifact (synchronously read, ~0.1–0.3 s), the author model and the sentence model,
 * and returns a detector bound to them. A sentence model fitted to another artifact's raw scores is not used:
 * documents are still scored, and `segments: true` throws an error that says so.
 */
export async function createDetector(options: CreateDetectorOptions = {}): Promise<Detector> {
  const artifact = readArtifact(options.model ?? DEFAULT_MODEL_PATH);
  const { header, arrays } = options.assistantHead === false ? withoutAssistantHead(artifact.header, artifact.arrays) : artifact;
  const model = new LoadedModel(header, arrays);
  const author = readAuthorModel(options.authorModel ?? DEFAULT_AUTHOR_MODEL_PATH);
  const segmentPath = options.segmentModel ?? DEFAULT_SEGMENT_MODEL_PATH;
  if (!existsSync(segmentPath)) {
    return new TextDetector(model, author, undefined, `There is no sentence model at ${segmentPath}; run \`npm run train:segments\`.`);
  }
  const segments = parseSegmentModel(readFileSync(segmentPath, 'utf8'), segmentPath);
  // Read without its head, the artifact's sentence model still reads the head's weights: they are
  // its evidence, not the document's score.
  const sparse = artifact.arrays['assistant.sparse'];
  const family = options.assistantHead === false && sparse instanceof Float32Array ? { sparse, stride: 1, offset: 0 } : undefined;
  return new TextDetector(model, author, segments, segmentModelMismatch(model, segments, segmentPath, family), family);
}

/**
 * Why a sentence model does not fit a model's raw scorer or assistant head (`family`, default the
 * model's own) (its probe texts score differently), or undefined.
 */
export function segmentModelMismatch(
  model: LoadedModel,
  segments: SegmentModel,
  path = 'segments.json',
  family: HashedColumn | undefined = model.assistantColumn,
): string | undefined {
  for (const probe of segments.scorer.probes) {
    const lower = lowerForFeatures(normalize(probe.text).text, probe.language);
    const f = model.features(lower, probe.language);
    if (Math.abs(model.rawLogit(f) - probe.rawLogit) > 1e-6) {
      return `The sentence model ${path} (${segments.version}) was fitted to the raw scores of ${segments.scorer.model}, not to those of ${model.version}; rebuild it with \`npm run train:segments\`.`;
    }
    if (probe.familySum === undefined) continue;
    if (!family || Math.abs(probeFamilySum(lower, family) - probe.familySum) > 1e-4) {
      return `The sentence model ${path} (${segments.version}) reads the assistant head of ${segments.scorer.model}, which ${model.version} does not have; rebuild it with \`npm run train:segments\`.`;
    }
  }
  return undefined;
}
