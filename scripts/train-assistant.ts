/**
 * `npm run train:assistant -- --fold-cache FILE [options]`: fits the assistant head (issue 38,
 * `src/detector/assistant.ts`) on the shipped document model and writes the model with it.
 *
 * The head is a logistic model over the document model's dense features, raw score and hashed
 * features, with small gradient-boosted trees stacked on it, trained on the family's training texts
 * (`v5-train`, a 2026 chat assistant) against every human training text, each mirror's own twin
 * weighted up so that the pairs, which differ in who wrote them and not in topic, teach the most.
 * Every training text is read with the features of the fold model that did not see it (FILE:
 * `npm run train -- --fold-models FILE` of the run that built the document model), and the head is
 * cross-fitted over the same pair-aware folds, so its bars are set on out-of-fold margins: per
 * language and length band, `fire` is the lowest margin at which every human source keeps at most
 * --source-max of its held-out humans likely AI (the document model's and the head's together) and
 * the head adds at most --pooled-fpr of all humans; `veto` lets at most --veto-fpr of any source's
 * humans stop being cleared, and a vetoed text rises from the likely_human threshold towards `ceiling`
 * as its margin nears `fire` (--ceiling-fpr). The bar of passages (`passage`, on the band of 100-word passages) is set
 * alike on the passages of held-out English human texts the head vetoes but does not make likely AI,
 * each text counted once (`segments.ts`, `assistantSpans`); it is never fitted on them. The document
 * model, its calibration and thresholds are kept byte for byte.
 *
 * Printed: each bar with what sets it and the share of the family's written texts (out of fold)
 * above each of the band's first three people, so how far single people hold the verdict back shows.
 * Then out of fold on train and on dev (the dev texts read by the shipped model as the service
 * reads them), before → after, the family per task and length band (likely_ai, likely_human), the
 * older files (AUROC, AI found at 1% FPR, humans called likely_ai per source), and with --loso each
 * of the family's genres held out of the head.
 *
 * Options:
 *   --fold-cache FILE   the fold models (needed unless --cache FILE already holds the samples)
 *   --cache FILE        keep the scored samples in FILE (v8) and reuse them
 *   --model PATH        the model to add the head to (default models/detector.bin)
 *   --out PATH          where to write it (default: --model)
 *   --data DIR          default ../shared/data
 *   --languages a,b     the languages where it may make a text likely_ai (default en)
 *   --veto-languages a,b  languages where it only vetoes likely_human (default tr: 184 of the family's
 *                       training texts, too few to set a fire bar that held on its humans)
 *   --fit-languages a,b the languages of the texts it is fitted on (default: both of the above)
 *   --trees N --depth D --gb-lr X     the head's trees (default 300, 3, 0.05); --no-trees: the linear part alone
 *   --linear-weight X   the linear logit's share of the margin (default 0.5)
 *   --epochs N --lr X --l2-sparse X --sparse-scale X   the linear part (default 8, 0.1, 1e-6, 1)
 *   --twin-weight X     a mirror's twin weighs 1 + X times a human text of its cell (default 8)
 *   --source-max X      per human source, with the document model's (default 0.002)
 *   --pooled-fpr X      added by the head, of all humans of a band (default 0.001)
 *   --veto-fpr X        per human source (default 0.2)
 *   --ceiling-fpr X     a vetoed text rises towards the probability above which X of the people of
 *                       every older file sit (default 0.02; 0: it stays at the likely_human threshold)
 *   --bands a,b         length bands' lower edges in words (default 40,100)
 *   --short-band N      a band from N words to the evidence floor (40) where the head only ranks a text
 *                       (AssistantBar.rise, set as fire is; no verdict is given there either way) (default 15; 0: none)
 *   --tells fit|bars|off  the word tells' copies (scripts/lib/tells.ts): fitted on and bounding the fire bar
 *                       (default fit), bounding it only, or not read
 *   --loso              also each of the family's genres held out of the head
 *   --fold-heads FILE   also write the head of each fold (v8; fitted without that fold's texts),
 *                       which `npm run train:segments` reads its training texts with (written with
 *                       --dry-run too)
 *   --list              list the dev texts of the family still called likely_human and the humans the head makes likely_ai
 *   --dry-run           measure, write nothing       --markdown   Markdown tables
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { createHash } from 'node:crypto';
import { readArtifact, writeArtifact, type ArtifactHeader, type AssistantBar } from '../src/detector/artifact.ts';
import {
  assistantBarFor,
  assistantBlend,
  assistantLinear,
  assistantSparseSum,
  assistantTreeInput,
  liftedProbability,
  type AssistantHead,
  type AssistantLinear,
  withoutAssistantHead,
} from '../src/detector/assistant.ts';
import { aiThresholdFor, calibrateForLength, humanThresholdFor, SHORT_TEXT_WORDS, verdictOf } from '../src/detector/engine.ts';
import { trainForest, type GBDTOptions } from '../src/detector/gbdt.ts';
import { auroc, tprAtFpr } from '../src/detector/metrics.ts';
import { DENSE_DIM } from '../src/detector/features.ts';
import { adagradLogistic, type LROptions, type TrainRow } from '../src/detector/training.ts';
import { LoadedModel, round4 } from '../src/detector/model.ts';
import { PASSAGE_WORDS } from '../src/detector/segments.ts';
import type { Language, Mode } from '../src/detector/types.ts';
import { devSamples, trainSamples, type AssistantSample, type FoldHeads } from './lib/assistant-data.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';
import { table } from './lib/table.ts';
import { balancedCellWeights } from './lib/weights.ts';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const MODEL = resolve(ROOT, arg('--model') ?? 'models/detector.bin');
const OUT = resolve(ROOT, arg('--out') ?? MODEL);
const FOLD_CACHE = arg('--fold-cache');
const FOLD_HEADS = arg('--fold-heads');
const CACHE = arg('--cache');
const GB: GBDTOptions = {
  trees: Number(arg('--trees') ?? 300),
  depth: Number(arg('--depth') ?? 3),
  learningRate: Number(arg('--gb-lr') ?? 0.05),
  lambda: 1,
  minChildWeight: 5,
  bins: 64,
};
const USE_TREES = !process.argv.includes('--no-trees');
const LINEAR_WEIGHT = Number(arg('--linear-weight') ?? 0.5);
const LR: LROptions = {
  epochs: Number(arg('--epochs') ?? 8),
  lr: Number(arg('--lr') ?? 0.1),
  l2Dense: 1e-4,
  l2Sparse: Number(arg('--l2-sparse') ?? 1e-6),
  seed: 38,
  sparseScale: Number(arg('--sparse-scale') ?? 1),
};
const TWIN_WEIGHT = Number(arg('--twin-weight') ?? 8);
const SOURCE_MAX = Number(arg('--source-max') ?? 0.002);
const POOLED_FPR = Number(arg('--pooled-fpr') ?? 0.001);
const VETO_FPR = Number(arg('--veto-fpr') ?? 0.2);
const CEILING_FPR = Number(arg('--ceiling-fpr') ?? 0.02);
const BANDS = (arg('--bands') ?? '40,100').split(',').map(Number);
/** --short-band: the lower edge of the band under the evidence floor where the head only ranks (0: none). */
const SHORT_BAND = Number(arg('--short-band') ?? 15);
if (SHORT_BAND !== 0 && !(SHORT_BAND >= 15 && SHORT_BAND < SHORT_TEXT_WORDS && SHORT_BAND < BANDS[0]!)) {
  process.stderr.write(
    `train-assistant.ts: --short-band must be 0 or from 15 (under 15 words the engine pulls a text's probability towards 0.5) to under ${Math.min(SHORT_TEXT_WORDS, BANDS[0]!)}.\n`,
  );
  process.exit(2);
}
/** A human source counts towards a band's bar from this many held-out texts in it. */
const MIN_SOURCE_TEXTS = 30;
const LOSO = process.argv.includes('--loso');
const DRY_RUN = process.argv.includes('--dry-run');
const MARKDOWN = process.argv.includes('--markdown');

