/**
 * `npm run eval:mixed [-- options]`: how well the sentence scores and generated spans find the
 * generated part of a document, on held-out mixed documents built from the DEV files
 * (`corpus-dev`, `extra-dev`): human and AI texts of one source (and mode and language) joined as
 * human+AI, AI+human and human+AI+human, half with a blank line between the parts and half with a
 * space; plus pure documents (every dev text alone, and two human texts joined). Each document
 * goes through `detect(text, { mode, segments: true })` as a client would send it (language
 * detected), and every returned sentence is labelled by the part most of its characters come from.
 *
 * Prints, overall and per language: the sentence AUROC inside mixed documents, the share of their
 * human sentences shown at ≥ 80% AI, the share of two-part documents whose `generated_share` is
 * within ±0.2 of the truth, and for pure human documents the `likely_ai` rate and the documents
 * with a span of `high` confidence; `--by source` adds the rows per source and mode, `--by mode` per
 * language and mode. The headline (`origin`, issue 31): the share of mixed documents headlined
 * `partly_ai`, and of pure AI documents headlined `ai_written` (the plain AI verdict), `ai_polished`
 * or `partly_ai`, over all of them and over those the verdict calls `likely_ai`.
 *
 * `--every-mode` also sends every mixed document in each of the four modes and prints, per language
 * and mode of the documents' source, the figures for each mode it was sent in, and how many
 * documents got other sentence scores than in their own mode (the sentence model must not read the
 * mode: the same text gets the same sentences whatever calibration the caller picks).
 *
 * Options: --markdown, --by source[,mode], --every-mode, --seed N (default 7), --per-group N (documents
 * per source group, default 45), --joiner both|blank|space (what joins the parts; default both,
 * alternating), --files a,b (the dev files to build documents from; default corpus-dev,extra-dev),
 * --data DIR, --model PATH, --segment-model PATH
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countWords } from '../src/detector/engine.ts';
import { createDetector, MODES, UnsupportedLanguageError, type DetectionResult } from '../src/detector/index.ts';
import { auroc } from '../src/detector/metrics.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { isLightEdit, planMixedDocs, type PlannedDoc } from './lib/mixed-docs.ts';
import { table } from './lib/table.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const SEED = Number(arg('--seed') ?? 7);
const PER_GROUP = Number(arg('--per-group') ?? 45);
const MARKDOWN = process.argv.includes('--markdown');
const printTable = (head: string[], rows: string[][]): string => table(head, rows, MARKDOWN);
const BY = (arg('--by') ?? '').split(',');
const BY_SOURCE = BY.includes('source');
const BY_MODE = BY.includes('mode');
const EVERY_MODE = process.argv.includes('--every-mode');
/** What joins the parts: `both` (alternating, the default), `blank` (a blank line) or `space`. */
const JOINER = arg('--joiner') ?? 'both';
if (!['both', 'blank', 'space'].includes(JOINER)) throw new Error('--joiner must be both, blank or space.');

interface Labelled {
  plan: PlannedDoc;
  text: string;
  /** [start, end) of each part in `text`. */
  bounds: Array<[number, number]>;
  result: DetectionResult;
}

interface Tally {
  scores: number[];
  labels: number[];
  humanHigh: number;
  humans: number;
  aiHalf: number;
  ais: number;
  twoPart: number;
  shareOk: number;
  mixedDocs: number;
  partly: number;
  /** Mixed documents whose headline (`origin`) is `partly_ai`. */
  headlinePartly: number;
  mixedHighAi: number;
}

function newTally(): Tally {
  return {
    scores: [],
    labels: [],
    humanHigh: 0,
    humans: 0,
    aiHalf: 0,
    ais: 0,
    twoPart: 0,
    shareOk: 0,
    mixedDocs: 0,
    partly: 0,
    headlinePartly: 0,
    mixedHighAi: 0,
  };
}

function labelOf(doc: Labelled, start: number, end: number): 0 | 1 {
  let ai = 0;
  let human = 0;
  doc.bounds.forEach(([a, b], k) => {
    const overlap = Math.max(0, Math.min(b, end) - Math.max(a, start));
    if (doc.plan.parts[k]!.y === 1) ai += overlap;
    else human += overlap;
  });
  return ai > human ? 1 : 0;
}

