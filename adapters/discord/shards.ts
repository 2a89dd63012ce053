/**
 * Sharding: which of the bot's gateway shards this process serves, on discord.js' own sharding (the
 * client's `shards`/`shardCount` options, run by @discordjs/ws inside the process). Several
 * processes, on one machine or several, each serve a share of the shards (`DISCORD_SHARD_IDS`) of
 * one total (`DISCORD_SHARDS`); everything a guild's interactions need lives in the shared stores
 * (PostgreSQL for settings, Redis for re-check texts and the detection queue), so no process needs
 * another's memory.
 *
 * What the processes share besides the stores:
 * - **Identify rate.** Discord lets `max_concurrency` shards identify per 5 s, for the whole bot.
 *   With `REDIS_URL` set, every process takes the same Redis lock per bucket (`shard % max_concurrency`)
 *   before identifying, so processes starting together do not exceed it.
 * - **The global REST limit** (50 requests per second per bot, all processes together). Each process
 *   paces its own REST calls to its share, `50 × its shards / all shards` (`restGlobalShare`), so the
 *   shares add up to the limit; `DISCORD_REST_GLOBAL_PER_SECOND` overrides it. Interaction replies
 *   (callbacks and `@original` edits, nearly all of the bot's calls) do not count against the global
 *   limit; per-route limits and 429s are handled by discord.js' REST queue in each process.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { REST } from 'discord.js';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Discord's global REST limit per bot, in requests per second. */
export const DISCORD_GLOBAL_REQUESTS_PER_SECOND = 50;
/** How long an identify holds its bucket (Discord's window). */
const IDENTIFY_WINDOW_MS = 5_000;

export interface ShardSettings {
  /** `DISCORD_SHARDS`: the bot's total number of shards, or `auto` (Discord's recommendation, GET /gateway/bot). */
  count: number | 'auto';
  /** `DISCORD_SHARD_IDS`: the shards this process serves; undefined = all of them. */
  ids: number[] | undefined;
  /** `DISCORD_REST_GLOBAL_PER_SECOND`: this process's share of the global REST limit; undefined = by its shards. */
  restGlobalPerSecond: number | undefined;
}

/** The shards this process serves, resolved: `auto` lets discord.js ask Discord and serve them all. */
export type ShardAssignment = { ids: number[]; count: number } | 'auto';

export class ShardSettingsError extends Error {
  override name = 'ShardSettingsError';
}

/** `0,1,5` or `0-3` or both (`0-3,8`); sorted, without repeats. */
export function parseShardIds(raw: string): number[] {
  const ids = new Set<number>();
  for (const part of raw.split(',').map((p) => p.trim())) {
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(part);
    if (range) {
      const [from, to] = [Number(range[1]), Number(range[2])];
      if (from > to) throw new ShardSettingsError(`DISCORD_SHARD_IDS="${raw}": the range ${part} runs backwards.`);
      for (let id = from; id <= to; id++) ids.add(id);
    } else if (/^\d+$/.test(part)) {
      ids.add(Number(part));
    } else {
      throw new ShardSettingsError(`DISCORD_SHARD_IDS="${raw}" must list shard numbers, e.g. 0,1 or 0-3.`);
    }
  }
  return [...ids].sort((a, b) => a - b);
}

/** Reads `DISCORD_SHARDS`, `DISCORD_SHARD_IDS` and `DISCORD_REST_GLOBAL_PER_SECOND`; undefined when the bot is not sharded. */
export function readShardSettings(env: NodeJS.ProcessEnv = process.env): ShardSettings | undefined {
  const rawCount = env.DISCORD_SHARDS?.trim();
  const rawIds = env.DISCORD_SHARD_IDS?.trim();
  const rawRest = env.DISCORD_REST_GLOBAL_PER_SECOND?.trim();
  let restGlobalPerSecond: number | undefined;
  if (rawRest) {
    restGlobalPerSecond = Number(rawRest);
    if (!Number.isInteger(restGlobalPerSecond) || restGlobalPerSecond < 1 || restGlobalPerSecond > DISCORD_GLOBAL_REQUESTS_PER_SECOND) {
      throw new ShardSettingsError(`DISCORD_REST_GLOBAL_PER_SECOND="${rawRest}" must be a whole number from 1 to 50.`);
    }
  }
  if (!rawCount) {
    if (rawIds) {
      throw new ShardSettingsError(
        'DISCORD_SHARD_IDS is set without DISCORD_SHARDS: set DISCORD_SHARDS to the bot’s total number of shards (or auto) as well.',
      );
    }
    return restGlobalPerSecond === undefined ? undefined : { count: 1, ids: undefined, restGlobalPerSecond };
  }
  let count: number | 'auto';
  if (rawCount.toLowerCase() === 'auto') count = 'auto';
  else if (/^\d+$/.test(rawCount) && Number(rawCount) >= 1) count = Number(rawCount);
  else throw new ShardSettingsError(`DISCORD_SHARDS="${rawCount}" must be auto or a whole number of shards (1 or more).`);
  const ids = rawIds ? parseShardIds(rawIds) : undefined;
  if (ids?.length === 0) throw new ShardSettingsError('DISCORD_SHARD_IDS is empty: list the shards this process serves, e.g. 0,1.');
  if (typeof count === 'number' && ids) checkIdsWithin(ids, count, 'DISCORD_SHARDS');
  return { count, ids, restGlobalPerSecond };
}

