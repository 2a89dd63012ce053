/**
 * `npx tsx scripts/polish-cv.ts --fold-cache FILE [-- options]`: chooses the settings of the
 * polished-vs-generated head (`src/detector/polish.ts`) by cross-validation on the training data,
 * so that v4-dev stays a report set.
 *
 * FILE is the per-fold models of a training run (`npm run train -- --fold-models FILE`): every AI
 * training text gets the document model's features and raw score, and the head's own signals, from
 * the fold model that did not see it (exactly the cross-fitted features `npm run train` fits the
 * head on). The head is then fitted and scored out of fold over folds of *groups*: every AI text
 * made from the same human original (ImBD's several revisions of one text, APT-Eval's and MixSet's
 * polishes of one MixSet text, GEDE's jobs on one essay, which the corpus's hidden test split keeps
 * together) is in one fold, found by the overlap of their content words. Printed per configuration:
 * the out-of-fold AUROC between polished + rewritten and generated + humanized v4 training texts of
 * 40+ words (the population of the target), within GEDE and ImBD, and over every training source.
 *
 * Options: --model PATH (artifact whose vocabulary and tagger the folds share; default
 * models/detector.bin), --cache FILE (the computed samples, reused when present), --only a,b
 * (configurations by name), --loso (also each configuration fitted without GEDE, and without ImBD,
 * scored on that source), --data DIR.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { readArtifact } from '../src/detector/artifact.ts';
import { auroc } from '../src/detector/metrics.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { POLISH_EXTRA_NAMES, polishExtras } from '../src/detector/polish.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { foldModels, type FoldModelData } from './lib/fold-models.ts';
import {
  fitPolishHead,
  outOfFold,
  polishFolds,
  polishLabel,
  polishScore,
  polishWeights,
  type PolishFitOptions,
  type PolishSample,
} from './lib/polish-head.ts';
import { neutralise } from './lib/shortcuts.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const MODEL = resolve(ROOT, arg('--model') ?? 'models/detector.bin');
const FOLD_CACHE = arg('--fold-cache');
const CACHE = arg('--cache');
const ONLY = arg('--only')?.split(',');
const CORPORA = ['corpus', 'extra', 'v3', 'v4'];
const FOLDS = 4;
/** --loso: also fit each configuration without each of these sources and score that source. */
const LOSO = process.argv.includes('--loso');
const LOSO_SOURCES = ['gede-essays', 'imbd-revised'];
const EVIDENCE_WORDS = 40;

