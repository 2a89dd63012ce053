/**
 * `npm run eval:mirrors [-- options]`: how the detector reads AI texts that mirror human texts
 * (issue 38, v5 data): every AI text of the file (default `v5-dev.jsonl`) is scored with the human
 * text it mirrors (its `mirror_of`, looked up in the human dev files) and with all dev humans, as
 * the service scores a text (`detect` with the record's mode). Per task and per genre (the twin's
 * source, `domain`): n, pairs found, AUROC against the group's own twins, the share of pairs where
 * the mirror scores above its twin, AUROC against all dev humans, the shares called likely_ai and
 * likely_human per length band (40–100, 100+ words as the engine counts them), and the share of the
 * twins called likely_ai. Then the dev humans' verdicts per source (likely_ai share).
 *
 * Options:
 *   --model PATH      detector artifact (default models/detector.bin)
 *   --file PATH       the mirrors, JSONL with `mirror_of`, `task` and `domain` (default ../shared/data/v5-dev.jsonl)
 *   --data DIR        where the human dev files are (default ../shared/data)
 *   --humans a,b      the human dev files `<name>-dev.jsonl` in --data (default corpus,extra,v3,v4);
 *                     only their human texts are read
 *   --strip-tells     score the mirrors with their family's word tells taken out (DATA.md, "v5 data"):
 *                     "honestly", "actually", "genuinely", "lol" anywhere and the openers "so", "ok",
 *                     "okay", "basically", "yeah" at a sentence start; issue 38 asks that this gap stay small
 *   --spans           also the generated spans (`segments: true`) of the mirrors called likely_ai, and of
 *                     documents made of a mirror (40+ words, not `polish`) and a dev human text (60–400 words,
 *                     picked by the mirror's id), each order once: their composition, and the share of the
 *                     mirror's words and of the person's words inside spans of medium or high confidence,
 *                     and the AUROC of their sentences' ai_probability (the mirror's against the person's);
 *                     and the dev humans' spans
 *   --markdown        Markdown tables
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countWords } from '../src/detector/engine.ts';
import { auroc } from '../src/detector/metrics.ts';
import { createDetector, UnsupportedLanguageError, type Mode } from '../src/detector/index.ts';
import { readJsonl, stableHash, type CorpusRow } from '../src/detector/training.ts';
import { MIRROR_HEAD, mirrorCells, mirrorRows, type ScoredMirror, type ScoredText } from './lib/mirrors.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';
import { stripTells } from './lib/tells.ts';
import { table } from './lib/table.ts';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const FILE = resolve(ROOT, arg('--file') ?? join(DATA, 'v5-dev.jsonl'));
const HUMAN_FILES = (arg('--humans') ?? 'corpus,extra,v3,v4')
  .split(',')
  .filter(Boolean)
  .map((name) => join(DATA, `${name}-dev.jsonl`));
const MARKDOWN = process.argv.includes('--markdown');
const STRIP_TELLS = process.argv.includes('--strip-tells');
const SPANS = process.argv.includes('--spans');

const detector = await createDetector(arg('--model') ? { model: resolve(arg('--model')!) } : {});

interface MirrorRecord extends CorpusRow {
  mirror_of: string;
  task: string;
  domain?: string;
}

function score(row: CorpusRow): ScoredText | undefined {
  try {
    const r = detector.detect(row.text, { mode: row.mode as Mode });
    return { id: row.id, p: r.ai_probability, verdict: r.verdict, words: countWords(row.text, r.language) };
  } catch (err) {
    // A text in a language the model does not read has no score; it is left out, as the CLI's eval does.
    if (err instanceof UnsupportedLanguageError) return undefined;
    throw err;
  }
}

const humans: Array<ScoredText & { source: string }> = [];
/** English dev humans of 60–400 words, for the mixed documents of --spans, and every dev human, for its last line. */
const people: string[] = [];
const humanRows: CorpusRow[] = [];
for (const file of HUMAN_FILES)
  for (const row of readJsonl<CorpusRow>(file)) {
    if (row.label !== 'human') continue;
    const s = score(row);
    if (s) humans.push({ ...s, source: row.source });
    if (s && row.language === 'en' && s.words >= 60 && s.words <= 400) people.push(row.text);
    if (s && SPANS) humanRows.push(row);
  }
const twins = new Map(humans.map((h) => [h.id, h]));

const mirrors: ScoredMirror[] = [];
const mirrorRecords: MirrorRecord[] = [];
let unscored = 0;
for (const row of readJsonl<MirrorRecord>(FILE)) {
  if (row.label !== 'ai' || !row.mirror_of) continue;
  const read = STRIP_TELLS ? { ...row, text: stripTells(row.text) } : row;
  const s = score(read);
  if (!s) {
    unscored++;
    continue;
  }
  mirrors.push({ ...s, mirrorOf: row.mirror_of, task: row.task ?? '?', genre: row.domain ?? row.source });
  mirrorRecords.push(read);
}

