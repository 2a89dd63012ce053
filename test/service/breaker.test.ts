/**
 * The Redis circuit breaker: a Redis that hangs (SIGSTOP keeps its connections open, so ioredis
 * still calls it "ready") must not slow requests or probes down, and shared counting must resume
 * once it answers again.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';
import { call, detect, startTestService, type TestService } from './helpers.ts';

const SHORT = 'A short text is enough to exercise the limiter, even if its score means little.';

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

describe('Redis frozen with SIGSTOP', () => {
  let redisServer: RedisServerHandle;
  let service: TestService;
  let inspector: Redis;
  const prefix = `textdetect-test:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    service = await startTestService({ redisUrl: redisServer.url, redisKeyPrefix: prefix, rateLimitMax: 1000, redisCoolDownMs: 1000 });
    inspector = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    inspector.on('error', () => undefined);
  });
  afterAll(async () => {
    redisServer?.thaw();
    inspector?.disconnect();
    await service?.stop();
    await redisServer?.stop();
  });

  it('keeps readyz under 50 ms and detect p99 under 50 ms, reports degraded, and shares counters again after SIGCONT', async () => {
    const key = await service.newKey();
    for (let i = 0; i < 5; i++) expect((await detect(service, key, { text: SHORT })).status).toBe(200);
    // On a machine starved of CPU even a healthy Redis can miss the 30 ms deadline and trip the
    // breaker; start the freeze from a closed breaker.
    const settleBy = Date.now() + 15_000;
    while ((await call(service, '/readyz')).body.redis !== 'ok') {
      if (Date.now() > settleBy) throw new Error('the breaker never closed before the freeze');
      await new Promise((r) => setTimeout(r, 100));
    }
    const counterKeys = await inspector.keys(`${prefix}*`);
    expect(counterKeys.length).toBeGreaterThan(0);

    redisServer.freeze();
    try {
      // The very first request after the freeze is a probe: it must not wait for Redis either.
      const firstProbe = await timed(() => call(service, '/readyz'));
      expect(firstProbe.value.status).toBe(200);
      expect(firstProbe.ms).toBeLessThan(50);

      const latencies: number[] = [];
      const statuses = new Set<number>();
      for (let i = 0; i < 100; i++) {
        const { ms, value } = await timed(() => detect(service, key, { text: SHORT }));
        latencies.push(ms);
        statuses.add(value.status);
      }
      expect([...statuses]).toEqual([200]);
      const p99 = percentile(latencies, 99);
      expect(
        p99,
        `detect latencies during the freeze (ms): p50 ${percentile(latencies, 50).toFixed(1)}, p99 ${p99.toFixed(1)}`,
      ).toBeLessThan(50);

      const probes: number[] = [];
      for (let i = 0; i < 20; i++) {
        const { ms, value } = await timed(() => call(service, '/readyz'));
        probes.push(ms);
        expect(value.status).toBe(200);
        expect(value.body.redis).toBe('degraded');
      }
      expect(Math.max(...probes)).toBeLessThan(50);
      const trip = service.logs.find((l) => String(l.msg).includes('rate limits are counted per instance'));
      expect(trip?.reason).toMatch(/timed out/);
    } finally {
      redisServer.thaw();
    }

    // Back after the cool-down and a good background probe; the shared counter moves again.
    const deadline = Date.now() + 10_000;
    while ((await call(service, '/readyz')).body.redis !== 'ok') {
      if (Date.now() > deadline) throw new Error('the breaker did not close after SIGCONT');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(service.logs.some((l) => String(l.msg).includes('redis is back'))).toBe(true);
    const counterKey = counterKeys.find((k) => k.includes('key:')) ?? counterKeys[0]!;
    const before = Number(await inspector.get(counterKey));
    expect((await detect(service, key, { text: SHORT })).status).toBe(200);
    expect(Number(await inspector.get(counterKey))).toBe(before + 1);
  }, 60_000);
});
