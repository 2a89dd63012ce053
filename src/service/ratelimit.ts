/**
 * Rate-limit counters in Redis, so that every instance shares one limit (counters.ts has the
 * in-process ones). A call's units are checked and charged in one Lua script (CHARGE_LUA).
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
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CHARGE_LUA } from './counters.ts';
import type { Charge, CounterStore } from './counters.ts';

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
  /** Check-and-charge against Redis, or in this process while Redis is unavailable. */
  readonly store: CounterStore;
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
  // Scripts run with EVALSHA, falling back to EVAL once when Redis does not know the script yet.
  const reconcileCommand = async (key: string, base: number, add: number, ttl: number): Promise<[number, number]> =>
    (await redis.eval(RECONCILE_LUA, 1, key, base, add, ttl)) as [number, number];
  const chargeCommand = async (
    key: string,
    cost: number,
    max: number,
    windowMs: number,
    always: boolean,
  ): Promise<[number, number, number]> =>
    (await redis.eval(CHARGE_LUA, 1, key, cost, max, windowMs, always ? 1 : 0)) as [number, number, number];

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
   * Checks and charges `cost` units in this process (`cost` 0 reads): this instance allows its
   * share of what was left of the key's budget when Redis last reported it. Units charged here are
   * `pending` (to be added to Redis) or `inFlight` (Redis was slow; its own charge may still land).
   */
  function chargeHere(key: string, cost: number, timeWindow: number, max: number, always: boolean, state: 'pending' | 'inFlight'): Charge {
    const local = localCount(key, timeWindow);
    const now = Date.now();
    const known = seen.get(key);
    const base = known && known.windowEnd > now ? known.count : 0;
    const share = Math.ceil(Math.max(0, max - base) / instances);
    const current = max - share + local.pending + local.inFlight;
    const ttlMs = Math.max(0, local.windowEnd - now);
    const fits = current + cost <= max;
    if (cost <= 0 || (!fits && !always)) return { charged: false, current, ttlMs };
    local[state] += cost;
    if (state === 'pending') hasPending = true;
    return { charged: fits, current: current + cost, ttlMs };
  }

  /** Runs one charge against Redis, or charges here when the breaker is open or Redis is slow to answer. */
  function guarded(key: string, cost: number, timeWindow: number, max: number, always: boolean): Promise<Charge> {
    if (tripped || redis.status !== 'ready') {
      if (!tripped && everReady) trip(`redis status ${redis.status}`);
      return Promise.resolve(chargeHere(key, cost, timeWindow, max, always, 'pending'));
    }
    return new Promise<Charge>((resolve) => {
      const sentAt = performance.now();
      let here: Charge | undefined;
      let settled = false;
      let judged = false;
      // A timer that fires late (the event loop was busy scoring) runs before the I/O that may
      // already hold Redis' answer: let that I/O run first, so a busy process is not mistaken for a
      // slow Redis.
      const after = (ms: number, fn: () => void) => setTimeout(() => setImmediate(fn), ms);
      // Reads only serve probes and the budget headers of unlimited paths: they wait less, so /readyz
      // answers quickly even on the first request after Redis hangs.
      const leashMs = cost <= 0 ? Math.min(slowMs, READ_LEASH_MS) : slowMs;
      const leash = after(leashMs, () => {
        if (settled || here) return;
        here = chargeHere(key, cost, timeWindow, max, always, 'inFlight');
        resolve(here);
      });
      const deadline = after(slowMs, () => {
        if (settled || judged) return;
        judged = true;
        failed(sentAt, `command timed out after ${slowMs} ms`);
      });
      const settle = () => {
        settled = true;
        clearTimeout(leash);
        clearTimeout(deadline);
      };
      chargeCommand(prefix + key, cost, max, timeWindow, always).then(
        ([count, ttl, charged]) => {
          if (settled) return;
          settle();
          succeeded();
          if (hasPending && !tripped) flushInBackground();
          const current = Number(count);
          const ttlMs = Number(ttl);
          if (ttlMs > 0) remember(seen, key, { count: current, windowEnd: Date.now() + ttlMs });
          if (!here) {
            resolve({ charged: Number(charged) === 1, current, ttlMs });
            return;
          }
          // Charged here while Redis was slow: Redis has now charged the units too, or refused them.
          const local = counted.get(key);
          if (local && (here.charged || (always && cost > 0))) local.inFlight = Math.max(0, local.inFlight - cost);
        },
        (err: Error) => {
          if (settled) return;
          settle();
          if (!judged) failed(sentAt, err.message);
          if (!here) {
            resolve(chargeHere(key, cost, timeWindow, max, always, 'pending'));
            return;
          }
          if (here.charged || (always && cost > 0)) {
            // Charged here as in flight; it never reached Redis after all.
            const local = localCount(key, timeWindow);
            local.inFlight = Math.max(0, local.inFlight - cost);
            local.pending += cost;
            hasPending = true;
          }
        },
      );
    });
  }

  return {
    redis,
    store: { charge: (key, cost, max, windowMs, always = false) => guarded(key, cost, windowMs, max, always) },
    backend: () => backend,
    health: () => (tripped || redis.status !== 'ready' ? 'degraded' : 'ok'),
    async close() {
      closed = true;
      clearInterval(probeTimer);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
