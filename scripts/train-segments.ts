/**
 * `npm run train:segments [-- options]`: fits the sentence and span model (`models/segments.json`)
 * on mixed documents built from the training corpora (`corpus-train`, `extra-train`), and from the
 * assistant family's training texts (`v5-train`, issue 38) each joined with the human text it
 * mirrors (its twin, from any of the four older training files): a person's text and the
 * assistant's on the same topic, as a member pastes one into a post.
 *
 * Every training text is scored sentence by sentence with the copy of the document model that did
 * not see it (the cross-fitting folds of `npm run train`, rebuilt by running it again with
 * `--fold-models`: one training run; or read from `--fold-cache FILE`), so what the
 * sentence model learns is what the shipped model shows on text it has never seen. The sentences'
 * evidence includes the assistant head's hashed weights, read with the head of the text's fold
 * (`npm run train:assistant -- --fold-heads FILE`), and a run scored as a document is lifted by that
 * head against the shipped head's bars, as the engine scores a document. Then:
 *   1. the sentence ratio: a logistic model over each sentence's evidence sums (`runFeatures`),
 *      fitted on single sentences and random runs of the older sources' pure human and pure AI
 *      texts; and the family ratio, over the head's sums alone (`familyRunFeatures`), fitted on
 *      the family's texts against every person's;
 *   2. per sentence-length band, the Gaussian of a human and of an AI sentence's ratio;
 *   3. the sequence model's switch probability and document-shift spread, chosen on mixed
 *      documents (human and AI texts of one source joined: HA, AH, HAH, AHA, and pure ones) by the
 *      sentence AUROC inside the mixed ones (the older sources'; the family's documents, a family
 *      text with its twin, are added after);
 *   4. the context model: gradient-boosted trees over every sentence's `contextFeatures` (its ratio
 *      and posteriors, its neighbours', windows and pooled stretches, the run it sits in, its place
 *      in the text, the text's spread, its family ratio and its windows', its language; not the
 *      mode, which is the caller's choice of calibration), on all those documents (pure ones
 *      weighed less); out of fold (a forest per cross-fitting fold, trained on the other folds'
 *      documents) for everything below, and once on every document for the file;
 *   5. Platt scaling of the out-of-fold margin per sentence-length band;
 *   6. the span rules, checked on the pure human documents, and how the generated share is estimated.
 * Dev files are never read (`npm run eval:mixed` reports on them).
 *
 * Options:
 *   --out PATH          default models/segments.json (written atomically)
 *   --model PATH        the document model whose raw scores it is fitted to (default models/detector.bin)
 *   --data DIR          corpus directory (default ../shared/data)
 *   --seed N            default 1
 *   --fold-cache FILE   keep the rebuilt fold models in FILE (v8-serialised, ~30 MB) and reuse them
 *                       on the next run (for experiments; the result is the same); also the file
 *                       `npm run train -- --fold-models FILE` writes
 *   --trees N           trees of the context model (default 200)
 *   --doc-sets N        sets of training documents (default 2)
 *   --pure-weight W     weight of pure documents' sentences in the context model (default 0.25)
 *   --family-weight W   weight of the family's documents' sentences in the context model (default 1)
 *   --fold-heads FILE   the assistant head of each fold (needed when the model has a head; written by
 *                       `npm run train:assistant -- --fold-cache FILE --fold-heads FILE --dry-run`)
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { readArtifact } from '../src/detector/artifact.ts';
import { assistantBarFor, assistantMargin, confirmingBar, liftedProbability, type AssistantHead } from '../src/detector/assistant.ts';
import { aiThresholdFor, calibrateForLength, humanThresholdFor, SHORT_TEXT_WORDS } from '../src/detector/engine.ts';
import { auroc } from '../src/detector/metrics.ts';
import { LoadedModel, round4 } from '../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { forestMargin, trainForest, type Forest, type GBDTOptions } from '../src/detector/gbdt.ts';
import {
  CONTEXT_FEATURES,
  EV_WORDS,
  EVIDENCE_SIZE,
  FAMILY_RUN_FEATURES,
  familyRunFeatures,
  probeFamilySum,
  RUN_FEATURES,
  SEGMENT_FORMAT_VERSION,
  calibrateSentence,
  contextFeatures,
  runFeatures,
  segmentRanges,
  sentenceEvidence,
  sentenceRatios,
  sequencePosteriors,
  type SegmentModel,
} from '../src/detector/segments.ts';
import { fitLogisticSmall, readJsonl, rng, type CorpusRow } from '../src/detector/training.ts';
import { foldModels, type FoldModelData } from './lib/fold-models.ts';
import type { FoldHeads } from './lib/assistant-data.ts';
import { planMixedDocs, type PlannedPart } from './lib/mixed-docs.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = resolve(ROOT, arg('--out') ?? 'models/segments.json');
const MODEL = resolve(ROOT, arg('--model') ?? 'models/detector.bin');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const SEED = Number(arg('--seed') ?? 1);
const FOLD_CACHE = arg('--fold-cache');
const FOLD_HEADS = arg('--fold-heads');
/** The assistant family's training texts, and the files their twins are in. */
const FAMILY_FILE = 'v5-train';
const TWIN_FILES = ['corpus-train', 'extra-train', 'v3-train', 'v4-train'];
/**
 * A family text and its twin make one document, in turn the person's text then the assistant's, the
 * other way round, and the assistant's alone (`polish` texts are a person's text lightly edited: not
 * parts of their own).
 */
