/**
 * The tables of `npm run eval:mirrors` (scripts/eval-mirrors.ts), from scores alone, so that the
 * pairing and the counts are tested without a model: every AI text that mirrors a human text (its
 * `mirror_of`) is read against its own twin and against all dev humans, per task and per genre.
 */
import { auroc } from '../../src/detector/metrics.ts';
import type { Verdict } from '../../src/detector/types.ts';

export interface ScoredText {
  id: string;
  p: number;
  verdict: Verdict;
  words: number;
}

export interface ScoredMirror extends ScoredText {
  /** The id of the human text it mirrors. */
  mirrorOf: string;
  task: string;
  /** The source of the human text it mirrors (`domain` of the v5 records). */
  genre: string;
}

/** Length bands of issue 38's verdict targets, in words as the engine counts them: [label, min, max). */
export const MIRROR_BANDS: ReadonlyArray<readonly [string, number, number]> = [
  ['40–100', 40, 100],
  ['100+', 100, Number.POSITIVE_INFINITY],
];

/** The tasks whose verdict issue 38 asks for (item 2): the assistant writing, not editing a human text. */
export const WRITTEN_TASKS = ['mirror', 'casual', 'continue'];

export interface MirrorRow {
  group: string;
  n: number;
  /** Mirrors whose twin was found (and scored) among the human texts. */
  paired: number;
  /** AUROC of the group's mirrors against their own twins (each twin counted once). */
  aurocTwins: number;
  /** Share of pairs where the mirror scores above its twin (a tie counts half). */
  pairsWon: number;
  /** AUROC of the group's mirrors against every human text given. */
  aurocHumans: number;
  /** Per band of MIRROR_BANDS: texts in the band, and the shares called likely_ai and likely_human. */
  bands: Array<{ n: number; likelyAi: number; likelyHuman: number }>;
  /** Share of the group's twins called likely_ai (what the verdict costs on these very humans). */
  twinsLikelyAi: number;
}

function share(xs: ScoredText[], f: (x: ScoredText) => boolean): number {
  return xs.length ? xs.filter(f).length / xs.length : Number.NaN;
}

/** One row: the mirrors of a group against their twins (looked up by id in `twins`) and against `humans`. */
export function mirrorRow(group: string, mirrors: ScoredMirror[], twins: Map<string, ScoredText>, humans: ScoredText[]): MirrorRow {
  const pairs = mirrors.flatMap((m) => {
    const t = twins.get(m.mirrorOf);
    return t ? [[m, t] as const] : [];
  });
  const ownTwins = [...new Map(pairs.map(([, t]) => [t.id, t])).values()];
  const pairedMirrors = pairs.map(([m]) => m);
  const vs = (ai: ScoredText[], human: ScoredText[]): number =>
    ai.length && human.length
      ? auroc([...ai.map((x) => x.p), ...human.map((x) => x.p)], [...ai.map(() => 1 as const), ...human.map(() => 0 as const)])
      : Number.NaN;
  return {
    group,
    n: mirrors.length,
    paired: pairs.length,
    aurocTwins: vs(pairedMirrors, ownTwins),
    pairsWon: pairs.length ? pairs.reduce((s, [m, t]) => s + (m.p > t.p ? 1 : m.p === t.p ? 0.5 : 0), 0) / pairs.length : Number.NaN,
    aurocHumans: vs(mirrors, humans),
    bands: MIRROR_BANDS.map(([, lo, hi]) => {
      const xs = mirrors.filter((m) => m.words >= lo && m.words < hi);
      return {
        n: xs.length,
        likelyAi: share(xs, (x) => x.verdict === 'likely_ai'),
        likelyHuman: share(xs, (x) => x.verdict === 'likely_human'),
      };
    }),
    twinsLikelyAi: share(ownTwins, (x) => x.verdict === 'likely_ai'),
  };
}

/** Rows per value of `key` (sorted by size, then name), then the written tasks together, then all. */
export function mirrorRows(
  mirrors: ScoredMirror[],
  key: (m: ScoredMirror) => string,
  twins: Map<string, ScoredText>,
  humans: ScoredText[],
  withWritten = false,
): MirrorRow[] {
  const groups = new Map<string, ScoredMirror[]>();
  for (const m of mirrors) groups.set(key(m), [...(groups.get(key(m)) ?? []), m]);
  const rows = [...groups.entries()]
    .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))
    .map(([g, ms]) => mirrorRow(g, ms, twins, humans));
  if (withWritten)
    rows.push(
      mirrorRow(
        WRITTEN_TASKS.join('+'),
        mirrors.filter((m) => WRITTEN_TASKS.includes(m.task)),
        twins,
        humans,
      ),
    );
  rows.push(mirrorRow('all', mirrors, twins, humans));
  return rows;
}

const pct = (x: number): string => (Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`);
const fix3 = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(3));

export const MIRROR_HEAD = [
  'n',
  'paired',
  'AUROC twins',
  'pairs won',
  'AUROC all humans',
  ...MIRROR_BANDS.flatMap(([label]) => [`n ${label}`, `likely_ai ${label}`, `likely_human ${label}`]),
  'twins likely_ai',
];

/** A row's cells after its group name, in the order of MIRROR_HEAD. */
export function mirrorCells(r: MirrorRow): string[] {
  return [
    String(r.n),
    String(r.paired),
    fix3(r.aurocTwins),
    pct(r.pairsWon),
    fix3(r.aurocHumans),
    ...r.bands.flatMap((b) => [String(b.n), pct(b.likelyAi), pct(b.likelyHuman)]),
    pct(r.twinsLikelyAi),
  ];
}
