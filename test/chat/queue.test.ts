/**
 * The bots' detection queue at its bound, through connectDetectionBackend against the real service
 * (behind the slowing proxy): a check that cannot get its turn within DETECT_QUEUE_MAX_WAIT_MS, or
 * that the service would make wait longer than that, gets "try again in N s"; one that can, waits.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectDetectionBackend } from '../../adapters/chat/backend.ts';
import { describeDetectError } from '../../adapters/chat/errors.ts';
import { DetectionQueue, parseQueueRate, QueueWaitExceededError } from '../../adapters/chat/queue.ts';
import { RateLimitError } from '../../src/client/errors.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { startRedisServer, strayRejectionsOfCloseWhileHung } from '../helpers/redis.ts';
import { DetectProxy } from '../slack/proxy.ts';

const TEXT =
  'The harbour master kept a logbook of every boat that came in late, and by October it was mostly our names, written in a hand that got angrier each week.';

let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let key: string;
let tightKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-queue-'));
  const file = join(dir, 'keys.json');
  key = (await createApiKey(file, { name: 'queue' })).key;
  tightKey = (await createApiKey(file, { name: 'queue-tight', rateLimitMax: 1 })).key;
  service = await startService({
    host: '127.0.0.1',
    port: 0,
    apiKeysFile: file,
    rateLimitMax: 1000,
    rateLimitWindow: '1 minute',
    logger: pino({ level: 'silent' }),
  });
  proxy = new DetectProxy(service.url);
  await proxy.start();
});

afterAll(async () => {
  await proxy?.stop();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('DETECT_QUEUE_MAX_WAIT_MS', () => {
  it('a check that cannot start within the bound is told to try again; the one ahead is answered', async () => {
    const backend = await connectDetectionBackend({
      DETECT_API_URL: proxy.url,
      DETECT_API_KEY: key,
      DETECT_QUEUE_CONCURRENCY: '1',
      DETECT_QUEUE_MAX_WAIT_MS: '400',
    });
    proxy.delayMs = 3000;
    try {
      const positions: number[] = [];
      const first = backend.detector.detect({ text: TEXT });
      const firstDone = first.then(() => performance.now());
      const started = performance.now();
      const second = backend.detector.detect({ text: TEXT }, { onQueued: (p) => positions.push(p) }).catch((err: unknown) => err);
      const err = await second;
      const gaveUpAt = performance.now();
      expect(err).toBeInstanceOf(QueueWaitExceededError);
      expect(gaveUpAt - started).toBeGreaterThanOrEqual(380);
      // Gave up at its bound, before the call ahead of it (held 3 s) was done.
      expect(gaveUpAt).toBeLessThan(await firstDone);
      expect(positions).toEqual([1]);
      expect(describeDetectError(err)).toMatch(/^The detection service is busy \(rate limit reached\)\. Try again in \d+ s\./);
      expect((await first).request_id).toMatch(/^req_/);
    } finally {
      proxy.delayMs = 0;
      await backend.close();
    }
  });

  it('a 429 asking for less than the bound is waited out; one asking for more is passed on at once', async () => {
    const backend = await connectDetectionBackend({
      DETECT_API_URL: proxy.url,
      DETECT_API_KEY: tightKey,
      DETECT_MAX_RETRIES: '0',
      DETECT_QUEUE_MAX_WAIT_MS: '20000',
    });
    try {
      await backend.detector.detect({ text: TEXT });
      const started = performance.now();
      const err = await backend.detector.detect({ text: TEXT }).catch((e: unknown) => e);
      // The key's window is a minute: far past the 20 s bound, so no waiting (waiting out the bound
      // would take 20 s; any machine answers in less than half that).
      expect(err).toBeInstanceOf(RateLimitError);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(describeDetectError(err)).toMatch(/Try again in \d+ s\./);
    } finally {
      await backend.close();
    }
  });

  /** Runs a call the service answers 429 (retry after 200 ms) once, on a queue of its own; the phases it was told. */
  async function answeredAfterOne429(name: string, onPause: (ms: number, phases: string[]) => void): Promise<string[]> {
    const queue = new DetectionQueue({ id: `chat-queue-${name}-${process.pid}-${Date.now()}`, maxConcurrent: 1, maxWaitMs: 5_000 });
    const phases: string[] = [];
    let attempts = 0;
    try {
      const { value } = await queue.run(
        async () => {
          attempts += 1;
          if (attempts === 1) throw new RateLimitError('Too many requests', { status: 429, code: 'rate_limited', retryAfterMs: 200 });
          return 'answered';
        },
        { onCall: () => phases.push('call'), onPause: (ms) => onPause(ms, phases) },
      );
      expect(value).toBe('answered');
      return phases;
    } finally {
      vi.restoreAllMocks();
      await queue.close();
    }
  }

  it('tells a check when it goes to the service and when a 429 pause holds it back in the queue', async () => {
    const phases = await answeredAfterOne429('phases', (ms, seen) => seen.push(`pause ${ms > 0 && ms <= 200 ? 'ok' : ms}`));
    expect(phases).toEqual(['call', 'pause ok', 'call']);
  });

  it('announces a pause once when the wall clock lags the timer that ends it', async () => {
    // A timer may wake a few ms before Date.now() reaches the pause's end (they read different
    // clocks); the remainder is the same pause. The clock is set back 30 ms once the pause is announced.
    const realNow = Date.now.bind(Date);
    const phases = await answeredAfterOne429('lag', (_ms, seen) => {
      seen.push('pause');
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 30);
    });
    expect(phases).toEqual(['call', 'pause', 'call']);
  });

  it('reads DETECT_QUEUE_RATE, refusing what is not calls per window', () => {
    expect(parseQueueRate('10/5s')).toEqual({ max: 10, intervalMs: 5000 });
    expect(parseQueueRate('600/1m')).toEqual({ max: 600, intervalMs: 60_000 });
    expect(parseQueueRate('60/ms')).toEqual({ max: 60, intervalMs: 1 });
    expect(parseQueueRate(undefined)).toBeUndefined();
    expect(() => parseQueueRate('fast')).toThrow('DETECT_QUEUE_RATE="fast" must be calls per window, such as 10/5s or 600/1m');
  });
});

