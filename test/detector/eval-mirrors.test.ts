import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mirrorRows, type ScoredMirror, type ScoredText } from '../../scripts/lib/mirrors.ts';

const human = (id: string, p: number, words = 120): ScoredText => ({ id, p, words, verdict: p < 0.2 ? 'likely_human' : 'mixed' });
const mirror = (id: string, of: string, task: string, p: number, words: number, genre = 'yelp'): ScoredMirror => ({
  id,
  p,
  words,
  mirrorOf: of,
  task,
  genre,
  verdict: p > 0.9 ? 'likely_ai' : p < 0.2 ? 'likely_human' : 'mixed',
});

describe('eval:mirrors tables', () => {
  const humans = [human('h1', 0.1), human('h2', 0.5), human('h3', 0.3), human('h4', 0.95)];
  const twins = new Map(humans.map((h) => [h.id, h]));
  const mirrors = [
    mirror('a1', 'h1', 'mirror', 0.95, 120), // beats its twin, likely_ai, 100+
    mirror('a2', 'h2', 'mirror', 0.4, 60), // loses to its twin, 40–100
    mirror('a3', 'h3', 'casual', 0.1, 50, 'tweets'), // loses, likely_human, 40–100
    mirror('a4', 'h1', 'polish', 0.6, 30), // under 40 words: in no band
    mirror('a5', 'gone', 'mirror', 0.99, 200), // its twin is not among the humans
  ];

  it('pairs each mirror with its own twin and counts per task, per band', () => {
    const rows = mirrorRows(mirrors, (m) => m.task, twins, humans, true);
    expect(rows.map((r) => r.group)).toEqual(['mirror', 'casual', 'polish', 'mirror+casual+continue', 'all']);
    const m = rows[0]!;
    expect([m.n, m.paired]).toEqual([3, 2]);
    // a1 (0.95) vs h1 (0.1) won, a2 (0.4) vs h2 (0.5) lost; AUROC over {a1, a2} vs {h1, h2}: 3 of 4 orderings.
    expect(m.pairsWon).toBe(0.5);
    expect(m.aurocTwins).toBe(0.75);
    expect(m.bands.map((b) => b.n)).toEqual([1, 2]);
    expect(m.bands[1]!.likelyAi).toBe(1);
    expect(m.bands[0]!.likelyAi).toBe(0);
    expect(m.twinsLikelyAi).toBe(0);
    const casual = rows[1]!;
    expect([casual.n, casual.paired, casual.pairsWon, casual.bands[0]!.likelyHuman]).toEqual([1, 1, 0, 1]);
    const written = rows[3]!;
    expect([written.n, written.paired]).toEqual([4, 3]);
    const all = rows[4]!;
    expect([all.n, all.paired, all.bands[0]!.n, all.bands[1]!.n]).toEqual([5, 4, 2, 2]);
    // Twins counted once: h1 is the twin of a1 and a4.
    // {a1 .95, a2 .4, a3 .1, a4 .6} vs {h1 .1, h2 .5, h3 .3}: a1 and a4 beat all three, a2 two, a3 ties h1.
    expect(all.aurocTwins).toBeCloseTo((3 + 2 + 0.5 + 3) / 12, 10);
  });

  it('groups per genre, the twin’s source', () => {
    const rows = mirrorRows(mirrors, (m) => m.genre, twins, humans);
    expect(rows.map((r) => [r.group, r.n])).toEqual([
      ['yelp', 4],
      ['tweets', 1],
      ['all', 5],
    ]);
  });
});

describe('npm run eval:mirrors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eval-mirrors-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const line = (o: object): string => `${JSON.stringify(o)}\n`;
  const base = { mode: 'general', language: 'en' };
  const humanText =
    'We went on a Tuesday and the place was half empty, which was fine by us. My burger came out a bit overdone but the fries were great and the waitress kept our drinks full without us asking. Would go back for the fries alone, honestly not sure about the burger.';
  const aiText =
    'This charming neighborhood spot offers a welcoming atmosphere and a thoughtfully curated menu. The burger was cooked to perfection, and the crispy fries were a standout. Attentive service rounded out a memorable experience that I would recommend to anyone looking for a satisfying meal.';
  writeFileSync(
    join(dir, 'corpus-dev.jsonl'),
    line({ ...base, id: 'h1', text: humanText, label: 'human', source: 'yelp', generator: 'human' }) +
      line({ ...base, id: 'x1', text: aiText, label: 'ai', source: 'yelp', generator: 'gpt' }),
  );
  writeFileSync(
    join(dir, 'extra-dev.jsonl'),
    line({ ...base, id: 'h2', text: `${humanText} Parking was a pain.`, label: 'human', source: 'blog', generator: 'human' }),
  );
  writeFileSync(
    join(dir, 'v5-dev.jsonl'),
    line({
      ...base,
      id: 'm1',
      text: aiText,
      label: 'ai',
      source: 'v5-yelp',
      generator: 'frontier',
      mirror_of: 'h1',
      task: 'mirror',
      domain: 'yelp',
    }) +
      line({
        ...base,
        id: 'm2',
        text: `${aiText} Highly recommended.`,
        label: 'ai',
        source: 'v5-blog',
        generator: 'frontier',
        mirror_of: 'h2',
        task: 'casual',
        domain: 'blog',
      }) +
      line({
        ...base,
        id: 'm3',
        text: aiText,
        label: 'ai',
        source: 'v5-yelp',
        generator: 'frontier',
        mirror_of: 'nowhere',
        task: 'mirror',
        domain: 'yelp',
      }),
  );

  it('reads the human twins of the dev files (humans only) and prints the counts', () => {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', resolve('scripts/eval-mirrors.ts'), '--data', dir, '--humans', 'corpus,extra'],
      { encoding: 'utf8' },
    );
    expect(out).toMatch(/3 mirrors of v5-dev\.jsonl, 2 dev humans/);
    const row = (name: string): string[] =>
      out
        .split('\n')
        .find((l) => l.startsWith(`${name} `))!
        .trim()
        .split(/\s+/);
    expect(row('mirror').slice(1, 3)).toEqual(['2', '1']);
    expect(row('casual').slice(1, 3)).toEqual(['1', '1']);
    expect(row('yelp').slice(1, 3)).toEqual(['2', '1']);
    expect(row('blog').slice(1, 3)).toEqual(['1', '1']);
  });

  it('scores the same pairs with the word tells stripped', () => {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', resolve('scripts/eval-mirrors.ts'), '--data', dir, '--humans', 'corpus,extra', '--strip-tells'],
      { encoding: 'utf8' },
    );
    expect(out).toMatch(/3 mirrors of v5-dev\.jsonl, word tells stripped, 2 dev humans/);
  });
});
