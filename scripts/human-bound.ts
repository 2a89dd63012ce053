/**
 * `npx tsx scripts/human-bound.ts [-- options]`: what bounding `likely_human` by a new generator
 * family would cost, with the model as it is (issue 38, item 3). The model's own scores of the
 * family's train mirrors give, per language:mode and length band, the score under which only
 * `--miss` of them fall; a `likely_human` threshold held under it would let at most that share of
 * the family be cleared, with the raw scores, the ranking and every `likely_ai` unchanged. The script
 * prints those bounds and, for every dev file, the texts called `likely_human` today and under the
 * bound: the AI texts that would no longer be cleared, and the human texts that would lose their
 * `likely_human` (only texts with a verdict, 40+ words, count).
 *
 * Options:
 *   --model PATH   detector artifact (default models/detector.bin)
 *   --family NAME  the family's files `<NAME>-train.jsonl` (the bounds) and `<NAME>-dev.jsonl` (default v5)
 *   --data DIR     corpus directory (default ../shared/data)
 *   --miss X       share of the family's train texts allowed under the bound (default 0.03)
 *   --markdown     Markdown tables
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countWords } from '../src/detector/engine.ts';
import { createDetector, type Detector, type Mode } from '../src/detector/index.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';
import { table } from './lib/table.ts';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const FAMILY = arg('--family') ?? 'v5';
const MISS = Number(arg('--miss') ?? 0.03);
const MARKDOWN = process.argv.includes('--markdown');
const modelPath = arg('--model');
const detector: Detector = await createDetector(modelPath ? { model: resolve(modelPath) } : {});

/** The length bands of the calibration's likely_human thresholds above the evidence floor. */
const band = (words: number): string => (words >= 150 ? '150+' : words >= 80 ? '80–150' : '40–80');

interface Judged {
  key: string;
  p: number;
  likelyHuman: boolean;
  label: string;
}
function judge(row: CorpusRow): Judged | undefined {
  try {
    const r = detector.detect(row.text, { mode: row.mode as Mode, ...(row.language ? { language: row.language } : {}) });
    if (r.warnings.includes('too_little_evidence')) return undefined;
    const key = `${r.language}:${r.mode} ${band(countWords(row.text, r.language))}`;
    return { key, p: r.ai_probability, likelyHuman: r.verdict === 'likely_human', label: row.label };
  } catch {
    return undefined; // another language: refused, as the service refuses it
  }
}

const bound = new Map<string, { n: number; t: number }>();
const byKey = new Map<string, number[]>();
for (const row of readJsonl<CorpusRow>(join(DATA, `${FAMILY}-train.jsonl`))) {
  const j = judge(row);
  if (j) (byKey.get(j.key) ?? byKey.set(j.key, []).get(j.key)!).push(j.p);
}
for (const [key, ps] of byKey) {
  ps.sort((a, b) => a - b);
  bound.set(key, { n: ps.length, t: ps[Math.floor(ps.length * MISS)]! });
}
const pct = (x: number, n: number): string => (n ? `${((100 * x) / n).toFixed(1)}%` : '–');
console.log(`model ${detector.model}; bounds from ${FAMILY}-train.jsonl, at most ${MISS * 100}% of its texts under each\n`);
console.log(
  table(
    ['language:mode band', `${FAMILY} train texts`, 'bound'],
    [...bound].sort(([a], [b]) => a.localeCompare(b)).map(([key, b]) => [key, String(b.n), b.t.toFixed(4)]),
    MARKDOWN,
  ),
);
const rows: string[][] = [];
for (const name of ['corpus', 'extra', 'v3', 'v4', FAMILY]) {
  const c = { human: 0, humanNow: 0, humanBound: 0, ai: 0, aiNow: 0, aiBound: 0 };
  for (const row of readJsonl<CorpusRow>(join(DATA, `${name}-dev.jsonl`))) {
    const j = judge(row);
    if (!j) continue;
    const bounded = j.likelyHuman && j.p < (bound.get(j.key)?.t ?? 1);
    if (j.label === 'human') {
      c.human++;
      c.humanNow += Number(j.likelyHuman);
      c.humanBound += Number(bounded);
    } else {
      c.ai++;
      c.aiNow += Number(j.likelyHuman);
      c.aiBound += Number(bounded);
    }
  }
  rows.push([
    `${name}-dev`,
    String(c.human),
    `${pct(c.humanNow, c.human)} → ${pct(c.humanBound, c.human)}`,
    String(c.ai),
    `${pct(c.aiNow, c.ai)} → ${pct(c.aiBound, c.ai)}`,
  ]);
}
console.log(`\nCalled likely_human, today → under the bound (texts with a verdict)\n`);
console.log(table(['dev file', 'humans', 'humans likely_human', 'AI texts', 'AI likely_human'], rows, MARKDOWN));