const FAMILY_KINDS = ['HA', 'AH', 'A'];
/** Weight of the family's documents' sentences in the context model, next to the older sources' (--family-weight). */
const FAMILY_WEIGHT = Number(arg('--family-weight') ?? 1);
/**
 * The context model's trees: depth 4 as the document model's, 200 trees at rate 0.1, which keep
 * the file at ~110 KB (other sizes were not tried).
 */
const CONTEXT_OPTS: GBDTOptions = {
  trees: Number(arg('--trees') ?? 200),
  depth: 4,
  learningRate: 0.1,
  lambda: 1,
  minChildWeight: 5,
  bins: 64,
};

/** Sentence-length bands (lower word bounds) of the emission Gaussians and of the calibration. */
const BANDS = [0, 6, 12, 20, 35];
/**
 * Sets of training documents, each planned with its own seed: more pairings of the same texts for
 * the context model (out-of-fold AUROC inside the mixed training documents 0.9020 with one set, 0.9060
 * with two, before language and mode were features).
 */
const DOC_SETS = Number(arg('--doc-sets') ?? 2);
/**
 * Weight of a pure document's sentences (H, A, HH) in the context model, next to 1 for a mixed
 * document's: they keep the trees honest on texts of one author, but weighed fully they pull the
 * trees towards telling documents apart rather than the parts of one (out-of-fold AUROC inside the
 * mixed training documents 0.9088 at 1, 0.9137 at 0.5, 0.9161 at 0.25).
 */
const PURE_WEIGHT = Number(arg('--pure-weight') ?? 0.25);
/** Random runs per pure text for the ratio model, next to every single sentence. */
const RUNS_PER_TEXT = 3;
const L2 = 1e-4;
const SWITCH_GRID = [0.05, 0.1, 0.15, 0.2];
const OFFSET_GRID = [0, 0.5, 1, 1.5];
const OFFSET_STEPS = 5;
/**
 * A sentence at or above this (balanced-calibrated) probability belongs to a generated-looking
 * run: as likely generated as not. 0.45 and 0.4 were tried: the share of two-part training documents
 * within ±0.2 moved by +0.002 and −0.013, and on dev both were worse.
 */
const SENTENCE_THRESHOLD = 0.5;
/** Runs shorter than this are not reported as spans (their sentences keep their shading). */
const SPAN_MIN_WORDS = 15;
/** Candidates for the `medium` span bar: the lowest one at which ≤ MEDIUM_MAX_PURE_HUMAN of pure human documents get a medium span. */
const MEDIUM_GRID = [0.8, 0.85, 0.9, 0.95];
const MEDIUM_MAX_PURE_HUMAN = 0.02;
/** Margin above the highest mean sentence probability of a likely-AI stretch in a pure human training document. */
const HIGH_MARGIN = 0.1;
/** …and never below this (the bar rests on a handful of documents). */
const HIGH_FLOOR = 0.85;
/** Probe texts whose raw scores identify the document model this was fitted to. */
const PROBES: Array<{ text: string; language: 'en' | 'tr' }> = [
  {
    text: 'The committee reviewed the proposal in detail and concluded that further analysis of the budget is required before a decision can be made.',
    language: 'en',
  },
  { text: 'honestly i just went there for the tacos and stayed for like three hours lol, the staff were great', language: 'en' },
  { text: 'Bankanın müşteri hizmetleri ile defalarca görüştüm ama sorunum hâlâ çözülmedi.', language: 'tr' },
];