function addMixed(t: Tally, doc: Labelled): void {
  t.mixedDocs++;
  if (doc.result.composition === 'partly_ai') t.partly++;
  if (doc.result.origin === 'partly_ai') t.headlinePartly++;
  if (doc.result.verdict === 'likely_ai' && doc.result.confidence === 'high') t.mixedHighAi++;
  for (const s of doc.result.segments) {
    const y = labelOf(doc, s.start, s.end);
    t.scores.push(s.ai_probability);
    t.labels.push(y);
    if (y === 0) {
      t.humans++;
      if (s.ai_probability >= 0.8) t.humanHigh++;
    } else {
      t.ais++;
      if (s.ai_probability >= 0.5) t.aiHalf++;
    }
  }
  if (doc.plan.parts.length === 2) {
    const words = doc.plan.parts.map((p) => countWords(p.row.text, p.row.language));
    const truth = words.reduce((a, w, k) => a + (doc.plan.parts[k]!.y ? w : 0), 0) / words.reduce((a, w) => a + w, 0);
    t.twoPart++;
    if (Math.abs((doc.result.generated_share ?? 0) - truth) <= 0.2) t.shareOk++;
  }
}

const pct = (a: number, b: number): string => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '–');

async function main(): Promise<void> {
  const detector = await createDetector({
    ...(arg('--model') ? { model: resolve(arg('--model')!) } : {}),
    ...(arg('--segment-model') ? { segmentModel: resolve(arg('--segment-model')!) } : {}),
  });
  const files = (arg('--files') ?? 'corpus-dev,extra-dev').split(',');
  if (files.some((f) => !/-dev$/.test(f)))
    throw new Error('--files takes dev files only (e.g. v3-dev,v4-dev): the sentence model was fitted on the training files.');
  const rows = files.flatMap((f) => readJsonl<CorpusRow>(join(DATA, `${f}.jsonl`)));
  const plans = [
    ...planMixedDocs(rows, { seed: SEED, kinds: ['HA', 'AH', 'HAH'], perGroup: PER_GROUP }),
    ...planMixedDocs(rows, { seed: SEED + 1, kinds: ['HH'], perGroup: Math.ceil(PER_GROUP / 3) }),
    ...rows.map(
      (row): PlannedDoc => ({
        kind: row.label === 'ai' ? 'A' : 'H',
        group: `${row.source}|${row.mode}|${row.language}`,
        parts: [{ row, y: row.label === 'ai' ? 1 : 0 }],
      }),
    ),
  ];
  const docs: Labelled[] = [];
  let refused = 0;
  plans.forEach((plan, i) => {
    const joiner = JOINER === 'blank' || (JOINER === 'both' && i % 2 === 0) ? '\n\n' : ' ';
    let text = '';
    const bounds: Array<[number, number]> = [];
    for (const part of plan.parts) {
      if (text) text += joiner;
      bounds.push([text.length, text.length + part.row.text.length]);
      text += part.row.text;
    }
    try {
      docs.push({ plan, text, bounds, result: detector.detect(text, { mode: plan.parts[0]!.row.mode, segments: true }) });
    } catch (err) {
      if (!(err instanceof UnsupportedLanguageError)) throw err;
      refused++;
    }
  });

  const groups = new Map<string, Tally>();
  const tallyOf = (key: string): Tally => {
    const t = groups.get(key) ?? newTally();
    groups.set(key, t);
    return t;
  };
  const pureHuman = new Map<
    string,
    {
      n: number;
      likelyAi: number;
      anySpan: number;
      high: number;
      medium: number;
      human: number;
      partly: number;
      ai: number;
      headlinePartly: number;
    }
  >();
  interface PureAi {
    n: number;
    ai: number;
    partly: number;
    shareSum: number;
    /** Headlines (`origin`) over all the documents. */
    written: number;
    polished: number;
    headlinePartly: number;
    /** The documents the verdict calls likely_ai, and their headlines. */
    likelyAi: number;
    likelyAiWritten: number;
    likelyAiPolished: number;
    likelyAiPartly: number;
  }
  const pureAi = new Map<string, PureAi>();
  for (const doc of docs) {
    const language = doc.plan.parts[0]!.row.language;
    const kind = doc.plan.kind;
    if (kind === 'HA' || kind === 'AH' || kind === 'HAH') {
      const first = doc.plan.parts[0]!.row;
      const keys = ['all', language];
      if (BY_MODE) keys.push(`${language} ${first.mode}`);
      if (BY_SOURCE) keys.push(`${first.source}/${first.mode}`);
      for (const key of keys) addMixed(tallyOf(key), doc);
      if (doc.plan.parts.some((p) => isLightEdit(p.row)))
        addMixed(tallyOf('AI part is a light AI edit of human text (MixSet polish)'), doc);
    } else if (kind === 'H' || kind === 'HH') {
      for (const key of ['all', language, `${kind === 'H' ? 'single' : 'two joined'}`]) {
        const e = pureHuman.get(key) ?? {
          n: 0,
          likelyAi: 0,
          anySpan: 0,
          high: 0,
          medium: 0,
          human: 0,
          partly: 0,
          ai: 0,
          headlinePartly: 0,
        };
        e.n++;
        if (doc.result.verdict === 'likely_ai') e.likelyAi++;
        if (doc.result.generated_spans.length) e.anySpan++;
        if (doc.result.generated_spans.some((s) => s.confidence === 'high')) e.high++;
        if (doc.result.generated_spans.some((s) => s.confidence === 'medium')) e.medium++;
        if (doc.result.composition === 'human') e.human++;
        if (doc.result.composition === 'partly_ai') e.partly++;
        if (doc.result.composition === 'ai') e.ai++;
        if (doc.result.origin === 'partly_ai') e.headlinePartly++;
        pureHuman.set(key, e);
      }
    } else {
      for (const key of ['all', language]) {
        const e = pureAi.get(key) ?? {
          n: 0,
          ai: 0,
          partly: 0,
          shareSum: 0,
          written: 0,
          polished: 0,
          headlinePartly: 0,
          likelyAi: 0,
          likelyAiWritten: 0,
          likelyAiPolished: 0,
          likelyAiPartly: 0,
        };
        e.n++;
        if (doc.result.composition === 'ai') e.ai++;
        if (doc.result.composition === 'partly_ai') e.partly++;
        e.shareSum += doc.result.generated_share ?? 0;
        const origin = doc.result.origin;
        if (origin === 'ai_written') e.written++;
        if (origin === 'ai_polished') e.polished++;
        if (origin === 'partly_ai') e.headlinePartly++;
        if (doc.result.verdict === 'likely_ai') {
          e.likelyAi++;
          if (origin === 'ai_written') e.likelyAiWritten++;
          if (origin === 'ai_polished') e.likelyAiPolished++;
          if (origin === 'partly_ai') e.likelyAiPartly++;
        }
        pureAi.set(key, e);
      }
    }
  }

  console.log(
    `Model ${detector.model}; ${docs.length} documents (${refused} refused as another language), ${files.join(', ')}, seed ${SEED}\n`,
  );
  console.log('Mixed documents (human+AI, AI+human, human+AI+human):\n');
  const keys = [...groups.keys()].sort((a, b) =>
    a === 'all' ? -1 : b === 'all' ? 1 : a.length <= 2 && b.length > 2 ? -1 : b.length <= 2 && a.length > 2 ? 1 : a < b ? -1 : 1,
  );
  console.log(
    printTable(
      [
        'set',
        'docs',
        'sentences',
        'sentence AUROC',
        'human sentences ≥ 80%',
        'AI sentences ≥ 50%',
        'two-part share ±0.2',
        'partly_ai',
        'headline partly_ai',
        'likely_ai + high',
      ],
      keys.map((k) => {
        const t = groups.get(k)!;
        return [
          k,
          String(t.mixedDocs),
          String(t.scores.length),
          auroc(t.scores, t.labels).toFixed(3),
          pct(t.humanHigh, t.humans),
          pct(t.aiHalf, t.ais),
          `${pct(t.shareOk, t.twoPart)} of ${t.twoPart}`,
          pct(t.partly, t.mixedDocs),
          pct(t.headlinePartly, t.mixedDocs),
          pct(t.mixedHighAi, t.mixedDocs),
        ];
      }),
    ),
  );
  if (EVERY_MODE) {
    // The same mixed documents, sent in every mode.
    const rows: string[][] = [];
    const mixedDocs = docs.filter((d) => d.plan.kind === 'HA' || d.plan.kind === 'AH' || d.plan.kind === 'HAH');
    const groups = [...new Set(mixedDocs.map((d) => `${d.plan.parts[0]!.row.language} ${d.plan.parts[0]!.row.mode}`))].sort();
    for (const group of groups) {
      const inGroup = mixedDocs.filter((d) => `${d.plan.parts[0]!.row.language} ${d.plan.parts[0]!.row.mode}` === group);
      for (const mode of MODES) {
        const t = newTally();
        let changed = 0;
        for (const doc of inGroup) {
          const result = mode === doc.result.mode ? doc.result : detector.detect(doc.text, { mode, segments: true });
          if (JSON.stringify(result.segments) !== JSON.stringify(doc.result.segments)) changed++;
          addMixed(t, { ...doc, result });
        }
        rows.push([
          group,
          mode,
          String(t.mixedDocs),
          auroc(t.scores, t.labels).toFixed(3),
          pct(t.humanHigh, t.humans),
          pct(t.aiHalf, t.ais),
          `${pct(t.shareOk, t.twoPart)} of ${t.twoPart}`,
          pct(t.partly, t.mixedDocs),
          String(changed),
        ]);
      }
    }
    console.log('\nThe same mixed documents sent in every mode (documents of one source language and mode):\n');
    console.log(
      printTable(
        [
          'documents',
          'sent as',
          'docs',
          'sentence AUROC',
          'human sentences ≥ 80%',
          'AI sentences ≥ 50%',
          'two-part share ±0.2',
          'partly_ai',
          'sentence scores unlike their own mode',
        ],
        rows,
      ),
    );
  }
  console.log('\nPure human documents (every dev human text alone, and two joined):\n');
  console.log(
    printTable(
      ['set', 'docs', 'likely_ai', 'any span', 'medium span', 'high span', 'composition human', 'partly_ai', 'ai', 'headline partly_ai'],
      [...pureHuman].map(([k, e]) => [
        k,
        String(e.n),
        pct(e.likelyAi, e.n),
        pct(e.anySpan, e.n),
        pct(e.medium, e.n),
        `${e.high} (${pct(e.high, e.n)})`,
        pct(e.human, e.n),
        pct(e.partly, e.n),
        pct(e.ai, e.n),
        pct(e.headlinePartly, e.n),
      ]),
    ),
  );
  console.log('\nPure AI documents (every dev AI text alone):\n');
  console.log(
    printTable(
      ['set', 'docs', 'composition ai', 'partly_ai', 'mean generated_share'],
      [...pureAi].map(([k, e]) => [k, String(e.n), pct(e.ai, e.n), pct(e.partly, e.n), (e.shareSum / e.n).toFixed(3)]),
    ),
  );
  // Issue 31, item 4: does the headline follow the composition without taking the plain AI
  // verdict away from generated texts?
  console.log('\nHeadline (`origin`) of pure AI documents: over all of them, and over those the verdict calls likely_ai:\n');
  console.log(
    printTable(
      ['set', 'docs', 'ai_written', 'ai_polished', 'partly_ai', 'likely_ai docs', 'of them ai_written', 'ai_polished', 'partly_ai'],
      [...pureAi].map(([k, e]) => [
        k,
        String(e.n),
        pct(e.written, e.n),
        pct(e.polished, e.n),
        pct(e.headlinePartly, e.n),
        String(e.likelyAi),
        pct(e.likelyAiWritten, e.likelyAi),
        pct(e.likelyAiPolished, e.likelyAi),
        pct(e.likelyAiPartly, e.likelyAi),
      ]),
    ),
  );
  const all = groups.get('all');
  const ai = pureAi.get('all');
  if (all && ai) {
    console.log(
      `\nHalf-human documents headlined partly_ai: ${pct(all.headlinePartly, all.mixedDocs)} of ${all.mixedDocs} (composition partly_ai: ${pct(all.partly, all.mixedDocs)}); ` +
        `pure AI documents headlined ai_written: ${pct(ai.written, ai.n)} of ${ai.n}, ${pct(ai.likelyAiWritten, ai.likelyAi)} of the ${ai.likelyAi} called likely_ai ` +
        `(partly_ai: ${pct(ai.likelyAiPartly, ai.likelyAi)}).`,
    );
  }
}

await main();
