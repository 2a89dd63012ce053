/**
 * Rate-limit counters for @fastify/rate-limit: in this process, or in Redis so that every instance
 * shares one limit.
 *
 * The plugin's own `skipOnError` would let every request through while Redis is down (no limit at
 * all), and ioredis by default queues commands while disconnected, so requests would hang until
 * Redis returns. Instead: the Redis client fails fast (no offline queue, no resend of in-flight
 * commands), a circuit breaker sends counting to this process after consecutive failures, logging
 * the switch both ways, and shared counting resumes once a background probe finds Redis answering
 * again. Counting in this process is bounded (each instance allows its share of what was left of a
 * key's budget), and what was counted here is added to Redis when it is back, so a switchover does
 * not hand out a fresh budget.
 */
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const require = createRequire(import.meta.url);
// The plugin's store is a plain CommonJS constructor without type declarations.
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
  /**
   * A Redis command not answered within this many ms counts as failed; the request waits no longer
   * and is counted in this process. Default 250: Redis answers a healthy PING in well under 10 ms,
   * but on a loaded machine answers of 100–150 ms were measured.
   */
  slowMs?: number;
  /** Consecutive failures (each from a command sent after the previous failure) that trip the breaker. Default 3. */
  failuresToTrip?: number;
  /** After a trip, counting stays per instance for at least this long before Redis is trusted again. Default 5000. */
  coolDownMs?: number;
  /** While tripped, Redis is pinged in the background this often. Default 1000. */
  probeIntervalMs?: number;
  /**
   * Service instances sharing the counters. While Redis is unavailable each instance allows
   * `ceil(left / instances)` more requests per key, `left` being the key's budget minus the count
   * Redis last reported. Default 1.
   */
  instances?: number;
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

/** The budget lookups of the probes wait at most this long for Redis, so /readyz answers at once. */
const READ_LEASH_MS = 10;
/** Keys remembered for the fallback (last count seen in Redis, counts made here); oldest dropped first. */
const MAX_TRACKED_KEYS = 10_000;