function checkIdsWithin(ids: number[], count: number, source: string): void {
  const outside = ids.filter((id) => id >= count);
  if (outside.length > 0) {
    throw new ShardSettingsError(
      `DISCORD_SHARD_IDS names shard ${outside.join(', ')}, but the bot has ${count} shard${count === 1 ? '' : 's'} (${source}); shards are numbered 0 to ${count - 1}.`,
    );
  }
}

/** The number of shards Discord recommends for the bot (GET /gateway/bot). */
export async function recommendedShardCount(token: string, apiUrl: string): Promise<number> {
  const rest = new REST({ api: apiUrl }).setToken(token);
  const info = (await rest.get('/gateway/bot')) as { shards?: unknown };
  if (typeof info.shards !== 'number' || info.shards < 1) throw new Error('Discord did not say how many shards the bot needs.');
  return info.shards;
}

/**
 * The shards this process serves. `auto` with `DISCORD_SHARD_IDS` asks Discord for the total first,
 * so that every process of the bot agrees on it; `auto` alone leaves it to discord.js.
 */
export async function resolveShards(settings: ShardSettings, token: string, apiUrl: string): Promise<ShardAssignment> {
  if (settings.count === 'auto' && !settings.ids) return 'auto';
  const count = settings.count === 'auto' ? await recommendedShardCount(token, apiUrl) : settings.count;
  const ids = settings.ids ?? Array.from({ length: count }, (_, i) => i);
  checkIdsWithin(ids, count, settings.count === 'auto' ? 'Discord’s recommendation for DISCORD_SHARDS=auto' : 'DISCORD_SHARDS');
  return { ids, count };
}

/** This process's share of the global REST limit: proportional to the shards it serves, at least 1. */
export function restGlobalShare(assignment: ShardAssignment | undefined, override?: number): number {
  if (override !== undefined) return override;
  if (assignment === undefined || assignment === 'auto') return DISCORD_GLOBAL_REQUESTS_PER_SECOND;
  return Math.max(1, Math.floor((DISCORD_GLOBAL_REQUESTS_PER_SECOND * assignment.ids.length) / assignment.count));
}

/** Discord's shard of a guild: `(guild_id >> 22) % shard_count`. */
export function shardOfGuild(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** What @discordjs/ws asks of an identify throttler (its `IIdentifyThrottler`). */
export interface IdentifyThrottler {
  waitForIdentify(shardId: number, signal: AbortSignal): Promise<void>;
}

/**
 * Identify pacing shared by every process of the bot through Redis: one identify per bucket per
 * 5 s, whichever process it comes from. If Redis does not answer, the process waits out a window on
 * its own rather than not identifying at all.
 */
export class RedisIdentifyThrottler implements IdentifyThrottler {
  readonly #redis: Redis;
  readonly #maxConcurrency: number;
  readonly #prefix: string;
  readonly #logger: Logger | undefined;

  readonly #windowMs: number;

  /** `windowMs` is Discord's 5 s; tests shorten it. */
  constructor(redis: Redis, maxConcurrency: number, botKey: string, logger?: Logger, windowMs = IDENTIFY_WINDOW_MS) {
    this.#redis = redis;
    this.#maxConcurrency = Math.max(1, maxConcurrency);
    this.#prefix = `textdetect:discord:identify:${botKey}:`;
    this.#logger = logger;
    this.#windowMs = windowMs;
  }

  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const key = `${this.#prefix}${shardId % this.#maxConcurrency}`;
    for (;;) {
      signal.throwIfAborted();
      let wait: number;
      try {
        if ((await this.#redis.set(key, String(shardId), 'PX', this.#windowMs, 'NX')) === 'OK') return;
        wait = Math.max(50, await this.#redis.pttl(key));
      } catch (err) {
        this.#logger?.warn({ shardId, err: (err as Error).message }, 'identify pacing through Redis failed; waiting a window here');
        await sleep(this.#windowMs, undefined, { signal });
        return;
      }
      await sleep(wait + Math.floor(Math.random() * Math.min(250, this.#windowMs / 10)), undefined, { signal });
    }
  }
}

/** A key naming the bot in Redis without its token: the first 16 hex digits of the token's SHA-256. */
export function botKeyOf(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/**
 * discord.js' `ws.buildIdentifyThrottler`: the shared Redis throttler, sized by Discord's
 * `max_concurrency`. Returns the builder and the Redis connection to close on stop.
 */
export function sharedIdentifyThrottler(
  redisUrl: string,
  token: string,
  logger?: Logger,
): {
  build: (manager: {
    fetchGatewayInformation(): Promise<{ session_start_limit: { max_concurrency: number } }>;
  }) => Promise<IdentifyThrottler>;
  close: () => void;
} {
  let redis: Redis | undefined;
  return {
    build: async (manager) => {
      const info = await manager.fetchGatewayInformation();
      redis ??= new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 1_000, lazyConnect: false });
      redis.on('error', () => undefined); // reported by the throttler when it matters
      return new RedisIdentifyThrottler(redis, info.session_start_limit.max_concurrency, botKeyOf(token), logger);
    },
    close: () => redis?.disconnect(),
  };
}
