/**
 * Plans of mixed documents: human and AI texts of one source (and mode and language) joined in
 * varying orders and numbers of parts, plus pure documents of either kind. `npm run
 * train:segments` fills the plans from the training files and `npm run eval:mixed` from the dev
 * files, so no text is ever on both sides.
 */
import { rng } from '../../src/detector/training.ts';
import type { CorpusRow } from '../../src/detector/training.ts';

export interface PlannedPart {
  row: CorpusRow;
  /** 1 = AI-written. */
  y: 0 | 1;
}

export interface PlannedDoc {
  /** The parts' labels in order, e.g. `HA`, `HAH`, `H`. */
  kind: string;
  /** `source|mode|language` (plus `|fold` when grouped by fold). */
  group: string;
  parts: PlannedPart[];
}

export interface PlanOptions {
  seed: number;
  /** Kinds cycled through within each group, e.g. ['HA', 'AH', 'HAH', 'H', 'A']. */
  kinds: readonly string[];
  /** Documents per group (at most the group's larger side, so small sources are not repeated endlessly). */
  perGroup: number;
  /** Extra key a group must share (e.g. the cross-fitting fold, so one fold model scores a whole document). */
  groupKey?: (row: CorpusRow) => string;
}

export function planMixedDocs(rows: readonly CorpusRow[], o: PlanOptions): PlannedDoc[] {
  const rand = rng(o.seed);
  const groups = new Map<string, { h: CorpusRow[]; a: CorpusRow[] }>();
  for (const row of rows) {
    const key = `${row.source}|${row.mode}|${row.language}${o.groupKey ? `|${o.groupKey(row)}` : ''}`;
    const g = groups.get(key) ?? { h: [], a: [] };
    (row.label === 'ai' ? g.a : g.h).push(row);
    groups.set(key, g);
  }
  const docs: PlannedDoc[] = [];
  for (const [group, g] of [...groups].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))) {
    if (g.h.length < 3 || g.a.length < 3) continue;
    const n = Math.min(o.perGroup, Math.max(g.h.length, g.a.length));
    for (let i = 0; i < n; i++) {
      const kind = o.kinds[i % o.kinds.length]!;
      const used = new Set<CorpusRow>();
      const parts = [...kind].map((c): PlannedPart => {
        const pool = c === 'A' ? g.a : g.h;
        let row: CorpusRow;
        // A document never repeats a text.
        do row = pool[Math.floor(rand() * pool.length)]!;
        while (used.has(row));
        used.add(row);
        return { row, y: c === 'A' ? 1 : 0 };
      });
      docs.push({ kind, group, parts });
    }
  }
  return docs;
}

/** A human text lightly revised by an AI (MixSet's word- or sentence-level polish): the "light edit" AI parts. */
export function isLightEdit(row: CorpusRow): boolean {
  return row.label === 'ai' && /polish of human text/.test(row.generator);
}
