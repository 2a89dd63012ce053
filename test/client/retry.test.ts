/**
 * Retries, pauses, timeouts and cancellation. The real service answers; a recording proxy in
 * front of it shows every attempt (arrival time, X-Request-Id, status) and injects the faults the
 * service cannot produce on demand (5xx, hangs, dropped connections).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortedError,
  ConnectionError,
  DetectClient,
  RateLimitError,
  ServerError,
  TimeoutError,
  type DetectClientOptions,
} from '../../src/client/index.ts';
import { freePort } from '../helpers/redis.ts';
import { SAMPLE_TEXT, startProxy, startTestService, timed, type RecordingProxy, type TestService } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('retries and pauses', () => {
  let svc: TestService;
  let proxy: RecordingProxy;
  const clients: DetectClient[] = [];
  const client = (options: DetectClientOptions = {}): DetectClient => {
    const c = new DetectClient({ apiKey: svc.key, baseUrl: proxy.url, retryBaseMs: 50, ...options });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    // A short window keeps the Retry-After test quick.
    svc = await startTestService({ rateLimitMax: 1000, rateLimitWindow: 2_000 });
    proxy = await startProxy(svc.url);
  });
  afterEach(() => {
    proxy.setFaults(undefined);
    proxy.records.length = 0;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await proxy?.close();
    await svc?.close();
  });

  it('retries 5xx with backoff and sends the same X-Request-Id on every attempt', async () => {
    proxy.setFaults((n) => (n < 2 ? { kind: 'status', status: 503, headers: {} } : undefined));
    const c = client();
    const requestId = '0b5f2a62-6f5c-4c1e-9d1e-2a3b4c5d6e7f';
    const result = await c.detect({ text: SAMPLE_TEXT }, { requestId });
    expect(result.request_id).toMatch(/^req_/);
    expect(proxy.records.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(proxy.records.map((r) => r.requestId)).toEqual([requestId, requestId, requestId]);
    // The service echoes the caller's id, so its logs tie the attempts together.
    expect(proxy.records[2]?.headers?.['x-request-id']).toBe(requestId);
    expect(c.stats()).toMatchObject({ attempts: 3, retries: 2, succeeded: 1 });
  });

  it('makes one UUID per logical call when the caller gives none', async () => {
    proxy.setFaults((n) => (n === 0 ? { kind: 'destroy' } : undefined));
    const c = client();
    await c.detect({ text: SAMPLE_TEXT });
    await c.detect({ text: SAMPLE_TEXT });
    const ids = proxy.records.map((r) => r.requestId);
    expect(ids).toHaveLength(3);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids[1]).toBe(ids[0]); // the dropped connection was retried under the same id
    expect(ids[2]).not.toBe(ids[0]);
  });

  it('logs attempts and retries without the API key or the submitted text', async () => {
    const entries: unknown[] = [];
    const capture = (obj: object, msg?: string): void => void entries.push({ obj, msg });
    const logger = { debug: capture, info: capture, warn: capture, error: capture };
    proxy.setFaults((n) => (n === 0 ? { kind: 'status', status: 502 } : n === 1 ? { kind: 'destroy' } : undefined));
    const c = client({ logger });
    await c.detect({ text: SAMPLE_TEXT });
    expect(entries.length).toBeGreaterThanOrEqual(3);
    const logged = JSON.stringify(entries);
    expect(logged).toMatch(/retrying/);
    expect(logged).not.toContain(svc.key);
    expect(logged).not.toContain(svc.key.slice(8));
    expect(logged).not.toContain(SAMPLE_TEXT.slice(0, 30));
  });

  it('gives up on persistent 5xx with ServerError after maxRetries', async () => {
    proxy.setFaults(() => ({
      kind: 'status',
      status: 500,
      body: {
        error: {
          type: 'api_error',
          code: 'internal_error',
          message: 'Something went wrong on our side.',
          request_id: 'req_01M8083QQB7ZXNEY5VDDMDH4W6',
        },
      },
    }));
    const c = client({ maxRetries: 2 });
    const err = await c.detect({ text: SAMPLE_TEXT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 500, code: 'internal_error', requestId: 'req_01M8083QQB7ZXNEY5VDDMDH4W6' });
    expect(proxy.records).toHaveLength(3);
  });

  it('honours Retry-After: the 429ed call and every other queued call wait out the pause', async () => {
    const key = await svc.newKey({ rateLimitMax: 3 });
    // The client is told a larger budget than the key has, so it meets the server's 429.
    const c = client({ apiKey: key, limiter: { max: 100, intervalMs: 1_000 }, maxRetries: 2 });
    // Hold the first four at the proxy so all are in flight together and one must meet the 429
    // (otherwise the third answer's RateLimit-Remaining: 0 pauses the client before it sends the fourth).
    proxy.setFaults((n) => (n < 4 ? { kind: 'delay', ms: 150 } : undefined));
    const started = Date.now();
    const first = Promise.all([1, 2, 3, 4].map(() => c.detect({ text: SAMPLE_TEXT })));
    // Once the client has seen the 429, add a call while the pause is on.
    while (c.stats().rateLimited === 0) await sleep(5);
    const lateIssuedAt = Date.now();
    const late = c.detect({ text: SAMPLE_TEXT });
    const results = await Promise.all([first, late]);
    expect(results.flat()).toHaveLength(5);

    const limited = proxy.records.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    let pauseEnds = Number.POSITIVE_INFINITY;
    for (const hit of limited) {
      const retryAfterMs = Number(hit.headers?.['retry-after-ms']);
      expect(retryAfterMs).toBeGreaterThan(0);
      pauseEnds = Math.min(pauseEnds, hit.at + retryAfterMs);
      // The retry carries the id of the call that was limited and waits the full Retry-After.
      const retry = proxy.records.find((r) => r.requestId === hit.requestId && r.at > hit.at);
      expect(retry).toBeDefined();
      expect(retry?.at).toBeGreaterThanOrEqual(hit.at + retryAfterMs - 5);
    }
    // The call made during the pause was held back too: the whole queue stopped, not one job.
    const sentLater = proxy.records.filter((r) => r.at >= lateIssuedAt);
    expect(sentLater.length).toBeGreaterThanOrEqual(2);
    for (const r of sentLater) expect(r.at).toBeGreaterThanOrEqual(pauseEnds - 5);
    const retryAfterMs = pauseEnds - (limited[0]?.at ?? 0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(retryAfterMs);
    expect(c.stats()).toMatchObject({ succeeded: 5, rateLimitErrors: 0 });
    expect(c.stats().rateLimited).toBeGreaterThanOrEqual(1);
  });

  it('times out a hung attempt, retries it, and throws TimeoutError when every attempt hangs', async () => {
    proxy.setFaults(() => ({ kind: 'hang' }));
    const c = client({ timeoutMs: 300, maxRetries: 1 });
    const outcome = await timed(c.detect({ text: SAMPLE_TEXT }));
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(outcome.error).toMatchObject({ code: 'timeout' });
    expect((outcome.error as Error).message).toMatch(/300 ms/);
    expect(outcome.ms).toBeGreaterThanOrEqual(600);
    // The proxy holds a hung attempt forever, so finishing at all proves the 300 ms deadline; the bound
    // only shows it was this deadline and not the default 30 s one, with room for a machine at load 10.
    expect(outcome.ms).toBeLessThan(15_000);
    expect(proxy.records).toHaveLength(2);
    expect(proxy.records[1]?.requestId).toBe(proxy.records[0]?.requestId);

    proxy.records.length = 0;
    proxy.setFaults((n) => (n === 0 ? { kind: 'hang' } : undefined));
    const recovered = await timed(c.detect({ text: SAMPLE_TEXT }));
    expect(recovered.value?.request_id).toMatch(/^req_/);
    expect(recovered.ms).toBeGreaterThanOrEqual(300);
  });

  it('throws ConnectionError when nothing listens, after maxRetries', async () => {
    const port = await freePort();
    const c = new DetectClient({ apiKey: svc.key, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2, retryBaseMs: 20 });
    clients.push(c);
    const err = await c.detect({ text: SAMPLE_TEXT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'connection_error' });
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect((err as Error).message).toMatch(/3 attempts/);
    expect(c.stats().attempts).toBe(3);
  });

  it('cancels through AbortSignal: before sending, on the wire, and while paused, without retrying', async () => {
    const c = client({ timeoutMs: 10_000 });
    const before = new AbortController();
    before.abort();
    await expect(c.detect({ text: SAMPLE_TEXT }, { signal: before.signal })).rejects.toBeInstanceOf(AbortedError);
    expect(proxy.records).toHaveLength(0);

    proxy.setFaults(() => ({ kind: 'hang' }));
    const onWire = new AbortController();
    const call = timed(c.detect({ text: SAMPLE_TEXT }, { signal: onWire.signal }));
    await sleep(150);
    onWire.abort();
    const outcome = await call;
    // The attempt hangs and the deadline is 10 s: AbortedError (not TimeoutError) shows the abort ended it.
    expect(outcome.error).toBeInstanceOf(AbortedError);
    expect(outcome.error).toMatchObject({ code: 'aborted' });
    await sleep(200);
    expect(proxy.records).toHaveLength(1);

    // A 429 asking for 5 s: the call is paused, then cancelled long before the pause ends.
    proxy.records.length = 0;
    proxy.setFaults(() => ({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '5', 'retry-after-ms': '5000' },
      body: { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests.', retry_after: 5 } },
    }));
    const paused = new AbortController();
    const pausedCall = timed(c.detect({ text: SAMPLE_TEXT }, { signal: paused.signal }));
    while (proxy.records.length === 0) await sleep(10);
    await sleep(100);
    const queued = new AbortController();
    const queuedCall = timed(c.detect({ text: SAMPLE_TEXT }, { signal: queued.signal }));
    await sleep(100);
    paused.abort();
    queued.abort();
    const [p, q] = await Promise.all([pausedCall, queuedCall]);
    expect(p.error).toBeInstanceOf(AbortedError);
    expect(q.error).toBeInstanceOf(AbortedError);
    // Ended by the abort, not by the 5 s pause running out (checked in the same run: the pause is 5 s).
    expect(p.ms).toBeLessThan(5_000);
    expect(proxy.records).toHaveLength(1); // neither the retry nor the queued call was sent
  });

  it('stops a batch on abort: finished items are kept, the rest end with AbortedError', async () => {
    proxy.setFaults(() => ({ kind: 'delay', ms: 50 }));
    const c = client({ limiter: { max: 20, intervalMs: 1_000, maxConcurrent: 2 } });
    const controller = new AbortController();
    const items = Array.from({ length: 20 }, () => ({ text: SAMPLE_TEXT }));
    // Aborted once the client has two answers, whatever the machine's speed.
    const stop = (async () => {
      while (c.stats().succeeded < 2) await sleep(5);
      controller.abort();
    })();
    const outcome = await timed(c.detectMany(items, { signal: controller.signal }));
    await stop;
    const results = outcome.value ?? [];
    expect(results).toHaveLength(20);
    expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));
    const done = results.filter((r) => r.ok).length;
    expect(done).toBeGreaterThanOrEqual(2);
    expect(done).toBeLessThan(20);
    // Finished items come first (the batch runs in order) and the rest are all cancellations.
    expect(results.slice(0, done).every((r) => r.ok)).toBe(true);
    for (const r of results.slice(done)) expect(r.error).toBeInstanceOf(AbortedError);
    // Nothing was sent after the abort: every attempt the proxy saw is a finished item, or one of the
    // two (maxConcurrent) on the wire when it came.
    expect(proxy.records.length).toBeLessThanOrEqual(done + 2);
  });

  it('fails fast with RateLimitError when the announced pause exceeds maxRateLimitWaitMs', async () => {
    proxy.setFaults(() => ({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '30', 'retry-after-ms': '30000' },
      body: { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests.', retry_after: 30 } },
    }));
    const c = client({ maxRateLimitWaitMs: 20_000 });
    const outcome = await timed(c.detect({ text: SAMPLE_TEXT }));
    expect(outcome.error).toBeInstanceOf(RateLimitError);
    expect((outcome.error as RateLimitError).retryAfterMs).toBe(30_000);
    // Without waiting at all, and without a second attempt: waiting up to maxRateLimitWaitMs would take 20 s.
    expect(outcome.ms).toBeLessThan(10_000);
    expect(proxy.records).toHaveLength(1);
  });
});

describe('server restarted mid-batch', () => {
  it('finishes every item, in order, across a restart of the real service', async () => {
    const svc = await startTestService({ rateLimitMax: 10_000 });
    const c = new DetectClient({
      apiKey: svc.key,
      baseUrl: svc.url,
      maxRetries: 8,
      retryBaseMs: 100,
      retryMaxDelayMs: 1_000,
      limiter: { max: 40, intervalMs: 1_000, maxConcurrent: 2 },
    });
    try {
      const items = Array.from({ length: 24 }, (_, i) => ({ text: `${SAMPLE_TEXT} Item ${i}.` }));
      let restart: Promise<void> | undefined;
      const results = await c.detectMany(items, {
        onProgress: ({ done }) => {
          // The service comes back only once the client has met it down: in one process, on a busy
          // machine, a restart could otherwise finish between two requests and test nothing.
          if (done === 6)
            restart = (async () => {
              await svc.stop();
              while (c.stats().retries === 0) await sleep(5);
              await svc.restart();
            })();
        },
      });
      await restart;
      expect(results.map((r) => r.ok)).toEqual(items.map(() => true));
      expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));
      expect(c.stats().retries).toBeGreaterThanOrEqual(1);
      expect(c.stats()).toMatchObject({ succeeded: 24, failed: 0 });
    } finally {
      await c.close();
      await svc.close();
    }
  });
});
