/**
 * A member's messages are judged with their earlier ones, so the watcher must take them in the
 * order the platform delivered them, whichever store lookup answers first (a PostgreSQL pool answers
 * out of order; Redis and SQLite happen not to). The store here answers the first message's lookup last.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import type { IncomingMessage } from '../../adapters/chat/watch/watcher.ts';
import { humanAuthorDetector, testWatcher } from './test-watcher.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-order-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TEXT = (i: number) =>
  `Message ${i} of the same member: the river walk was flooded again this morning, so we took the long way past the bakery and the old cinema instead.`;

/** The store, with `getConfig` answering after the given delays in turn. */
function slowLookups(store: WatchStore, delays: number[]): WatchStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'getConfig') {
        return async (scope: string) => {
          await new Promise((r) => setTimeout(r, delays.shift() ?? 0));
          return target.getConfig(scope);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function judgedSizes(ordered: boolean, name: string): Promise<Record<string, number>> {
  const store = new SqliteStore(join(dir, name));
  const scope = 'discord:1';
  await store.watchChannel(scope, 'C1', 0);
  const sizes: Record<string, number> = {};
  const detector = humanAuthorDetector((messages) => {
    sizes[messages.at(-1)!.slice(0, 9)] = messages.length;
  });
  const watcher = testWatcher({ store: slowLookups(store, [150, 0]), detector, idlePollMs: 10 });
  watcher.start();
  try {
    const base = Date.now() - 10_000;
    const message = (i: number): IncomingMessage => ({
      scope,
      channelId: 'C1',
      messageId: `m${i}`,
      authorId: 'A1',
      postedAt: base + i,
      text: TEXT(i),
    });
    const offer = (i: number) =>
      ordered ? watcher.inArrivalOrder(scope, 'A1', () => watcher.offer(message(i))) : watcher.offer(message(i));
    expect(await Promise.all([offer(1), offer(2)])).toEqual(['queued', 'queued']);
    const deadline = Date.now() + 5_000;
    while (watcher.counters.scored < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return sizes;
  } finally {
    await watcher.stop();
    await store.close();
  }
}

describe('a member’s messages in arrival order', () => {
  it('judges the second message with the first, even when the first one’s lookup answers last', async () => {
    expect(await judgedSizes(true, 'ordered')).toEqual({ 'Message 1': 1, 'Message 2': 2 });
  });

  it('(without the ordering, the second message would be judged alone: the race this guards against)', async () => {
    expect(await judgedSizes(false, 'unordered')).toEqual({ 'Message 1': 1, 'Message 2': 1 });
  });
});
