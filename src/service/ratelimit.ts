/**
 * Rate-limit counters for @fastify/rate-limit: in this process, or in Redis so that every instance
 * shares one limit.
 *
 * The plugin's own `skipOnError` would let every request through while Redis is down (no limit at
 * all), and ioredis by default queues commands while disconnected, so requests would hang until
 * Redis returns. Instead: the Redis client fails fast (no offline queue, no resend of in-flight
 * commands, a short command timeout), and while Redis cannot answer the store counts in this
 * process (a per-instance limit), logging the switch both ways. ioredis keeps reconnecting in the
 * background, so shared counting resumes as soon as Redis is back.
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

export interface RedisCounters {
  readonly redis: Redis;
  /** A store constructor for the plugin's `store` option. */
  readonly Store: new () => CounterStore & { child(): CounterStore; read(key: string, cb: Callback, timeWindow: number, max: number): void };
  /** Where the last counter update went. */
  backend(): CounterBackend;
  close(): Promise<void>;
}

/** Creates the Redis client and a failover store around it. */
export function createRedisCounters(url: string, prefix: string, log: Logger): RedisCounters {
  const redis = new Redis(url, {
    // Commands issued while disconnected fail at once instead of waiting for a reconnect.
    enableOfflineQueue: false,
    // INCR is not idempotent: re-sending an in-flight command after a reconnect could count twice.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    // A Redis that accepts connections but does not answer must not stall requests either.
    commandTimeout: 250,
    connectTimeout: 1000,
    // Reconnect forever, backing off to one attempt per second.
    retryStrategy: (times: number) => Math.min(times * 100, 1000),
    lazyConnect: false,
  });

  let backend: CounterBackend = 'redis';
  let lastErrorLog = 0;
  redis.on('error', (err: Error) => {
    // ioredis emits an error per failed reconnect attempt; one line per 10 s is enough.
    const now = Date.now();
    if (now - lastErrorLog > 10_000) {
      lastErrorLog = now;
      log.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'redis connection error');
    }
  });
  redis.on('ready', () => {
    if (backend === 'memory-fallback') {
      log.info('redis is back: rate-limit counters are shared again');
    }
  });

  const local = new LocalStore(false, false, 10_000);
  const remote = new RedisStore(false, false, redis, prefix);

  const useLocal = (reason: string) => {
    if (backend !== 'memory-fallback') {
      backend = 'memory-fallback';
      log.warn({ reason }, 'redis unavailable: rate limits are counted per instance until it returns');
    }
  };

  class FailoverStore implements CounterStore {
    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready') {
        useLocal(`redis status ${redis.status}`);
        local.incr(key, cb, timeWindow, max);
        return;
      }
      remote.incr(
        key,
        (err, result) => {
          if (err || !result) {
            useLocal(err?.message ?? 'no result');
            local.incr(key, cb, timeWindow, max);
            return;
          }
          if (backend !== 'redis') backend = 'redis';
          cb(null, result);
        },
        timeWindow,
        max,
      );
    }

    /** Reads a counter without counting (for answers that are not limited but report the budget). */
    read(key: string, cb: Callback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready' || !remote.read) {
        local.read!(key, cb, timeWindow, max);
        return;
      }
      remote.read(key, (err, result) => (err || !result ? local.read!(key, cb, timeWindow, max) : cb(null, result)), timeWindow, max);
    }

    child(): CounterStore {
      return this;
    }
  }

  return {
    redis,
    Store: FailoverStore,
    backend: () => backend,
    async close() {
      redis.removeAllListeners('ready');
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

export { LocalStore };
