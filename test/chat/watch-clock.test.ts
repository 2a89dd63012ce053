/**
 * The watcher's `clock` option: a community run on its own time (the month `npm run replay:reviews`
 * plays) judges a member by the recent messages of that time. Before the option, the recent window
 * was cut against the real clock, so a replayed month's members were judged one message at a time;
 * the same posts without the option show that here, side by side.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { DAY_MS } from '../../adapters/chat/watch/types.ts';
import { humanAuthorDetector, testWatcher } from './test-watcher.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-clock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** How many messages each author-level judgment read, in order. */
async function windows(name: string, withClock: boolean): Promise<number[]> {
  const seen: number[] = [];
  const detector = humanAuthorDetector((messages) => seen.push(messages.length));
  const store = new SqliteStore(join(dir, name));
  // Forty days ago: every message is older than the real clock's one-day window.
  let now = Date.now() - 40 * DAY_MS;
  const watcher = testWatcher({
    store,
    detector,
    // Old messages are still scored on the real clock, as the replay had to allow before the option.
    settings: { ...DEFAULT_WATCH_SETTINGS, judge: 'author', maxPendingAgeMs: 60 * DAY_MS },
    idlePollMs: 5,
    ...(withClock ? { clock: () => now } : {}),
  });
  await store.watchChannel('discord:clock', 'C', 0);
  watcher.start();
  try {
    for (let i = 0; i < 4; i++) {
      now += 60_000;
      const before = watcher.counters.scored;
      const text = `message ${i} ${'with enough ordinary words to be judged on its own '.repeat(3)}`;
      expect(await watcher.offer({ scope: 'discord:clock', channelId: 'C', messageId: `m${i}`, authorId: 'U', postedAt: now, text })).toBe(
        'queued',
      );
      const deadline = Date.now() + 15_000;
      while (watcher.counters.scored === before) {
        if (Date.now() > deadline) throw new Error('timed out waiting for a score');
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  } finally {
    await watcher.stop();
    await store.close();
  }
  return seen;
}

describe('the watcher on its own clock', () => {
  it('judges a member of a past month by that month’s recent messages; on the real clock they fall out of the window', async () => {
    expect(await windows('clocked', true)).toEqual([1, 2, 3, 4]);
    expect(await windows('real', false)).toEqual([1, 1, 1, 1]);
  });
});