const t0 = Date.now();
const log = (msg: string): void => console.error(`[train-assistant ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

/** The model without a head it may already have: the head is refitted on the document model alone. */
const shipped = readArtifact(MODEL);
const { header, arrays } = withoutAssistantHead(shipped.header, shipped.arrays);
const model = new LoadedModel(header, arrays);

function samples(): { train: AssistantSample[]; dev: AssistantSample[] } {
  if (CACHE && existsSync(CACHE)) return v8.deserialize(readFileSync(CACHE)) as { train: AssistantSample[]; dev: AssistantSample[] };
  if (!FOLD_CACHE) {
    process.stderr.write('train-assistant.ts: --fold-cache FILE is needed (npm run train -- --fold-models FILE writes it).\n');
    process.exit(2);
  }
  const train = trainSamples(DATA, header, arrays, FOLD_CACHE, log);
  log(`${train.length} training texts read out of fold`);
  const dev = devSamples(DATA, model);
  log(`${dev.length} dev texts read by ${header.version}`);
  if (CACHE) writeFileSync(CACHE, v8.serialize({ train, dev }));
  return { train, dev };
}

const loaded = samples();
/**
 * The word tells' copies (`scripts/lib/tells.ts`, --tells): `fit` (default) fits the head on the
 * family's texts with their tells stripped and on people's texts with tells put in, and bounds its
 * fire bar on the latter as sources of their own (`<source>+tells`); `bars` only bounds it on them;
 * `off` reads neither (the head as first shipped).
 */
const TELLS = arg('--tells') ?? 'fit';
if (!['fit', 'bars', 'off'].includes(TELLS)) {
  process.stderr.write(`train-assistant.ts: --tells is fit, bars or off, not ${TELLS}.\n`);
  process.exit(2);
}
const train = loaded.train.filter(
  (s) => !s.variant || (s.variant === 'injected' ? TELLS !== 'off' : s.variant === 'stripped' && TELLS === 'fit'),
);
/** Passages of people's texts read on their own: never fitted on, they set the bar of passages. */
const passageRows = loaded.train.filter((s) => s.variant === 'passage');
const { dev } = loaded;
/** The originals: what the reports count (a copy would count its text twice). */
const originals = train.filter((s) => !s.variant);
/**
 * The languages where the head may make a text likely AI (--languages, default en): Turkish has 184
 * of the family's training texts, too few to set a fire bar that holds on its humans (a trial with
 * one lifted a Turkish human complaint of the corpus dev file to likely_ai).
 */
const languages = (arg('--languages') ?? 'en').split(',').filter(Boolean) as Language[];
/** Languages where the head only keeps the family's texts from being cleared (--veto-languages, default tr). */
const vetoLanguages = (arg('--veto-languages') ?? 'tr').split(',').filter(Boolean) as Language[];
/** The languages of the texts it is fitted on (--fit-languages, default: all it reads). */
const fitLanguages = (arg('--fit-languages') ?? [...languages, ...vetoLanguages].join(',')).split(',').filter(Boolean) as Language[];

/** Human cells balanced as `npm run train` balances them, twins weighted up, the family as heavy as the humans in all. */
function weights(rows: readonly AssistantSample[]): number[] {
  const twins = new Set(rows.filter((s) => s.kind === 1 && s.mirrorOf).map((s) => s.mirrorOf!));
  return balancedCellWeights(
    rows,
    (s) => `${s.kind}|${s.source}|${s.mode}`,
    (s) => (s.kind === 1 ? 1 : 0),
    0.5,
    (s) => (s.kind === 0 && twins.has(s.id) ? 1 + TWIN_WEIGHT : 1),
  );
}

/** The head as the engine reads it (`src/detector/assistant.ts`), bars aside. */
type Head = Omit<AssistantHead, 'bars'>;

/** The raw score's divisor in the linear part (raw scores span about ±20; the dense features are standardised). */
const RAW_SCALE = 4;

function zOf(s: AssistantSample): Float64Array {
  const z = new Float64Array(DENSE_DIM + 1);
  for (let k = 0; k < DENSE_DIM; k++) z[k] = (s.dense[k]! - header.dense.mean[k]!) / header.dense.std[k]!;
  z[DENSE_DIM] = s.raw / RAW_SCALE;
  return z;
}

const linearOf = (h: AssistantLinear, s: AssistantSample): number => assistantLinear(h, s.dense, s.raw, assistantSparseSum(h.sparse, s));
const marginOf = (h: Head, s: AssistantSample): number => assistantBlend(h, s.dense, s.raw, linearOf(h.linear, s));

function fitLinear(rows: readonly AssistantSample[], w: number[]): AssistantLinear {
  const trainRows: TrainRow[] = rows.map((s, i) => ({
    f: { dense: s.dense, idx: s.idx, val: s.val, words: s.words },
    z: zOf(s),
    y: s.kind === 1 ? 1 : 0,
    w: w[i]!,
  }));
  return { ...adagradLogistic(trainRows, DENSE_DIM + 1, LR), rawScale: RAW_SCALE, mean: header.dense.mean, std: header.dense.std };
}

function fitHead(rows: readonly AssistantSample[]): Head {
  const fitted = rows.filter((s) => s.kind !== 2 && fitLanguages.includes(s.language) && (!s.variant || TELLS === 'fit'));
  const w = weights(fitted);
  const linear = fitLinear(fitted, w);
  if (!USE_TREES) return { linear, forest: undefined, linearWeight: 1 };
  // Stacking, as in `npm run train`: the trees see the linear model's out-of-fold logit.
  const linOof = new Float64Array(fitted.length);
  for (const k of foldsOf(fitted)) {
    const part = fitted.map((_, i) => i).filter((i) => fitted[i]!.fold !== k);
    const h = fitLinear(
      part.map((i) => fitted[i]!),
      part.map((i) => w[i]!),
    );
    fitted.forEach((s, i) => {
      if (s.fold === k) linOof[i] = linearOf(h, s);
    });
  }
  const forest = trainForest(
    fitted.map((s, i) => assistantTreeInput(s.dense, s.raw, linOof[i]!)),
    fitted.map((s) => (s.kind === 1 ? 1 : 0)),
    w,
    GB,
  );
  return { linear, forest, linearWeight: LINEAR_WEIGHT };
}

/** The folds of the samples (the fold cache's, as `foldOf` assigned them), ascending. */
const foldsOf = (rows: readonly AssistantSample[]): number[] => [...new Set(rows.map((s) => s.fold))].sort((a, b) => a - b);

/**
 * Out-of-fold margins of every training text (the head fitted without its fold), of the `extra`
 * texts it is not fitted on (by the head of their fold), and the head on all.
 */
function crossFit(
  rows: readonly AssistantSample[],
  extra: readonly AssistantSample[] = [],
): { oof: Float64Array; extraOof: Float64Array; head: Head; foldHeads: Map<number, Head> } {
  const oof = new Float64Array(rows.length);
  const extraOof = new Float64Array(extra.length);
  const foldHeads = new Map<number, Head>();
  for (const k of foldsOf(rows)) {
    const head = fitHead(rows.filter((s) => s.fold !== k));
    foldHeads.set(k, head);
    rows.forEach((s, i) => {
      if (s.fold === k) oof[i] = marginOf(head, s);
    });
    extra.forEach((s, i) => {
      if (s.fold === k) extraOof[i] = marginOf(head, s);
    });
    log(`fold ${k} fitted`);
  }
  return { oof, extraOof, head: fitHead(rows), foldHeads };
}

/** The lowest margin above which at most `fpr` of the humans in `margins` lie. */
function barOf(margins: number[], fpr: number): number {
  const sorted = [...margins].sort((a, b) => b - a);
  const allowed = Math.floor(fpr * sorted.length);
  const at = sorted[allowed];
  return at === undefined ? Number.NEGATIVE_INFINITY : at + 1e-6;
}

/** The document model's probability and thresholds of a text, as the engine reads them (the dev reads ignore the out-of-domain rule). */
function documentReading(s: AssistantSample): { p: number; ai: number; human: number; own: boolean } {
  const mode = s.mode as Mode;
  const calib = model.calibrationFor(s.language, mode);
  return {
    p: round4(calibrateForLength(s.raw, calib, s.words)),
    ai: aiThresholdFor(calib, s.words),
    human: humanThresholdFor(calib, s.words),
    own: model.hasOwnCalibration(s.language, mode),
  };
}

/** The verdict of probability `p` under a text's reading: none under the evidence floor, never likely_ai with a borrowed calibration. */
function verdictFor(s: AssistantSample, r: ReturnType<typeof documentReading>, p: number): string {
  if (s.words < SHORT_TEXT_WORDS) return 'mixed';
  const v = verdictOf(p, r.ai, r.human);
  return v === 'likely_ai' && !r.own ? 'mixed' : v;
}

/** Whether the document model alone calls a text likely AI. */
function baseLikelyAi(s: AssistantSample): boolean {
  const r = documentReading(s);
  return verdictFor(s, r, r.p) === 'likely_ai';
}

/**
 * The lowest bar such that, of the held-out humans `sorted` by margin (highest first), every source
 * of MIN_SOURCE_TEXTS or more (`n`) keeps at most --source-max above it, counting the `used` ones
 * the document model already calls likely AI, and at most --pooled-fpr of all `total` are above it.
 */
function cappedBar(
  sorted: ReadonlyArray<{ source: string; m: number }>,
  n: ReadonlyMap<string, number>,
  used: Map<string, number>,
  total: number,
): { bar: number; added: number; binding: string } {
  const cap = (source: string): number => Math.max(Math.floor(SOURCE_MAX * n.get(source)!), used.get(source) ?? 0);
  const pooledCap = Math.floor(POOLED_FPR * total);
  let added = 0;
  let k = 0;
  let binding = '';
  for (; k < sorted.length; k++) {
    const { source } = sorted[k]!;
    if (added + 1 > pooledCap) {
      binding = `all humans (${total})`;
      break;
    }
    if (n.get(source)! >= MIN_SOURCE_TEXTS && (used.get(source) ?? 0) + 1 > cap(source)) {
      binding = `${source} (${n.get(source)})`;
      break;
    }
    added++;
    used.set(source, (used.get(source) ?? 0) + 1);
  }
  return { bar: (sorted[k]?.m ?? Number.NEGATIVE_INFINITY) + 1e-6, added, binding };
}

/**
 * Per language and band: `fire` lets the most humans above it such that every human source (of
 * MIN_SOURCE_TEXTS or more in the band) keeps at most --source-max of its held-out humans likely AI,
 * the document model's and the head's together, and the head adds at most --pooled-fpr of all the
 * band's humans; `veto` is the highest margin under which every such source keeps at least 1 − --veto-fpr.
 */
function bars(rows: readonly AssistantSample[], oof: Float64Array): Record<string, AssistantBar[]> {
  const out: Record<string, AssistantBar[]> = {};
  for (const language of [...languages, ...vetoLanguages]) {
    const fires = languages.includes(language);
    const ceiling = fires ? ceilingOf(rows, language) : undefined;
    // Under the evidence floor the head only ranks, where it fires and a vetoed text has a ceiling to rise to.
    const short = fires && ceiling !== undefined && SHORT_BAND > 0;
    const edges = short ? [SHORT_BAND, ...BANDS] : BANDS;
    out[language] = edges.map((minWords, b) => {
      const maxWords = edges[b + 1] ?? Number.POSITIVE_INFINITY;
      const humans = rows
        .map((s, i) => ({ s, m: oof[i]!, base: baseLikelyAi(s) }))
        .filter(({ s }) => s.kind === 0 && s.language === language && s.words >= minWords && s.words < maxWords);
      const n = new Map<string, number>();
      const used = new Map<string, number>();
      for (const h of humans) {
        n.set(h.s.source, (n.get(h.s.source) ?? 0) + 1);
        if (h.base) used.set(h.s.source, (used.get(h.s.source) ?? 0) + 1);
      }
      const sorted = humans
        .filter((h) => !h.base)
        .map((h) => ({ source: h.s.source, m: h.m }))
        .sort((x, y) => y.m - x.m);
      const { bar: fire, added, binding } = cappedBar(sorted, n, used, humans.length);
      // The short band's rise is its fire bar's place: no text there is likely AI.
      const ranksOnly = minWords < SHORT_TEXT_WORDS;
      // How far the top people hold the verdict back: the family's written texts above each of the first three.
      const written = rows
        .map((s, i) => ({ s, m: oof[i]! }))
        .filter(
          ({ s }) =>
            s.kind === 1 && !s.variant && s.task !== 'polish' && s.language === language && s.words >= minWords && s.words < maxWords,
        );
      const above = sorted
        .slice(0, 3)
        .map(({ m }) => `${pct(written.filter((w) => w.m > m).length, written.length)} (${m.toFixed(3)})`)
        .join(' / ');
      console.log(
        `${ranksOnly ? 'rise' : 'fire'} bar ${language} ${minWords}+ set by ${binding || 'no human'}; ${added} held-out humans above it; the family's ${written.length} written texts above the first three of ${sorted.length} humans: ${above}`,
      );
      const bySource = new Map<string, number[]>();
      for (const h of humans) bySource.set(h.s.source, [...(bySource.get(h.s.source) ?? []), h.m]);
      const sources = [...bySource.values()].filter((m) => m.length >= MIN_SOURCE_TEXTS);
      const veto = Math.max(...sources.map((m) => barOf(m, VETO_FPR)));
      if (!fires) return { minWords, veto: round4(veto) };
      const top = Math.ceil(fire * 10000) / 10000;
      return {
        minWords,
        veto: round4(Math.min(veto, fire)),
        ...(ranksOnly ? { rise: top } : { fire: top }),
        ...(ceiling === undefined ? {} : { ceiling }),
      };
    });
  }
  return out;
}

