/**
 * The client's request limiter: a bottleneck queue (optionally clustered through Redis) plus a
 * "pause gate" that stops every queued call at once when the server says 429.
 *
 * Why both: bottleneck paces calls to the key's budget (so a burst is smoothed instead of
 * hammering the API), but it has no notion of "the server told us to wait N ms". The gate is checked
 * by each job right before it sends, so a 429 seen by one job holds back every other job of this
 * process and, through a Redis key with a TTL, of every process sharing the budget.
 */
import Bottleneck from 'bottleneck';
import { closeLimiter } from './bottleneck-close.ts';
import { recoverFromRedis7ScriptErrors } from './bottleneck-redis7.ts';
import { ConnectionError, RateLimitError } from './errors.ts';
import type { ClientLogger } from './logger.ts';
import { loadRedisModule, type RedisClient } from './redis.ts';
import { abortReason, sleep } from './timing.ts';

/** How the limiter paces calls. Every field is optional; the defaults suit one key at its limit. */
export interface LimiterOptions {
  /** Calls in flight at once, across every process sharing the budget. Default 8. */
  maxConcurrent?: number;
  /**
   * Requests allowed per `intervalMs` (the key's rate limit). Default: learned from the server's
   * `RateLimit-Limit` header on the first answer; until then only `maxConcurrent` applies.
   */
  max?: number;
  /** Length of the server's rate-limit window in ms. Default 60,000 (the service's default window). */
  intervalMs?: number;
  /**
   * Name of the shared budget in Redis. Default: derived from the base URL and a hash of the API key,
   * so processes using the same key on the same server share one budget and the key itself never
   * reaches Redis.
   */
  id?: string;
  /** Keys of a clustered budget expire after this long without use (ms). Default 10 minutes. */
  idleExpiryMs?: number;
  /** With `redis`: how long a new call waits for an unreachable Redis before failing with ConnectionError (`limiter_unavailable`). Default 10,000 ms. */
  redisWaitMs?: number;
}

export interface ResolvedLimiterConfig {
  maxConcurrent: number;
  max: number | undefined;
  intervalMs: number;
  id: string;
  idleExpiryMs: number;
  redisWaitMs: number;
}

export interface ScheduleOptions {
  /** bottleneck priority, 0 (first) to 9; retries use a lower number so they are not starved. */
  priority: number;
  signal?: AbortSignal | undefined;
  /** Units of the key's budget the call costs on the server (default 1). */
  cost?: number | undefined;
}

const PAUSE_SUFFIX = ':pause';

export class RequestLimiter {
  private readonly bottleneck: Bottleneck | undefined;
  private readonly connection: Bottleneck.IORedisConnection | undefined;
  private readonly redis: RedisClient | undefined;
  private readonly pauseKey: string;
  private pausedUntil = 0;
  private learnedMax: number | undefined;
  private learnedIntervalMs: number | undefined;
  /** Units of jobs sent and not yet answered: the server may not have counted them yet. */
  private inFlightUnits = 0;
  /** Following the server's counter (see `observe`): when its window ends, and the fewest units it said were left. */
  private following = false;
  private windowEndsAt = 0;
  private windowLeft = Number.POSITIVE_INFINITY;
  private refillTimer: NodeJS.Timeout | undefined;
  /** Calls waiting or running: while there are any, the refill timer keeps the process alive (they may wait for it). */
  private pendingCalls = 0;