describe('the shared queue in Redis', () => {
  it('keeps serving after its keys vanish (FLUSHALL, a Redis restart)', async () => {
    const redis = new Redis(process.env.REDIS_URL!);
    const id = `chat-queue-test-${process.pid}-${Date.now()}`;
    const queue = new DetectionQueue({ id, maxConcurrent: 2, maxWaitMs: 5_000, redisUrl: process.env.REDIS_URL! });
    try {
      expect((await queue.run(async () => 'first')).value).toBe('first');
      // Only this queue's keys (other suites share this Redis), as FLUSHALL or a restart would.
      const keys = await redis.keys(`b_${id}_*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
      expect((await queue.run(async () => 'after the keys vanished')).value).toBe('after the keys vanished');
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });

  it('leaves room for the next watched call while one is on the wire, with Redis down too', async () => {
    const server = await startRedisServer();
    const queue = new DetectionQueue({
      id: `chat-queue-room-${process.pid}-${Date.now()}`,
      maxConcurrent: 8,
      maxWaitMs: 5_000,
      redisUrl: server.url,
    });
    try {
      for (const down of [false, true]) {
        if (down) await server.stop();
        let release: () => void = () => undefined;
        let started = false;
        const call = queue.run(
          () =>
            new Promise<string>((resolve) => {
              started = true;
              release = () => resolve('watched');
            }),
          { background: true },
        );
        while (!started) await new Promise((r) => setTimeout(r, 10));
        expect(await queue.roomForBackground()).toBe(true);
        release();
        expect((await call).value).toBe('watched');
      }
    } finally {
      await queue.close();
      await server.stop();
    }
  }, 60_000);

  it('says Redis is unreachable when it goes, not when the queue itself is closed', async () => {
    const server = await startRedisServer();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line).msg) });
    const open = (name: string): DetectionQueue =>
      new DetectionQueue({ id: `chat-queue-${name}-${process.pid}`, maxConcurrent: 2, maxWaitMs: 5_000, redisUrl: server.url, logger });
    try {
      const closed = open('closed');
      expect((await closed.run(async () => 'before')).value).toBe('before');
      // close() returns once its connection has ended, so a warning of it would be here by now.
      await closed.close();
      expect(lines.filter((l) => l.includes('unreachable'))).toEqual([]);
      const left = open('left');
      try {
        expect((await left.run(async () => 'before')).value).toBe('before');
        await server.stop();
        await vi.waitFor(() => expect(lines.filter((l) => l.includes('unreachable'))).toHaveLength(1), { timeout: 15_000 });
      } finally {
        await left.close();
      }
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('closes both of its connections without a stray rejection when Redis hangs', async () => {
    // Bottleneck's disconnect of a limiter on a shared connection sends two unsubscribes it never
    // awaits; a connection cut before Redis answers them rejected each where nothing listened (the
    // cause of a failed CI run), and a subscriber left open kept reconnecting after close().
    const server = await startRedisServer();
    try {
      const queue = new DetectionQueue({ id: `chat-queue-close-${process.pid}`, maxConcurrent: 2, maxWaitMs: 5_000, redisUrl: server.url });
      expect((await queue.run(async () => 'before')).value).toBe('before');
      expect(await strayRejectionsOfCloseWhileHung(server, () => queue.close())).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('answers interactive and watched calls while Redis is down, and shares the queue again once it is back', async () => {
    // A private redis-server: stopping the run's shared one would break the other suites.
    const server = await startRedisServer();
    const queue = new DetectionQueue({
      id: `chat-queue-outage-${process.pid}-${Date.now()}`,
      maxConcurrent: 4,
      rate: { max: 50, intervalMs: 1_000 },
      maxWaitMs: 5_000,
      redisUrl: server.url,
    });
    try {
      expect((await queue.run(async () => 'before')).value).toBe('before');
      await server.stop();
      const during = await Promise.allSettled([
        ...Array.from({ length: 5 }, (_, i) => queue.run(async () => `check ${i}`)),
        queue.run(async () => 'watched', { background: true }),
      ]);
      expect(during.map((r) => (r.status === 'fulfilled' ? r.value.value : `failed: ${(r.reason as Error).name}`))).toEqual([
        'check 0',
        'check 1',
        'check 2',
        'check 3',
        'check 4',
        'watched',
      ]);
      expect(await queue.roomForBackground()).toBe(true);
      await server.start();
      const redis = new Redis(server.url);
      try {
        // Back on the shared queue: its keys are written again.
        let shared = false;
        for (let i = 0; i < 100 && !shared; i++) {
          expect((await queue.run(async () => 'after')).value).toBe('after');
          shared = (await redis.keys('b_chat-queue-outage-*')).length > 0;
          if (!shared) await new Promise((r) => setTimeout(r, 100));
        }
        expect(shared).toBe(true);
      } finally {
        redis.disconnect();
      }
    } finally {
      await queue.close();
      await server.stop();
    }
  }, 60_000);
});