/**
 * The probability a text the head vetoes rises towards (`AssistantBar.ceiling`), per language it
 * fires in: the lowest, over the older training files, of the document model's probability above
 * which --ceiling-fpr of the file's people of 40+ words sit, out of fold. At 2%, twice the 1% that
 * "AI found at 1% FPR" is read at, the people it lifts stay under that point on texts it was not set on.
 */
function ceilingOf(rows: readonly AssistantSample[], language: Language): number | undefined {
  if (!(CEILING_FPR > 0)) return undefined;
  const byFile = new Map<string, number[]>();
  for (const s of rows) {
    if (s.kind !== 0 || s.variant || s.file === 'v5' || s.language !== language || s.words < BANDS[0]!) continue;
    const ps = byFile.get(s.file) ?? [];
    ps.push(documentReading(s).p);
    byFile.set(s.file, ps);
  }
  const files = [...byFile].filter(([, ps]) => ps.length >= MIN_SOURCE_TEXTS);
  if (!files.length) return undefined;
  const [file, at] = files.map(([f, ps]) => [f, barOf(ps, CEILING_FPR)] as const).sort((x, y) => x[1] - y[1])[0]!;
  const ceiling = Math.floor(at * 10000) / 10000;
  console.log(`ceiling ${language}: ${ceiling} (set by ${file}: ${(100 * CEILING_FPR).toFixed(1)}% of its people above it)`);
  return ceiling;
}

