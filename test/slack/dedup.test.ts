import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore, SqliteStore } from '../../adapters/chat/store/index.ts';
import { dedupKey } from '../../adapters/slack/dedup.ts';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';

describe('dedupKey', () => {
  it('identifies commands, interactions and events per workspace', () => {
    expect(dedupKey({ team_id: 'T1', trigger_id: '1.2.abc' })).toBe('T1:t:1.2.abc');
    expect(dedupKey({ team: { id: 'T2' }, trigger_id: '9.9.x' })).toBe('T2:t:9.9.x');
    expect(dedupKey({ team_id: 'T1', event_id: 'Ev1' })).toBe('T1:e:Ev1');
    expect(dedupKey({ team_id: 'T1' })).toBeUndefined();
  });
});

describe('retry de-duplication in the SQLite store (default)', () => {
  it('claims once per key until the TTL passes, also across two processes on one file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slack-dedup-'));
    let now = 1_000;
    const a = new SqliteStore(dir, { now: () => now });
    const b = new SqliteStore(dir, { now: () => now });
    try {
      expect(await a.claim('T1:t:x', 50)).toBe(true);
      expect(await a.claim('T1:t:x', 50)).toBe(false);
      expect(await b.claim('T1:t:x', 50)).toBe(false);
      expect(await b.claim('T1:t:y', 50)).toBe(true);
      now += 60;
      expect(await b.claim('T1:t:x', 50)).toBe(true);
    } finally {
      await a.close();
      await b.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('retry de-duplication in the Redis store', () => {
  let own: RedisServerHandle | undefined;
  afterAll(async () => {
    await own?.stop();
  });

  it('shares claims between stores (replicas) on the same Redis', async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `test:dedup:${Date.now()}:`;
    const a = new RedisStore(url, { prefix });
    const b = new RedisStore(url, { prefix });
    try {
      expect(await a.claim('T1:t:x', 5_000)).toBe(true);
      expect(await b.claim('T1:t:x', 5_000)).toBe(false);
      expect(await b.claim('T1:t:y', 5_000)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('falls back to process memory when Redis is down, still dropping repeats', async () => {
    own = await startRedisServer();
    const store = new RedisStore(own.url);
    try {
      await new Promise((r) => setTimeout(r, 100));
      await own.stop();
      const started = performance.now();
      expect(await store.claim('T1:t:z', 5_000)).toBe(true);
      expect(await store.claim('T1:t:z', 5_000)).toBe(false);
      // At most two claim timeouts (500 ms each), with room for a machine at load 10.
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await store.close();
    }
  });
});
