/**
 * Opens the bots' storage from the environment (docs/architecture.md, "Where state lives"):
 * - what must last (installations, settings, watched channels, scores, flags, outcomes and the
 *   queue of watched messages): PostgreSQL when `DATABASE_URL` is set (postgres.ts), shared by every
 *   process on every machine; otherwise SQLite under `DATA_DIR` (sqlite.ts), by default the user's
 *   data folder (`defaultDataDir`), outside any checkout;
 * - what may be lost (the records behind buttons, retry claims): Redis when `REDIS_URL` is set
 *   (redis.ts), shared by every instance; otherwise the SQLite file.
 * What an earlier version kept in Redis (settings, watch records) or, before `DATABASE_URL`, in the
 * SQLite watch file, is copied into the database once, at start.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { PostgresStore } from './postgres.ts';
import { RedisStore } from './redis.ts';
import { SqliteStore, WATCH_DATABASE_FILE } from './sqlite.ts';
import {
  onceUntilItWorks,
  SETTING_NAMES,
  type BotDatabase,
  type ChatStore,
  type DurableStore,
  type LegacyWatchSource,
  type ScopeSettings,
  type SettingsPatch,
  type ShortLivedStore,
  type WatchStore,
} from './types.ts';

export type * from './types.ts';
export { PostgresStore } from './postgres.ts';
export { RedisStore } from './redis.ts';
export { SqliteStore } from './sqlite.ts';

/**
 * Where the SQLite files live when `DATA_DIR` is unset: `$XDG_DATA_HOME/textdetect`, else
 * `~/.local/share/textdetect` (the XDG base-directory default).
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME?.trim();
  // The XDG spec ignores a relative XDG_DATA_HOME.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME?.trim() || homedir(), '.local', 'share');
  return join(base, 'textdetect');
}

export interface StoreLocation {
  redisUrl?: string | undefined;
  dataDir?: string | undefined;
  /** PostgreSQL for every lasting record (`DATABASE_URL`); unset: SQLite under `dataDir`. */
  databaseUrl?: string | undefined;
}

export function storeLocationFromEnv(env: NodeJS.ProcessEnv): StoreLocation {
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new Error(`REDIS_URL="${redisUrl}" is not a redis:// or rediss:// URL.`);
  }
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && /^rediss?:\/\//.test(databaseUrl)) {
    throw new Error(
      'DATABASE_URL points at Redis, which would keep installations, settings and watched channels where a restart without persistence forgets them; the bots keep those only in a database: set DATABASE_URL to PostgreSQL (postgres://…), or unset it for SQLite under DATA_DIR, and give Redis as REDIS_URL.',
    );
  }
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(
      'DATABASE_URL is not a postgres:// or postgresql:// URL (e.g. postgres://bots:secret@db.example.com:5432/textdetect); unset it to keep the state in SQLite under DATA_DIR.',
    );
  }
  return { redisUrl, dataDir: env.DATA_DIR?.trim() || undefined, ...(databaseUrl ? { databaseUrl } : {}) };
}

function openSqlite(dataDir: string | undefined, imports: LegacyWatchSource[] = []): SqliteStore {
  const dir = resolve(dataDir ?? defaultDataDir());
  try {
    return new SqliteStore(dir, { imports });
  } catch (err) {
    throw new Error(`Could not open the bot database in DATA_DIR=${dir} (${(err as Error).message}); point DATA_DIR at a writable folder.`);
  }
}

/** Called with every scope an uninstall deleted, for data kept outside these stores (e.g. review records). */
export type ScopeDeletedHook = (scope: string) => Promise<void>;

/**
 * The bots' state as one `ChatStore`, over the database (settings, installations) and the
 * short-lived store (the buttons' records, retry claims). With SQLite alone both are one object.
 */
export class SplitChatStore implements ChatStore {
  readonly durable: DurableStore;
  readonly shortLived: ShortLivedStore;
  readonly #hooks = new Set<ScopeDeletedHook>();
  readonly #beforeReady: (() => Promise<void>) | undefined;
  #closing: Promise<void> | undefined;

  /** `beforeReady` runs once, after the database's migrations (the import of older settings). */
  constructor(durable: DurableStore, shortLived: ShortLivedStore, beforeReady?: () => Promise<void>) {
    this.durable = durable;
    this.shortLived = shortLived;
    this.#beforeReady = beforeReady;
  }

  /** Where the short-lived state is: `redis` (shared) or `sqlite` (this machine). */
  get kind(): 'sqlite' | 'redis' {
    return this.shortLived.kind;
  }

  /** Where the lasting state is: `postgres` (shared) or `sqlite` (this machine). */
  get durableKind(): 'sqlite' | 'postgres' {
    return this.durable.kind;
  }

  /** Migrates the database; call it at start so a database problem stops the bot with its reason. */
  readonly ready = onceUntilItWorks(async () => {
    await this.durable.ready();
    await this.#beforeReady?.();
  });

  saveCheck(id: string, record: unknown, ttlMs: number): Promise<void> {
    return this.shortLived.saveCheck(id, record, ttlMs);
  }

  loadCheck(id: string, ttlMs: number): Promise<unknown> {
    return this.shortLived.loadCheck(id, ttlMs);
  }