interface Read {
  s: AssistantSample;
  before: number;
  after: number;
  verdictBefore: string;
  verdictAfter: string;
}

/** Each text's probability and verdict without and with the head. */
function read(rows: readonly AssistantSample[], margins: ArrayLike<number>, b: Record<string, AssistantBar[]>): Read[] {
  return rows.map((s, i) => {
    const r = documentReading(s);
    const bar = assistantBarFor({ bars: b }, s.language, s.words);
    const after = bar ? liftedProbability(r.p, margins[i]!, bar, r.ai, r.human) : r.p;
    return { s, before: r.p, after, verdictBefore: verdictFor(s, r, r.p), verdictAfter: verdictFor(s, r, after) };
  });
}

const pct = (n: number, d: number): string => (d ? `${((100 * n) / d).toFixed(1)}%` : '-');
const share = (xs: Read[], f: (r: Read) => boolean): string => pct(xs.filter(f).length, xs.length);
const print = (title: string, head: string[], rows: string[][]): void => {
  console.log(`\n${MARKDOWN ? '#### ' : ''}${title}\n`);
  console.log(table(head, rows, MARKDOWN));
};

function familyTable(title: string, reads: Read[], humans: Read[]): void {
  const twinsOf = new Map(humans.map((r) => [r.s.id, r]));
  const tasks = [...new Set(reads.map((r) => r.s.task ?? '?'))].sort();
  const rows = tasks.map((task) => {
    const xs = reads.filter((r) => (r.s.task ?? '?') === task);
    const paired = xs.filter((r) => twinsOf.has(r.s.mirrorOf ?? ''));
    const twins = paired.map((r) => twinsOf.get(r.s.mirrorOf!)!);
    const pair = (key: 'before' | 'after'): string =>
      paired.length
        ? auroc([...paired.map((r) => r[key]), ...twins.map((r) => r[key])], [...paired.map(() => 1), ...twins.map(() => 0)]).toFixed(3)
        : '-';
    const all = (key: 'before' | 'after'): string =>
      auroc([...xs.map((r) => r[key]), ...humans.map((r) => r[key])], [...xs.map(() => 1), ...humans.map(() => 0)]).toFixed(3);
    const band = (lo: number, hi: number) => xs.filter((r) => r.s.words >= lo && r.s.words < hi);
    const mid = band(40, 100);
    const long = band(100, Number.POSITIVE_INFINITY);
    const over40 = band(40, Number.POSITIVE_INFINITY);
    return [
      task,
      String(xs.length),
      `${pair('before')} → ${pair('after')}`,
      `${all('before')} → ${all('after')}`,
      `${share(mid, (r) => r.verdictBefore === 'likely_ai')} → ${share(mid, (r) => r.verdictAfter === 'likely_ai')} (${mid.length})`,
      `${share(long, (r) => r.verdictBefore === 'likely_ai')} → ${share(long, (r) => r.verdictAfter === 'likely_ai')} (${long.length})`,
      `${share(over40, (r) => r.verdictBefore === 'likely_human')} → ${share(over40, (r) => r.verdictAfter === 'likely_human')}`,
    ];
  });
  print(title, ['task', 'n', 'AUROC vs twins', 'AUROC vs all humans', 'likely_ai 40–100', 'likely_ai 100+', 'likely_human 40+'], rows);
}