const t0 = Date.now();
const log = (msg: string): void => console.error(`[train:segments ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

interface Text {
  row: CorpusRow;
  fold: number;
  norm: string;
  ranges: Array<{ start: number; end: number }>;
  /** n × EVIDENCE_SIZE evidence sums, one row per sentence. */
  evidence: Float64Array;
  words: number[];
}

interface Doc {
  kind: string;
  /** A family text with its twin (FAMILY_KINDS). */
  family: boolean;
  fold: number;
  row: CorpusRow;
  /** Per sentence: its text, evidence row, words and label. */
  sentences: Array<{ text: Text; index: number; y: 0 | 1 }>;
}

function bandOf(words: number): number {
  let b = 0;
  while (b + 1 < BANDS.length && words >= BANDS[b + 1]!) b++;
  return b;
}

/**
 * The per-fold models of the document model, exactly as `npm run train` built them: it is run
 * again (deterministic) with `--fold-models`, and its artifact must be the one being fitted to, or
 * the fold models would not be that model's (a model trained with other options or data).
 */
function foldModelsOfTraining(version: string): FoldModelData[] {
  const dir = mkdtempSync(join(tmpdir(), 'textdetect-folds-'));
  const out = join(dir, 'model.bin');
  const folds = join(dir, 'folds.bin');
  log(`rebuilding the fold models: npm run train -- --out ${out} --fold-models ${folds}`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'scripts/train.ts'), '--data', DATA, '--out', out, '--fold-models', folds],
    { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT },
  );
  if (r.status !== 0) throw new Error(`Rebuilding the fold models failed (exit ${r.status ?? r.signal}).`);
  const rebuilt = readArtifact(out).header.version;
  if (rebuilt !== version)
    throw new Error(
      `npm run train now builds ${rebuilt}, not ${version} (the model being fitted to): retrain it first, or pass --fold-cache FILE written by the run that built it (npm run train -- --fold-models FILE).`,
    );
  const data = v8.deserialize(readFileSync(folds)) as FoldModelData[];
  rmSync(dir, { recursive: true, force: true });
  return data;
}

function main(): void {
  const { header, arrays } = readArtifact(MODEL);
  const shipped = new LoadedModel(header, arrays);
  const rows = ['corpus-train', 'extra-train'].flatMap((f) => readJsonl<CorpusRow>(join(DATA, `${f}.jsonl`)));
  log(`read ${rows.length} training texts; document model ${header.version}`);
  let foldHeads: FoldHeads | undefined;
  if (header.assistant) {
    if (!FOLD_HEADS) {
      process.stderr.write(
        `train-segments.ts: ${header.version} has an assistant head, whose weights the sentences are read with: pass --fold-heads FILE (npm run train:assistant -- --fold-cache FOLDS --fold-heads FILE --dry-run writes it).\n`,
      );
      process.exit(2);
    }
    foldHeads = v8.deserialize(readFileSync(FOLD_HEADS)) as FoldHeads;
    if (foldHeads.model !== header.version)
      throw new Error(`--fold-heads ${FOLD_HEADS} holds the fold heads of ${foldHeads.model}, not of ${header.version}.`);
  }
  // The family's texts with their twins (only with a head to read them).
  const known = new Set(rows.map((r) => r.id));
  const twinOf = new Map<string, CorpusRow>();
  const familyRows: CorpusRow[] = [];
  if (foldHeads) {
    for (const f of TWIN_FILES)
      for (const r of readJsonl<CorpusRow>(join(DATA, `${f}.jsonl`))) if (r.label === 'human') twinOf.set(r.id, r);
    for (const r of readJsonl<CorpusRow>(join(DATA, `${FAMILY_FILE}.jsonl`)))
      if (r.task !== 'polish' && r.mirror_of && twinOf.has(r.mirror_of)) familyRows.push(r);
    log(`${familyRows.length} texts of the assistant family (${FAMILY_FILE}) with their twins`);
  }
  const extraTwins = [...new Set(familyRows.map((r) => r.mirror_of!))].filter((id) => !known.has(id)).map((id) => twinOf.get(id)!);
  const extraTwinSet = new Set(extraTwins);
  let data: FoldModelData[];
  if (FOLD_CACHE && existsSync(FOLD_CACHE)) {
    data = v8.deserialize(readFileSync(FOLD_CACHE)) as FoldModelData[];
    log(`fold models read from ${FOLD_CACHE}`);
  } else {
    data = foldModelsOfTraining(header.version);
    if (FOLD_CACHE) writeFileSync(FOLD_CACHE, v8.serialize(data));
  }
  const folds = foldModels(header, arrays, data);

  const texts: Text[] = [...rows, ...extraTwins, ...familyRows].map((row) => {
    const fold = folds.foldOf(row);
    const head = foldHeads?.heads[fold];
    const norm = normalize(row.text).text;
    const ranges = segmentRanges(norm, row.language);
    const evidence = new Float64Array(ranges.length * EVIDENCE_SIZE);
    ranges.forEach((r, i) => {
      sentenceEvidence(
        lowerForFeatures(norm.slice(r.start, r.end), row.language),
        row.language,
        folds.lm[fold]!,
        data[fold]!.weights.sparse,
        evidence,
        i * EVIDENCE_SIZE,
        1,
        0,
        head && { sparse: head.linear.sparse, stride: 1, offset: 0 },
      );
    });
    const words = ranges.map((_, i) => evidence[i * EVIDENCE_SIZE + EV_WORDS]!);
    return { row, fold, norm, ranges, evidence, words };
  });
  log(`sentence evidence of ${texts.reduce((a, t) => a + t.ranges.length, 0)} sentences (out of fold)`);

  // 1. The sentence ratio, on the older sources' texts; and the family ratio, on the family's texts
  // against every person's (the older sources' and the twins').
  const rand = rng(SEED);
  const familySet = new Set<CorpusRow>(familyRows);
  const older = texts.filter((t) => !familySet.has(t.row) && !extraTwinSet.has(t.row));
  const ratio = fitRatio(older, rand, runFeatures, RUN_FEATURES);
  log(`sentence ratio model on ${ratio.runs} sentences and runs`);
  const familyRatio = foldHeads
    ? fitRatio(
        texts.filter((t) => familySet.has(t.row) || t.row.label === 'human'),
        rng(SEED + 38),
        familyRunFeatures,
        FAMILY_RUN_FEATURES,
      )
    : undefined;
  if (familyRatio) log(`family ratio model on ${familyRatio.runs} sentences and runs`);
  const { mean, std, weights, bias } = ratio;

  const model: SegmentModel = {
    format: 'textdetect-segments',
    formatVersion: SEGMENT_FORMAT_VERSION,
    version: '',
    scorer: {
      model: header.version,
      probes: PROBES.map((p) => {
        const lower = lowerForFeatures(normalize(p.text).text, p.language);
        return {
          ...p,
          rawLogit: shipped.rawLogit(shipped.features(lower, p.language)),
          ...(shipped.assistantColumn && { familySum: probeFamilySum(lower, shipped.assistantColumn) }),
        };
      }),
    },
    emission: {
      mean,
      std,
      weights,
      bias,
      bands: BANDS,
      muHuman: [],
      muAi: [],
      sd: [],
    },
    ...(familyRatio && { family: { mean: familyRatio.mean, std: familyRatio.std, weights: familyRatio.weights, bias: familyRatio.bias } }),
    sequence: { switchProb: 0.1, offsetSd: 1, offsetSteps: OFFSET_STEPS },
    context: { features: CONTEXT_FEATURES, depth: CONTEXT_OPTS.depth, base: 0, feature: [], threshold: [], leaf: [] },
    calibration: [{ minWords: 0, a: 1, b: 0 }],
    spans: { sentenceThreshold: SENTENCE_THRESHOLD, minWords: SPAN_MIN_WORDS, mediumProbability: 0.9, highMeanSentence: 1 },
    training: {},
  };

  // 2. Gaussians of the ratio per band, on single sentences of pure texts.
  const ratios = new Map<Text, Float64Array>();
  for (const t of texts) ratios.set(t, sentenceRatios(model, t.evidence, t.ranges.length));
  // The Gaussians and the single-sentence AUROC are the older sources' (the ratio's own texts).
  const singleAuc: { s: number[]; y: number[] } = { s: [], y: [] };
  for (let b = 0; b < BANDS.length; b++) {
    const acc = [
      [0, 0, 0],
      [0, 0, 0],
    ];
    for (const t of older) {
      const cls = t.row.label === 'ai' ? 1 : 0;
      t.words.forEach((w, i) => {
        if (bandOf(w) !== b) return;
        const r = ratios.get(t)![i]!;
        acc[cls]![0]! += 1;
        acc[cls]![1]! += r;
        acc[cls]![2]! += r * r;
      });
    }
    const [h, a] = acc as [number[], number[]];
    const muH = h[1]! / h[0]!;
    const muA = a[1]! / a[0]!;
    const within = (h[2]! - h[0]! * muH * muH + a[2]! - a[0]! * muA * muA) / (h[0]! + a[0]!);
    model.emission.muHuman.push(muH);
    model.emission.muAi.push(muA);
    model.emission.sd.push(Math.sqrt(within));
  }
  for (const t of older) {
    for (const r of ratios.get(t)!) {
      singleAuc.s.push(r);
      singleAuc.y.push(t.row.label === 'ai' ? 1 : 0);
    }
  }
  log(`single-sentence AUROC (pure training texts, out of fold) ${auroc(singleAuc.s, singleAuc.y).toFixed(3)}`);

  // 3. Mixed documents from the training files, one fold per document (its texts are then all
  // unseen by that fold's model, which scores the spans below).
  const byId = new Map(texts.map((t) => [t.row.id, t] as const));
  const scorable = older.filter((t) => t.ranges.length > 0).map((t) => t.row);
  const plans = Array.from({ length: DOC_SETS }, (_, k) =>
    planMixedDocs(scorable, {
      seed: SEED + 1000 * k,
      kinds: ['HA', 'AH', 'HAH', 'AHA', 'H', 'A', 'HH'],
      perGroup: 70,
      groupKey: (row) => String(folds.foldOf(row)),
    }),
  ).flat();
  familyRows.forEach((row, i) => {
    const kind = FAMILY_KINDS[i % FAMILY_KINDS.length]!;
    if (byId.get(row.id)!.ranges.length === 0 || byId.get(row.mirror_of!)!.ranges.length === 0) return;
    const parts = [...kind].map((c): PlannedPart => (c === 'A' ? { row, y: 1 } : { row: twinOf.get(row.mirror_of!)!, y: 0 }));
    plans.push({ kind, group: `family|${row.source}`, parts });
  });
  const docs: Doc[] = plans.map((plan) => {
    const sentences: Doc['sentences'] = [];
    for (const part of plan.parts) {
      const t = byId.get(part.row.id)!;
      const n = t.ranges.length;
      let a = 0;
      let b = n;
      // Vary the parts' lengths: a quarter of them are a random stretch of their text.
      if (rand() < 1 / 4 && n > 1) {
        const len = 1 + Math.floor(rand() * n);
        a = Math.floor(rand() * (n - len + 1));
        b = a + len;
      }
      for (let i = a; i < b; i++) sentences.push({ text: t, index: i, y: part.y });
    }
    const first = byId.get(plan.parts[0]!.row.id)!;
    return { kind: plan.kind, family: plan.group.startsWith('family|'), fold: first.fold, row: first.row, sentences };
  });
  const mixed = docs.filter((d) => d.kind.length > 1 && d.kind !== 'HH');
  log(`${docs.length} training documents (${mixed.length} mixed)`);
  const docRatios = (d: Doc): Float64Array => Float64Array.from(d.sentences, (s) => ratios.get(s.text)![s.index]!);
  const docWords = (d: Doc): number[] => d.sentences.map((s) => s.text.words[s.index]!);

  const grid: Array<{ switchProb: number; offsetSd: number; auc: number }> = [];
  for (const switchProb of SWITCH_GRID) {
    for (const offsetSd of OFFSET_GRID) {
      model.sequence = { switchProb, offsetSd, offsetSteps: OFFSET_STEPS };
      const s: number[] = [];
      const ys: number[] = [];
      // The sequence model reads the older sources' ratio: chosen on their documents.
      for (const d of mixed.filter((x) => !x.family)) {
        const post = sequencePosteriors(model, docRatios(d), docWords(d));
        d.sentences.forEach((x, i) => {
          s.push(post[i]!);
          ys.push(x.y);
        });
      }
      grid.push({ switchProb, offsetSd, auc: auroc(s, ys) });
    }
  }
  grid.sort((a, b) => b.auc - a.auc);
  const best = grid[0]!;
  model.sequence = { switchProb: best.switchProb, offsetSd: best.offsetSd, offsetSteps: OFFSET_STEPS };
  console.log("Sequence model (sentence AUROC inside the older sources' mixed training documents):");
  for (const g of grid) console.log(`  switch ${g.switchProb}  shift sd ${g.offsetSd}  AUROC ${g.auc.toFixed(4)}`);

  // 4. The context model, out of fold: each document's sentences are scored by the forest that was
  // trained without that document's fold (the same fold whose document model scored its texts).
  const docX = new Map<Doc, Float64Array>();
  for (const d of docs) {
    const n = d.sentences.length;
    const evidence = new Float64Array(n * EVIDENCE_SIZE);
    d.sentences.forEach((x, i) => {
      evidence.set(x.text.evidence.subarray(x.index * EVIDENCE_SIZE, (x.index + 1) * EVIDENCE_SIZE), i * EVIDENCE_SIZE);
    });
    docX.set(d, contextFeatures(model, evidence, docWords(d), n, d.row.language));
  }
  const fitContext = (train: Doc[]): Forest => {
    const X: Float64Array[] = [];
    const ys: number[] = [];
    for (const d of train) {
      const x = docX.get(d)!;
      d.sentences.forEach((s, i) => {
        X.push(x.subarray(i * CONTEXT_FEATURES, (i + 1) * CONTEXT_FEATURES));
        ys.push(s.y);
      });
    }
    // Human and AI sentences weigh the same in total (the margin's 0 is "as likely as not").
    const nAi = ys.filter((v) => v === 1).length;
    const w = ys.map((v) => (v === 1 ? ys.length / (2 * nAi) : ys.length / (2 * (ys.length - nAi))));
    let r = 0;
    for (const d of train) {
      const pure = d.kind.length === 1 || d.kind === 'HH';
      for (let i = 0; i < d.sentences.length; i++, r++) w[r]! *= (pure ? PURE_WEIGHT : 1) * (d.family ? FAMILY_WEIGHT : 1);
    }
    return trainForest(X, ys, w, CONTEXT_OPTS);
  };
  const marginsOf = (forest: Forest, d: Doc): Float64Array => {
    const x = docX.get(d)!;
    return Float64Array.from(d.sentences, (_, i) => forestMargin(forest, x.subarray(i * CONTEXT_FEATURES, (i + 1) * CONTEXT_FEATURES)));
  };
  const posts = new Map<Doc, Float64Array>();
  for (let k = 0; k < folds.folds; k++) {
    const forest = fitContext(docs.filter((d) => d.fold !== k));
    for (const d of docs) if (d.fold === k) posts.set(d, marginsOf(forest, d));
    log(`context model, fold ${k + 1}/${folds.folds}`);
  }
  const hmm: { s: number[]; y: number[] } = { s: [], y: [] };
  const ctx: { s: number[]; y: number[] } = { s: [], y: [] };
  for (const d of mixed) {
    const post = sequencePosteriors(model, docRatios(d), docWords(d));
    const m = posts.get(d)!;
    d.sentences.forEach((x, i) => {
      hmm.s.push(post[i]!);
      hmm.y.push(x.y);
      ctx.s.push(m[i]!);
      ctx.y.push(x.y);
    });
  }
  const contextAuc = { sequence: auroc(hmm.s, hmm.y), context: auroc(ctx.s, ctx.y) };
  // The older sources' documents and the family's apart: what one gains must not be the other's loss.
  const aucOf = (family: boolean): { documents: number; context: number } => {
    const s: number[] = [];
    const ys: number[] = [];
    const these = mixed.filter((x) => x.family === family);
    for (const d of these) {
      const m = posts.get(d)!;
      d.sentences.forEach((x, i) => {
        s.push(m[i]!);
        ys.push(x.y);
      });
    }
    return { documents: these.length, context: round4(ys.length ? auroc(s, ys) : Number.NaN) };
  };
  const splitAuc = { older: aucOf(false), family: aucOf(true) };
  console.log(
    `  the older sources' ${splitAuc.older.documents} documents ${splitAuc.older.context}, the family's ${splitAuc.family.documents} ${splitAuc.family.context}`,
  );
  console.log(
    `Context model, out of fold: sentence AUROC inside mixed training documents ${contextAuc.context.toFixed(4)} (the sequence model's posterior: ${contextAuc.sequence.toFixed(4)})`,
  );
  const shippedForest = fitContext(docs);
  model.context = {
    features: CONTEXT_FEATURES,
    depth: shippedForest.depth,
    base: shippedForest.base,
    feature: Array.from(shippedForest.feature),
    threshold: Array.from(shippedForest.threshold, shortestFloat32),
    leaf: Array.from(shippedForest.leaf, (v) => Number(v.toPrecision(6))),
  };
  log(`context model on all ${docs.length} documents`);

  // 5. Calibration of the out-of-fold margin per band, on all documents (mixed and pure).
  model.calibration = BANDS.map((minWords) => {
    const s: number[] = [];
    const ys: number[] = [];
    for (const d of docs) {
      d.sentences.forEach((x, i) => {
        if (bandOf(x.text.words[x.index]!) === bandOf(minWords)) {
          s.push(posts.get(d)![i]!);
          ys.push(x.y);
        }
      });
    }
    // Human and AI sentences weigh the same in total, so 50% means "as likely generated as not"
    // whatever the mix of the training documents (spans and the share are read off that point).
    const nAi = ys.filter((v) => v === 1).length;
    const w = ys.map((v) => (v === 1 ? ys.length / (2 * nAi) : ys.length / (2 * (ys.length - nAi))));
    const [a, b] = fitLogisticSmall(
      s.map((v) => [v]),
      ys,
      0,
      w,
    ) as [number, number];
    return { minWords, a, b };
  });

  // 6. Spans on the training documents: each run scored as a document by its fold's model.
  let spanStats = evaluateSpans(docs, posts, model, folds, shipped, foldHeads, header.assistant);
  // A pure human text is never to get a `high` span, but its most AI-looking stretch, scored as a
  // document, can pass a document's threshold (the stretch was picked for looking AI). So `high`
  // also needs the sentences themselves to agree: their mean probability at or above the lowest
  // bar that no pure human training document's likely-AI span reaches (plus a margin).
  const humanMax = Math.max(0, ...spanStats.likelyAiSpans.human);
  model.spans.highMeanSentence = round4(Math.min(0.95, Math.max(HIGH_FLOOR, humanMax + HIGH_MARGIN)));
  const kept = spanStats.likelyAiSpans.ai.filter((m) => m >= model.spans.highMeanSentence).length;
  console.log(
    `Spans: likely-AI stretches in pure human documents ${spanStats.likelyAiSpans.human.length} (mean sentence probability up to ${humanMax.toFixed(3)}); ` +
      `high needs ${model.spans.highMeanSentence}, which keeps ${kept} of ${spanStats.likelyAiSpans.ai.length} likely-AI spans of generated text`,
  );
  spanStats = evaluateSpans(docs, posts, model, folds, shipped, foldHeads, header.assistant);
  const medium = MEDIUM_GRID.find(
    (m) => spanStats.pureHumanMax.filter((p) => p >= m).length <= MEDIUM_MAX_PURE_HUMAN * spanStats.pureHumanMax.length,
  );
  model.spans.mediumProbability = medium ?? MEDIUM_GRID.at(-1)!;
  // The share estimate that is within ±0.2 of the truth for more two-part training documents.
  const byRule = { spans: spanStats.shareOk / spanStats.twoPart, expected: spanStats.expectedShareOk / spanStats.twoPart };
  model.spans.shareRule = byRule.expected > byRule.spans ? 'expected' : 'spans';
  console.log(
    `Share within ±0.2 of two-part training documents: words in spans ${byRule.spans.toFixed(4)}, expected words ${byRule.expected.toFixed(4)} → ${model.spans.shareRule}`,
  );

  const probs = (d: Doc): number[] => d.sentences.map((x, i) => calibrateSentence(model, posts.get(d)![i]!, x.text.words[x.index]!));
  const s: number[] = [];
  const ys: number[] = [];
  let humanHigh = 0;
  let humans = 0;
  for (const d of mixed) {
    const p = probs(d);
    d.sentences.forEach((x, i) => {
      s.push(p[i]!);
      ys.push(x.y);
      if (x.y === 0) {
        humans++;
        if (p[i]! >= 0.8) humanHigh++;
      }
    });
  }
  model.training = {
    texts: rows.length,
    family: { file: FAMILY_FILE, texts: familyRows.length, twinsFromOtherFiles: extraTwins.length, kinds: FAMILY_KINDS },
    documents: docs.length,
    mixedDocuments: mixed.length,
    seed: SEED,
    folds: folds.folds,
    context: { ...CONTEXT_OPTS, documentSets: DOC_SETS, pureWeight: PURE_WEIGHT, familyWeight: FAMILY_WEIGHT },
    outOfFold: {
      sentenceAurocMixed: round4(auroc(s, ys)),
      sentenceAurocMixedSequenceModel: round4(contextAuc.sequence),
      sentenceAurocMixedOlder: splitAuc.older.context,
      sentenceAurocMixedFamily: splitAuc.family.context,
      humanSentencesAt80: round4(humanHigh / humans),
      pureHumanDocuments: spanStats.pureHuman,
      pureHumanWithHighSpan: spanStats.pureHumanHigh,
      pureHumanWithMediumSpan: spanStats.pureHumanMax.filter((p) => p >= model.spans.mediumProbability).length,
      twoPartShareWithin20: round4(byRule[model.spans.shareRule]),
      twoPartShareWithin20BySpanWords: round4(byRule.spans),
    },
  };
  console.log(
    `\nCalibration per band: ${model.calibration.map((c) => `${c.minWords}+ words a=${c.a.toFixed(3)} b=${c.b.toFixed(3)}`).join('; ')}`,
  );
  console.log('Out of fold, on the training documents:', JSON.stringify(model.training.outOfFold));

  const body = { ...model, version: '' };
  const version = `ts${SEGMENT_FORMAT_VERSION}-${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 12)}`;
  const tmp = `${OUT}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...body, version }, null, 1)}\n`);
  renameSync(tmp, OUT);
  log(`wrote ${OUT} (${version})`);
}

