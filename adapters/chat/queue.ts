/**
 * The queue in front of every detection call the bots make. A burst of moderators waits its turn
 * instead of being refused: calls start in the order they were asked, paced to the API key's budget,
 * and only a call still waiting after `maxWaitMs` is given up with "try again in N s".
 *
 * With Redis, every bot instance on the same URL and key shares one bottleneck budget, one list of
 * waiting checks (so "position N" counts the checks of all instances) and one 429 pause. Redis holds
 * only what may be lost: while it is unreachable each instance queues in its own memory, with the
 * key's whole budget, and goes back to the shared queue once Redis answers again.
 */
import { randomUUID } from 'node:crypto';
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeLimiter } from '../../src/client/bottleneck-close.ts';
import { recoverFromRedis7ScriptErrors } from '../../src/client/bottleneck-redis7.ts';
import { RateLimitError } from '../../src/client/errors.ts';
import { bounded, sleep } from '../../src/client/timing.ts';

export interface QueueRate {
  /** Calls allowed per `intervalMs` (the key's rate limit). */
  max: number;
  intervalMs: number;
}

export interface DetectionQueueOptions {
  /** Name of the shared budget; instances with the same id (and Redis) share it. */
  id: string;
  /** Calls on the wire at once, across instances. */
  maxConcurrent: number;
  /** The key's budget; without it calls are paced by the service's 429 answers alone. */
  rate?: QueueRate | undefined;
  /** Longest a check waits for its turn before the moderator is told to try again. */
  maxWaitMs: number;
  redisUrl?: string | undefined;
  logger?: Logger | undefined;
  /** A check still waiting after this long is announced as queued (so instant checks show no "queued" flicker). */
  announceAfterMs?: number | undefined;
  /** While a check waits, its position is re-announced this often when it changed. */
  reannounceEveryMs?: number | undefined;
}

export interface QueueCallOptions {
  /** Told the check's position (1 = next) while it waits; errors thrown here are ignored. */
  onQueued?: ((position: number) => unknown) | undefined;
  /** Told each time the check goes to the service: its first attempt, and each try after a pause. */
  onCall?: (() => void) | undefined;
  /**
   * Told when a pause holds the check back (the service answered 429, here or in another instance)
   * before it goes to the service (again): it is waiting in the queue, not at the service.
   */
  onPause?: ((ms: number) => void) | undefined;
  signal?: AbortSignal | undefined;
  /**
   * A watched channel's message rather than a moderator's check (adapters/chat/watch/): it starts
   * only after every waiting interactive check, is not counted in their positions, and has no wait
   * bound, since it is kept in the store and nobody is looking at a spinner for it.
   */
  background?: boolean | undefined;
  /** Units of the key's budget the call costs (a member check of 50 messages costs 5); default 1. */
  weight?: number | undefined;
}

/** ioredis states of a connection that was lost and is not back yet. */
const REDIS_LOST = new Set(['reconnecting', 'close', 'end']);

/** Bottleneck runs lower numbers first; interactive checks keep its default (5). */
const BACKGROUND_PRIORITY = 9;
/** Share of the key's budget a background call leaves to interactive checks. */
const INTERACTIVE_RESERVE = 0.25;
/** A pause ending within this of the one announced is that pause (timers and Redis round to ms). */
const PAUSE_SLACK_MS = 50;

export interface QueuedResult<T> {
  value: T;
  /** Time from asking to starting, in ms (pauses after a 429 included). */
  waitedMs: number;
}

/** Thrown when a check waited `maxWaitMs` without its turn: the moderator's "try again in N s". */
export class QueueWaitExceededError extends RateLimitError {
  override name = 'QueueWaitExceededError';
}

interface Ticket {
  id: string;
  askedAt: number;
  started: boolean;
  abandoned: boolean;
}