const print = (title: string, rows: string[][], head: string[]): void => {
  console.log(`\n${MARKDOWN ? '#### ' : ''}${title}\n`);
  console.log(table(head, rows, MARKDOWN));
};
console.log(
  `model ${detector.model}; ${mirrors.length} mirrors of ${FILE.slice(FILE.lastIndexOf('/') + 1)}` +
    `${STRIP_TELLS ? ', word tells stripped' : ''}` +
    `${unscored ? ` (${unscored} in an unsupported language left out)` : ''}, ${humans.length} dev humans of ` +
    `${HUMAN_FILES.map((f) => f.slice(f.lastIndexOf('/') + 1)).join(', ')}`,
);
const byTask = mirrorRows(mirrors, (m) => m.task, twins, humans, true);
print(
  'Per task',
  byTask.map((r) => [r.group, ...mirrorCells(r)]),
  ['task', ...MIRROR_HEAD],
);
const byGenre = mirrorRows(mirrors, (m) => m.genre, twins, humans);
print(
  'Per genre (the twin’s source)',
  byGenre.map((r) => [r.group, ...mirrorCells(r)]),
  ['genre', ...MIRROR_HEAD],
);
const bySource = new Map<string, ScoredText[]>();
for (const h of humans) bySource.set(h.source, [...(bySource.get(h.source) ?? []), h]);
print(
  'Dev humans called likely_ai, per source',
  [...bySource.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([source, xs]) => {
      const flagged = xs.filter((x) => x.verdict === 'likely_ai').length;
      return [source, String(xs.length), String(flagged), `${((100 * flagged) / xs.length).toFixed(1)}%`];
    }),
  ['source', 'n', 'likely_ai', 'share'],
);

if (SPANS) {
  const COMPOSITIONS = ['ai', 'partly_ai', 'uncertain', 'human'] as const;
  const pct = (k: number, n: number) => (n ? `${((100 * k) / n).toFixed(1)}%` : '–');
  interface Tally {
    n: number;
    spans: number;
    counts: Map<string, number>;
    ai: { inSpans: number; words: number };
    person: { inSpans: number; words: number };
    /** Sentence scores of documents of a mirror and a person's text, labelled by whose words they are. */
    sentences: { s: number[]; y: number[] };
  }
  const tally = (): Tally => ({
    n: 0,
    spans: 0,
    counts: new Map(),
    ai: { inSpans: 0, words: 0 },
    person: { inSpans: 0, words: 0 },
    sentences: { s: [], y: [] },
  });
  /** Counts an answer; the words from `aiStart` to `aiEnd` are the mirror's, the rest a person's. */
  const add = (t: Tally, text: string, r: ReturnType<typeof detector.detect>, aiStart = 0, aiEnd = 0): void => {
    const spans = r.generated_spans.filter((s) => s.confidence !== 'low');
    t.n++;
    if (spans.length > 0) t.spans++;
    t.counts.set(r.composition ?? '', (t.counts.get(r.composition ?? '') ?? 0) + 1);
    for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
      const side = m.index >= aiStart && m.index < aiEnd ? t.ai : t.person;
      side.words++;
      if (spans.some((s) => m.index >= s.start && m.index < s.end)) side.inSpans++;
    }
    if (aiEnd > aiStart && aiEnd - aiStart < text.length)
      for (const seg of r.segments) {
        t.sentences.s.push(seg.ai_probability);
        t.sentences.y.push(seg.start >= aiStart && seg.start < aiEnd ? 1 : 0);
      }
  };
  const alone = tally();
  for (const row of mirrorRecords) {
    const r = detector.detect(row.text, { mode: row.mode as Mode, segments: true });
    if (r.verdict === 'likely_ai') add(alone, row.text, r, 0, row.text.length);
  }
  // A mirror and a person's text in one document: which words the spans take in.
  const [mixedAi, mixedRest] = [tally(), tally()];
  for (const row of mirrorRecords) {
    if (row.language !== 'en' || row.task === 'polish' || countWords(row.text, 'en') < 40 || people.length === 0) continue;
    const person = people[stableHash(row.id) % people.length]!;
    for (const personFirst of [true, false]) {
      const text = personFirst ? `${person}\n\n${row.text}` : `${row.text}\n\n${person}`;
      const aiStart = personFirst ? person.length + 2 : 0;
      const r = detector.detect(text, { mode: row.mode as Mode, segments: true });
      add(r.verdict === 'likely_ai' ? mixedAi : mixedRest, text, r, aiStart, aiStart + row.text.length);
    }
  }
  const everyone = tally();
  for (const row of humanRows) add(everyone, row.text, detector.detect(row.text, { mode: row.mode as Mode, segments: true }));
  // A group without a mirror's (or a person's) words gets '–' in that column.
  const line = (title: string, t: Tally): string[] => [
    title,
    String(t.n),
    pct(t.spans, t.n),
    ...COMPOSITIONS.map((c) => pct(t.counts.get(c) ?? 0, t.n)),
    pct(t.ai.inSpans, t.ai.words),
    pct(t.person.inSpans, t.person.words),
    t.sentences.y.length ? auroc(t.sentences.s, t.sentences.y).toFixed(3) : '–',
  ];
  print(
    'Generated spans (segments: true)',
    [
      line('mirrors called likely_ai', alone),
      line("a mirror and a person's text, called likely_ai", mixedAi),
      line("a mirror and a person's text, not likely_ai", mixedRest),
      line('dev humans', everyone),
    ],
    ['texts', 'n', 'a medium or high span', ...COMPOSITIONS, "mirror's words in spans", "person's words in spans", 'sentence AUROC inside'],
  );
}
