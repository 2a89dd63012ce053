/**
 * Renders answers on the four surfaces and holds each rendering to the rules (contradictions.ts):
 * what test/words/contradictions.test.ts asserts on a sample and scripts/check-words.ts counts over
 * every dev answer.
 */
import type { Page } from 'playwright-core';
import type { DetectResponse } from '../../src/contract.ts';
import { acrossSurfaces, contradictions, type Rule } from './contradictions.ts';
import { type Rendered, renderCli, renderDiscord, renderOnPage, renderSlack, SURFACES, type Surface } from './surfaces.ts';

export interface Finding {
  id: string;
  surface: Surface;
  rule: Rule;
  headline: string;
  body: string;
}

export interface Tally {
  /** Answers rendered per surface. */
  checked: Record<Surface, number>;
  /** Broken rules per surface and rule. */
  counts: Record<Surface, Partial<Record<Rule, number>>>;
  findings: Finding[];
  /** Every rendering, for checks of the platforms' limits. */
  rendered: Array<{ id: string; answer: DetectResponse; shown: Record<Surface, Rendered> }>;
}

export async function checkSurfaces(
  items: ReadonlyArray<{ id: string; text: string; answer: DetectResponse }>,
  page: Page | undefined,
): Promise<Tally> {
  const onPage = page ? await renderOnPage(page, items) : undefined;
  const surfaces = SURFACES.filter((s) => s !== 'page' || onPage);
  const tally: Tally = {
    checked: { page: 0, cli: 0, slack: 0, discord: 0 },
    counts: { page: {}, cli: {}, slack: {}, discord: {} },
    findings: [],
    rendered: [],
  };
  const note = (id: string, surface: Surface, rule: Rule, shown: Rendered) => {
    tally.counts[surface][rule] = (tally.counts[surface][rule] ?? 0) + 1;
    tally.findings.push({ id, surface, rule, headline: shown.headline, body: shown.body });
  };
  items.forEach((item, i) => {
    const shown = {
      ...(onPage ? { page: onPage[i] as Rendered } : {}),
      cli: renderCli(item.answer),
      slack: renderSlack(item.answer, item.text),
      discord: renderDiscord(item.answer),
    } as Record<Surface, Rendered>;
    for (const surface of surfaces) {
      tally.checked[surface]++;
      for (const rule of contradictions(item.answer, shown[surface])) note(item.id, surface, rule, shown[surface]);
    }
    for (const surface of acrossSurfaces(shown)) note(item.id, surface, 'one-label', shown[surface]);
    tally.rendered.push({ id: item.id, answer: item.answer, shown });
  });
  return tally;
}

/** The tally as a table: one row per rule, one column per surface. */
export function formatTally(tally: Tally, rules: readonly Rule[]): string {
  const cell = (n: number | undefined) => String(n ?? 0).padStart(8);
  const lines = [
    `${'rule'.padEnd(22)}${SURFACES.map((s) => s.padStart(8)).join('')}`,
    `${'answers checked'.padEnd(22)}${SURFACES.map((s) => cell(tally.checked[s])).join('')}`,
  ];
  for (const rule of rules) lines.push(`${rule.padEnd(22)}${SURFACES.map((s) => cell(tally.counts[s][rule])).join('')}`);
  const total = (s: Surface) => Object.values(tally.counts[s]).reduce((a, b) => a + (b ?? 0), 0);
  lines.push(`${'all rules'.padEnd(22)}${SURFACES.map((s) => cell(total(s))).join('')}`);
  return lines.join('\n');
}