/** Adds what one instance counted while Redis was unavailable; `max(current, base)` covers a Redis that restarted empty. */
const RECONCILE_LUA = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local value = math.max(current, tonumber(ARGV[1])) + tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then ttl = tonumber(ARGV[3]) end
redis.call('SET', KEYS[1], value, 'PX', ttl)
return {value, ttl}
`;

/** What Redis last said about a key. */
interface SeenCount {
  count: number;
  /** Date.now() at which Redis' window for the key ends. */
  windowEnd: number;
}

/** What this instance counted for a key without Redis, in one window. */
interface LocalCount {
  windowEnd: number;
  /** Counted here and not in Redis (the command failed or was never sent): added to Redis on recovery. */
  pending: number;
  /** Counted here because Redis was slow; its command may still land (then it is in Redis) or fail (then pending). */
  inFlight: number;
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_TRACKED_KEYS) map.delete(map.keys().next().value!);
}

/**
 * Creates the Redis client and a failover store around it, guarded by a circuit breaker.
 *
 * Why a breaker and not just the command timeout: a Redis that hangs (SIGSTOP, a stuck host) keeps
 * its TCP connection, so ioredis stays "ready" and every request would wait out the timeout for
 * the whole outage. After `failuresToTrip` consecutive failed or slow commands the breaker trips;
 * from then on requests never touch Redis, a background PING tells when it answers again, and
 * shared counting resumes only after a cool-down so a flapping Redis does not flip the limit back
 * and forth on every request.
 *
 * "Consecutive" counts rounds, not commands: commands sent at the same time that all miss the
 * deadline (one stall of a loaded machine) are one failure; the next failure must come from a
 * command sent after it. Any answer from Redis resets the count.
 */
export function createRedisCounters(url: string, prefix: string, log: Logger, circuit: CircuitOptions = {}): RedisCounters {
  const slowMs = circuit.slowMs ?? 250;
  const failuresToTrip = Math.max(1, circuit.failuresToTrip ?? 3);
  const coolDownMs = circuit.coolDownMs ?? 5000;
  const probeIntervalMs = circuit.probeIntervalMs ?? Math.max(50, Math.min(1000, coolDownMs));
  const instances = Math.max(1, circuit.instances ?? 1);
  const redis = new Redis(url, {
    // Commands issued while disconnected fail at once instead of waiting for a reconnect.
    enableOfflineQueue: false,
    // INCR is not idempotent: re-sending an in-flight command after a reconnect could count twice.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    // Backstop that releases commands stuck on a hung server; requests stop waiting after slowMs.
    commandTimeout: Math.max(1000, slowMs * 4),
    connectTimeout: 1000,
    // Reconnect forever, backing off to one attempt per second.
    retryStrategy: (times: number) => Math.min(times * 100, 1000),
    lazyConnect: false,
  });
  redis.defineCommand('textdetectReconcile', { numberOfKeys: 1, lua: RECONCILE_LUA });
  const reconcileCommand = (key: string, base: number, add: number, ttl: number): Promise<[number, number]> =>
    (redis as unknown as { textdetectReconcile(...args: unknown[]): Promise<[number, number]> }).textdetectReconcile(key, base, add, ttl);

  let backend: CounterBackend = 'redis';
  // Until the first connection, Redis is not "failing", just not there yet: count locally without
  // tripping, so a request racing the start does not cost a whole cool-down of per-instance limits.
  let everReady = false;
  let tripped = false;
  let trippedUntil = 0;
  let probeTimer: NodeJS.Timeout | undefined;
  let probing = false;
  let resuming = false;
  let flushing: Promise<number> | undefined;
  let closed = false;
  let lastErrorLog = 0;
  /** Some count made here has not reached Redis yet. */
  let hasPending = false;
  let failureStreak = 0;
  let lastFailureAt = Number.NEGATIVE_INFINITY;
  const seen = new Map<string, SeenCount>();
  const counted = new Map<string, LocalCount>();

  redis.on('error', (err: Error) => {
    // ioredis emits an error per failed reconnect attempt; one line per 10 s is enough.
    const now = Date.now();
    if (now - lastErrorLog > 10_000) {
      lastErrorLog = now;
      log.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'redis connection error');
    }
  });
  // A dropped connection trips the breaker before any request has to find out the slow way: every
  // command would fail at once until the reconnect anyway.
  redis.on('close', () => {
    if (!closed && everReady) trip('connection closed');
  });
  redis.on('ready', () => {
    everReady = true;
    // Counts made before the first connection go to Redis now.
    if (!tripped) flushInBackground();
  });

  function trip(reason: string): void {
    trippedUntil = Date.now() + coolDownMs;
    if (tripped) return;
    tripped = true;
    backend = 'memory-fallback';
    log.warn({ reason, cool_down_ms: coolDownMs, instances }, 'redis unavailable: rate limits are counted per instance until it returns');
    probeTimer = setInterval(probe, probeIntervalMs);
    probeTimer.unref();
  }

  function succeeded(): void {
    failureStreak = 0;
  }

  function failed(sentAt: number, reason: string): void {
    // A command sent before the last counted failure failed in the same stall: not a new failure.
    if (sentAt < lastFailureAt) return;
    failureStreak++;
    lastFailureAt = performance.now();
    if (failureStreak >= failuresToTrip) trip(reason);
  }

  function probe(): void {
    if (probing || resuming || closed || redis.status !== 'ready') return;
    probing = true;
    const started = performance.now();
    redis.ping().then(
      () => {
        probing = false;
        if (performance.now() - started > slowMs) {
          trippedUntil = Math.max(trippedUntil, Date.now() + coolDownMs);
          return;
        }
        if (Date.now() >= trippedUntil) void resume();
      },
      () => {
        probing = false;
        trippedUntil = Date.now() + coolDownMs;
      },
    );
  }

  /** Adds the counts made here to Redis, then shares counting again; stays tripped if Redis fails meanwhile. */
  async function resume(): Promise<void> {
    if (!tripped || closed || resuming) return;
    resuming = true;
    try {
      // Requests keep being counted here while the first pass runs; a second pass catches them.
      for (let pass = 0; pass < 3 && (await flush()) > 0; pass++);
      if (closed || !tripped) return;
      tripped = false;
      failureStreak = 0;
      backend = 'redis';
      clearInterval(probeTimer);
      probeTimer = undefined;
      log.info('redis is back: rate-limit counters are shared again');
      flushInBackground();
    } catch (err) {
      trippedUntil = Date.now() + coolDownMs;
      log.warn(
        { err: { message: (err as Error).message } },
        'redis answered a probe but not the reconciliation; still counting per instance',
      );
    } finally {
      resuming = false;
    }
  }

  /** A flush nobody waits for (counts left from single failures while the breaker stayed closed): retried after the next good answer. */
  function flushInBackground(): void {
    if (flushing) return;
    hasPending = false;
    flush().catch(() => {
      hasPending = true;
    });
  }

  /** Sends every pending local count to Redis; resolves with how many keys had some. Throws if Redis fails. */
  function flush(): Promise<number> {
    flushing ??= (async () => {
      const now = Date.now();
      const batch: Array<[string, LocalCount, number]> = [];
      for (const [key, local] of counted) {
        if (local.windowEnd <= now) {
          if (local.inFlight === 0) counted.delete(key);
        } else if (local.pending > 0) {
          batch.push([key, local, local.pending]);
        }
      }
      await Promise.all(
        batch.map(async ([key, local, pending]) => {
          const known = seen.get(key);
          const base = known && known.windowEnd > Date.now() ? known.count : 0;
          const [value, ttl] = await reconcileCommand(prefix + key, base, pending, Math.max(1, local.windowEnd - Date.now()));
          local.pending -= pending;
          remember(seen, key, { count: Number(value), windowEnd: Date.now() + Number(ttl) });
        }),
      );
      return batch.length;
    })().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  function localCount(key: string, timeWindow: number): LocalCount {
    const now = Date.now();
    let local = counted.get(key);
    if (!local || local.windowEnd <= now) {
      const known = seen.get(key);
      // Same window as Redis' when it is known, so the share is of what that window has left.
      local = { windowEnd: known && known.windowEnd > now ? known.windowEnd : now + timeWindow, pending: 0, inFlight: 0 };
      remember(counted, key, local);
    }
    return local;
  }

  /**
   * Counts (or, for `read`, looks up) a request in this process. The answer is shaped for the
   * plugin, which allows a request while `current <= max`: this instance allows its share of what
   * was left of the key's budget when Redis last reported it.
   */
  function countHere(
    op: 'incr' | 'read',
    key: string,
    timeWindow: number,
    max: number,
    state: 'pending' | 'inFlight',
  ): { current: number; ttl: number } {
    const local = localCount(key, timeWindow);
    if (op === 'incr') local[state]++;
    if (op === 'incr' && state === 'pending') hasPending = true;
    const now = Date.now();
    const known = seen.get(key);
    const base = known && known.windowEnd > now ? known.count : 0;
    const share = Math.ceil(Math.max(0, max - base) / instances);
    return { current: max - share + local.pending + local.inFlight, ttl: Math.max(0, local.windowEnd - now) };
  }

  /** Runs one store call against Redis, or counts here when the breaker is open or Redis is slow to answer. */
  function guarded(op: 'incr' | 'read', key: string, cb: Callback, timeWindow: number, max: number): void {
    if (tripped || redis.status !== 'ready') {
      if (!tripped && everReady) trip(`redis status ${redis.status}`);
      cb(null, countHere(op, key, timeWindow, max, 'pending'));
      return;
    }
    const sentAt = performance.now();
    let answeredHere = false;
    let settled = false;
    let judged = false;
    // A timer that fires late (the event loop was busy scoring) runs before the I/O that may
    // already hold Redis' answer: let that I/O run first, so a busy process is not mistaken for a
    // slow Redis.
    const after = (ms: number, fn: () => void) => setTimeout(() => setImmediate(fn), ms);
    // Reads only serve probes and the budget headers of unlimited paths: they wait less, so /readyz
    // answers quickly even on the first request after Redis hangs.
    const leashMs = op === 'read' ? Math.min(slowMs, READ_LEASH_MS) : slowMs;
    const leash = after(leashMs, () => {
      if (settled || answeredHere) return;
      answeredHere = true;
      cb(null, countHere(op, key, timeWindow, max, 'inFlight'));
    });
    const deadline = after(slowMs, () => {
      if (settled || judged) return;
      judged = true;
      failed(sentAt, `command timed out after ${slowMs} ms`);
    });
    const call = op === 'incr' ? remote.incr.bind(remote) : remote.read!.bind(remote);
    call(
      key,
      (err, result) => {
        if (settled) return;
        settled = true;
        clearTimeout(leash);
        clearTimeout(deadline);
        if (err || !result) {
          if (!judged) failed(sentAt, err?.message ?? 'no result');
          if (!answeredHere) cb(null, countHere(op, key, timeWindow, max, 'pending'));
          else if (op === 'incr') {
            // Counted here as in flight; it never reached Redis after all.
            const local = localCount(key, timeWindow);
            local.inFlight = Math.max(0, local.inFlight - 1);
            local.pending++;
            hasPending = true;
          }
          return;
        }
        succeeded();
        if (hasPending && !tripped) flushInBackground();
        remember(seen, key, { count: result.current, windowEnd: Date.now() + result.ttl });
        if (!answeredHere) {
          cb(null, result);
          return;
        }
        if (op === 'incr') {
          // Counted here while Redis was slow, and in Redis too: Redis' count now includes it.
          const local = counted.get(key);
          if (local) local.inFlight = Math.max(0, local.inFlight - 1);
        }
      },
      timeWindow,
      max,
    );
  }

  const remote = new RedisStore(false, false, redis, prefix);

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
