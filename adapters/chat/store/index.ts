/**
 * Opens the bots' state from the environment, in two parts (see split.ts):
 * - what must last (settings, installations): PostgreSQL when `DATABASE_URL` is set, shared by every
 *   process on every machine; otherwise SQLite in `DATA_DIR`, by default the user's data folder (`defaultDataDir`), outside
 *   any checkout so a bot run from the repository writes nothing into it;
 * - what may be lost (the buttons' records, retry claims): Redis when `REDIS_URL` is set, shared by
 *   every instance on that URL; otherwise the same SQLite file.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { PostgresDurableStore } from './postgres.ts';
import { RedisChatStore } from './redis.ts';
import { SplitChatStore } from './split.ts';
import { SqliteChatStore } from './sqlite.ts';
import { SETTING_NAMES, type DurableStore, type SettingsPatch, type ShortLivedStore } from './types.ts';

export type {
  ChatStore,
  DurableStore,
  InstallationRow,
  ScopeSettings,
  SettingsPatch,
  ShortLivedStore,
  StoredInstallation,
} from './types.ts';
export { PostgresDurableStore } from './postgres.ts';
export { RedisChatStore } from './redis.ts';
export { SplitChatStore, type ScopeDeletedHook } from './split.ts';
export { SqliteChatStore } from './sqlite.ts';

/**
 * Where the SQLite store lives when `DATA_DIR` is unset: `$XDG_DATA_HOME/textdetect`, else
 * `~/.local/share/textdetect` (the XDG base-directory default; the service keeps its key file in
 * the matching config folder, `~/.config/textdetect`).
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
  /** PostgreSQL for settings and installations (`DATABASE_URL`); unset: SQLite under `dataDir`. */
  databaseUrl?: string | undefined;
}

export function storeLocationFromEnv(env: NodeJS.ProcessEnv): StoreLocation {
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new Error(`REDIS_URL="${redisUrl}" is not a redis:// or rediss:// URL.`);
  }
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(
      'DATABASE_URL is not a postgres:// or postgresql:// URL (e.g. postgres://bots:secret@db.example.com:5432/textdetect); unset it to keep the state in SQLite under DATA_DIR.',
    );
  }
  return { redisUrl, dataDir: env.DATA_DIR?.trim() || undefined, ...(databaseUrl ? { databaseUrl } : {}) };
}

function openSqlite(dataDir: string | undefined): SqliteChatStore {
  const dir = resolve(dataDir ?? defaultDataDir());
  try {
    return new SqliteChatStore(dir);
  } catch (err) {
    throw new Error(`Could not open the bot database in DATA_DIR=${dir} (${(err as Error).message}); point DATA_DIR at a writable folder.`);
  }
}

/**
 * Settings an earlier version kept in Redis are copied into the durable store once (a scope that
 * already has settings there keeps them), then moved aside in Redis.
 */
async function importLegacySettings(redis: RedisChatStore, durable: DurableStore, logger: Logger | undefined): Promise<void> {
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
    logger?.info({ scopes: legacy.size, durable: durable.kind }, 'settings kept in Redis by an earlier version moved to the durable store');
}

/**
 * Opens both parts. PostgreSQL migrates on the first use or on `ready()`: call `ready()` at start
 * so a database problem stops the bot with its reason.
 */
export function openChatStore(location: StoreLocation, logger?: Logger): SplitChatStore {
  const sqlite = location.databaseUrl && location.redisUrl ? undefined : openSqlite(location.dataDir);
  const durable: DurableStore = location.databaseUrl ? new PostgresDurableStore(location.databaseUrl, { logger }) : sqlite!;
  let redis: RedisChatStore | undefined;
  try {
    if (location.redisUrl) redis = new RedisChatStore(location.redisUrl, { logger });
  } catch (err) {
    void durable.close();
    throw err;
  }
  const shortLived: ShortLivedStore = redis ?? sqlite!;
  if (redis && !location.databaseUrl) {
    logger?.warn(
      'REDIS_URL is set without DATABASE_URL: settings and installations stay in SQLite on this machine, so instances on other machines do not see them; set DATABASE_URL (PostgreSQL) to share them',
    );
  }
  return new SplitChatStore(durable, shortLived, redis ? () => importLegacySettings(redis, durable, logger) : undefined);
}
