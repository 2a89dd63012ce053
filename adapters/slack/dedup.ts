/**
 * Remembers which Slack requests were already taken, so a retry (Slack re-sends when it did not see
 * an ack in time, marking it `X-Slack-Retry-Num`) or a duplicate delivery never runs a second
 * detection. With Redis the memory is shared by every replica behind the same URL; without it,
 * it lives in this process.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface DedupStore {
  /** True the first time `key` is seen within `ttlMs`, false for every repeat. */
  claim(key: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export class MemoryDedupStore implements DedupStore {
  private readonly seen = new Map<string, number>();
  /** Bounds memory under a flood of unique keys; the oldest claims are forgotten first. */
  constructor(private readonly maxEntries = 50_000) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const expires = this.seen.get(key);
    if (expires !== undefined && expires > now) return false;
    this.seen.delete(key);
    this.seen.set(key, now + ttlMs);
    if (this.seen.size > this.maxEntries) {
      for (const [k, exp] of this.seen) {
        if (this.seen.size <= this.maxEntries && exp > now) break;
        this.seen.delete(k);
      }
    }
    return true;
  }

  async close(): Promise<void> {
    this.seen.clear();
  }
}

/**
 * Redis `SET key 1 PX ttl NX`. If Redis cannot answer, the claim falls back to this process's
 * memory: running a check twice is better than dropping a moderator's request.
 */
export class RedisDedupStore implements DedupStore {
  private readonly redis: Redis;
  private readonly fallback = new MemoryDedupStore();

  constructor(
    url: string,
    private readonly logger?: Logger,
    private readonly prefix = 'textdetect:slack:dedup:',
  ) {
    // Commands queue while (re)connecting so the first requests after start use Redis too; the
    // 500 ms race in claim() keeps a down Redis from eating the 3 s ack budget.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000 });
    // ioredis reports every failed reconnect; once a minute is enough to see that Redis is down.
    let lastLogged = 0;
    this.redis.on('error', (err: Error) => {
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      this.logger?.warn({ err: err.message }, 'dedup redis error (claims use process memory meanwhile)');
    });
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    try {
      const result = await Promise.race([
        this.redis.set(this.prefix + key, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX'),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('redis claim timed out')), 500).unref()),
      ]);
      return result === 'OK';
    } catch (err) {
      this.logger?.warn({ err: (err as Error).message }, 'dedup claim fell back to process memory');
      return this.fallback.claim(key, ttlMs);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.fallback.close();
  }
}

/** Redis-backed when `redisUrl` is given, in-memory otherwise. */
export function createDedupStore(redisUrl: string | undefined, logger?: Logger): DedupStore {
  return redisUrl ? new RedisDedupStore(redisUrl, logger) : new MemoryDedupStore();
}

/**
 * The identity of one user action across Slack's retries: `trigger_id` for commands, shortcuts and
 * button clicks (unique per action), `event_id` for events. Undefined when the body has neither.
 */
export function dedupKey(body: Record<string, unknown>): string | undefined {
  const team =
    typeof body.team_id === 'string'
      ? body.team_id
      : body.team && typeof body.team === 'object' && typeof (body.team as { id?: unknown }).id === 'string'
        ? (body.team as { id: string }).id
        : 'unknown';
  if (typeof body.trigger_id === 'string' && body.trigger_id) return `${team}:t:${body.trigger_id}`;
  if (typeof body.event_id === 'string' && body.event_id) return `${team}:e:${body.event_id}`;
  return undefined;
}
