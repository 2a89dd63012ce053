/**
 * Rate-limit counters for @fastify/rate-limit: in this process, or in Redis so that every instance
 * shares one limit.
 *
 * The plugin's own `skipOnError` would let every request through while Redis is down (no limit at
 * all), and ioredis by default queues commands while disconnected, so requests would hang until
 * Redis returns. Instead: the Redis client fails fast (no offline queue, no resend of in-flight
 * commands), a circuit breaker sends counting to this process (a per-instance limit) as soon as
 * one command fails or is slow, logging the switch both ways, and shared counting resumes once a
 * background probe finds Redis answering again.
 */
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const require = createRequire(import.meta.url);
// The plugin's stores are plain CommonJS constructors without type declarations.
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache?: number,
) => CounterStore;
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key?: string,
) => CounterStore;

type Callback = (err: Error | null, result?: { current: number; ttl: number }) => void;

interface CounterStore {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read?(key: string, cb: Callback, timeWindow: number, max: number): void;
}

export type CounterBackend = 'memory' | 'redis' | 'memory-fallback';

/** What /readyz and /metrics report: `ok` while counters are shared, `degraded` while counted per instance. */
export type RedisHealth = 'ok' | 'degraded';

export interface CircuitOptions {
  /** A Redis command not answered within this many ms trips the breaker (the request is counted locally at once). Default 30. */
  slowMs?: number;
  /** After a trip, counting stays per instance for at least this long before Redis is trusted again. Default 5000. */
  coolDownMs?: number;
  /** While tripped, Redis is pinged in the background this often. Default 1000. */
  probeIntervalMs?: number;
}

export interface RedisCounters {
  readonly redis: Redis;
  /** A store constructor for the plugin's `store` option. */
  readonly Store: new () => CounterStore & {
    child(): CounterStore;
    read(key: string, cb: Callback, timeWindow: number, max: number): void;
  };
  /** Where the last counter update went. */
  backend(): CounterBackend;
  /** Circuit state, read without touching Redis (so probes answer at once whatever Redis does). */
  health(): RedisHealth;
  close(): Promise<void>;
}

/**
 * Creates the Redis client and a failover store around it, guarded by a circuit breaker.
 *
 * Why a breaker and not just the command timeout: a Redis that hangs (SIGSTOP, a stuck host) keeps
 * its TCP connection, so ioredis stays "ready" and every request would wait out the timeout for
 * the whole outage. One slow or failed command trips the breaker; from then on requests never
 * touch Redis, a background PING tells when it answers again, and shared counting resumes only
 * after a cool-down so a flapping Redis does not flip the limit back and forth on every request.
 */
