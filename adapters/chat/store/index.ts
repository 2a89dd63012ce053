/**
 * Opens the bots' state store from the environment:
 * - `REDIS_URL` set → Redis, shared by every bot instance on that URL;
 * - otherwise → SQLite in `DATA_DIR`, by default the user's data folder (`defaultDataDir`), outside
 *   any checkout so a bot run from the repository writes nothing into it.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { RedisChatStore } from './redis.ts';
import { SqliteChatStore } from './sqlite.ts';
import type { ChatStore } from './types.ts';

export type { ChatStore, ScopeSettings, SettingsPatch } from './types.ts';
export { RedisChatStore } from './redis.ts';
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
}

export function storeLocationFromEnv(env: NodeJS.ProcessEnv): StoreLocation {
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new Error(`REDIS_URL="${redisUrl}" is not a redis:// or rediss:// URL.`);
  }
  return { redisUrl, dataDir: env.DATA_DIR?.trim() || undefined };
}

export function openChatStore(location: StoreLocation, logger?: Logger): ChatStore {
  if (location.redisUrl) return new RedisChatStore(location.redisUrl, { logger });
  const dataDir = resolve(location.dataDir ?? defaultDataDir());
  try {
    return new SqliteChatStore(dataDir);
  } catch (err) {
    throw new Error(
      `Could not open the bot database in DATA_DIR=${dataDir} (${(err as Error).message}); point DATA_DIR at a writable folder.`,
    );
  }
}
