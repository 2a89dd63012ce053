/**
 * The shared store, for several bot instances behind a load balancer: every instance on the same
 * `REDIS_URL` sees the same buttons' records, settings and claims. Records and claims are keys with
 * a Redis TTL, so Redis itself forgets a text once its buttons can no longer use it.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  SETTING_NAMES,
  settingsFromFields,
  type ChatStore,
  type ScopeSettings,
  type SettingsPatch,
  type ShortLivedStore,
} from './types.ts';

/** A claim must not eat Slack's 3 s ack budget while Redis is unreachable. */
const CLAIM_TIMEOUT_MS = 500;

export class RedisChatStore implements ChatStore, ShortLivedStore {
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
    await this.#redis.set(`${this.#prefix}check:${id}`, JSON.stringify(record), 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async loadCheck(id: string, ttlMs: number): Promise<unknown> {
    const raw = await this.#redis.getex(`${this.#prefix}check:${id}`, 'PX', Math.max(1, Math.round(ttlMs)));
    return raw === null ? undefined : JSON.parse(raw);
  }

  async getSettings(scope: string): Promise<ScopeSettings> {
    return settingsFromFields(await this.#redis.hgetall(`${this.#prefix}settings:${scope}`));
  }

  async updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    const key = `${this.#prefix}settings:${scope}`;
    const multi = this.#redis.multi();
    for (const name of SETTING_NAMES) {
      const value = patch[name];
      if (value === undefined) continue;
      if (value === null) multi.hdel(key, name);
      else multi.hset(key, name, value);
    }
    await multi.exec();
    return this.getSettings(scope);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
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
    // SCAN walks the whole keyspace: fine for an uninstall (rare), and it needs no index kept up to
    // date on every check. Glob characters in the prefix are escaped so they match themselves.
    const pattern = `${this.#prefix}check:${idPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let deleted = 0;
    const stream = this.#redis.scanStream({ match: pattern, count: 1000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await this.#redis.unlink(...keys);
    }
    return deleted;
  }

  /** Settings kept in Redis by earlier versions, before they moved to the durable store: scope → fields. */
  async readLegacySettings(): Promise<Map<string, Record<string, string>>> {
    const found = new Map<string, Record<string, string>>();
    const head = `${this.#prefix}settings:`;
    const stream = this.#redis.scanStream({ match: `${head}*`, count: 1000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
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

  async close(): Promise<void> {
    this.#redis.disconnect();
    this.#fallbackClaims.clear();
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
