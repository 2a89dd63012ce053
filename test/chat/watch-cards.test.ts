/**
 * A review card the platform refuses: the member's card window and the channel's hourly place are
 * given back, and the card is tried again (issue: a failed post used up the member's 60-minute slot
 * and was never retried). The real watcher on a real SQLite store; the platform refuses the first post.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import type { ReviewCard } from '../../adapters/chat/watch/watcher.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';
import { testWatcher } from './test-watcher.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-cards-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TEXT = (i: number) =>
  `Message ${i}: in conclusion, it is important to note that effective communication fosters collaboration, and leveraging synergies ensures sustainable growth for all stakeholders involved.`;

const detector: WatchDetector = {
  detect: () => Promise.reject(new Error('not used')),
  async detectAuthor(request) {
    return {
      ai_probability: 0.97,
      verdict: 'likely_ai',
      confidence: 'high',
      warnings: [],
      mode: 'general',
      request_id: `req_${request.messages.length}`,
      model: 'test',
      messages_used: request.messages.length,
      words_used: 100,
      messages: [],
    } as unknown as DetectAuthorResponse;
  },
  roomForBackground: async () => true,
};

describe('a review card the platform refused', () => {
  it('gives the member’s card window back and posts the card on a later try', async () => {
    const store = new SqliteStore(join(dir, 'cards'));
    const scope = 'discord:1';
    await store.watchChannel(scope, 'C1', 0);
    await store.setCards(scope, 'C1', true);
    const posts: { card: ReviewCard; ok: boolean }[] = [];
    let refuse = 1;
    const watcher = testWatcher({
      store,
      detector,
      platform: {
        reviewChannel: async () => 'MOD',
        async postCard(_channel, card) {
          const ok = refuse-- <= 0;
          posts.push({ card, ok });
          if (!ok) throw new Error('Missing Access');
          return `card-${posts.length}`;
        },
      },
      idlePollMs: 10,
      cardRetryDelaysMs: [200],
    });
    watcher.start();
    try {
      const result = await watcher.offer({ scope, channelId: 'C1', messageId: 'm1', authorId: 'A1', postedAt: Date.now(), text: TEXT(1) });
      expect(result).toBe('queued');
      const deadline = Date.now() + 10_000;
      while (posts.filter((p) => p.ok).length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Refused once, then posted on the retry, for the same flag.
      expect(posts.map((p) => p.ok)).toEqual([false, true]);
      expect(posts[1]!.card.flagId).toBe(posts[0]!.card.flagId);
      const flag = await store.getFlag(scope, posts[0]!.card.flagId);
      expect(flag).toMatchObject({ card: 'posted', cardId: 'card-2', cardChannelId: 'MOD' });
      // One card took one place: the channel's second card this hour is slot 2 of its cap.
      const next = await store.reserveCard(scope, 'C1', 'A2', Date.now(), { windowMs: 60_000, cap: 10 });
      expect(next).toMatchObject({ ok: true, slot: 2 });
    } finally {
      await watcher.stop();
      await store.close();
    }
  });
});
