/**
 * Detector engine entry point. `createDetector()` loads the committed model artifact
 * (`models/detector.bin`, resolved relative to this module, not the working directory).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readArtifact } from './artifact.ts';
import { readAuthorModel } from './author.ts';
import { TextDetector } from './engine.ts';
import { LoadedModel } from './model.ts';
import type { Detector } from './types.ts';

export * from './types.ts';

/**
 * Path of the artifact that `npm run train` writes and the repository commits. This module runs from
 * `src/detector/` (tsx, tests) or from `dist/src/detector/` (the build, an installed package), and the
 * artifact stays at the package root in both cases, so the first existing candidate wins.
 */
export const DEFAULT_MODEL_PATH = defaultModelPath('detector.bin');
/** The author-level calibration that `npm run train:author` writes, found the same way. */
export const DEFAULT_AUTHOR_MODEL_PATH = defaultModelPath('author.json');

function defaultModelPath(file: string): string {
  const candidates = [`../../models/${file}`, `../../../models/${file}`].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
}

export interface CreateDetectorOptions {
  /** Path of a model artifact written by `npm run train`; default the committed `models/detector.bin`. */
  model?: string;
  /** Path of an author model written by `npm run train:author`; default the committed `models/author.json`. */
  authorModel?: string;
}

/** Loads a model artifact (synchronously read, ~0.1–0.3 s) and the author model, and returns a detector bound to them. */
export async function createDetector(options: CreateDetectorOptions = {}): Promise<Detector> {
  const { header, arrays } = readArtifact(options.model ?? DEFAULT_MODEL_PATH);
  return new TextDetector(new LoadedModel(header, arrays), readAuthorModel(options.authorModel ?? DEFAULT_AUTHOR_MODEL_PATH));
}
