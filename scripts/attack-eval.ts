/**
 * `npx tsx scripts/attack-eval.ts [--model PATH] [--data DIR] [--seed N] [--markdown] [--only a,b]`
 *
 * Robustness to cheap evasion attacks (RAID-style; `src/detector/attacks.ts`). Each attack is applied
 * to the dev AI texts and, separately, to the dev human texts, and everything is scored through the
 * real `createDetector` API, with the language identified by the engine as in `textdetect eval`.
 *
 * - AI side: attacked AI texts against the clean human texts: AUROC, TPR at the shipped verdict
 *   thresholds, TPR at 1% FPR, and the mean change of ai_probability.
 * - Human side: attacked human texts against the clean AI texts: the share flagged `likely_ai` and
 *   the mean change, because an attack must not push human writing towards "AI" either.
 * - The attacks the engine normalises away (homoglyphs, zero-width, whitespace, case) also print
 *   the largest change of any score, which must be 0.
 *
 * Deterministic: each text's perturbation is seeded by (seed, attack, text id).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ATTACKS, type Attack } from '../src/detector/attacks.ts';
import { createDetector, UnsupportedLanguageError, type Detector, type Mode } from '../src/detector/index.ts';
import { metricRow, type Scored } from '../src/detector/metrics.ts';
import { rng, stableHash } from '../src/detector/training.ts';
import { table } from './lib/table.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const SEED = Number(arg('--seed') ?? 1);
const MARKDOWN = process.argv.includes('--markdown');
const printTable = (head: string[], rows: string[][]): string => table(head, rows, MARKDOWN);
const ONLY = arg('--only')?.split(',');
const modelPath = arg('--model');

interface Row {
  id: string;
  text: string;
  label: 'human' | 'ai';
  mode: Mode;
  language: 'en' | 'tr';
  source: string;
}
const rows = readFileSync(join(DATA, 'corpus-dev.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Row);

const detector: Detector = await createDetector(modelPath ? { model: modelPath } : {});

interface Score {
  p: number;
  flagged: boolean;
  group: string;
}
/** Scores a text as `textdetect eval` does; undefined when the engine refuses its language. */
function score(text: string, row: Row): Score | undefined {
  try {
    const r = detector.detect(text, { mode: row.mode });
    return { p: r.ai_probability, flagged: r.verdict === 'likely_ai', group: `${row.language}:${row.mode}` };
  } catch (err) {
    if (err instanceof UnsupportedLanguageError) return undefined;
    throw err;
  }
}

// Human donors for the inserted-passage attack: another human text of the same language and mode.
const humansBy = new Map<string, Row[]>();
for (const r of rows)
  if (r.label === 'human') humansBy.set(`${r.language}:${r.mode}`, [...(humansBy.get(`${r.language}:${r.mode}`) ?? []), r]);
function donorFor(row: Row): string | undefined {
  const pool = (humansBy.get(`${row.language}:${row.mode}`) ?? []).filter((h) => h.id !== row.id);
  return pool.length ? pool[stableHash(`donor:${row.id}`) % pool.length]!.text : undefined;
}

const clean = rows.map((r) => score(r.text, r));

interface Result {
  name: string;
  description: string;
  normalised: boolean;
  refused: number;
  /** Per group ('all' and language:mode): metrics of attacked AI vs clean human, and clean AI vs attacked human. */
  aiSide: Map<string, ReturnType<typeof metricRow> & { dp: number }>;
  humanSide: Map<string, ReturnType<typeof metricRow> & { dp: number }>;
  maxAbsDelta: number;
}

