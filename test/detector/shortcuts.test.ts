import { describe, expect, it } from 'vitest';
import type { CorpusRow } from '../../src/detector/training.ts';
import { neutralise } from '../../scripts/lib/shortcuts.ts';

const row = (source: string, label: 'human' | 'ai', text: string): CorpusRow => ({
  id: `${source}:${label}:${text.length}`,
  text,
  label,
  mode: 'general',
  language: 'en',
  source,
  generator: label === 'ai' ? 'gpt-3.5-turbo' : 'human',
});

describe('neutralise (the known shortcuts taken out of training texts)', () => {
  it("leaves out HC3-Plus AI texts that open with 'Can you' and cuts HC3's appended ELI5 sentence from human ones", () => {
    const { rows, dropped, changed } = neutralise([
      row('hc3plus-en', 'ai', 'Can you explain why the sky is blue?'),
      row('hc3plus-en', 'human', "Why is the sky blue? Explain like I'm five."),
      row('hc3plus-en', 'ai', 'The minister resigned after the vote.'),
    ]);
    expect(dropped).toBe(1);
    expect(changed).toBe(1);
    expect(rows.map((r) => r.text)).toEqual(['Why is the sky blue?', 'The minister resigned after the vote.']);
  });

  it('cuts the final period of Showerthoughts posts of both classes, and nothing of other sources', () => {
    const { rows } = neutralise([
      row('showerthoughts', 'ai', 'Socks are just shoes for shoes.'),
      row('showerthoughts', 'human', 'Nobody remembers their first sock...'),
      row('showerthoughts', 'human', 'A hat is a roof you wear'),
      row('detectrl-yelp', 'ai', 'Great food. Friendly staff.'),
    ]);
    expect(rows.map((r) => r.text)).toEqual([
      'Socks are just shoes for shoes',
      'Nobody remembers their first sock...',
      'A hat is a roof you wear',
      'Great food. Friendly staff.',
    ]);
  });
});
