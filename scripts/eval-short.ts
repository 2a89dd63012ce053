/**
 * `npm run eval:short [-- options]`: how honest single texts' probabilities are by length, on
 * held-out data: the dev texts themselves, and excerpts of them (1, 2, 3 and 5 consecutive
 * sentences from a start fixed by a hash — what a chat message cut from a longer text looks like).
 * Per length band (15–40, 40–80, 80–150, 150+ words): n, AUROC, ECE (10 bins), ECE with the two
 * classes weighing the same (the dev files' class mix within a band is an accident of their
 * account-grouped splits: 129 human and 27 AI tweets), ECE with every source and class weighing the
 * same, and the mean probability of the human texts.
 *
 * Options: --input FILE[,FILE…] (default corpus-dev and extra-dev), --markdown, --model PATH.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDetector, UnsupportedLanguageError, type Language, type Mode } from '../src/detector/index.ts';
import { countWords } from '../src/detector/engine.ts';
import { auroc } from '../src/detector/metrics.ts';
import { readJsonl, stableHash, type CorpusRow } from '../src/detector/training.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INPUT = (arg('--input') ?? '../shared/data/corpus-dev.jsonl,../shared/data/extra-dev.jsonl').split(',').map((f) => resolve(ROOT, f));
const MARKDOWN = process.argv.includes('--markdown');
const BANDS: Array<[string, number, number]> = [
  ['15–40', 15, 40],
  ['40–80', 40, 80],
  ['80–150', 80, 150],
  ['150+', 150, Number.POSITIVE_INFINITY],
];
const EXCERPT_SENTENCES = [1, 2, 3, 5];

const detector = await createDetector(arg('--model') ? { model: resolve(arg('--model')!) } : {});

interface Item {
  p: number;
  y: 0 | 1;
  words: number;
  source: string;
}

function score(text: string, row: CorpusRow): Item | undefined {
  try {
    const r = detector.detect(text, { mode: row.mode as Mode });
    return { p: r.ai_probability, y: row.label === 'ai' ? 1 : 0, words: countWords(text, r.language), source: row.source };
  } catch (err) {
    if (err instanceof UnsupportedLanguageError) return undefined;
    throw err;
  }
}

/** ECE over 10 bins with per-item weights. */
function weightedEce(items: Item[], weight: (i: Item) => number): number {
  const sumW = new Float64Array(10);
  const sumP = new Float64Array(10);
  const sumY = new Float64Array(10);
  let total = 0;
  for (const it of items) {
    const b = Math.min(9, Math.floor(it.p * 10));
    const w = weight(it);
    sumW[b]! += w;
    sumP[b]! += w * it.p;
    sumY[b]! += w * it.y;
    total += w;
  }
  let e = 0;
  for (let b = 0; b < 10; b++) e += Math.abs(sumP[b]! - sumY[b]!);
  return total ? e / total : Number.NaN;
}

function rowsFor(name: string, items: Item[]): string[][] {
  return BANDS.map(([label, lo, hi]) => {
    const xs = items.filter((i) => i.words >= lo && i.words < hi);
    const count = (f: (i: Item) => boolean): number => xs.filter(f).length;
    const nAi = count((i) => i.y === 1);
    const nHuman = xs.length - nAi;
    const cells = new Map<string, number>();
    for (const i of xs) cells.set(`${i.source}|${i.y}`, (cells.get(`${i.source}|${i.y}`) ?? 0) + 1);
    const cellsPerClass = [0, 1].map((y) => [...cells.keys()].filter((k) => k.endsWith(`|${y}`)).length);
    const humans = xs.filter((i) => i.y === 0);
    return [
      name,
      label,
      `${nHuman} / ${nAi}`,
      auroc(
        xs.map((i) => i.p),
        xs.map((i) => i.y),
      ).toFixed(3),
      weightedEce(xs, () => 1).toFixed(3),
      weightedEce(xs, (i) => 1 / (i.y === 1 ? nAi : nHuman)).toFixed(3),
      weightedEce(xs, (i) => 1 / (cellsPerClass[i.y]! * cells.get(`${i.source}|${i.y}`)!)).toFixed(3),
      humans.length ? (humans.reduce((t, i) => t + i.p, 0) / humans.length).toFixed(3) : '–',
    ];
  });
}

const texts: Item[] = [];
const excerpts: Item[] = [];
const segmenters = new Map<Language, Intl.Segmenter>();
for (const file of INPUT) {
  for (const row of readJsonl<CorpusRow>(file)) {
    const whole = score(row.text, row);
    if (!whole) continue;
    texts.push(whole);
    const seg = segmenters.get(row.language) ?? new Intl.Segmenter(row.language, { granularity: 'sentence' });
    segmenters.set(row.language, seg);
    const sentences = [...seg.segment(row.text)].map((s) => s.segment);
    for (const n of EXCERPT_SENTENCES) {
      if (sentences.length <= n) continue;
      const start = stableHash(`${row.id}:${n}`) % (sentences.length - n + 1);
      const item = score(
        sentences
          .slice(start, start + n)
          .join('')
          .trim(),
        row,
      );
      if (item) excerpts.push(item);
    }
  }
}

const head = ['data', 'words', 'human / AI', 'AUROC', 'ECE', 'ECE, classes alike', 'ECE, sources alike', 'human mean p'];
const body = [...rowsFor('texts', texts), ...rowsFor('excerpts', excerpts)];
console.log(`model ${detector.model}; ${texts.length} texts, ${excerpts.length} excerpts (words as the engine counts them)`);
if (MARKDOWN)
  console.log(
    [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n'),
  );
else {
  const width = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  console.log([head, ...body].map((r) => r.map((c, i) => c.padEnd(width[i]!)).join('  ')).join('\n'));
}
