import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createDetector } from '../../src/detector/index.ts';
import { auroc, ece, metricRow, tprAtFpr } from '../../src/detector/metrics.ts';
import type { CorpusRow } from '../../src/detector/training.ts';
import { trainingDataFile } from '../helpers/training-data.ts';

const DEV = trainingDataFile('corpus-dev.jsonl');
const EXTRA_DEV = trainingDataFile('extra-dev.jsonl');
const V3_DEV = trainingDataFile('v3-dev.jsonl');

type Scored = { p: number; y: 0 | 1; flagged: boolean; source: string };

/** Each row's score, label, verdict and source; lines in an unsupported language are not part of the metric. */
function scoreRows(
  detector: Awaited<ReturnType<typeof createDetector>>,
  rows: Array<{ text: string; label: string; source: string; mode: 'academic' | 'financial' | 'legal' | 'general' }>,
): Scored[] {
  const items: Scored[] = [];
  for (const r of rows) {
    try {
      const d = detector.detect(r.text, { mode: r.mode });
      items.push({ p: d.ai_probability, y: r.label === 'ai' ? 1 : 0, flagged: d.verdict === 'likely_ai', source: r.source });
    } catch {
      // unsupported-language lines are not part of the metric
    }
  }
  return items;
}

describe('metrics', () => {
  it('computes AUROC with ties, TPR at FPR and ECE', () => {
    expect(auroc([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1])).toBe(1);
    expect(auroc([0.4, 0.3, 0.2, 0.1], [0, 0, 1, 1])).toBe(0);
    expect(auroc([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1])).toBe(0.5);
    expect(tprAtFpr([0.1, 0.2, 0.9, 0.3, 0.95], [0, 0, 0, 1, 1], 0.01)).toBe(0.5);
    expect(ece([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 0])).toBeCloseTo(0.1, 10);
  });
});

// A fixed slice of dev (every 5th line): a regression in the engine or the model fails here.
describe.skipIf(!existsSync(DEV))('dev slice', () => {
  it('keeps AUROC and the false-positive rate within bounds', async () => {
    const detector = await createDetector();
    const rows = readFileSync(DEV, 'utf8')
      .split('\n')
      .filter(Boolean)
      .filter((_, i) => i % 5 === 0)
      .map((l) => JSON.parse(l) as { text: string; label: string; mode: 'academic' | 'financial' | 'legal' | 'general' });
    const items = [];
    for (const r of rows) {
      try {
        const d = detector.detect(r.text, { mode: r.mode });
        items.push({ p: d.ai_probability, y: (r.label === 'ai' ? 1 : 0) as 0 | 1, flagged: d.verdict === 'likely_ai' });
      } catch {
        // unsupported-language lines are not part of the metric
      }
    }
    expect(items.length).toBeGreaterThan(200);
    const m = metricRow(items);
    expect(m.auroc).toBeGreaterThan(0.97);
    expect(m.fpr).toBeLessThan(0.03);
    expect(m.ece).toBeLessThan(0.06);
  });

  it('shows where: in a human text followed by an AI text, the AI sentences score higher', async () => {
    const detector = await createDetector();
    const rows = readFileSync(DEV, 'utf8')
      .split('\n')
      .filter(Boolean)
      .filter((_, i) => i % 3 === 0)
      .map((l) => JSON.parse(l) as { text: string; label: string; source: string; mode: 'academic' | 'financial' | 'legal' | 'general' });
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    let wins = 0;
    let total = 0;
    for (const source of ['outfox-essays', 'clerc-legal', 'lu-thesis-abstracts', 'tr-bank-complaints', 'm4-wikipedia']) {
      const human = rows.filter((r) => r.source === source && r.label === 'human').slice(0, 8);
      const ai = rows.filter((r) => r.source === source && r.label === 'ai').slice(0, 8);
      for (let i = 0; i < Math.min(human.length, ai.length); i++) {
        const text = `${human[i]!.text}\n\n${ai[i]!.text}`;
        const cut = human[i]!.text.length;
        const r = detector.detect(text, { mode: human[i]!.mode, segments: true });
        const h = mean(r.segments.filter((s) => s.end <= cut).map((s) => s.ai_probability));
        const a = mean(r.segments.filter((s) => s.start > cut).map((s) => s.ai_probability));
        total++;
        if (a > h) wins++;
      }
    }
    expect(total).toBeGreaterThan(30);
    expect(wins / total).toBeGreaterThan(0.8);
  });
});