  claim(key: string, ttlMs: number): Promise<boolean> {
    return this.shortLived.claim(key, ttlMs);
  }

  getSettings(scope: string): Promise<ScopeSettings> {
    return this.durable.getSettings(scope);
  }

  updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    return this.durable.updateSettings(scope, patch);
  }

  /** Registers cleanup of data kept elsewhere for scopes an uninstall deletes; the function returned removes it. */
  onScopeDeleted(hook: ScopeDeletedHook): () => void {
    this.#hooks.add(hook);
    return () => void this.#hooks.delete(hook);
  }

  /**
   * Deletes everything kept about `scope` and the scopes linked under it: installation, settings,
   * the check records whose ids start with `checkPrefix(scope)`, and whatever the hooks own.
   */
  async deleteScope(scope: string, checkPrefix: (scope: string) => string): Promise<string[]> {
    const scopes = await this.durable.forgetScope(scope);
    for (const s of scopes) {
      await this.shortLived.forgetChecks(checkPrefix(s));
      for (const hook of this.#hooks) await hook(s);
    }
    return scopes;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const both = this.durable === (this.shortLived as unknown) ? [this.durable] : [this.durable, this.shortLived];
      const results = await Promise.allSettled(both.map((store) => store.close()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    })();
    return this.#closing;
  }
}

/** Settings an earlier version kept in Redis: copied once (a scope with settings here keeps them), then moved aside. */
async function importLegacySettings(redis: RedisStore, durable: DurableStore, logger: Logger | undefined): Promise<void> {
  const legacy = await redis.readLegacySettings();
  for (const [scope, fields] of legacy) {
    if (Object.keys(await durable.getSettings(scope)).length === 0) {
      const patch: SettingsPatch = {};
      for (const name of SETTING_NAMES) if (fields[name] !== undefined) patch[name] = fields[name];
      await durable.updateSettings(scope, patch);
    }
    await redis.retireLegacySettings(scope);
  }
  if (legacy.size > 0)
    logger?.info({ scopes: legacy.size, durable: durable.kind }, 'settings kept in Redis by an earlier version moved to the database');
}

/** Opens both parts. Call `ready()` at start so a database problem stops the bot with its reason. */
export function openChatStore(location: StoreLocation, logger?: Logger): SplitChatStore {
  const sqlite = location.databaseUrl && location.redisUrl ? undefined : openSqlite(location.dataDir);
  const durable: BotDatabase = location.databaseUrl ? new PostgresStore(location.databaseUrl, { logger }) : sqlite!;
  let redis: RedisStore | undefined;
  try {
    if (location.redisUrl) redis = new RedisStore(location.redisUrl, { logger });
  } catch (err) {
    void durable.close();
    throw err;
  }
  if (redis && !location.databaseUrl) {
    logger?.warn(
      'REDIS_URL is set without DATABASE_URL: settings, installations and watched channels stay in SQLite on this machine, so instances on other machines do not see them; set DATABASE_URL (PostgreSQL) to share them',
    );
  }
  return new SplitChatStore(durable, redis ?? sqlite!, redis ? () => importLegacySettings(redis, durable, logger) : undefined);
}

/**
 * Watching's records, in the same database. At its first start, what an earlier version kept in
 * Redis (with `REDIS_URL`: configuration, scores, flags, outcomes and queued messages) and, on
 * PostgreSQL, the configuration in the SQLite watch file (if one exists) is copied in, once each.
 */
export function openWatchStore(location: StoreLocation, logger?: Logger): WatchStore {
  const imports: LegacyWatchSource[] = [];
  const redisUrl = location.redisUrl;
  if (redisUrl) {
    const withRedis = async <T>(work: (redis: RedisStore) => Promise<T>): Promise<T> => {
      const redis = new RedisStore(redisUrl, { logger });
      try {
        return await work(redis);
      } finally {
        await redis.close();
      }
    };
    imports.push({
      source: 'redis',
      read: () =>
        withRedis((r) => r.readLegacyWatch()).catch((err: unknown) => {
          throw new Error(
            `Could not reach REDIS_URL to copy the watch records an earlier version kept there into the database (${(err as Error).message}); start Redis, or unset REDIS_URL (the copy then waits for the next start with it).`,
          );
        }),
      // Each start after the import: what is left in Redis is removed; Redis being down does not stop the bot (the next start does it).
      done: () =>
        withRedis((r) => r.forgetLegacyWatch(logger)).catch((err: unknown) =>
          logger?.warn({ err: (err as Error).message }, 'could not remove imported watch records from Redis; trying at the next start'),
        ),
    });
  }
  const dataDir = resolve(location.dataDir ?? defaultDataDir());
  if (location.databaseUrl && existsSync(join(dataDir, WATCH_DATABASE_FILE))) {
    imports.push({
      source: 'sqlite',
      read: async () => {
        const sqlite = new SqliteStore(dataDir);
        try {
          const configs = new Map();
          for (const scope of await sqlite.scopes()) configs.set(scope, await sqlite.getConfig(scope));
          return { configs };
        } finally {
          await sqlite.close();
        }
      },
    });
  }
  return location.databaseUrl ? new PostgresStore(location.databaseUrl, { logger, imports }) : openSqlite(location.dataDir, imports);
}
