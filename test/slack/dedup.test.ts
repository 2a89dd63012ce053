import { afterAll, describe, expect, it } from 'vitest';
import { dedupKey, MemoryDedupStore, RedisDedupStore } from '../../adapters/slack/dedup.ts';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';

describe('dedupKey', () => {
  it('identifies commands, interactions and events per workspace', () => {
    expect(dedupKey({ team_id: 'T1', trigger_id: '1.2.abc' })).toBe('T1:t:1.2.abc');
    expect(dedupKey({ team: { id: 'T2' }, trigger_id: '9.9.x' })).toBe('T2:t:9.9.x');
    expect(dedupKey({ team_id: 'T1', event_id: 'Ev1' })).toBe('T1:e:Ev1');
    expect(dedupKey({ team_id: 'T1' })).toBeUndefined();
  });
});

describe('MemoryDedupStore', () => {
  it('claims once per key until the TTL passes', async () => {
    const store = new MemoryDedupStore();
    expect(await store.claim('a', 50)).toBe(true);
    expect(await store.claim('a', 50)).toBe(false);
    expect(await store.claim('b', 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 70));
    expect(await store.claim('a', 50)).toBe(true);
  });

  it('stays bounded under many unique keys', async () => {
    const store = new MemoryDedupStore(100);
    for (let i = 0; i < 1000; i++) await store.claim(`k${i}`, 60_000);
    expect(await store.claim('k999', 60_000)).toBe(false);
    expect(await store.claim('k0', 60_000)).toBe(true);
  });
});

describe('RedisDedupStore', () => {
  let own: RedisServerHandle | undefined;
  afterAll(async () => {
    await own?.stop();
  });

  it('shares claims between stores (replicas) on the same Redis', async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `test:dedup:${Date.now()}:`;
    const a = new RedisDedupStore(url, undefined, prefix);
    const b = new RedisDedupStore(url, undefined, prefix);
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
    const store = new RedisDedupStore(own.url);
    try {
      await new Promise((r) => setTimeout(r, 100));
      await own.stop();
      const started = performance.now();
      expect(await store.claim('T1:t:z', 5_000)).toBe(true);
      expect(await store.claim('T1:t:z', 5_000)).toBe(false);
      expect(performance.now() - started).toBeLessThan(1500);
    } finally {
      await store.close();
    }
  });
});