export function createRedisCounters(url: string, prefix: string, log: Logger, circuit: CircuitOptions = {}): RedisCounters {
  const slowMs = circuit.slowMs ?? 30;
  const coolDownMs = circuit.coolDownMs ?? 5000;
  const probeIntervalMs = circuit.probeIntervalMs ?? Math.max(50, Math.min(1000, coolDownMs));
  const redis = new Redis(url, {
    // Commands issued while disconnected fail at once instead of waiting for a reconnect.
    enableOfflineQueue: false,
    // INCR is not idempotent: re-sending an in-flight command after a reconnect could count twice.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    // Backstop that releases commands stuck on a hung server; requests stop waiting after slowMs.
    commandTimeout: 1000,
    connectTimeout: 1000,
    // Reconnect forever, backing off to one attempt per second.
    retryStrategy: (times: number) => Math.min(times * 100, 1000),
    lazyConnect: false,
  });

  let backend: CounterBackend = 'redis';
  // Until the first connection, Redis is not "failing", just not there yet: count locally without
  // tripping, so a request racing the start does not cost a whole cool-down of per-instance limits.
  let everReady = false;
  let tripped = false;
  let trippedUntil = 0;
  let probeTimer: NodeJS.Timeout | undefined;
  let probing = false;
  let closed = false;
  let lastErrorLog = 0;
  redis.on('error', (err: Error) => {
    // ioredis emits an error per failed reconnect attempt; one line per 10 s is enough.
    const now = Date.now();
    if (now - lastErrorLog > 10_000) {
      lastErrorLog = now;
      log.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'redis connection error');
    }
  });
  // A dropped connection trips the breaker before any request has to find out the slow way.
  redis.on('close', () => {
    if (!closed && everReady) trip('connection closed');
  });
  redis.on('ready', () => {
    everReady = true;
  });

  const local = new LocalStore(false, false, 10_000);
  const remote = new RedisStore(false, false, redis, prefix);

  function trip(reason: string): void {
    trippedUntil = Date.now() + coolDownMs;
    if (tripped) return;
    tripped = true;
    backend = 'memory-fallback';
    log.warn({ reason, cool_down_ms: coolDownMs }, 'redis unavailable: rate limits are counted per instance until it returns');
    probeTimer = setInterval(probe, probeIntervalMs);
    probeTimer.unref();
  }

  function probe(): void {
    if (probing || closed || redis.status !== 'ready') return;
    probing = true;
    const started = performance.now();
    redis.ping().then(
      () => {
        probing = false;
        if (performance.now() - started > slowMs) {
          trippedUntil = Math.max(trippedUntil, Date.now() + coolDownMs);
          return;
        }
        if (Date.now() >= trippedUntil) reset();
      },
      () => {
        probing = false;
        trippedUntil = Date.now() + coolDownMs;
      },
    );
  }

  function reset(): void {
    if (!tripped || closed) return;
    tripped = false;
    backend = 'redis';
    clearInterval(probeTimer);
    probeTimer = undefined;
    log.info('redis is back: rate-limit counters are shared again');
  }

  /** Runs one store call against Redis, or locally when the breaker is open or Redis is slow to answer. */
  function guarded(op: 'incr' | 'read', key: string, cb: Callback, timeWindow: number, max: number): void {
    const fallback = (): void => (op === 'incr' ? local.incr(key, cb, timeWindow, max) : local.read!(key, cb, timeWindow, max));
    if (tripped || redis.status !== 'ready') {
      if (!tripped && everReady) trip(`redis status ${redis.status}`);
      fallback();
      return;
    }
    let settled = false;
    // Reads only serve probes and the budget headers of unlimited paths: they get a shorter leash so
    // /readyz answers quickly even on the first request after Redis hangs.
    const deadlineMs = op === 'read' ? Math.min(slowMs, 10) : slowMs;
    const timer = setTimeout(() => {
      // A timer that fires late (the event loop was busy scoring) runs before the I/O that may
      // already hold Redis' answer: let that I/O run first, so a busy process is not mistaken for a
      // slow Redis.
      setImmediate(() => {
        if (settled) return;
        settled = true;
        trip(`command timed out after ${deadlineMs} ms`);
        fallback();
      });
    }, deadlineMs);
    const call = op === 'incr' ? remote.incr.bind(remote) : remote.read!.bind(remote);
    call(
      key,
      (err, result) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err || !result) {
          trip(err?.message ?? 'no result');
          fallback();
          return;
        }
        cb(null, result);
      },
      timeWindow,
      max,
    );
  }

  class FailoverStore implements CounterStore {
    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      guarded('incr', key, cb, timeWindow, max);
    }

    /** Reads a counter without counting (for answers that are not limited but report the budget). */
    read(key: string, cb: Callback, timeWindow: number, max: number): void {
      guarded('read', key, cb, timeWindow, max);
    }

    child(): CounterStore {
      return this;
    }
  }

  return {
    redis,
    Store: FailoverStore,
    backend: () => backend,
    health: () => (tripped || redis.status !== 'ready' ? 'degraded' : 'ok'),
    async close() {
      closed = true;
      clearInterval(probeTimer);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export { LocalStore };
