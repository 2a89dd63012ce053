/**
 * Opens the bots' state store from the environment:
 * - `REDIS_URL` set → Redis, shared by every bot instance on that URL;
 * - otherwise → SQLite in `DATA_DIR` (default `./data`, relative to the working directory).
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { RedisChatStore } from './redis.ts';
import { SqliteChatStore } from './sqlite.ts';
import type { ChatStore } from './types.ts';

export type { ChatStore, ScopeSettings, SettingsPatch } from './types.ts';
export { RedisChatStore } from './redis.ts';
export { SqliteChatStore } from './sqlite.ts';

export const DEFAULT_DATA_DIR = 'data';

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
  const dataDir = resolve(location.dataDir ?? DEFAULT_DATA_DIR);
  try {
    return new SqliteChatStore(dataDir);
  } catch (err) {
    throw new Error(
      `Could not open the bot database in DATA_DIR=${dataDir} (${(err as Error).message}); point DATA_DIR at a writable folder.`,
    );
  }
}