function evaluateSpans(
  docs: Doc[],
  posts: Map<Doc, Float64Array>,
  model: SegmentModel,
  folds: ReturnType<typeof foldModels>,
  shipped: LoadedModel,
  foldHeads: FoldHeads | undefined,
  heads: Pick<AssistantHead, 'bars'> | undefined,
): {
  pureHuman: number;
  pureHumanHigh: number;
  pureHumanMax: number[];
  twoPart: number;
  shareOk: number;
  /** The same with the share estimated as the sentences' expected generated words (`shareRule: 'expected'`). */
  expectedShareOk: number;
  /** Spans that a document would call likely_ai, with their mean sentence probability: in pure human documents, and mostly-AI spans in mixed ones. */
  likelyAiSpans: { human: number[]; ai: number[] };
} {
  let pureHuman = 0;
  let pureHumanHigh = 0;
  const likelyAiSpans = { human: [] as number[], ai: [] as number[] };
  const pureHumanMax: number[] = [];
  let twoPart = 0;
  let shareOk = 0;
  let expectedShareOk = 0;
  for (const d of docs) {
    const calib = shipped.calibrationFor(d.row.language, d.row.mode);
    const own = shipped.hasOwnCalibration(d.row.language, d.row.mode);
    const n = d.sentences.length;
    const p = d.sentences.map((x, i) => calibrateSentence(model, posts.get(d)![i]!, x.text.words[x.index]!));
    const textOf = (a: number, b: number): string =>
      d.sentences
        .slice(a, b)
        .map((x) => x.text.norm.slice(x.text.ranges[x.index]!.start, x.text.ranges[x.index]!.end))
        .join(' ');
    // Whether the head makes the document likely AI whole, which picks the bar a run is confirmed
    // against (`confirmingBar`, as the engine reads it).
    const headOf = (text: string) => {
      const head = heads && foldHeads?.heads[d.fold];
      const scored = folds.rawLogit(d.fold, text, d.row.language);
      const words = scored.features.words;
      const p0 = round4(calibrateForLength(scored.raw, calib, words));
      // Under the evidence floor the head only ranks whole texts, as in the engine: no run is its to confirm there.
      const bar = head && words >= SHORT_TEXT_WORDS ? assistantBarFor(heads, d.row.language, words) : undefined;
      const margin = head && bar ? assistantMargin({ ...head, bars: heads.bars }, scored.features, scored.raw) : undefined;
      return { scored, p0, bar, margin, ai: aiThresholdFor(calib, words), human: humanThresholdFor(calib, words) };
    };
    let byHeadAlone = false;
    if (heads && foldHeads) {
      const whole = headOf(textOf(0, n));
      byHeadAlone =
        whole.bar !== undefined &&
        whole.margin !== undefined &&
        whole.p0 < whole.ai &&
        liftedProbability(whole.p0, whole.margin, whole.bar, whole.ai, whole.human) >= whole.ai;
    }
    let total = 0;
    let inSpans = 0;
    let truth = 0;
    let maxSpan = 0;
    let high = false;
    d.sentences.forEach((x) => {
      total += x.text.words[x.index]!;
      if (x.y === 1) truth += x.text.words[x.index]!;
    });
    for (let i = 0; i < n; ) {
      const threshold = model.spans.sentenceThreshold;
      if (p[i]! < threshold) {
        i++;
        continue;
      }
      let j = i;
      let words = d.sentences[i]!.text.words[d.sentences[i]!.index]!;
      while (j + 1 < n && p[j + 1]! >= threshold) words += d.sentences[++j]!.text.words[d.sentences[j]!.index]!;
      if (words >= model.spans.minWords) {
        const pure = d.kind === 'H' || d.kind === 'HH';
        const aiWords = d.sentences.slice(i, j + 1).reduce((a, x) => a + (x.y ? x.text.words[x.index]! : 0), 0);
        // Lifted by the head of the document's fold, as the engine scores a run as a document.
        const run = headOf(textOf(i, j + 1));
        const { scored } = run;
        let prob = run.p0;
        if (run.bar && run.margin !== undefined)
          prob = liftedProbability(prob, run.margin, confirmingBar(run.bar, byHeadAlone), run.ai, run.human);
        // As at run time: a run that does not lean AI as a document is not a span.
        if (prob >= 0.5) inSpans += words;
        if (prob >= 0.5 && (pure || aiWords >= 0.8 * words)) {
          const meanSentence = p.slice(i, j + 1).reduce((a, b) => a + b, 0) / (j + 1 - i);
          const likelyAi = own && scored.features.words >= SHORT_TEXT_WORDS && prob >= aiThresholdFor(calib, scored.features.words);
          if (likelyAi) (pure ? likelyAiSpans.human : likelyAiSpans.ai).push(meanSentence);
          if (pure) {
            maxSpan = Math.max(maxSpan, prob);
            if (likelyAi && meanSentence >= model.spans.highMeanSentence) high = true;
          }
        }
      }
      i = j + 1;
    }
    if (d.kind === 'H' || d.kind === 'HH') {
      pureHuman++;
      pureHumanMax.push(maxSpan);
      if (high) pureHumanHigh++;
    }
    if (d.kind.length === 2 && d.kind !== 'HH') {
      twoPart++;
      if (Math.abs(inSpans / total - truth / total) <= 0.2) shareOk++;
      const expected = inSpans > 0 ? d.sentences.reduce((a, x, k) => a + p[k]! * x.text.words[x.index]!, 0) : 0;
      if (Math.abs(expected / total - truth / total) <= 0.2) expectedShareOk++;
    }
  }
  return { pureHuman, pureHumanHigh, pureHumanMax, twoPart, shareOk, expectedShareOk, likelyAiSpans };
}

