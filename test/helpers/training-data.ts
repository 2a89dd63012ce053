/**
 * The project's training data (../shared/data beside the checkout; README.md, "Training data") is not
 * in the repository. The tests that measure the engine on its dev files skip without it; the test
 * reporter reads this list to say so at the end of a run, next to the counts, rather than leave 11
 * skipped tests unexplained.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * ../shared/data beside the checkout. TEXTDETECT_TEST_DATA_DIR points the tests elsewhere
 * (test/detector/bench-texts.test.ts uses it to run the suite as a checkout without the data would).
 */
export const TRAINING_DATA_DIR = process.env.TEXTDETECT_TEST_DATA_DIR || fileURLToPath(new URL('../../../shared/data/', import.meta.url));

/** A file of the training data, by name (`corpus-dev.jsonl`). */
export function trainingDataFile(name: string): string {
  return join(TRAINING_DATA_DIR, name);
}

/** Test files with cases that run only when the data is there (test/detector/bench-texts.test.ts keeps the list honest). */
export const TRAINING_DATA_TEST_FILES = [
  'test/detector/assistant.test.ts',
  'test/detector/attacks.test.ts',
  'test/detector/author-assistant.test.ts',
  'test/detector/author.test.ts',
  'test/detector/eval.test.ts',
  'test/detector/polish.test.ts',
  'test/detector/segments.test.ts',
  'test/detector/short-calibration.test.ts',
  'test/detector/verdict.test.ts',
  'test/web/words.test.ts',
  'test/words/contradictions.test.ts',
];

export const HAS_TRAINING_DATA = ['corpus-dev.jsonl', 'extra-dev.jsonl', 'authors-train.jsonl'].every((file) =>
  existsSync(trainingDataFile(file)),
);

export const NO_TRAINING_DATA_MESSAGE =
  'skipped: they measure the engine on the training data, which is not in the repository ' +
  '(expected in ../shared/data beside the checkout; README.md, "Training data", says what it is and where it goes).';
