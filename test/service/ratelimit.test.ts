import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/service/keys.ts';
import { freePort, startRedisServer } from '../helpers/redis.ts';
import { ENGLISH_TEXT, call, detect, expectEnvelope, startTestService } from './helpers.ts';
import type { Answer, TestService } from './helpers.ts';

const SHORT = 'A short text is enough to exercise the limiter, even if its score means little.';

function expect429(answer: Answer, limit: number): void {
  expectEnvelope(answer, 429, 'rate_limited');
  const retryAfter = Number(answer.headers.get('retry-after'));
  const retryAfterMs = Number(answer.headers.get('retry-after-ms'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfterMs).toBeGreaterThan(0);
  expect(retryAfterMs).toBeLessThanOrEqual(retryAfter * 1000);
  expect(answer.body.error.retry_after).toBe(retryAfter);
  expect(Number(answer.headers.get('ratelimit-limit'))).toBe(limit);
  expect(answer.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(answer.headers.get('ratelimit-reset'))).toBe(retryAfter);
}

describe('rate limiting in memory', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ rateLimitMax: 3, rateLimitWindow: '2 seconds' });
  });
  afterAll(async () => service?.stop());

  it('answers 429 with Retry-After, Retry-After-Ms and retry_after past the limit, then recovers', async () => {
    const key = await service.newKey();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await detect(service, key, { text: SHORT });
      expect(ok.status).toBe(200);
      remaining.push(String(ok.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await detect(service, key, { text: SHORT });
    expect429(limited, 3);
    // Another key is not affected.
    expect((await detect(service, await service.newKey(), { text: SHORT })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Number(limited.headers.get('retry-after-ms')) + 50));
    expect((await detect(service, key, { text: SHORT })).status).toBe(200);
  });

  it('honours a per-key limit from the key file', async () => {
    const key = await service.newKey({ rateLimitMax: 1 });
    const first = await detect(service, key, { text: SHORT });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('1');
    expect429(await detect(service, key, { text: SHORT }), 1);
  });

  it('limits failed authentications per client address, without blocking valid keys', async () => {
    const bad = `sk_test_${randomBytes(16).toString('hex')}`;
    for (let i = 0; i < 3; i++) expectEnvelope(await detect(service, bad, { text: SHORT }), 401, 'invalid_api_key');
    expect429(await detect(service, bad, { text: SHORT }), 3);
    expect429(await call(service, '/v1/detect', { body: { text: SHORT } }), 3);
    expect((await detect(service, await service.newKey(), { text: SHORT })).status).toBe(200);
  });

  it('never refuses the probes, which still report the budget', async () => {
    for (let i = 0; i < 8; i++) {
      const answer = await call(service, '/healthz');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-limit')).toBe('3');
      expect(answer.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    expect((await call(service, '/readyz')).status).toBe(200);
  });
});

describe('rate limiting shared through Redis', () => {
  it('two instances sharing one Redis enforce one limit', async () => {
    const redisUrl = process.env.REDIS_URL;
    expect(redisUrl, 'test/global-setup.ts provides REDIS_URL').toBeTruthy();
    const prefix = `textdetect-test:${randomBytes(6).toString('hex')}:`;
    const a = await startTestService({ redisUrl, redisKeyPrefix: prefix, rateLimitMax: 4, rateLimitWindow: '1 minute' });
    const b = await startTestService({
      redisUrl,
      redisKeyPrefix: prefix,
      rateLimitMax: 4,
      rateLimitWindow: '1 minute',
      apiKeysFile: a.keysFile,
    });
    try {
      const key = await a.newKey();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await detect(i % 2 ? b : a, key, { text: SHORT })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      expect429(await detect(b, key, { text: SHORT }), 4);
      expect429(await detect(a, key, { text: SHORT }), 4);
      const ready = await call(a, '/readyz');
      expect(ready.body.redis).toBe('ok');
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('keeps answering with a per-instance limit while Redis is down, and shares again when it returns', async () => {
    const redisServer = await startRedisServer();
    const prefix = `textdetect-test:${randomBytes(6).toString('hex')}:`;
    const service = await startTestService({
      redisUrl: redisServer.url,
      redisKeyPrefix: prefix,
      rateLimitMax: 5,
      rateLimitWindow: '1 minute',
      redisCoolDownMs: 500,
    });
    const probe = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    probe.on('error', () => undefined);
    try {
      const key = await service.newKey();
      expect((await detect(service, key, { text: SHORT })).status).toBe(200);
      await probe.connect();
      expect((await probe.keys(`${prefix}*`)).length).toBe(1);

      await redisServer.stop();
      const started = performance.now();
      const during: number[] = [];
      for (let i = 0; i < 6; i++) during.push((await detect(service, key, { text: SHORT })).status);
      const elapsed = performance.now() - started;
      // Counted in this process from zero: five allowed, the sixth refused; none waited for Redis.
      expect(during).toEqual([200, 200, 200, 200, 200, 429]);
      expect(elapsed).toBeLessThan(3000);
      const degraded = await call(service, '/readyz');
      expect(degraded.status).toBe(200);
      expect(degraded.body.redis).toBe('degraded');
      expect(service.logs.some((l) => String(l.msg).includes('rate limits are counted per instance'))).toBe(true);

      await redisServer.start();
      const deadline = Date.now() + 10_000;
      while ((await call(service, '/readyz')).body.redis !== 'ok') {
        if (Date.now() > deadline) throw new Error('service did not reconnect to Redis');
        await new Promise((r) => setTimeout(r, 100));
      }
      // The restarted Redis is empty, so the shared counter starts over from one.
      const after = await detect(service, await service.newKey(), { text: SHORT });
      expect(after.status).toBe(200);
      const again = await detect(service, key, { text: SHORT });
      expect(again.status).toBe(200);
      expect(again.headers.get('ratelimit-remaining')).toBe('4');
      expect((await probe.keys(`${prefix}*`)).length).toBe(2);
      expect(service.logs.some((l) => String(l.msg).includes('redis is back'))).toBe(true);
    } finally {
      probe.disconnect();
      await service.stop();
      await redisServer.stop();
    }
  });
});

describe('Redis trouble at the edges', () => {
  it('starts and serves when Redis is unreachable from the start', async () => {
    const port = await freePort();
    const service = await startTestService({ redisUrl: `redis://127.0.0.1:${port}`, rateLimitMax: 2 });
    try {
      const key = await service.newKey();
      expect((await detect(service, key, { text: SHORT })).status).toBe(200);
      expect((await detect(service, key, { text: SHORT })).status).toBe(200);
      expect429(await detect(service, key, { text: SHORT }), 2);
      const ready = await call(service, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.redis).toBe('degraded');
    } finally {
      await service.stop();
    }
  });

  it('does not wait for a Redis that accepts connections but stops answering', async () => {
    const redisServer = await startRedisServer();
    const service = await startTestService({
      redisUrl: redisServer.url,
      redisKeyPrefix: `textdetect-test:${randomBytes(6).toString('hex')}:`,
    });
    const pauser = new Redis(redisServer.url);
    try {
      const key = await service.newKey();
      expect((await detect(service, key, { text: SHORT })).status).toBe(200);
      // CLIENT PAUSE holds every other client's commands, like a stalled server.
      await pauser.call('CLIENT', 'PAUSE', '2000');
      const started = performance.now();
      const answer = await detect(service, key, { text: SHORT });
      expect(answer.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1500);
      // It was counted in this process after the command timed out, and said so.
      expect(service.logs.some((l) => String(l.msg).includes('counted per instance') && /timed? ?out/i.test(String(l.reason)))).toBe(true);
    } finally {
      pauser.disconnect();
      await service.stop();
      await redisServer.stop();
    }
  });
});

describe('limits apply across keys created by other means', () => {
  it('a key created while the server runs is limited with its own counter', async () => {
    const service = await startTestService({ rateLimitMax: 2 });
    try {
      const { key } = await createApiKey(service.keysFile, { name: 'late' });
      expect((await detect(service, key, { text: ENGLISH_TEXT })).status).toBe(200);
      expect((await detect(service, key, { text: ENGLISH_TEXT })).status).toBe(200);
      expect429(await detect(service, key, { text: ENGLISH_TEXT }), 2);
    } finally {
      await service.stop();
    }
  });
});