// Everyday text (extra-dev: reviews, posts, tweets, L2R rewrites, Turkish satire), every 2nd line:
// floors a little under the shipped model's figures on this slice, so a regression fails CI.
describe.skipIf(!existsSync(EXTRA_DEV))('extra-dev slice', () => {
  if (!existsSync(EXTRA_DEV))
    console.warn(`extra-dev slice skipped: ${EXTRA_DEV} is absent (the shared data folder sits beside the repository in CI).`);
  it('keeps AUROC, the AI detection rate and the false-positive rate per source within bounds', async () => {
    const detector = await createDetector();
    const rows = readFileSync(EXTRA_DEV, 'utf8')
      .split('\n')
      .filter(Boolean)
      .filter((_, i) => i % 2 === 0)
      .map((l) => JSON.parse(l) as { text: string; label: string; source: string; mode: 'academic' | 'financial' | 'legal' | 'general' });
    const items = scoreRows(detector, rows);
    expect(items.length).toBeGreaterThan(500);
    const m = metricRow(items);
    expect(m.auroc).toBeGreaterThan(EXTRA_FLOORS.auroc);
    expect(m.tpr).toBeGreaterThan(EXTRA_FLOORS.tpr);
    expect(m.fpr).toBeLessThanOrEqual(EXTRA_FLOORS.fpr);
    // No human source may see more than 1 of its humans (≤ 53 per source in this slice) called likely_ai.
    for (const source of new Set(items.map((x) => x.source))) {
      const humans = items.filter((x) => x.source === source && x.y === 0);
      expect(humans.filter((x) => x.flagged).length, source).toBeLessThanOrEqual(1);
    }
  });
});

/** td1-0ad3ce9c5312 and td1-abb2c3bb8a92 (same scores) on this slice: AUROC 0.912, AI likely_ai 0.356, human likely_ai 0 of 289 (no source above 0). */
// tpr 0.3 → 0.28 in issue 31's third round: general mode's likely_ai floor went back to 0.96 so that
// no source held out sees over 1% of its humans flagged, and this slice's AI detection rate went to 0.298.
const EXTRA_FLOORS = { auroc: 0.89, tpr: 0.28, fpr: 0.01 };

// The v3 sources (Showerthoughts, HC3-Plus, DetectRL attacks, SeqXGPT base models), every 3rd line
// of v3-dev with the known shortcuts taken out as training takes them out (scripts/lib/shortcuts.ts),
// so the floors hold for what the model learnt, not for a final period or a `Can you` opening.
describe.skipIf(!existsSync(V3_DEV))('v3-dev slice', () => {
  if (!existsSync(V3_DEV)) console.warn(`v3-dev slice skipped: ${V3_DEV} is absent.`);
  it('ranks the short and attacked v3 texts and flags no human source', async () => {
    const { neutralise } = await import('../../scripts/lib/shortcuts.ts');
    const detector = await createDetector();
    const all = readFileSync(V3_DEV, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as CorpusRow);
    const { rows } = neutralise(all.filter((_, i) => i % 3 === 0));
    const items = scoreRows(detector, rows);
    expect(items.length).toBeGreaterThan(1000);
    const m = metricRow(items);
    expect(m.auroc).toBeGreaterThan(V3_FLOORS.auroc);
    for (const source of ['showerthoughts', 'hc3plus-en'])
      expect(metricRow(items.filter((x) => x.source === source)).auroc, source).toBeGreaterThan(V3_FLOORS.short);
    for (const source of new Set(items.map((x) => x.source))) {
      const humans = items.filter((x) => x.source === source && x.y === 0);
      expect(humans.filter((x) => x.flagged).length, source).toBeLessThanOrEqual(Math.floor(humans.length / 100));
    }
  });
});

/**
 * td1-ae228890725a (and td1-48d113269683, same raw scores) on this slice: AUROC 0.864 (Showerthoughts 0.885, HC3-Plus 0.725), no human of any
 * source flagged; the model before the v3 data (td1-0b3bffc69de4): 0.695 (0.615, 0.504).
 */
const V3_FLOORS = { auroc: 0.84, short: 0.7 };