function olderTable(title: string, reads: Read[]): void {
  const files = [...new Set(reads.map((r) => r.s.file))].filter((f) => f !== 'v5');
  const rows = files.map((file) => {
    const xs = reads.filter((r) => r.s.file === file);
    const y = xs.map((r) => (r.s.kind === 0 ? 0 : 1));
    const hum = xs.filter((r) => r.s.kind === 0 && r.s.words >= 40);
    const ai = xs.filter((r) => r.s.kind !== 0 && r.s.words >= 40);
    return [
      file,
      `${auroc(
        xs.map((r) => r.before),
        y,
      ).toFixed(4)} → ${auroc(
        xs.map((r) => r.after),
        y,
      ).toFixed(4)}`,
      `${tprAtFpr(
        xs.map((r) => r.before),
        y,
      ).toFixed(3)} → ${tprAtFpr(
        xs.map((r) => r.after),
        y,
      ).toFixed(3)}`,
      `${hum.filter((r) => r.verdictBefore === 'likely_ai').length} → ${hum.filter((r) => r.verdictAfter === 'likely_ai').length} of ${hum.length}`,
      `${share(hum, (r) => r.verdictBefore === 'likely_human')} → ${share(hum, (r) => r.verdictAfter === 'likely_human')}`,
      `${share(ai, (r) => r.verdictBefore === 'likely_ai')} → ${share(ai, (r) => r.verdictAfter === 'likely_ai')}`,
    ];
  });
  print(title, ['file', 'AUROC', 'AI found at 1% FPR', 'humans 40+ likely_ai', 'humans 40+ likely_human', 'AI 40+ likely_ai'], rows);
  const bySource = new Map<string, Read[]>();
  for (const r of reads) if (r.s.kind === 0 && r.s.words >= 40) bySource.set(r.s.source, [...(bySource.get(r.s.source) ?? []), r]);
  const lifted = [...bySource]
    .map(
      ([source, xs]) =>
        [
          source,
          xs.length,
          xs.filter((r) => r.verdictAfter === 'likely_ai').length,
          xs.filter((r) => r.verdictBefore === 'likely_ai').length,
        ] as const,
    )
    .filter(([, , after, before]) => after !== before)
    .map(([source, n, after, before]) => [source, String(n), `${before} → ${after}`, pct(after, n)]);
  print(`${title}: human sources whose likely_ai count changed`, ['source', 'humans 40+', 'likely_ai', 'share after'], lifted);
}