  constructor(
    private readonly config: ResolvedLimiterConfig | undefined,
    redis: string | RedisClient | undefined,
    private readonly logger: ClientLogger,
    /** A pause longer than this fails the waiting call with RateLimitError instead of holding it. */
    private readonly maxWaitMs: number = Number.POSITIVE_INFINITY,
  ) {
    this.pauseKey = `${config?.id ?? 'textdetect'}${PAUSE_SUFFIX}`;
    if (!config) return;
    const pacing = config.max === undefined ? {} : budgetSettings(config.max, config.intervalMs);
    if (redis !== undefined) {
      // Always work on our own connection: bottleneck quits its clients on disconnect, and a caller's
      // ioredis client must outlive this limiter.
      this.redis = typeof redis === 'string' ? new (loadRedisModule())(redis, { lazyConnect: false }) : redis.duplicate();
      // A lazyConnect client would wait for a first command that bottleneck only sends once ready.
      if (this.redis.status === 'wait') this.redis.connect().catch(() => undefined);
      // ioredis reports every failed reconnect, on each of bottleneck's two connections; one line per
      // 10 s is enough.
      let lastErrorLog = 0;
      const warnRedis = (err: unknown): void => {
        if (Date.now() - lastErrorLog < 10_000) return;
        lastErrorLog = Date.now();
        this.logger.warn({ err: describe(err) }, 'textdetect client: redis error');
      };
      this.redis.on('error', warnRedis);
      // bottleneck requires ioredis itself unless handed the class; from its own folder it may not see the
      // caller's ioredis (an optional peer of the client package), so it gets the class of our connection.
      this.connection = new Bottleneck.IORedisConnection({ client: this.redis, Redis: this.redis.constructor });
      recoverFromRedis7ScriptErrors(this.connection);
      this.connection.on('error', warnRedis);
    }
    this.bottleneck = new Bottleneck({
      id: config.id,
      maxConcurrent: config.maxConcurrent,
      ...pacing,
      ...(this.connection
        ? {
            datastore: 'ioredis',
            connection: this.connection,
            clearDatastore: false,
            timeout: config.idleExpiryMs,
            // Waiting jobs re-check the shared budget on each heartbeat; bottleneck's 5 s default would
            // leave a refilled budget unused for seconds.
            heartbeatInterval: 250,
          }
        : {}),
    } as Bottleneck.ConstructorOptions);
    this.bottleneck.on('error', (err: unknown) => this.logger.warn({ err: describe(err) }, 'textdetect client: limiter error'));
    this.learnedMax = config.max;
  }

  /** True when budgets are shared through Redis. */
  get clustered(): boolean {
    return this.connection !== undefined;
  }

