/**
 * The real watcher in a process of its own, on a real SQLite store, for tests that kill it
 * (SIGKILL, SIGTERM) at a chosen moment. Told by the environment: WATCH_DIR (the store's folder),
 * WATCH_OFFER (message ids to offer, comma-separated), WATCH_HANG_CARDS=1 (a card post never
 * returns, so the process can be killed between recording a flag and posting its card),
 * WATCH_LEASE_MS. It prints one line per event: `ready`, `posting <flagId>`, `card <flagId>`.
 */
import pino from 'pino';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';
import { testWatcher } from './test-watcher.ts';

export const WATCHED_TEXT = (id: string): string =>
  `Message ${id}: in conclusion, it is important to note that effective communication fosters collaboration, and leveraging synergies ensures sustainable growth for all stakeholders involved.`;

const detector: WatchDetector = {
  detect: () => Promise.reject(new Error('not used')),
  async detectAuthor(request) {
    return {
      ...{ ai_probability: 0.97, verdict: 'likely_ai', confidence: 'high', warnings: [], mode: 'general', request_id: 'req_process' },
      ...{ model: 'test', messages_used: request.messages.length, words_used: 100, messages: [] },
    } as unknown as DetectAuthorResponse;
  },
  roomForBackground: async () => true,
};

async function main(): Promise<void> {
  const store = new SqliteStore(process.env.WATCH_DIR!);
  const hang = process.env.WATCH_HANG_CARDS === '1';
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const watcher = testWatcher({
    store,
    detector,
    logger: pino({ level: process.env.WATCH_LOG_LEVEL ?? 'silent' }),
    leaseMs: Number(process.env.WATCH_LEASE_MS ?? 60_000),
    idlePollMs: 20,
    platform: {
      reviewChannel: async () => 'MOD',
      fetchMessage: async (item) => ({ text: WATCHED_TEXT(item.messageId) }),
      async postCard(_channel, card) {
        say(`posting ${card.flagId}`);
        if (hang) await new Promise(() => undefined);
        say(`card ${card.flagId}`);
        return `card-of-${card.flagId}`;
      },
    },
  });
  await store.ready();
  watcher.start();
  for (const id of (process.env.WATCH_OFFER ?? '').split(',').filter(Boolean)) {
    await watcher.offer({
      scope: 'discord:1',
      channelId: 'C1',
      messageId: id,
      authorId: `A-${id}`,
      postedAt: Date.now(),
      text: WATCHED_TEXT(id),
    });
  }
  say('ready');
  process.once('SIGTERM', () => {
    void watcher
      .stop()
      .then(() => store.close())
      .then(() => process.exit(0));
  });
}

void main();
