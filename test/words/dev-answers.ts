/**
 * Real answers to render: the engine's answers for the dev texts (../shared/data/*-dev.jsonl), as the
 * service sends them with `segments: true`, and answers for long documents made of dev texts, with
 * their windows each scored by the engine alone (issue 39). Nothing here invents a probability.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { DetectResponse, Mode } from '../../src/contract.ts';
import { type Detector, UnsupportedLanguageError } from '../../src/detector/index.ts';
import { detectAnswer } from '../../src/service/routes/common.ts';
import { trainingDataFile } from '../helpers/training-data.ts';

/** The dev files of single texts (v5-members-dev.jsonl holds members' messages, checked as authors). */
export const DEV_FILES = ['corpus-dev.jsonl', 'extra-dev.jsonl', 'v3-dev.jsonl', 'v4-dev.jsonl', 'v5-dev.jsonl'] as const;

interface Row {
  id: string;
  text: string;
  label: string;
  mode: Mode;
  source: string;
}

export interface DevAnswer {
  /** `file:id`, to name an answer in a failure. */
  id: string;
  label: string;
  text: string;
  answer: DetectResponse;
}

export function readRows(file: string): Row[] {
  return readFileSync(trainingDataFile(file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
}

/** The engine's answer as `POST /v1/detect` with `segments: true` sends it; undefined for a language it refuses. */
export function answerFor(detector: Detector, text: string, mode: Mode, id: string): DetectResponse | undefined {
  try {
    return detectAnswer(detector.detect(text, { mode, segments: true }), id);
  } catch (err) {
    if (err instanceof UnsupportedLanguageError) return undefined;
    throw err;
  }
}

/**
 * The dev texts' answers. `every: 1` is all of them; `every: k` keeps every k-th text of each file
 * and label (so each source keeps its share) plus each file's `longest` longest texts.
 */
export function devAnswers(detector: Detector, options: { every: number; longest?: number }): DevAnswer[] {
  const out: DevAnswer[] = [];
  for (const file of DEV_FILES) {
    const rows = readRows(file);
    const seen = new Map<string, number>();
    const longest = new Set(
      [...rows]
        .sort((a, b) => b.text.length - a.text.length)
        .slice(0, options.longest ?? 0)
        .map((r) => r.id),
    );
    for (const row of rows) {
      const n = seen.get(row.label) ?? 0;
      seen.set(row.label, n + 1);
      if (n % options.every !== 0 && !longest.has(row.id)) continue;
      const answer = answerFor(detector, row.text, row.mode, `req_${file.replace(/\W/g, '')}${out.length}`);
      if (answer) out.push({ id: `${file}:${row.id}`, label: row.label, text: row.text, answer });
    }
  }
  return out;
}

/**
 * A long document made of dev texts in the given order (paragraphs joined by a blank line), judged
 * by the engine as the service judges it: window by window (src/detector/windows.ts), the whole
 * document's fields read off its windows. `charsPerPage` gives the windows pages, as a PDF's would
 * have (null without it).
 */
export function documentAnswer(
  detector: Detector,
  parts: readonly string[],
  options: { mode: Mode; charsPerPage?: number; id: string },
): { text: string; answer: DetectResponse } {
  const text = parts.join('\n\n');
  const answer = answerFor(detector, text, options.mode, options.id);
  if (!answer) throw new Error(`${options.id}: the engine refused the document's language`);
  if ((answer.windows ?? []).length < 2) throw new Error(`${options.id}: too short to be judged window by window`);
  const perPage = options.charsPerPage;
  if (!perPage) return { text, answer };
  const page = (at: number) => Math.floor(at / perPage) + 1;
  const windows = (answer.windows ?? []).map((w) => ({ ...w, pages: { first: page(w.start), last: page(w.end - 1) } }));
  return { text, answer: { ...answer, windows } };
}

/**
 * Long documents of dev texts, each a kind a reader meets: human throughout, AI throughout, human
 * and AI chapters in turn (with pages, as a PDF, and without), AI-polished texts, and one long enough
 * for dozens of windows (the platforms' limits).
 */
export function documentAnswers(detector: Detector): Array<{ id: string; text: string; answer: DetectResponse }> {
  const corpus = [...readRows('corpus-dev.jsonl'), ...readRows('extra-dev.jsonl')].filter(
    (r) => r.mode === 'general' && r.text.length > 1000,
  );
  const human = corpus.filter((r) => r.label === 'human').map((r) => r.text);
  const ai = corpus.filter((r) => r.label === 'ai').map((r) => r.text);
  const polished = readRows('v4-dev.jsonl')
    .filter((r) => (r as Row & { contribution?: string }).contribution === 'polished' && r.text.length > 800)
    .map((r) => r.text);
  /** `n` texts in runs of `run`, human and AI in turn, each text used once. */
  const turns = (n: number, run: number) => {
    const next = { human: 0, ai: 0 };
    return Array.from({ length: n }, (_, i) => {
      const kind = Math.floor(i / run) % 2 === 0 ? 'human' : 'ai';
      return (kind === 'human' ? human : ai)[next[kind]++] ?? '';
    }).filter(Boolean);
  };
  const docs: Array<[string, string[], { charsPerPage?: number; mode?: Mode }]> = [
    ['human-throughout', human.slice(0, 12), {}],
    ['ai-throughout', ai.slice(0, 12), { charsPerPage: 3000 }],
    ['chapters-pdf', turns(16, 4), { charsPerPage: 3000 }],
    ['chapters-text', turns(16, 4), {}],
    ['polished', polished.slice(0, 12), {}],
    ['many-windows', turns(120, 3), { charsPerPage: 3500 }],
  ];
  return docs.map(([id, parts, options]) => ({
    id,
    ...documentAnswer(detector, parts, { mode: options.mode ?? 'general', id: `req_doc_${id.replace(/\W/g, '')}`, ...options }),
  }));
}

/** Every dev file is here (the tests that render the dev answers skip without them). */
export const HAS_DEV_FILES = DEV_FILES.every((file) => existsSync(trainingDataFile(file)));

/**
 * The answers the tests render: every 4th text of each dev file and label (each source keeps its
 * share) plus each file's 10 longest texts, about 1,880 answers that cover every headline,
 * composition and warning the dev texts get (test/words/contradictions.test.ts checks that), and the
 * long documents. The engine scores them in about 10 s on a busy 2-core machine and the four
 * surfaces render them in about as long again; the whole dev set (7,330 answers) is
 * `npm run check:words`.
 */
export function testAnswers(detector: Detector): Array<DevAnswer & { document: boolean }> {
  return [
    ...devAnswers(detector, { every: 4, longest: 10 }).map((a) => ({ ...a, document: false })),
    ...documentAnswers(detector).map((d) => ({ ...d, id: `document:${d.id}`, label: 'document', document: true })),
  ];
}