const t0 = Date.now();
const log = (msg: string): void => console.error(`[polish-cv ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

interface Cached {
  ids: string[];
  words: number[];
  samples: Array<{ dense: Float64Array; idx: Int32Array; val: Float32Array; words: number; extras: Float64Array }>;
}

function computeSamples(rows: CorpusRow[]): Cached {
  if (!FOLD_CACHE) throw new Error('--fold-cache FILE is needed (npm run train -- --fold-models FILE writes it).');
  const { header, arrays } = readArtifact(MODEL);
  const data = v8.deserialize(readFileSync(FOLD_CACHE)) as FoldModelData[];
  const fm = foldModels(header, arrays, data);
  const out: Cached = { ids: [], words: [], samples: [] };
  rows.forEach((row, n) => {
    const k = fm.foldOf(row);
    const text = normalize(row.text).text;
    const { raw, features } = fm.rawLogit(k, text, row.language);
    const extras = polishExtras(lowerForFeatures(text, row.language), fm.lm[k]!, raw);
    out.ids.push(row.id);
    out.words.push(features.words);
    out.samples.push({ ...features, extras });
    if (n % 2000 === 0) log(`${n} of ${rows.length} texts`);
  });
  return out;
}

const BASE: PolishFitOptions = { epochs: 8, lr: 0.1, l2Dense: 1e-4, l2Sparse: 1e-6, sparseScale: 1, seed: 101, balance: 0.5, extras: [] };
const ALL = [...POLISH_EXTRA_NAMES];
const TREES = { trees: 150, depth: 3, learningRate: 0.05, lambda: 1, minChildWeight: 5, bins: 64, linearWeight: 0.5 };
const CONFIGS: Array<{ name: string; o: PolishFitOptions; rewrites?: boolean }> = [
  { name: 'shipped', o: BASE },
  { name: 'extras', o: { ...BASE, extras: ALL } },
  { name: 'extras-no-raw', o: { ...BASE, extras: ALL.filter((n) => n !== 'raw') } },
  { name: 'raw-only', o: { ...BASE, extras: ['raw'] } },
  { name: 'sentences-only', o: { ...BASE, extras: ALL.filter((n) => n.startsWith('s_')) } },
  { name: 'extras-sparse0.5', o: { ...BASE, extras: ALL, sparseScale: 0.5 } },
  { name: 'extras-l2s1e-5', o: { ...BASE, extras: ALL, l2Sparse: 1e-5 } },
  { name: 'extras-dense-only', o: { ...BASE, extras: ALL, sparseScale: 0 } },
  { name: 'extras-balance1', o: { ...BASE, extras: ALL, balance: 1 } },
  { name: 'extras-trees', o: { ...BASE, extras: ALL, trees: TREES } },
  { name: 'extras-rewrites', o: { ...BASE, extras: ALL }, rewrites: true },
  // Second round, around the two that helped (hashed features scaled down, trees).
  { name: 'trees-no-extras', o: { ...BASE, trees: TREES } },
  { name: 'extras-trees-sparse0.5', o: { ...BASE, extras: ALL, sparseScale: 0.5, trees: TREES } },
  { name: 'extras-trees-lw0.3', o: { ...BASE, extras: ALL, trees: { ...TREES, linearWeight: 0.3 } } },
  { name: 'extras-trees-lw0.7', o: { ...BASE, extras: ALL, trees: { ...TREES, linearWeight: 0.7 } } },
  { name: 'extras-trees300-d4', o: { ...BASE, extras: ALL, trees: { ...TREES, trees: 300, depth: 4 } } },
  { name: 'extras-trees-balance1', o: { ...BASE, extras: ALL, balance: 1, trees: TREES } },
  { name: 'extras-trees-rewrites', o: { ...BASE, extras: ALL, trees: TREES }, rewrites: true },
  { name: 'extras-sparse0.25', o: { ...BASE, extras: ALL, sparseScale: 0.25 } },
  // Third round: the rewrite sources as polished, with trees, and the settings around them.
  { name: 'extras-trees-rewrites-sparse0.5', o: { ...BASE, extras: ALL, sparseScale: 0.5, trees: TREES }, rewrites: true },
  { name: 'extras-trees-rewrites-lw0.3', o: { ...BASE, extras: ALL, trees: { ...TREES, linearWeight: 0.3 } }, rewrites: true },
  {
    name: 'extras-trees-rewrites-sparse0.5-lw0.3',
    o: { ...BASE, extras: ALL, sparseScale: 0.5, trees: { ...TREES, linearWeight: 0.3 } },
    rewrites: true,
  },
  { name: 'trees-rewrites-no-extras', o: { ...BASE, trees: TREES }, rewrites: true },
];

async function main(): Promise<void> {
  const rows = neutralise(CORPORA.flatMap((c) => readJsonl<CorpusRow>(join(DATA, `${c}-train.jsonl`)))).rows.filter(
    (r) => r.label === 'ai',
  );
  log(`${rows.length} AI training texts`);
  let cached: Cached;
  if (CACHE && existsSync(CACHE)) cached = v8.deserialize(readFileSync(CACHE)) as Cached;
  else {
    cached = computeSamples(rows);
    if (CACHE) writeFileSync(CACHE, v8.serialize(cached));
  }
  if (cached.ids.length !== rows.length || cached.ids.some((id, i) => id !== rows[i]!.id)) throw new Error('the cache is of other texts');
  const { header } = readArtifact(MODEL);
  const mean = Float64Array.from(header.dense.mean);
  const std = Float64Array.from(header.dense.std);
  const fold = polishFolds(rows, FOLDS);
  const results: string[] = [];
  for (const c of CONFIGS.filter((x) => !ONLY || ONLY.includes(x.name))) {
    const samples: PolishSample[] = rows.map((row, i) => {
      const s = cached.samples[i]!;
      return { row, f: { dense: s.dense, idx: s.idx, val: s.val, words: s.words }, extras: s.extras, y: polishLabel(row, c.rewrites) };
    });
    const oof = outOfFold(samples, fold, FOLDS, mean, std, c.o);
    const aucOf = (keep: (r: CorpusRow, i: number) => boolean): string => {
      const idx = rows.map((_, i) => i).filter((i) => keep(rows[i]!, i));
      const y = idx.map((i) => (rows[i]!.contribution === 'polished' || rows[i]!.contribution === 'rewritten' ? 1 : 0));
      if (!y.includes(1) || !y.includes(0)) return '–';
      return auroc(
        idx.map((i) => oof[i]!),
        y,
      ).toFixed(3);
    };
    const v4 = (r: CorpusRow, i: number): boolean => r.contribution !== undefined && cached.words[i]! >= EVIDENCE_WORDS;
    const cells = [
      c.name,
      aucOf(v4),
      aucOf((r, i) => v4(r, i) && r.source === 'gede-essays'),
      aucOf((r, i) => v4(r, i) && r.source === 'imbd-revised'),
      auroc(
        oof,
        samples.map((s) => s.y),
      ).toFixed(3),
    ];
    if (LOSO) {
      // The head fitted without a source, on that source's texts: what it learnt that is not the source's own.
      for (const src of LOSO_SOURCES) {
        const rest = samples.filter((s) => s.row.source !== src);
        const head = fitPolishHead(rest, polishWeights(rest, c.o.balance), mean, std, c.o);
        const own = samples.map((_, i) => i).filter((i) => v4(rows[i]!, i) && rows[i]!.source === src);
        cells.push(
          auroc(
            own.map((i) => polishScore(head, samples[i]!)),
            own.map((i) => (rows[i]!.contribution === 'polished' || rows[i]!.contribution === 'rewritten' ? 1 : 0)),
          ).toFixed(3),
        );
      }
    }
    const line = cells.join(' | ');
    results.push(line);
    console.log(line);
    log(c.name);
  }
  const extraCols = LOSO ? LOSO_SOURCES.map((src) => ` ${src} held out |`).join('') : '';
  console.log(`\n| configuration | v4 train, out of fold (40+ words) | GEDE | ImBD | all training texts (own labels) |${extraCols}`);
  console.log(`| --- | --- | --- | --- | --- |${LOSO ? ' --- |'.repeat(LOSO_SOURCES.length) : ''}`);
  for (const l of results) console.log(`| ${l} |`);
}

await main();
