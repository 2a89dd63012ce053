/**
 * A process killed between recording a flag and posting its card (issue 32: two flags stayed
 * card='failed' and the re-score posted nothing): the real watcher in a child process on a real
 * SQLite store, SIGKILLed while its card post hangs; the next process posts the card, once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { killWatchers, runWatcher } from './watcher-run.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-crash-'));
});
afterAll(async () => {
  await killWatchers();
  await rm(dir, { recursive: true, force: true });
});

describe('a watcher killed between recording a flag and posting its card', () => {
  it('leaves the flag without a card, and the next start posts that card once', async () => {
    const watchDir = join(dir, 'store');
    const store = new SqliteStore(watchDir);
    await store.watchChannel('discord:1', 'C1', 0);
    await store.setCards('discord:1', 'C1', true);
    await store.close();

    const first = runWatcher({ WATCH_DIR: watchDir, WATCH_OFFER: 'm1', WATCH_HANG_CARDS: '1', WATCH_LEASE_MS: '300' });
    const flagId = (await first.waitFor((l) => l.startsWith('posting '))).slice('posting '.length);
    expect(flagId).toMatch(/^\S+$/);
    await first.kill('SIGKILL');

    const check = new SqliteStore(watchDir);
    try {
      expect(await check.getFlag('discord:1', flagId)).toMatchObject({ card: 'failed', cardId: undefined });
      expect(await check.pendingCount()).toBe(1);
    } finally {
      await check.close();
    }

    const second = runWatcher({ WATCH_DIR: watchDir, WATCH_LEASE_MS: '300' });
    await second.waitFor((l) => l === `card ${flagId}`);
    await second.kill('SIGTERM');
    // A third start finds nothing left to post.
    const third = runWatcher({ WATCH_DIR: watchDir });
    await third.waitFor((l) => l === 'ready');
    await new Promise((r) => setTimeout(r, 500));
    await third.kill('SIGTERM');
    // Posted as recovered, so a platform that can look for the card already out does so first.
    expect([...second.lines, ...third.lines].filter((l) => l.startsWith('posting '))).toEqual([`posting ${flagId} recovered`]);

    const after = new SqliteStore(watchDir);
    try {
      expect(await after.getFlag('discord:1', flagId)).toMatchObject({ card: 'posted', cardId: `card-of-${flagId}`, cardChannelId: 'MOD' });
      expect(await after.pendingCount()).toBe(0);
    } finally {
      await after.close();
    }
  }, 60_000);
});