function run(name: string, description: string, attack: Attack | undefined, normalised: boolean, index: number): Result {
  const attacked: Array<Score | undefined> = rows.map((r, i) => {
    if (!attack) return clean[i];
    const rand = rng((SEED * 0x9e3779b1) ^ stableHash(`${index}:${name}:${r.id}`));
    return score(attack(r.text, rand, { language: r.language, donor: donorFor(r) }), r);
  });
  let refused = 0;
  let maxAbsDelta = 0;
  const aiItems = new Map<string, Array<Scored & { dp: number }>>();
  const humanItems = new Map<string, Array<Scored & { dp: number }>>();
  const push = (m: Map<string, Array<Scored & { dp: number }>>, g: string, it: Scored & { dp: number }): void => {
    for (const k of ['all', g]) m.set(k, [...(m.get(k) ?? []), it]);
  };
  rows.forEach((r, i) => {
    const c = clean[i];
    const a = attacked[i];
    if (!c) return; // refused even when clean (a genuinely non-English text)
    if (!a) {
      refused++;
      return;
    }
    maxAbsDelta = Math.max(maxAbsDelta, Math.abs(a.p - c.p));
    const y: 0 | 1 = r.label === 'ai' ? 1 : 0;
    const dp = a.p - c.p;
    // AI side: attacked AI, clean human. Human side: attacked human, clean AI.
    push(aiItems, c.group, y === 1 ? { p: a.p, y, flagged: a.flagged, dp } : { p: c.p, y, flagged: c.flagged, dp: 0 });
    push(humanItems, c.group, y === 0 ? { p: a.p, y, flagged: a.flagged, dp } : { p: c.p, y, flagged: c.flagged, dp: 0 });
  });
  const summarise = (
    m: Map<string, Array<Scored & { dp: number }>>,
    side: 0 | 1,
  ): Map<string, ReturnType<typeof metricRow> & { dp: number }> => {
    const out = new Map<string, ReturnType<typeof metricRow> & { dp: number }>();
    for (const [g, items] of [...m.entries()].sort((x, y) => (x[0] === 'all' ? -1 : y[0] === 'all' ? 1 : x[0] < y[0] ? -1 : 1))) {
      const own = items.filter((it) => it.y === side);
      out.set(g, { ...metricRow(items), dp: own.reduce((s, it) => s + it.dp, 0) / Math.max(1, own.length) });
    }
    return out;
  };
  return { name, description, normalised, refused, aiSide: summarise(aiItems, 1), humanSide: summarise(humanItems, 0), maxAbsDelta };
}

const t0 = performance.now();
const results: Result[] = [run('none (clean)', 'no attack', undefined, false, -1)];
ATTACKS.forEach((a, i) => {
  if (!ONLY || ONLY.includes(a.name)) results.push(run(a.name, a.description, a.attack, a.normalised ?? false, i));
});

const f3 = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(3));
const sgn = (x: number): string => (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(3);

console.log(`Attack evaluation on corpus-dev (${rows.length} texts), model ${detector.model}, seed ${SEED}\n`);
console.log('All modes. AI side = attacked AI vs clean human; human side = attacked human vs clean AI.\n');
console.log(
  printTable(
    ['attack', 'AUROC', 'TPR@verdict', 'TPR@1%FPR', 'AI mean Δp', 'human FPR@verdict', 'human mean Δp', 'max abs Δp', 'refused'],
    results.map((r) => {
      const a = r.aiSide.get('all')!;
      const h = r.humanSide.get('all')!;
      return [
        r.name,
        f3(a.auroc),
        f3(a.tpr),
        f3(a.tprAt1),
        sgn(a.dp),
        f3(h.fpr),
        sgn(h.dp),
        r.normalised ? f3(r.maxAbsDelta) : '',
        String(r.refused),
      ];
    }),
  ),
);
const groups = [...results[0]!.aiSide.keys()].filter((g) => g !== 'all');
console.log('\nPer mode: AUROC / TPR@verdict / TPR@1%FPR of attacked AI texts, and FPR@verdict of attacked human texts.\n');
console.log(
  printTable(
    ['attack', ...groups.map((g) => `${g} AUROC / TPR@v / TPR@1% / hFPR`)],
    results.map((r) => [
      r.name,
      ...groups.map((g) => {
        const a = r.aiSide.get(g);
        const h = r.humanSide.get(g);
        return a && h ? `${f3(a.auroc)} / ${f3(a.tpr)} / ${f3(a.tprAt1)} / ${f3(h.fpr)}` : '–';
      }),
    ]),
  ),
);
console.log('\nAttacks:');
for (const r of results.slice(1))
  console.log(`  ${r.name.padEnd(14)} ${r.description}${r.normalised ? ' (normalised by the engine: max abs Δp must be 0)' : ''}`);
console.error(`[attack-eval] ${((performance.now() - t0) / 1000).toFixed(1)} s`);