export class DetectionQueue {
  readonly #options: Required<Pick<DetectionQueueOptions, 'maxWaitMs' | 'announceAfterMs' | 'reannounceEveryMs'>> & DetectionQueueOptions;
  readonly #bottleneck: Bottleneck;
  /** With Redis: the in-process queue used while Redis is unreachable. */
  readonly #local: Bottleneck | undefined;
  readonly #redis: Redis | undefined;
  #redisDownSince: number | undefined;
  /** Tickets waiting in the shared queue, each with what moves it to this process's queue when Redis goes. */
  readonly #movers = new Map<Ticket, () => void>();
  readonly #connection: Bottleneck.IORedisConnection | undefined;
  /** Waiting tickets of this process, in order; the shared list lives in Redis when clustered. */
  readonly #waiting: Ticket[] = [];
  /**
   * Background calls scheduled here and not started yet. With pacing (minTime), Bottleneck gives a
   * call its start time when it is scheduled, and a later interactive check cannot overtake it, so
   * at most one background call may be waiting for its start at a time.
   */
  #backgroundWaiting = 0;
  #pausedUntil = 0;
  #closing = false;

  constructor(options: DetectionQueueOptions) {
    this.#options = { announceAfterMs: 300, reannounceEveryMs: 2_000, ...options };
    const warn = (err: unknown): void =>
      options.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'detection queue error');
    if (options.redisUrl) {
      this.#redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
      let lastLogged = 0;
      this.#redis.on('error', (err: unknown) => {
        if (Date.now() - lastLogged < 10_000) return;
        lastLogged = Date.now();
        warn(err);
      });
      this.#connection = new Bottleneck.IORedisConnection({ client: this.#redis });
      // Without it the shared queue fails every check once its keys vanish (FLUSHALL, a Redis restart).
      recoverFromRedis7ScriptErrors(this.#connection);
      this.#connection.on('error', warn);
    }
    const rate = options.rate;
    const limits: Bottleneck.ConstructorOptions = {
      id: options.id,
      maxConcurrent: options.maxConcurrent,
      ...(rate
        ? {
            // Even pacing: the service counts a fixed window, and a burst of `max` at the start of
            // ours could straddle two of its windows.
            minTime: Math.ceil(rate.intervalMs / rate.max),
            reservoir: rate.max,
            reservoirRefreshAmount: rate.max,
            reservoirRefreshInterval: rate.intervalMs,
          }
        : {}),
    };
    this.#bottleneck = new Bottleneck({
      ...limits,
      ...(this.#connection
        ? { datastore: 'ioredis', connection: this.#connection, clearDatastore: false, timeout: 600_000, heartbeatInterval: 250 }
        : {}),
    } as Bottleneck.ConstructorOptions);
    this.#bottleneck.on('error', warn);
    if (this.#redis) {
      this.#local = new Bottleneck(limits);
      this.#local.on('error', warn);
      this.#redis.on('close', () => {
        // close() ends the connection too, and that is no outage.
        if (this.#closing || this.#redisDownSince !== undefined) return;
        this.#redisDownSince = Date.now();
        for (const move of [...this.#movers.values()]) move();
        options.logger?.warn('the shared detection queue is unreachable (Redis); checks queue in this process until it answers');
      });
      this.#redis.on('ready', () => {
        if (this.#redisDownSince === undefined) return;
        options.logger?.info({ downMs: Date.now() - this.#redisDownSince }, 'the shared detection queue (Redis) answers again');
        this.#redisDownSince = undefined;
      });
    }
  }

  /**
   * Redis unless it is known to be unreachable (its connection lost and not back yet): a check never
   * waits on a reconnect. Its first connection is waited for, so instances share the queue from the start.
   */
  get #shared(): Redis | undefined {
    return this.#redis && !REDIS_LOST.has(this.#redis.status) ? this.#redis : undefined;
  }

  /** The queue a call joins now: the shared one, or this process's own while Redis is unreachable. */
  get #limiter(): Bottleneck {
    return this.#local && !this.#shared ? this.#local : this.#bottleneck;
  }

  get clustered(): boolean {
    return this.#connection !== undefined;
  }

  /**
   * Runs `call` when its turn comes. A RateLimitError from the call (the service said 429) pauses
   * every queued check, here and in the other instances, and the call is tried again after the
   * pause as long as the wait stays within `maxWaitMs`.
   */
  async run<T>(call: () => Promise<T>, options: QueueCallOptions = {}): Promise<QueuedResult<T>> {
    if (options.background) return this.#runBackground(call, options.signal, this.#weightOf(options.weight));
    const ticket: Ticket = { id: randomUUID(), askedAt: Date.now(), started: false, abandoned: false };
    await this.#enter(ticket);
    const announcer = this.#announce(ticket, options.onQueued);
    let giveUp: NodeJS.Timeout | undefined;
    try {
      const scheduled = this.#schedule(ticket, { weight: this.#weightOf(options.weight) }, async () => {
        await this.#leave(ticket);
        return this.#attempt(call, ticket, options, this.#options.maxWaitMs);
      });
      scheduled.catch(() => undefined);
      const timedOut = new Promise<never>((_, reject) => {
        giveUp = setTimeout(() => {
          if (ticket.started) return;
          ticket.abandoned = true;
          void this.#leave(ticket);
          void this.#retryEstimate().then((retryAfterMs) =>
            reject(
              new QueueWaitExceededError(`The check waited ${this.#options.maxWaitMs} ms in the queue without its turn.`, {
                code: 'queue_wait_exceeded',
                retryAfterMs,
              }),
            ),
          );
        }, this.#options.maxWaitMs);
      });
      const aborted = options.signal
        ? new Promise<never>((_, reject) => {
            const signal = options.signal as AbortSignal;
            const onAbort = (): void => {
              if (!ticket.started) {
                ticket.abandoned = true;
                void this.#leave(ticket);
              }
              reject(signal.reason);
            };
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          })
        : new Promise<never>(() => undefined);
      return await Promise.race([scheduled, timedOut, aborted]);
    } finally {
      clearTimeout(giveUp);
      announcer.stop();
    }
  }

  /**
   * True when a background call may start now without costing an interactive check its turn: no
   * other background call waits for its start here, no interactive check waits (in any instance), no
   * 429 pause holds the queue, two places on the wire are free, and more than a quarter of the key's
   * budget is left in this window.
   */
  async roomForBackground(): Promise<boolean> {
    if (this.#backgroundWaiting > 0) return false;
    if ((await this.#pauseRemaining()) > 0) return false;
    // Two places on the wire stay free for interactive checks (one when there are only two).
    const limiter = this.#limiter;
    const running = await limiter.running().catch(() => 0);
    if (running >= Math.max(1, this.#options.maxConcurrent - 2)) return false;
    const shared = this.#shared;
    const waiting = shared ? await shared.zcard(this.#waitingKey).catch(() => 0) : this.#waiting.length;
    if (waiting > 0) return false;
    const rate = this.#options.rate;
    if (rate) {
      const left = await limiter.currentReservoir().catch(() => null);
      if (left !== null && left <= Math.ceil(rate.max * INTERACTIVE_RESERVE)) return false;
    }
    return true;
  }

  /**
   * Takes `units` more from the key's budget for a call already made, whose cost was only known from
   * its answer (a file's cost follows the length of the text the service read out of it). Without a
   * known budget there is nothing to take: the service's 429 answers pace the queue then.
   */
  async charge(units: number): Promise<void> {
    const extra = Math.round(units);
    if (!this.#options.rate || !(extra > 0)) return;
    try {
      await this.#limiter.incrementReservoir(-extra);
    } catch (err) {
      this.#options.logger?.warn({ err: (err as Error).message }, 'could not charge a call to the queue’s budget');
    }
  }

  /** 1 for the next check to start; counts the checks of every instance when clustered. */
  async position(ticketId: string): Promise<number | undefined> {
    const shared = this.#shared;
    if (shared) {
      const rank = await shared.zrank(this.#waitingKey, ticketId);
      if (rank !== null) return rank + 1;
    }
    const index = this.#waiting.findIndex((t) => t.id === ticketId);
    return index < 0 ? undefined : index + 1;
  }

  async close(): Promise<void> {
    this.#closing = true;
    await closeLimiter(this.#bottleneck, this.#connection, this.#shared !== undefined);
    if (this.#local) await bounded(this.#local.stop({ dropWaitingJobs: true }), 2_000);
  }

  /**
   * Bottleneck counts a job's weight against both the budget and the concurrency, and never starts a
   * job heavier than either: a heavy call is capped there (the service's 429 still paces the rest).
   */
  #weightOf(weight: number | undefined): number {
    const wanted = Math.max(1, Math.round(weight ?? 1));
    return Math.min(wanted, this.#options.maxConcurrent, this.#options.rate?.max ?? wanted);
  }

  get #waitingKey(): string {
    return `${this.#options.id}:waiting`;
  }

  get #pauseKey(): string {
    return `${this.#options.id}:pause`;
  }

  async #enter(ticket: Ticket): Promise<void> {
    // Also kept here: while Redis is unreachable, positions count this process's checks.
    this.#waiting.push(ticket);
    const shared = this.#shared;
    if (!shared) return;
    // Entries of an instance that died while its checks waited would hold positions forever; they
    // are dropped once older than any check may wait.
    const staleBefore = ticket.askedAt - this.#options.maxWaitMs - 60_000;
    await shared
      .multi()
      .zremrangebyscore(this.#waitingKey, '-inf', staleBefore)
      .zadd(this.#waitingKey, ticket.askedAt, ticket.id)
      .pexpire(this.#waitingKey, this.#options.maxWaitMs + 60_000)
      .exec()
      .catch(() => undefined);
  }

  async #leave(ticket: Ticket): Promise<void> {
    this.#movers.delete(ticket);
    const index = this.#waiting.indexOf(ticket);
    if (index >= 0) this.#waiting.splice(index, 1);
    if (this.#shared) await this.#shared.zrem(this.#waitingKey, ticket.id).catch(() => undefined);
  }

  async #runBackground<T>(call: () => Promise<T>, signal: AbortSignal | undefined, weight: number): Promise<QueuedResult<T>> {
    const ticket: Ticket = { id: randomUUID(), askedAt: Date.now(), started: false, abandoned: false };
    this.#backgroundWaiting += 1;
    let counted = true;
    const started = (): void => {
      if (counted) this.#backgroundWaiting -= 1;
      counted = false;
    };
    const scheduled = this.#schedule(ticket, { priority: BACKGROUND_PRIORITY, weight }, () => {
      // Started: the next background call may be scheduled while this one is on the wire.
      started();
      return this.#attempt(call, ticket, { signal }, Number.POSITIVE_INFINITY);
    });
    scheduled.catch(started);
    const aborted = signal
      ? new Promise<never>((_, reject) => {
          const onAbort = (): void => {
            if (!ticket.started) {
              ticket.abandoned = true;
              this.#movers.delete(ticket);
              started();
            }
            reject(signal.reason);
          };
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        })
      : new Promise<never>(() => undefined);
    return Promise.race([scheduled, aborted]);
  }

  /**
   * Schedules `work` for the ticket on the queue of the moment. A ticket waiting in the shared queue
   * when Redis becomes unreachable (or whose scheduling Redis refuses) joins this process's queue as
   * well, and whichever turn comes first runs it: a Redis outage must not hold a check back, nor
   * fail it.
   */
  #schedule<T>(
    ticket: Ticket,
    jobOptions: Bottleneck.JobOptions,
    work: () => Promise<{ value: T; waitedMs: number }>,
  ): Promise<{ value: T; waitedMs: number }> {
    return new Promise((resolve, reject) => {
      let onLocal = false;
      const submit = (limiter: Bottleneck): void => {
        const local = limiter === this.#local;
        limiter
          .schedule(jobOptions, async () => {
            if (ticket.abandoned || ticket.started) return { ran: false as const };
            ticket.started = true;
            this.#movers.delete(ticket);
            try {
              return { ran: true as const, value: await work() };
            } catch (err) {
              return { ran: true as const, err };
            }
          })
          .then(
            (outcome) => {
              if (!outcome.ran) return;
              if ('err' in outcome) reject(outcome.err);
              else resolve(outcome.value);
            },
            (err: unknown) => {
              if (ticket.started || ticket.abandoned) return;
              this.#movers.delete(ticket);
              if (!local && this.#local) {
                this.#options.logger?.warn(
                  { err: (err as Error).message },
                  'the shared detection queue failed a check; it queues in this process',
                );
                moveToLocal();
              } else reject(err);
            },
          );
      };
      const moveToLocal = (): void => {
        this.#movers.delete(ticket);
        if (onLocal || !this.#local || ticket.started || ticket.abandoned) return;
        onLocal = true;
        submit(this.#local);
      };
      const limiter = this.#limiter;
      if (limiter === this.#local) {
        onLocal = true;
        submit(limiter);
        return;
      }
      this.#movers.set(ticket, moveToLocal);
      submit(limiter);
    });
  }

  async #attempt<T>(
    call: () => Promise<T>,
    ticket: Ticket,
    options: QueueCallOptions,
    maxWaitMs: number,
  ): Promise<{ value: T; waitedMs: number }> {
    const { signal } = options;
    // End of the last pause announced: a timer may wake a millisecond before the wall clock says the
    // pause is over, and that remainder is the same pause, not a new one to tell the moderator about.
    let announcedUntil = 0;
    for (;;) {
      const pause = await this.#pauseRemaining();
      if (pause > 0) {
        const until = Date.now() + pause;
        if (until - ticket.askedAt > maxWaitMs) {
          throw new QueueWaitExceededError('The service asked to pause longer than a check may wait.', {
            code: 'queue_wait_exceeded',
            retryAfterMs: pause,
          });
        }
        if (until > announcedUntil + PAUSE_SLACK_MS) options.onPause?.(pause);
        announcedUntil = Math.max(announcedUntil, until);
        await sleep(pause, signal);
        continue;
      }
      const waitedMs = Date.now() - ticket.askedAt;
      options.onCall?.();
      try {
        return { value: await call(), waitedMs };
      } catch (err) {
        if (!(err instanceof RateLimitError) || err instanceof QueueWaitExceededError) throw err;
        const wait = Math.max(1, err.retryAfterMs);
        if (Date.now() + wait - ticket.askedAt > maxWaitMs) throw err;
        this.#options.logger?.info({ retryAfterMs: wait }, 'service rate limit reached; queued checks pause');
        await this.#pauseFor(wait);
      }
    }
  }

  async #pauseFor(ms: number): Promise<void> {
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + ms);
    const shared = this.#shared;
    if (!shared) return;
    try {
      const current = await shared.pttl(this.#pauseKey);
      if (current < ms) await shared.set(this.#pauseKey, '1', 'PX', Math.ceil(ms));
    } catch {
      // The local pause still holds this instance back.
    }
  }

  async #pauseRemaining(): Promise<number> {
    let wait = this.#pausedUntil - Date.now();
    const redis = this.#shared;
    if (redis) {
      const shared = await redis.pttl(this.#pauseKey).catch(() => -2);
      if (shared > wait) wait = shared;
    }
    return Math.max(0, wait);
  }

  /** When a refused check could be tried again: after the pause, or after the checks ahead of it drain. */
  async #retryEstimate(): Promise<number> {
    const pause = await this.#pauseRemaining();
    const rate = this.#options.rate;
    const shared = this.#shared;
    const backlog = shared ? await shared.zcard(this.#waitingKey).catch(() => 0) : this.#waiting.length;
    const drain = rate ? Math.ceil((backlog * rate.intervalMs) / rate.max) : 0;
    return Math.max(pause, drain, 1_000);
  }

  #announce(ticket: Ticket, onQueued: QueueCallOptions['onQueued']): { stop(): void } {
    if (!onQueued) return { stop: () => undefined };
    let last: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const tick = async (): Promise<void> => {
      if (stopped || ticket.started || ticket.abandoned) return;
      const position = await this.position(ticket.id).catch(() => undefined);
      if (stopped || ticket.started || position === undefined) return;
      if (position !== last) {
        last = position;
        try {
          await onQueued(position);
        } catch {
          // A failed "queued" notice must not cost the check itself.
        }
      }
      if (!stopped) timer = setTimeout(() => void tick(), this.#options.reannounceEveryMs);
    };
    timer = setTimeout(() => void tick(), this.#options.announceAfterMs);
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
}

/** Reads `DETECT_QUEUE_RATE` (`10/5s`, `600/1m`, `60/60000ms`); undefined when unset. */
export function parseQueueRate(raw: string | undefined, variable = 'DETECT_QUEUE_RATE'): QueueRate | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  const match = /^(\d+)\s*\/\s*(\d+)?\s*(ms|s|m|h)$/i.exec(value);
  const max = Number(match?.[1]);
  const count = Number(match?.[2] ?? 1);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match?.[3] ?? '').toLowerCase() as 'ms' | 's' | 'm' | 'h'];
  if (!match || !(max > 0) || !(count > 0) || !unit) {
    throw new Error(`${variable}="${raw}" must be calls per window, such as 10/5s or 600/1m (the API key's rate limit).`);
  }
  return { max, intervalMs: count * unit };
}