/** Per older source, AUROC before → after (only sources that moved by 0.001 or more). */
function sourceMoves(title: string, reads: Read[]): void {
  const bySource = new Map<string, Read[]>();
  for (const r of reads)
    if (r.s.file !== 'v5') bySource.set(`${r.s.source}/${r.s.mode}`, [...(bySource.get(`${r.s.source}/${r.s.mode}`) ?? []), r]);
  const rows: string[][] = [];
  for (const [source, xs] of [...bySource].sort()) {
    const y = xs.map((r) => (r.s.kind === 0 ? 0 : 1));
    if (!y.includes(0) || !y.includes(1)) continue;
    const a = auroc(
      xs.map((r) => r.before),
      y,
    );
    const b = auroc(
      xs.map((r) => r.after),
      y,
    );
    if (Math.abs(b - a) >= 0.001) rows.push([source, String(xs.length), `${a.toFixed(3)} → ${b.toFixed(3)}`]);
  }
  print(`${title}: older sources whose AUROC moved by 0.001 or more`, ['source', 'n', 'AUROC'], rows);
}

/**
 * The bar of passages (`AssistantBar.passage`, on the band of PASSAGE_WORDS), per language the head
 * fires in: a text the head vetoes but does not make likely AI is read passage by passage, and a
 * passage from this bar is shown as generated. Set on the held-out English human texts of two
 * passages or more, each counted once with its highest passage (none when the head did not veto it
 * or it is likely AI already): every source keeps at most --source-max of them with a passage above
 * it, all of them at most --pooled-fpr; never under the band's fire bar.
 */
