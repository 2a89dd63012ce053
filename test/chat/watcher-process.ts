/**
 * The real watcher in a process of its own, on a real SQLite store, for tests that kill it
 * (SIGKILL, SIGTERM) at a chosen moment. Told by the environment: WATCH_DIR (the store's folder),
 * WATCH_OFFER (message ids to offer, comma-separated), WATCH_HANG_CARDS=1 (a card post never
 * returns, so the process can be killed between recording a flag and posting its card),
 * WATCH_HOLD_CARDS=1 (a card post returns only once the line `release` is read on stdin),
 * WATCH_LEASE_MS, WATCH_DATABASE_URL (PostgreSQL instead of SQLite; WATCH_DIR then holds the spool).
 * It prints one line per event: `ready`, `posting <flagId>`, `card <flagId>`, and for each line
 * `offer <id>` read on stdin, `offered <id> <result>`.
 */
import { createInterface } from 'node:readline';
import pino from 'pino';
import { PostgresStore, SqliteStore } from '../../adapters/chat/store/index.ts';
import { WatchSpool } from '../../adapters/chat/watch/spool.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';
import { testWatcher } from './test-watcher.ts';
import { WATCHED_TEXT } from './watcher-run.ts';

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
  const databaseUrl = process.env.WATCH_DATABASE_URL;
  const store = databaseUrl ? new PostgresStore(databaseUrl) : new SqliteStore(process.env.WATCH_DIR!);
  const hang = process.env.WATCH_HANG_CARDS === '1';
  const hold = process.env.WATCH_HOLD_CARDS === '1';
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const offer = (id: string) =>
    watcher.offer({
      scope: 'discord:1',
      channelId: 'C1',
      messageId: id,
      authorId: `A-${id}`,
      postedAt: Date.now(),
      text: WATCHED_TEXT(id),
    });
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const watcher = testWatcher({
    store,
    detector,
    logger: pino({ level: process.env.WATCH_LOG_LEVEL ?? 'silent' }),
    leaseMs: Number(process.env.WATCH_LEASE_MS ?? 60_000),
    idlePollMs: 20,
    spool: new WatchSpool(process.env.WATCH_DIR!),
    platform: {
      reviewChannel: async () => 'MOD',
      fetchMessage: async (item) => ({ text: WATCHED_TEXT(item.messageId) }),
      async postCard(_channel, card) {
        // `recovered`: the flag's card may be out already (a process stopped before recording it).
        say(`posting ${card.flagId}${card.recovered ? ' recovered' : ''}`);
        if (hang) await new Promise(() => undefined);
        if (hold) await released;
        say(`card ${card.flagId}`);
        return `card-of-${card.flagId}`;
      },
    },
  });
  await store.ready();
  watcher.start();
  for (const id of (process.env.WATCH_OFFER ?? '').split(',').filter(Boolean)) await offer(id);
  say('ready');
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'release') release();
    const id = /^offer (\S+)$/.exec(line.trim())?.[1];
    if (!id) return;
    offer(id).then(
      (result) => say(`offered ${id} ${result}`),
      (err: Error) => say(`offered ${id} error ${err.message}`),
    );
  });
  process.once('SIGTERM', () => {
    void watcher
      .stop()
      .then(() => store.close())
      .then(() => process.exit(0));
  });
}

void main();