/**
 * A logistic ratio (AI vs human, or the family vs people) over run features of `texts`: every
 * sentence and RUNS_PER_TEXT random runs of each text, standardised, the class balance taken out of
 * the bias.
 */
function fitRatio(
  texts: readonly Text[],
  rand: () => number,
  features: (sums: ArrayLike<number>) => Float64Array,
  dim: number,
): { mean: number[]; std: number[]; weights: number[]; bias: number; runs: number } {
  const X: Float64Array[] = [];
  const y: number[] = [];
  const sums = new Float64Array(EVIDENCE_SIZE);
  const addRun = (t: Text, a: number, b: number): void => {
    sums.fill(0);
    for (let i = a; i < b; i++) for (let j = 0; j < EVIDENCE_SIZE; j++) sums[j]! += t.evidence[i * EVIDENCE_SIZE + j]!;
    X.push(features(sums));
    y.push(t.row.label === 'ai' ? 1 : 0);
  };
  for (const t of texts) {
    const n = t.ranges.length;
    for (let i = 0; i < n; i++) addRun(t, i, i + 1);
    for (let k = 0; k < RUNS_PER_TEXT && n > 1; k++) {
      const len = Math.max(1, Math.min(n, Math.round(Math.exp(rand() * Math.log(n + 1)))));
      const a = Math.floor(rand() * (n - len + 1));
      addRun(t, a, a + len);
    }
  }
  const mean = new Array<number>(dim).fill(0);
  const std = new Array<number>(dim).fill(0);
  for (const x of X) for (let j = 0; j < dim; j++) mean[j]! += x[j]! / X.length;
  for (const x of X) for (let j = 0; j < dim; j++) std[j]! += (x[j]! - mean[j]!) ** 2 / X.length;
  for (let j = 0; j < dim; j++) std[j] = Math.sqrt(std[j]!) || 1;
  const Z = X.map((x) => x.map((v, j) => (v - mean[j]!) / std[j]!));
  const beta = fitLogisticSmall(Z, y, L2);
  const nAi = y.filter((v) => v === 1).length;
  // The ratio must not carry the training set's class balance.
  return { mean, std, weights: beta.slice(0, dim), bias: beta[dim]! - Math.log(nAi / (y.length - nAi)), runs: X.length };
}

/** The shortest decimal that reads back as the same float32 (thresholds are compared as float32 at run time). */
function shortestFloat32(x: number): number {
  for (let p = 1; p < 9; p++) {
    const v = Number(x.toPrecision(p));
    if (Math.fround(v) === x) return v;
  }
  return x;
}

main();