function setPassageBars(
  b: Record<string, AssistantBar[]>,
  rows: readonly AssistantSample[],
  oof: ArrayLike<number>,
  passages: readonly AssistantSample[],
  passageOof: ArrayLike<number>,
): void {
  const highest = new Map<string, number>();
  passages.forEach((p, i) => {
    highest.set(p.of!, Math.max(highest.get(p.of!) ?? Number.NEGATIVE_INFINITY, passageOof[i]!));
  });
  for (const language of languages) {
    const band = assistantBarFor({ bars: b }, language, PASSAGE_WORDS);
    if (band?.fire === undefined) continue;
    const texts: Array<{ source: string; m: number }> = [];
    rows.forEach((s, i) => {
      if (s.variant || s.kind !== 0 || s.language !== language || !highest.has(s.id)) return;
      const bar = assistantBarFor({ bars: b }, language, s.words);
      const scanned = bar !== undefined && oof[i]! >= bar.veto && !(bar.fire !== undefined && oof[i]! >= bar.fire) && !baseLikelyAi(s);
      texts.push({ source: s.source, m: scanned ? highest.get(s.id)! : Number.NEGATIVE_INFINITY });
    });
    if (texts.length === 0) {
      // A --cache written before passages were read holds none: no bar rather than one at `fire`.
      console.log(`passage bar ${language}: none (no passages in the samples; rebuild --cache)`);
      continue;
    }
    const n = new Map<string, number>();
    for (const t of texts) n.set(t.source, (n.get(t.source) ?? 0) + 1);
    const sorted = texts.filter((t) => t.m > Number.NEGATIVE_INFINITY).sort((x, y) => y.m - x.m);
    const { bar, added, binding } = cappedBar(sorted, n, new Map(), texts.length);
    band.passage = Math.ceil(Math.max(bar, band.fire) * 10000) / 10000;
    console.log(
      `passage bar ${language}: ${band.passage} (set by ${binding || 'no human'}; of ${texts.length} held-out human texts of two passages or more, ${sorted.length} read passage by passage, ${added} with a passage above it)`,
    );
  }
}

log(
  `${train.length} train (and ${passageRows.length} passages), ${dev.length} dev texts; head ${GB.trees} trees of depth ${GB.depth}, twin weight ${TWIN_WEIGHT}`,
);
const { oof, extraOof: passageOof, head, foldHeads } = crossFit(train, passageRows);
const fittedBars = bars(train, oof);
setPassageBars(fittedBars, train, oof, passageRows, passageOof);
for (const [language, bs] of Object.entries(fittedBars))
  for (const b of bs)
    console.log(
      `bars ${language} ${b.minWords}+ words: veto ${b.veto}, fire ${b.fire ?? 'none'}, passage ${b.passage ?? 'none'}, ceiling ${b.ceiling ?? 'none'}${b.rise === undefined ? '' : `, rise ${b.rise}`}`,
    );

function ownAurocs(title: string, rows: readonly AssistantSample[], margins: ArrayLike<number>): void {
  const humans = rows.map((s, i) => [s, margins[i]!] as const).filter(([s]) => s.kind === 0);
  const byId = new Map(humans.map(([s, m]) => [s.id, m]));
  const tasks = [...new Set(rows.filter((s) => s.kind === 1).map((s) => s.task ?? '?'))].sort();
  const out = tasks.map((task) => {
    const xs = rows.map((s, i) => [s, margins[i]!] as const).filter(([s]) => s.kind === 1 && s.task === task);
    const paired = xs.filter(([s]) => byId.has(s.mirrorOf ?? ''));
    const twins = paired.map(([s]) => byId.get(s.mirrorOf!)!);
    const a = auroc([...paired.map(([, m]) => m), ...twins], [...paired.map(() => 1), ...twins.map(() => 0)]);
    const b = auroc([...xs.map(([, m]) => m), ...humans.map(([, m]) => m)], [...xs.map(() => 1), ...humans.map(() => 0)]);
    return [task, String(xs.length), a.toFixed(3), b.toFixed(3)];
  });
  print(`${title}: the head's own margin`, ['task', 'n', 'AUROC vs twins', 'AUROC vs all humans'], out);
}
const oofOf = new Map(train.map((s, i) => [s, oof[i]!]));
ownAurocs(
  'Train, out of fold',
  originals,
  originals.map((s) => oofOf.get(s)!),
);
const allTrainReads = read(train, oof, fittedBars);
const trainReads = allTrainReads.filter((r) => !r.s.variant);
{
  // People who write with the tells, and the family without them (their copies), out of fold.
  const injected = allTrainReads.filter((r) => r.s.variant === 'injected' && r.s.words >= 40);
  const stripped = allTrainReads.filter((r) => r.s.variant === 'stripped' && r.s.words >= 40);
  const injectedIds = new Set(injected.map((r) => r.s.id));
  const share = (xs: Read[], v: string): string => pct(xs.filter((r) => r.verdictAfter === v).length, xs.length);
  console.log(
    `\nTrain, out of fold, the word tells' copies (40+ words): people's texts with tells put in ${injected.length}, likely_ai ${share(injected, 'likely_ai')} (their originals ${share(
      trainReads.filter((r) => injectedIds.has(`${r.s.id}~injected`)),
      'likely_ai',
    )}); the family's texts with tells taken out ${stripped.length}, likely_ai ${share(stripped, 'likely_ai')}, likely_human ${share(stripped, 'likely_human')}`,
  );
}
familyTable(
  'Train, out of fold: the family per task',
  trainReads.filter((r) => r.s.kind === 1),
  trainReads.filter((r) => r.s.kind === 0),
);
olderTable(
  'Train, out of fold: older files',
  trainReads.filter((r) => r.s.file !== 'v5'),
);
sourceMoves('Train, out of fold', trainReads);

