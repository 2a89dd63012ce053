/**
 * The Redis backend, for what may be lost: the records behind result buttons (texts included, with
 * a Redis TTL, so Redis forgets a text once its buttons can no longer use it) and Slack's retry
 * claims, shared by every instance on the same `REDIS_URL`. Never a lasting record: settings and
 * watching's records are in the database (docs/architecture.md). What earlier versions kept here
 * is read once by the factory (index.ts) and copied into the database.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Confidence, Verdict } from '../../../src/contract.ts';
import { DAY_MS, type CardState, type Outcome, type PendingItem, type Preset, type WatchConfig } from '../watch/types.ts';
import type { LegacyScore, LegacyWatchRecords, ShortLivedStore } from './types.ts';

/** A claim must not eat Slack's 3 s ack budget while Redis is unreachable. */
const CLAIM_TIMEOUT_MS = 500;
/** Where earlier versions kept watching's records. */
export const LEGACY_WATCH_PREFIX = 'textdetect:chat:watch:';

export class RedisStore implements ShortLivedStore {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #logger: Logger | undefined;
  /** Claims while Redis cannot answer: running a check twice beats dropping a moderator's request. */
  readonly #fallbackClaims = new Map<string, number>();

  constructor(url: string, options: { logger?: Logger | undefined; prefix?: string } = {}) {
    this.#prefix = options.prefix ?? 'textdetect:chat:';
    this.#logger = options.logger;
    this.#redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000 });
    // ioredis reports every failed reconnect; once a minute is enough to see that Redis is down.
    let lastLogged = 0;
    this.#redis.on('error', (err: Error) => {
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      this.#logger?.warn({ err: err.message }, 'bot state redis error');
    });
  }

  async saveCheck(id: string, record: unknown, ttlMs: number): Promise<void> {
    this.#failFastWhileLost();
    await this.#redis.set(`${this.#prefix}check:${id}`, JSON.stringify(record), 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async loadCheck(id: string, ttlMs: number): Promise<unknown> {
    this.#failFastWhileLost();
    const raw = await this.#redis.getex(`${this.#prefix}check:${id}`, 'PX', Math.max(1, Math.round(ttlMs)));
    return raw === null ? undefined : JSON.parse(raw);
  }

  /**
   * While the connection is lost (until ioredis reconnects), a command would wait for the next
   * reconnect attempt (up to 2 s) before failing: a check's answer must not wait on what may be lost.
   */
  #failFastWhileLost(): void {
    const status = this.#redis.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') throw new Error(`redis is unreachable (${status})`);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    if (this.#redis.status === 'reconnecting') return this.#claimInMemory(key, ttlMs);
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        this.#redis.set(`${this.#prefix}claim:${key}`, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX'),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('redis claim timed out')), CLAIM_TIMEOUT_MS);
        }),
      ]);
      return result === 'OK';
    } catch (err) {
      this.#logger?.warn({ err: (err as Error).message }, 'retry de-duplication fell back to process memory');
      return this.#claimInMemory(key, ttlMs);
    } finally {
      clearTimeout(timer);
    }
  }

  async forgetChecks(idPrefix: string): Promise<number> {
    // SCAN walks the whole keyspace: fine for an uninstall (rare), and it needs no index kept up to date on every check.
    let deleted = 0;
    for await (const keys of this.#scan(`${this.#prefix}check:`, idPrefix))
      if (keys.length > 0) deleted += await this.#redis.unlink(...keys);
    return deleted;
  }

  /** Settings kept in Redis by earlier versions: scope → fields. */
  async readLegacySettings(): Promise<Map<string, Record<string, string>>> {
    const found = new Map<string, Record<string, string>>();
    const head = `${this.#prefix}settings:`;
    for await (const keys of this.#scan(head, '')) {
      for (const key of keys) {
        const fields = await this.#redis.hgetall(key);
        if (Object.keys(fields).length > 0) found.set(key.slice(head.length), fields);
      }
    }
    return found;
  }

  /** Moves a scope's legacy settings aside once imported (kept for an operator to inspect, never read again). */
  async retireLegacySettings(scope: string): Promise<void> {
    await this.#redis.rename(`${this.#prefix}settings:${scope}`, `${this.#prefix}imported-settings:${scope}`).catch(() => undefined);
  }

  /**
   * Watching's records as earlier versions kept them under `prefix`: every scope's configuration,
   * the scores still kept (with their flags, cards and outcomes) and the messages still queued.
   */
  async readLegacyWatch(prefix = LEGACY_WATCH_PREFIX): Promise<LegacyWatchRecords> {
    const records: Required<LegacyWatchRecords> = { configs: new Map(), scores: [], pending: [] };
    const scoped = (scope: string, name: string) => `${prefix}s:${scope}:${name}`;
    for (const scope of await this.#redis.smembers(`${prefix}scopes`)) {
      const channels = await this.#redis.hgetall(scoped(scope, 'channels'));
      const config = await this.#redis.hgetall(scoped(scope, 'config'));
      const watchConfig: WatchConfig = {
        channels: Object.entries(channels).map(([channelId, v]) => ({
          channelId,
          since: Number(v.split('|')[0]),
          cards: v.endsWith('|1'),
        })),
        exemptIds: (await this.#redis.smembers(scoped(scope, 'exempt'))).sort(),
        preset: (config.preset as Preset | undefined) || undefined,
        retentionDays: config.retentionDays ? Number(config.retentionDays) : undefined,
      };
      records.configs.set(scope, watchConfig);
      for await (const keys of this.#scan(scoped(scope, 'scores:'), '')) {
        for (const key of keys) {
          const day = Number(key.slice(key.lastIndexOf(':') + 1));
          const ttl = await this.#redis.pttl(key);
          for (const [field, raw] of Object.entries(await this.#redis.hgetall(key))) {
            const s = JSON.parse(raw) as { a: string; p: number; v: Verdict; c: Confidence; m: number; f?: string };
            const [channelId = '', messageId = ''] = field.split(':');
            // The flag's hash holds its own fields by name (flagId, card, outcome, …): empty ones are absent.
            const flag: Record<string, string | undefined> = s.f ? await this.#redis.hgetall(scoped(scope, `flag:${s.f}`)) : {};
            const time = (v: string | undefined) => (v ? Number(v) : undefined);
            records.scores.push({
              ...{ scope, channelId, messageId, threadId: flag.threadId, authorId: s.a, postedAt: time(flag.postedAt) ?? day * DAY_MS },
              ...{ probability: s.p, verdict: s.v, confidence: s.c, presets: s.m, requestId: flag.requestId ?? '' },
              expiresAt: ttl > 0 ? Date.now() + ttl : (day + 30) * DAY_MS,
              ...{ flagId: flag.flagId, card: flag.card as CardState | undefined, cardId: flag.cardId, cardChannelId: flag.cardChannelId },
              ...{ outcome: flag.outcome as Outcome | undefined, reviewerId: flag.reviewerId, reviewedAt: time(flag.reviewedAt) },
            } satisfies LegacyScore);
          }
        }
      }
    }
    for (const raw of Object.values(await this.#redis.hgetall(`${prefix}items`))) records.pending.push(JSON.parse(raw) as PendingItem);
    return records;
  }

  /** Deletes what earlier versions kept for watching under `prefix`, once it is in the database. */
  async forgetLegacyWatch(logger?: Logger, prefix = LEGACY_WATCH_PREFIX): Promise<void> {
    let removed = 0;
    for await (const keys of this.#scan(prefix, '')) if (keys.length > 0) removed += await this.#redis.unlink(...keys);
    if (removed > 0)
      logger?.info({ keys: removed }, 'watch records an earlier version kept in Redis are in the database now; removed from Redis');
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
    this.#fallbackClaims.clear();
  }

  /** Keys starting with `head` + `idPrefix`; glob characters in the prefix are escaped so they match themselves. */
  async *#scan(head: string, idPrefix: string): AsyncGenerator<string[]> {
    const glob = (v: string) => v.replace(/[*?[\]\\]/g, '\\$&');
    yield* this.#redis.scanStream({ match: `${glob(head)}${glob(idPrefix)}*`, count: 1000 }) as AsyncIterable<string[]>;
  }

  #claimInMemory(key: string, ttlMs: number): boolean {
    const now = Date.now();
    const expires = this.#fallbackClaims.get(key);
    if (expires !== undefined && expires > now) return false;
    if (this.#fallbackClaims.size > 50_000) {
      for (const [k, exp] of this.#fallbackClaims) if (exp <= now) this.#fallbackClaims.delete(k);
      if (this.#fallbackClaims.size > 50_000) this.#fallbackClaims.clear();
    }
    this.#fallbackClaims.set(key, now + ttlMs);
    return true;
  }
}
