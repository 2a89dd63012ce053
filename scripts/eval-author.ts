/**
 * `npm run eval:author [-- options]`: runs the engine's `detectAuthor` (the committed detector.bin
 * and author.json, or --model / --author-model) on author windows of labelled JSONL files and prints,
 * per window size, AUROC, the share of AI authors and of human authors called `likely_ai` (overall
 * and for the worst human source) and `likely_human`, how many windows had too little evidence for a verdict, and
 * the time per call.
 *
 * Lines with an `author` field are one message of that author (in file order); lines without one are
 * texts whose sentences are sent as one author's messages. Default input: authors-train.jsonl,
 * corpus-dev.jsonl and extra-dev.jsonl — the windows author.json was calibrated on, so not held out
 * (`npm run train:author` prints the leave-one-author-out figures); pass held-out files with --input.
 *
 * Options: --input FILE[,FILE…], --sizes 5,10,20 (messages per window), --markdown, --model PATH,
 *          --author-model PATH, --assistant-margin (also the AUROC of the assistant head's margin
 *          on each window's messages pooled into one text, as the member check pools them before
 *          reading it against author.json's bars).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readArtifact } from '../src/detector/artifact.ts';
import { poolMessages } from '../src/detector/author.ts';
import { createDetector, DEFAULT_MODEL_PATH, type Language } from '../src/detector/index.ts';
import { LoadedModel } from '../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { auroc } from '../src/detector/metrics.ts';
import { authorsFromFile, windowRanges, type Author } from './author-windows.ts';
import { table } from './lib/table.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INPUT = (arg('--input') ?? '../shared/data/authors-train.jsonl,../shared/data/corpus-dev.jsonl,../shared/data/extra-dev.jsonl')
  .split(',')
  .filter(Boolean)
  .map((f) => resolve(ROOT, f));
const SIZES = (arg('--sizes') ?? '1,3,5,10,20').split(',').map(Number);
const MARKDOWN = process.argv.includes('--markdown');
const ASSISTANT_MARGIN = process.argv.includes('--assistant-margin');
const printTable = (head: string[], rows: string[][]): string => table(head, rows, MARKDOWN, false);

const detector = await createDetector({
  ...(arg('--model') ? { model: resolve(arg('--model')!) } : {}),
  ...(arg('--author-model') ? { authorModel: resolve(arg('--author-model')!) } : {}),
});

/** The model's assistant head, read on a window's messages pooled as `detectAuthor` pools them (--assistant-margin). */
const headReader = (() => {
  if (!ASSISTANT_MARGIN) return undefined;
  const { header, arrays } = readArtifact(arg('--model') ? resolve(arg('--model')!) : DEFAULT_MODEL_PATH);
  if (!header.assistant) throw new Error(`--assistant-margin: model ${header.version} has no assistant head.`);
  const model = new LoadedModel(header, arrays);
  return (messages: string[], language: Language): number => {
    const f = model.features(lowerForFeatures(normalize(poolMessages(messages)).text, language), language);
    return model.assistantMarginOf(f, model.rawLogit(f))!;
  };
})();

interface Result {
  author: Author;
  p: number;
  /** The assistant head's margin (--assistant-margin), else NaN. */
  margin: number;
  flagged: boolean;
  cleared: boolean;
  held: boolean;
}

const authors = INPUT.flatMap((f) => authorsFromFile(f));
const rows: string[][] = [];
const sourceRows: string[][] = [];
const pct = (x: number): string => (Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`);
for (const n of SIZES) {
  const results: Result[] = [];
  let ms = 0;
  for (const a of authors) {
    for (const [s, e] of windowRanges(a.messages.length, n)) {
      const t = performance.now();
      const r = detector.detectAuthor(a.messages.slice(s, e), { mode: a.mode });
      ms += performance.now() - t;
      const margin = headReader ? headReader(a.messages.slice(s, e), a.language) : Number.NaN;
      results.push({
        author: a,
        p: r.ai_probability,
        margin,
        flagged: r.verdict === 'likely_ai',
        cleared: r.verdict === 'likely_human',
        held: r.evidence_needed !== null,
      });
    }
  }
  if (results.length === 0) continue;
  const rate = (xs: Result[]): number => (xs.length ? xs.filter((x) => x.flagged).length / xs.length : Number.NaN);
  const clearedRate = (xs: Result[]): number => (xs.length ? xs.filter((x) => x.cleared).length / xs.length : Number.NaN);
  const ai = results.filter((r) => r.author.y === 1);
  const human = results.filter((r) => r.author.y === 0);
  const bySource = new Map<string, Result[]>();
  for (const r of human) bySource.set(r.author.source, [...(bySource.get(r.author.source) ?? []), r]);
  const worst = [...bySource].map(([s, xs]) => [s, rate(xs), xs.length] as const).sort((x, y) => y[1] - x[1] || y[2] - x[2])[0];
  rows.push([
    String(n),
    `${ai.length} / ${human.length}`,
    auroc(
      results.map((r) => r.p),
      results.map((r) => r.author.y),
    ).toFixed(3),
    pct(rate(ai)),
    pct(rate(human)),
    pct(clearedRate(ai)),
    pct(clearedRate(human)),
    worst ? `${worst[0]} ${pct(worst[1])} of ${worst[2]}` : '–',
    pct(results.filter((r) => r.held).length / results.length),
    (ms / results.length).toFixed(2),
    ...(headReader
      ? [
          auroc(
            results.map((r) => r.margin),
            results.map((r) => r.author.y),
          ).toFixed(3),
        ]
      : []),
  ]);
  const sources = [...new Set(results.map((r) => r.author.source.replace(/:.*/, '')))].sort();
  for (const s of sources) {
    const xs = results.filter((r) => r.author.source.replace(/:.*/, '') === s);
    const y = xs.map((r) => r.author.y);
    sourceRows.push([
      String(n),
      s,
      `${y.filter((v) => v === 1).length} / ${y.filter((v) => v === 0).length}`,
      new Set(y).size === 2
        ? auroc(
            xs.map((r) => r.p),
            y,
          ).toFixed(3)
        : '–',
      pct(rate(xs.filter((r) => r.author.y === 1))),
      pct(rate(xs.filter((r) => r.author.y === 0))),
    ]);
  }
}

console.log(`model ${detector.model}; ${authors.length} authors from ${INPUT.length} file(s)`);
console.log(
  printTable(
    [
      'messages',
      'AI / human windows',
      'AUROC',
      'AI likely_ai',
      'human likely_ai',
      'AI likely_human',
      'human likely_human',
      'worst human source',
      'too little evidence',
      'ms per call',
      ...(headReader ? ['AUROC of the head’s margin'] : []),
    ],
    rows,
  ),
);
console.log('\nBy source (accounts of one source pooled):');
console.log(printTable(['messages', 'source', 'AI / human windows', 'AUROC', 'AI likely_ai', 'human likely_ai'], sourceRows));
