/**
 * Detector engine entry point. `createDetector()` loads the committed model artifact
 * (`models/detector.bin`, resolved relative to this module, not the working directory).
 */
import { fileURLToPath } from 'node:url';
import { readArtifact } from './artifact.ts';
import { TextDetector } from './engine.ts';
import { LoadedModel } from './model.ts';
import type { Detector } from './types.ts';

export * from './types.ts';

/** Path of the artifact that `npm run train` writes and the repository commits. */
export const DEFAULT_MODEL_PATH = fileURLToPath(new URL('../../models/detector.bin', import.meta.url));

export interface CreateDetectorOptions {
  /** Path of a model artifact written by `npm run train`; default the committed `models/detector.bin`. */
  model?: string;
}

/** Loads a model artifact (synchronously read, ~0.1–0.3 s) and returns a detector bound to it. */
export async function createDetector(options: CreateDetectorOptions = {}): Promise<Detector> {
  const { header, arrays } = readArtifact(options.model ?? DEFAULT_MODEL_PATH);
  return new TextDetector(new LoadedModel(header, arrays));
}
