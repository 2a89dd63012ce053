/**
 * Detector engine entry point. `createDetector()` loads the committed model artifact
 * (`models/detector.bin`, resolved relative to this module, not the working directory).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readArtifact } from './artifact.ts';
import { TextDetector } from './engine.ts';
import { LoadedModel } from './model.ts';
import type { Detector } from './types.ts';

export * from './types.ts';

/**
 * Path of the artifact that `npm run train` writes and the repository commits. This module runs from
 * `src/detector/` (tsx, tests) or from `dist/src/detector/` (the build, an installed package), and the
 * artifact stays at the package root in both cases, so the first existing candidate wins.
 */
export const DEFAULT_MODEL_PATH = defaultModelPath();

function defaultModelPath(): string {
  const candidates = ['../../models/detector.bin', '../../../models/detector.bin'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
}

export interface CreateDetectorOptions {
  /** Path of a model artifact written by `npm run train`; default the committed `models/detector.bin`. */
  model?: string;
}

/** Loads a model artifact (synchronously read, ~0.1–0.3 s) and returns a detector bound to it. */
export async function createDetector(options: CreateDetectorOptions = {}): Promise<Detector> {
  const { header, arrays } = readArtifact(options.model ?? DEFAULT_MODEL_PATH);
  return new TextDetector(new LoadedModel(header, arrays));
}
