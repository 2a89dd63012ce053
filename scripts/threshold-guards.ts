/**
 * `npx tsx scripts/threshold-guards.ts --model PATH --oof FILE`: where each likely_ai threshold of a
 * trained artifact comes from, on the out-of-fold scores of the run that wrote it (`npm run train --
 * --dump-oof FILE --out PATH`). Per language:mode and threshold band (0, 40, 80+ words): the human
 * texts, the threshold, the plain 1%-FPR threshold of the band's humans, the per-source guard (the
 * highest 1%-FPR threshold of a source with 20+ humans, `--source-max-fpr`) and the source that sets
 * it, and how many texts of the mirror family's written tasks (`mirror`, `casual`, `continue`, read
 * from `--mirrors`) clear each. Then the share of those texts called likely_ai per task and length
 * band (40–100, 100+ words), out of fold. Issue 38: it tells whether a floor or a guard holds the verdict.
 *
 * Options:
 *   --model PATH    the artifact (default models/detector.bin)
 *   --oof FILE      the run's `--dump-oof` file (required)
 *   --mirrors FILE  the mirrors of train, with `task` (default ../shared/data/v5-train.jsonl)
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readArtifact } from '../src/detector/artifact.ts';
import { aiThresholdFor, calibrateForLength } from '../src/detector/engine.ts';
import { readJsonl, thresholdAtFpr } from '../src/detector/training.ts';
import { WRITTEN_TASKS } from './lib/mirrors.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OOF = arg('--oof');
if (!OOF) {
  process.stderr.write('threshold-guards.ts: --oof FILE is required (the --dump-oof file of the run); --help lists the options.\n');
  process.exit(2);
}
const { header } = readArtifact(resolve(ROOT, arg('--model') ?? 'models/detector.bin'));
const task = new Map(
  readJsonl<{ id: string; task?: string }>(resolve(ROOT, arg('--mirrors') ?? '../shared/data/v5-train.jsonl')).map((r) => [
    r.id,
    r.task ?? '?',
  ]),
);
interface OofRow {
  id: string;
  source: string;
  mode: string;
  language: string;
  y: 0 | 1;
  words: number;
  oof: number;
}
const cal = header.calibration;
const items = readJsonl<OofRow>(resolve(OOF)).flatMap((r) => {
  const key = cal[`${r.language}:${r.mode}`] ? `${r.language}:${r.mode}` : `${r.language}:*`;
  const c = cal[key];
  if (!c) return [];
  const p = calibrateForLength(r.oof, c, r.words);
  return [{ ...r, key, p, threshold: aiThresholdFor(c, r.words), task: task.get(r.id) }];
});
const written = (t: string | undefined): boolean => t !== undefined && WRITTEN_TASKS.includes(t);

console.log('likely_ai threshold bands (out of fold):');
const edges = [0, 40, 80, Number.POSITIVE_INFINITY];
for (const key of Object.keys(cal).sort())
  for (let e = 0; e + 1 < edges.length; e++) {
    const band = items.filter((i) => i.key === key && i.words >= edges[e]! && i.words < edges[e + 1]!);
    const humans = band.filter((i) => i.y === 0);
    if (humans.length < 50) continue;
    const bySource = new Map<string, number[]>();
    for (const h of humans) bySource.set(h.source, [...(bySource.get(h.source) ?? []), h.p]);
    let guard = 0;
    let guardSource = '–';
    for (const [s, ps] of bySource) {
      const t = ps.length >= 20 ? thresholdAtFpr(ps, 0.01) : 0;
      if (t > guard) [guard, guardSource] = [t, `${s} (${ps.length})`];
    }
    const plain = thresholdAtFpr(
      humans.map((h) => h.p),
      0.01,
    );
    const mirrors = band.filter((i) => written(i.task));
    const clear = (t: number): number => mirrors.filter((m) => m.p >= t).length;
    console.log(
      `  ${key} ${edges[e]}+ words: ${humans.length} humans; threshold ${band[0]!.threshold.toFixed(3)}, 1% FPR ${plain.toFixed(3)}, ` +
        `source guard ${guard.toFixed(3)} by ${guardSource}; written mirrors ${mirrors.length}: ${clear(band[0]!.threshold)} clear the threshold, ` +
        `${clear(plain)} the 1% FPR one, ${clear(guard)} the guard`,
    );
  }
console.log('\nMirrors called likely_ai, out of fold:');
for (const [label, lo, hi] of [
  ['40–100', 40, 100],
  ['100+', 100, Number.POSITIVE_INFINITY],
] as const)
  for (const t of [...new Set(task.values())].sort()) {
    const xs = items.filter((i) => i.task === t && i.words >= lo && i.words < hi);
    const flagged = xs.filter((x) => x.p >= x.threshold).length;
    console.log(`  ${t} ${label}: ${flagged} of ${xs.length} (${xs.length ? ((100 * flagged) / xs.length).toFixed(1) : '–'}%)`);
  }
