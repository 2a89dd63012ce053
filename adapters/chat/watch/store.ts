/**
 * Where watching keeps what must outlive a process: which channels a scope watches, the messages
 * waiting for their score (ids only), the scores, the flags and the moderators' outcomes. Chosen as
 * for the bots' other state (../store/index.ts):
 * - `DATABASE_URL` set: PostgreSQL (store-postgres.ts), shared by every instance; with `REDIS_URL`
 *   too, the queue is in Redis and the rest in PostgreSQL (store-split.ts);
 * - else `REDIS_URL` set: Redis (store-redis.ts), shared by every instance on that URL;
 * - else SQLite in `DATA_DIR` (its own file, `textdetect-watch.sqlite`), this machine only.
 *
 * Never stored: a message's text, a member's name. Everything about a scope can be deleted at once.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { defaultDataDir, type StoreLocation } from '../store/index.ts';
import { type LegacyWatchConfigs, PostgresWatchStore } from './store-postgres.ts';
import { RedisWatchStore } from './store-redis.ts';
import { SplitWatchStore } from './store-split.ts';
import { SqliteWatchStore, WATCH_DATABASE_FILE } from './store-sqlite.ts';
import type {
  CardReservation,
  CardState,
  FlagRecord,
  Outcome,
  PendingItem,
  Preset,
  ReportData,
  ReviewResult,
  ScoreRecord,
  WatchConfig,
  WatchedChannel,
} from './types.ts';

export interface CardLimits {
  /** One card per member per this many ms. */
  windowMs: number;
  /** Cards per channel per clock hour. */
  cap: number;
}

export interface WatchStore {
  readonly kind: 'sqlite' | 'redis' | 'postgres' | 'postgres+redis';
  /**
   * Prepares the store (PostgreSQL: its migrations, and the one-time import of an earlier
   * configuration); the bots call it at start so a database problem stops them with its reason.
   */
  ready?(): Promise<void>;

  getConfig(scope: string): Promise<WatchConfig>;
  /** Starts watching (in shadow mode); a channel already watched keeps its start and mode. */
  watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }>;
  /** False when the channel was not watched. */
  unwatchChannel(scope: string, channelId: string): Promise<boolean>;
  /** Turns review cards on or off (shadow mode); undefined when the channel is not watched. */
  setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined>;
  /** Adds or removes an exempt role or user group; returns the list after the change. */
  setExempt(scope: string, id: string, exempt: boolean): Promise<string[]>;
  setPreset(scope: string, preset: Preset | null): Promise<void>;
  /** Sets the scope's retention (null: the bot's default) and applies it to what is already kept. */
  setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void>;
  /** Every scope that has anything stored. */
  scopes(): Promise<string[]>;

  /** Queues a message for its score; false when it is already queued or already scored. */
  enqueue(item: PendingItem): Promise<boolean>;
  /** Takes the oldest message whose turn has come for `leaseMs`; another instance may take it again once the lease runs out. */
  claim(now: number, leaseMs: number): Promise<PendingItem | undefined>;
  /** Extends the leases of messages being scored. */
  renew(keys: string[], until: number): Promise<void>;
  /** Puts a claimed message back, to be taken again from `availableAt` (a shutdown, a transient failure). */
  release(key: string, availableAt: number): Promise<void>;
  /** Removes a message from the queue (scored, skipped or gone). */
  complete(key: string): Promise<void>;
  /** Removes a waiting message (deleted by its author); false when it was not waiting. */
  drop(scope: string, channelId: string, messageId: string): Promise<boolean>;
  /** Messages waiting or being scored, in every scope. */
  pendingCount(): Promise<number>;
  isScored(scope: string, channelId: string, messageId: string, postedAt: number): Promise<boolean>;
  /** True when the message is queued (waiting or being scored). */
  isPending(scope: string, channelId: string, messageId: string): Promise<boolean>;

  /** Keeps a score until `expiresAt`; false (and nothing changed) when the message was scored before. */
  recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean>;
  /** Takes a card's place: not when the member had a card within the window, not past the channel's hourly cap. */
  reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation>;
  setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void>;
  getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined>;
  /** Records a moderator's answer; the first answer stands. Undefined when the flag is no longer kept. */
  review(scope: string, flagId: string, outcome: Outcome, reviewerId: string, at: number): Promise<ReviewResult | undefined>;
  report(scope: string, now: number): Promise<ReportData>;

  /** Deletes records past their scope's retention. */
  sweep(now: number, defaultDays: number): Promise<void>;
  /** Deletes everything of a scope: watched channels, queue, scores, flags, outcomes. */
  deleteScope(scope: string): Promise<void>;
  close(): Promise<void>;
}

/** Every scope's configuration in an earlier store, for the one-time import into PostgreSQL. */
async function readConfigs(store: WatchStore): Promise<Map<string, WatchConfig>> {
  const configs = new Map<string, WatchConfig>();
  for (const scope of await store.scopes()) configs.set(scope, await store.getConfig(scope));
  return configs;
}

/**
 * Where this deployment kept its watch configuration before `DATABASE_URL`: Redis when `REDIS_URL`
 * is set (as openWatchStore chose then), else the SQLite file if one exists (never created here).
 */
function legacySource(location: StoreLocation, redis: RedisWatchStore | undefined): LegacyWatchConfigs | undefined {
  if (redis) return { source: 'redis', read: () => readConfigs(redis) };
  const dataDir = resolve(location.dataDir ?? defaultDataDir());
  if (!existsSync(join(dataDir, WATCH_DATABASE_FILE))) return undefined;
  return {
    source: 'sqlite',
    read: async () => {
      const sqlite = new SqliteWatchStore(dataDir);
      try {
        return await readConfigs(sqlite);
      } finally {
        await sqlite.close();
      }
    },
  };
}

/** Opens the store the location asks for; PostgreSQL migrates on `ready()` (or the first use). */
export function openWatchStore(location: StoreLocation, logger?: Logger): WatchStore {
  if (location.databaseUrl) {
    const redis = location.redisUrl ? new RedisWatchStore(location.redisUrl, { logger }) : undefined;
    const durable = new PostgresWatchStore(location.databaseUrl, { logger, legacy: legacySource(location, redis) });
    return redis ? new SplitWatchStore(durable, redis) : durable;
  }
  if (location.redisUrl) return new RedisWatchStore(location.redisUrl, { logger });
  const dataDir = resolve(location.dataDir ?? defaultDataDir());
  try {
    return new SqliteWatchStore(dataDir);
  } catch (err) {
    throw new Error(
      `Could not open the watch database in DATA_DIR=${dataDir} (${(err as Error).message}); point DATA_DIR at a writable folder.`,
    );
  }
}
