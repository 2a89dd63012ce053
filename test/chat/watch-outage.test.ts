/**
 * Watched messages that arrive while the database cannot be written (PostgreSQL restarting, a full
 * disk) are kept in memory and queued once it answers: none is dropped. The real watcher on a real
 * SQLite store that refuses every call while it is "down".
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';
import { testWatcher } from './test-watcher.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-outage-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TEXT = (i: number) =>
  `Message ${i} of the outage: the river walk was flooded again this morning, so we took the long way past the bakery and the old cinema instead.`;

const detector: WatchDetector = {
  detect: () => Promise.reject(new Error('not used')),
  async detectAuthor(request) {
    return {
      ...{ ai_probability: 0.1, verdict: 'likely_human', confidence: 'low', warnings: [], mode: 'general', request_id: 'req_test' },
      ...{ model: 'test', messages_used: request.messages.length, words_used: 100, messages: [] },
    } as unknown as DetectAuthorResponse;
  },
  roomForBackground: async () => true,
};

describe('the database unreachable while watched messages arrive', () => {
  it('keeps them in memory and queues them once it answers: every one is scored', async () => {
    const real = new SqliteStore(join(dir, 'outage'));
    const scope = 'discord:1';
    await real.watchChannel(scope, 'C1', 0);
    let down = false;
    const store = new Proxy(real, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) : value.apply(target, args);
      },
    }) as WatchStore;
    const watcher = testWatcher({ store, detector, idlePollMs: 20 });
    watcher.start();
    try {
      const offer = (i: number) =>
        watcher.offer({ scope, channelId: 'C1', messageId: `m${i}`, authorId: `A${i}`, postedAt: Date.now(), text: TEXT(i) });
      expect(await offer(0)).toBe('queued');
      down = true;
      const during = await Promise.all([1, 2, 3, 4, 5].map(offer));
      expect(during).toEqual(['buffered', 'buffered', 'buffered', 'buffered', 'buffered']);
      await new Promise((r) => setTimeout(r, 1_500));
      down = false;
      const deadline = Date.now() + 15_000;
      while (watcher.counters.scored < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(watcher.counters.scored).toBe(6);
      for (let i = 0; i <= 5; i++) expect(await real.isScored(scope, 'C1', `m${i}`)).toBe(true);
      expect(await real.pendingCount()).toBe(0);
    } finally {
      down = false;
      await watcher.stop();
      await real.close();
    }
  });
});