const devMargins = dev.map((s) => marginOf(head, s));
ownAurocs('Dev', dev, devMargins);
const devReads = read(dev, devMargins, fittedBars);
const devHumans = devReads.filter((r) => r.s.kind === 0);
familyTable(
  'Dev: the family per task (v5-dev against its twins and all dev humans)',
  devReads.filter((r) => r.s.kind === 1),
  devHumans,
);
olderTable(
  'Dev: older files',
  devReads.filter((r) => r.s.file !== 'v5'),
);
if (process.argv.includes('--list')) {
  const listed = devReads.filter(
    (r) =>
      (r.s.kind === 1 && r.verdictAfter === 'likely_human') ||
      (r.s.kind === 0 && r.verdictAfter === 'likely_ai' && r.verdictBefore !== 'likely_ai'),
  );
  print(
    'Dev: the family’s texts still likely_human, and the humans the head made likely_ai',
    ['id', 'source', 'language', 'task', 'words', 'p before → after'],
    listed.map((r) => [r.s.id, r.s.source, r.s.language, r.s.task ?? 'human', String(r.s.words), `${r.before} → ${r.after}`]),
  );
}
sourceMoves('Dev', devReads);

if (LOSO) {
  // Each genre of the family held out of the head (its texts and their twins), then read by it.
  const genres = [...new Set(train.filter((s) => s.kind === 1).map((s) => s.source))].sort();
  const rows: string[][] = [];
  for (const genre of genres) {
    const held = originals.filter((s) => s.kind === 1 && s.source === genre);
    if (held.length < 40) continue;
    const twins = new Set(held.map((s) => s.mirrorOf));
    // The genre's copies go with it: its texts' stripped copies share its source, its twins' injected copies their ids.
    const rest = train.filter(
      (s) => !(s.kind === 1 && s.source === genre) && !twins.has(s.id) && !twins.has(s.id.replace(/~injected$/, '')),
    );
    const h = fitHead(rest);
    const heldHumans = originals.filter((s) => twins.has(s.id));
    const m = (s: AssistantSample): number => marginOf(h, s);
    const base = auroc([...held.map((s) => s.raw), ...heldHumans.map((s) => s.raw)], [...held.map(() => 1), ...heldHumans.map(() => 0)]);
    const own = auroc([...held.map(m), ...heldHumans.map(m)], [...held.map(() => 1), ...heldHumans.map(() => 0)]);
    rows.push([genre, String(held.length), base.toFixed(3), own.toFixed(3)]);
    log(`--loso ${genre} done`);
  }
  print('Each genre of the family held out of the head: AUROC against its own twins', ['genre', 'n', 'document model', 'head'], rows);
}

const headArrays = {
  'assistant.dense': head.linear.dense,
  'assistant.sparse': head.linear.sparse,
  ...(head.forest
    ? {
        'assistant.gb.feature': new Uint32Array(head.forest.feature.buffer, head.forest.feature.byteOffset, head.forest.feature.length),
        'assistant.gb.threshold': head.forest.threshold,
        'assistant.gb.leaf': head.forest.leaf,
      }
    : {}),
};
const assistantHeader: NonNullable<ArtifactHeader['assistant']> = {
  bias: head.linear.bias,
  rawScale: RAW_SCALE,
  linearWeight: head.linearWeight,
  ...(head.forest
    ? { forest: { depth: head.forest.depth, nTrees: head.forest.nTrees, nFeatures: head.forest.nFeatures, base: head.forest.base } }
    : {}),
  bars: fittedBars,
  trainedOn: {
    family: 'frontier-chat-2026 (v5-train)',
    documentModel: header.version,
    languages,
    vetoLanguages,
    classifier: LR,
    trees: USE_TREES ? GB : null,
    twinWeight: TWIN_WEIGHT,
    tells: TELLS,
    sourceMax: SOURCE_MAX,
    pooledFpr: POOLED_FPR,
    vetoFpr: VETO_FPR,
    ceilingFpr: CEILING_FPR,
  },
};
// The id: the document model's, the head's arrays and its header, hashed as `npm run train` hashes a model.
const version = (() => {
  const hash = createHash('sha256');
  hash.update(header.version);
  for (const a of Object.values(headArrays)) hash.update(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  hash.update(JSON.stringify({ ...assistantHeader, trainedOn: undefined }));
  return `td1-${hash.digest('hex').slice(0, 12)}`;
})();
if (FOLD_HEADS) {
  const heads: FoldHeads = { model: version, heads: Object.fromEntries(foldHeads) };
  writeFileSync(FOLD_HEADS, v8.serialize(heads));
  log(`wrote the heads of ${foldHeads.size} folds to ${FOLD_HEADS}`);
}
if (DRY_RUN) {
  log(`dry run: ${version} not written`);
} else {
  const { arrays: _layout, ...rest } = header;
  writeArtifact(OUT, { ...rest, version, assistant: assistantHeader }, { ...arrays, ...headArrays });
  log(`wrote ${OUT} (${version}; document model ${header.version} kept)`);
}