  /** Waits until bottleneck grants a slot and no pause is in force, then runs `fn` in that slot. */
  async schedule<T>(fn: () => Promise<T>, options: ScheduleOptions): Promise<T> {
    const { signal } = options;
    signal?.throwIfAborted();
    // bottleneck waits for Redis without a deadline; a caller deserves an answer instead of a hang.
    if (this.redis && this.redis.status !== 'ready') await this.waitForRedis(signal);
    const units = Math.max(1, Math.floor(options.cost ?? 1));
    const job = async (): Promise<T> => {
      // A job queued before its caller gave up still gets its turn; make it a no-op.
      signal?.throwIfAborted();
      await this.gate(signal);
      this.inFlightUnits += units;
      try {
        return await fn();
      } finally {
        this.inFlightUnits -= units;
      }
    };
    if (!this.bottleneck) return job();
    this.pendingCalls++;
    this.refillTimer?.ref();
    const scheduled = this.scheduleUnits(options, job).finally(() => {
      if (--this.pendingCalls === 0) this.refillTimer?.unref();
    });
    if (!signal) return scheduled;
    // bottleneck cannot remove a queued job, so the caller is released at once and the job later
    // runs as a no-op.
    scheduled.catch(() => undefined);
    return await new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      scheduled.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  /**
   * Queues a call that costs `options.cost` units of the key's budget (an author request: one per
   * 10 messages). The call itself carries the units as its bottleneck weight, so it is sent only
   * when the interval's reservoir still holds all of them, as the server's counter must. minTime
   * ignores weight, so weight-0 jobs queued behind it keep the pacing even, one minTime per unit.
   * A weight cannot exceed maxConcurrent: units beyond it are empty jobs queued ahead (first in,
   * first out within a priority). Never more units than the whole budget, or the call would wait
   * here forever while the server answers it at once with a clear error.
   */
  private scheduleUnits<T>(options: ScheduleOptions, job: () => Promise<T>): Promise<T> {
    const bottleneck = this.bottleneck as Bottleneck;
    const { priority } = options;
    const units = Math.min(Math.max(1, Math.floor(options.cost ?? 1)), this.learnedMax ?? Number.POSITIVE_INFINITY);
    const weight = Math.min(units, this.config?.maxConcurrent ?? units);
    const noop = async (): Promise<undefined> => undefined;
    for (let unit = weight; unit < units; unit++) bottleneck.schedule({ priority }, noop).catch(() => undefined);
    const scheduled = bottleneck.schedule({ priority, weight }, job);
    for (let unit = 1; unit < weight; unit++) bottleneck.schedule({ priority, weight: 0 }, noop).catch(() => undefined);
    return scheduled;
  }

  private async waitForRedis(signal: AbortSignal | undefined): Promise<void> {
    const redis = this.redis as RedisClient;
    const waitMs = this.config?.redisWaitMs ?? 10_000;
    await new Promise<void>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        signal?.removeEventListener('abort', onAbort);
      };
      const onReady = (): void => {
        cleanup();
        resolve();
      };
      const onAbort = (): void => {
        cleanup();
        reject(abortReason(signal as AbortSignal));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new ConnectionError(
            `The shared rate limiter's Redis has been unreachable for ${waitMs / 1000} s (status ${redis.status}); check the redis URL and that Redis is running.`,
            { code: 'limiter_unavailable' },
          ),
        );
      }, waitMs);
      redis.once('ready', onReady);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (redis.status === 'ready') onReady();
    });
  }

  /** Stops every job of every process sharing this budget for `ms`. */
  async pauseFor(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    const until = Date.now() + ms;
    if (until > this.pausedUntil) this.pausedUntil = until;
    if (this.redis && this.clustered) {
      try {
        // Only lengthen an existing pause: two 429s racing must not shorten the wait.
        const current = await this.redis.pttl(this.pauseKey);
        if (current < ms) await this.redis.set(this.pauseKey, String(until), 'PX', Math.ceil(ms));
      } catch (err) {
        this.logger.warn({ err: describe(err) }, 'textdetect client: could not share the pause through redis');
      }
    }
  }

  /** Remaining pause in ms (0 when none), local or shared. */
  async pauseRemaining(): Promise<number> {
    let wait = this.pausedUntil - Date.now();
    if (this.redis && this.clustered) {
      try {
        // PTTL is measured on the Redis clock, so processes with skewed clocks still agree.
        const shared = await this.redis.pttl(this.pauseKey);
        if (shared > wait) wait = shared;
      } catch (err) {
        this.logger.warn({ err: describe(err) }, 'textdetect client: could not read the shared pause from redis');
      }
    }
    return wait > 0 ? wait : 0;
  }

  private async gate(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const wait = await this.pauseRemaining();
      if (wait <= 0) return;
      if (wait > this.maxWaitMs) {
        throw new RateLimitError(
          `The API key's request budget is spent for another ${Math.ceil(wait / 1000)} s (as the server announced); not waiting longer than maxRateLimitWaitMs (${this.maxWaitMs} ms).`,
          { code: 'rate_limited', retryAfterMs: Math.ceil(wait) },
        );
      }
      this.logger.debug({ waitMs: wait }, 'textdetect client: paused by the server rate limit');
      await sleep(wait, signal);
    }
  }

  /**
   * Adopts the key's limit announced by the server (`RateLimit-Limit`, optionally `RateLimit-Policy`
   * `N;w=S`) unless the caller fixed `max` explicitly. Without the server's remaining count the
   * calls are then paced evenly over the window (see `observe` for what happens with it).
   */
  learn(limit: number, windowMs: number | undefined): void {
    if (!this.bottleneck || !this.config || this.config.max !== undefined) return;
    if (!(limit > 0)) return;
    const intervalMs = windowMs ?? this.config.intervalMs;
    if (limit === this.learnedMax && intervalMs === this.learnedIntervalMs) return;
    this.learnedMax = limit;
    this.learnedIntervalMs = intervalMs;
    this.logger.debug({ limit, intervalMs }, 'textdetect client: adopting the key rate limit');
    if (this.following) return;
    this.update(budgetSettings(limit, intervalMs), () => {
      this.learnedMax = undefined;
    });
  }

  /**
   * Follows the server's own counter, from every answer's `RateLimit-Remaining` and `RateLimit-Reset`,
   * when the limit was learned rather than fixed: calls go out as fast as `maxConcurrent` allows while
   * the window has units left, and wait for its reset once they are spent. Pacing one call per
   * `window / limit` instead, 20 lines of `textdetect score` on a fresh 60-per-minute key took 14.9 s
   * while 40 units sat unused (1.1-1.4 s following the counter). Each answer lowers the allowance to what the server says is left, less the units
   * still in flight (sent, maybe not yet counted); the allowance refills when the server's window ends.
   * `ownUnits` are the answered call's own units, which the server has counted.
   */
  observe(
    rate: { limit?: number | undefined; windowMs?: number | undefined; remaining?: number | undefined; resetMs?: number | undefined },
    ownUnits = 1,
  ): void {
    if (rate.limit === undefined) return;
    if (!this.bottleneck || !this.config || this.config.max !== undefined || !(rate.limit > 0)) {
      this.learn(rate.limit, rate.windowMs);
      return;
    }
    if (rate.remaining === undefined || rate.resetMs === undefined || !(rate.remaining >= 0) || !(rate.resetMs >= 0)) {
      this.learn(rate.limit, rate.windowMs);
      return;
    }
    const limit = rate.limit;
    this.learnedMax = limit;
    this.learnedIntervalMs = rate.windowMs ?? this.config.intervalMs;
    this.following = true;
    const now = Date.now();
    // RateLimit-Reset is whole seconds rounded up, so answers of one window give ends up to 1 s apart;
    // a later end by more than that is the next window.
    const endsAt = now + rate.resetMs;
    if (endsAt >= this.windowEndsAt + 1000 || this.windowEndsAt <= now) {
      this.windowEndsAt = endsAt;
      this.windowLeft = rate.remaining;
    } else {
      this.windowEndsAt = Math.min(this.windowEndsAt, endsAt);
      this.windowLeft = Math.min(this.windowLeft, rate.remaining);
    }
    const othersInFlight = Math.max(0, this.inFlightUnits - ownUnits);
    // A spent window leaves one slot open: the server's answer also set the pause (`pauseFor`), and a
    // call must reach the gate to wait it out or, past maxRateLimitWaitMs, fail at once.
    const allowance = this.windowLeft === 0 ? 1 : Math.max(0, this.windowLeft - othersInFlight);
    this.update({ minTime: 0, reservoir: allowance, reservoirRefreshInterval: null, reservoirRefreshAmount: null });
    if (this.refillTimer) clearTimeout(this.refillTimer);
    // A little after the end, so the first call of the refilled allowance lands in the new window.
    this.refillTimer = setTimeout(
      () => {
        this.refillTimer = undefined;
        this.windowEndsAt = 0;
        this.windowLeft = Number.POSITIVE_INFINITY;
        this.update({ reservoir: limit });
      },
      Math.max(0, this.windowEndsAt - now) + 25,
    );
    // An idle client must not hold its process open until the window ends.
    if (this.pendingCalls === 0) this.refillTimer.unref();
  }

  /** updateSettings is async underneath (it writes to Redis when clustered); a failure must not become an unhandled rejection, and the old settings stay in force meanwhile. */
  private update(settings: Bottleneck.ConstructorOptions, onFailure?: () => void): void {
    const bottleneck = this.bottleneck as Bottleneck;
    Promise.resolve(bottleneck.updateSettings(settings) as unknown).catch((err: unknown) => {
      onFailure?.();
      this.logger.warn({ err: describe(err) }, 'textdetect client: could not update the limiter');
    });
  }

  /** Current settings, for diagnostics and tests. */
  describe(): { max: number | undefined; intervalMs: number | undefined; maxConcurrent: number | undefined; clustered: boolean } {
    return {
      max: this.learnedMax,
      intervalMs: this.learnedIntervalMs ?? this.config?.intervalMs,
      maxConcurrent: this.config?.maxConcurrent,
      clustered: this.clustered,
    };
  }

  async close(): Promise<void> {
    if (this.refillTimer) clearTimeout(this.refillTimer);
    if (this.bottleneck) await closeLimiter(this.bottleneck, this.connection, this.redis?.status === 'ready');
  }
}

/**
 * Pace evenly (minTime) and cap each interval (reservoir). Even pacing matters: the service counts a
 * fixed window from its first request, so a burst of `max` at the start of our interval could straddle
 * two of its windows and draw 429s.
 */
function budgetSettings(max: number, intervalMs: number): Bottleneck.ConstructorOptions {
  return {
    minTime: Math.ceil(intervalMs / max),
    reservoir: max,
    reservoirRefreshAmount: max,
    reservoirRefreshInterval: intervalMs,
  };
}

function describe(err: unknown): { message: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}
