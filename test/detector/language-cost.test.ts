/**
 * Language identification runs on every text and every author message before scoring, so its cost
 * must follow the length of the text whatever the text holds (issue 25, item 1: a run without
 * spaces took 70 ms at 3,000 characters, and 3,000 "@" took seconds).
 */
import { describe, expect, it } from 'vitest';
import { evidenceWords, identifyLanguage } from '../../src/detector/language.ts';

const RUN = 3000;
const shapes: Record<string, string> = {
  'letters with combining marks': `z${'\u0336\u0337\u0338'.repeat(3)}`.repeat(RUN / 10),
  'one letter': 'a'.repeat(RUN),
  'at signs': '@'.repeat(RUN),
  'at signs and dots': 'a@.'.repeat(RUN / 3),
  'letters and at signs': 'ab@'.repeat(RUN / 3),
};

function msPerCall(text: string): number {
  identifyLanguage(text);
  const started = performance.now();
  for (let i = 0; i < 3; i++) identifyLanguage(text);
  return (performance.now() - started) / 3;
}

describe('language identification cost', () => {
  it('stays linear on runs without spaces: every 3,000-character shape well under 25 ms', () => {
    // Linear code takes about 1 ms here on a loaded machine; the quadratic pattern took 20 to 130 ms
    // for the letter runs and seconds for the at signs.
    // Measured against ordinary prose of the same length on this machine now, so its load cancels out.
    const prose = 'The committee met on Tuesday and agreed to publish the report next month. '.repeat(RUN / 70).slice(0, RUN);
    const base = Math.max(msPerCall(prose), 0.5);
    for (const [name, text] of Object.entries(shapes))
      expect(msPerCall(text), `${name}; prose ${base.toFixed(2)} ms`).toBeLessThan(Math.max(25, 20 * base));
  }, 120_000);

  it('still leaves e-mail addresses, mentions and URLs out of the evidence', () => {
    const words = evidenceWords('write to ann.lee@example.com or @ann, see https://example.org/x and www.example.net today');
    expect(words).toEqual(['write', 'to', 'or', 'see', 'and', 'today']);
    expect(evidenceWords('(bob@mail.example.org) is the address')).toEqual(['is', 'the', 'address']);
  });
});
