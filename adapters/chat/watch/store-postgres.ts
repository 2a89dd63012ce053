/**
 * Watching's store in PostgreSQL (`DATABASE_URL`), shared by every bot instance on every machine:
 * watched channels, exempt roles or groups, preset and retention, the scores, flags and outcomes,
 * and (without `REDIS_URL`) the queue of messages waiting for their score. Every SQL statement of
 * this store is in this module.
 *
 * Its own tables (`bot_watch_*`) and its own schema version (`bot_watch_schema_migrations`), so it
 * shares a database with the durable store (settings, installations) without either one's
 * migrations depending on the other's. A claim is one statement with `FOR UPDATE SKIP LOCKED`:
 * instances take different messages without waiting on each other.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { currentVersion, migrate, openPool, type Schema, transaction } from '../pg-driver.ts';
import { PRESET_BITS } from './presets.ts';
import { countsByChannel, flagFromRow, pendingFromRow, reportFrom } from './sql-rows.ts';
import type { CardLimits, WatchStore } from './store.ts';
import {
  CARD_STATES,
  DAY_MS,
  dayOf,
  HOUR_MS,
  itemKey,
  OUTCOMES,
  PRESETS,
  type CardReservation,
  type CardState,
  type ChannelCounts,
  type FlagRecord,
  type Outcome,
  type PendingItem,
  type Preset,
  type ReportData,
  type ReviewResult,
  type ScoreRecord,
  type WatchConfig,
  type WatchedChannel,
} from './types.ts';

/** Index = version - 1. Append new migrations; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  // 1: what watching keeps, as the SQLite store has it; `seq` orders messages queued in the same millisecond by arrival.
  `CREATE TABLE bot_watch_channels (scope TEXT NOT NULL, channel_id TEXT NOT NULL, since BIGINT NOT NULL, cards BOOLEAN NOT NULL,
     PRIMARY KEY (scope, channel_id));
   CREATE TABLE bot_watch_exempt (scope TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (scope, id));
   CREATE TABLE bot_watch_scope (scope TEXT PRIMARY KEY, preset TEXT, retention_days INTEGER);
   CREATE TABLE bot_watch_pending (key TEXT PRIMARY KEY, seq BIGSERIAL NOT NULL, scope TEXT NOT NULL, channel_id TEXT NOT NULL,
     message_id TEXT NOT NULL, thread_id TEXT, author_id TEXT NOT NULL, posted_at BIGINT NOT NULL, enqueued_at BIGINT NOT NULL,
     available_at BIGINT NOT NULL, lease_until BIGINT NOT NULL DEFAULT 0);
   CREATE INDEX bot_watch_pending_turn ON bot_watch_pending (available_at, enqueued_at, seq);
   CREATE INDEX bot_watch_pending_scope ON bot_watch_pending (scope);
   CREATE TABLE bot_watch_scores (key TEXT PRIMARY KEY, scope TEXT NOT NULL, channel_id TEXT NOT NULL, message_id TEXT NOT NULL,
     thread_id TEXT, author_id TEXT NOT NULL, posted_at BIGINT NOT NULL, probability DOUBLE PRECISION NOT NULL, verdict TEXT NOT NULL,
     confidence TEXT NOT NULL, presets INTEGER NOT NULL, request_id TEXT NOT NULL, expires_at BIGINT NOT NULL,
     flag_id TEXT, card TEXT, card_id TEXT, card_channel_id TEXT, outcome TEXT, reviewer_id TEXT, reviewed_at BIGINT);
   CREATE INDEX bot_watch_scores_report ON bot_watch_scores (scope, posted_at);
   CREATE INDEX bot_watch_scores_expiry ON bot_watch_scores (expires_at);
   CREATE UNIQUE INDEX bot_watch_scores_flag ON bot_watch_scores (scope, flag_id) WHERE flag_id IS NOT NULL;
   CREATE TABLE bot_watch_author_cards (scope TEXT NOT NULL, author_id TEXT NOT NULL, until BIGINT NOT NULL, PRIMARY KEY (scope, author_id));
   CREATE TABLE bot_watch_channel_hours (scope TEXT NOT NULL, channel_id TEXT NOT NULL, hour BIGINT NOT NULL, cards INTEGER NOT NULL,
     PRIMARY KEY (scope, channel_id, hour))`,
  // 2: the one-time import of the watched channels a deployment kept in Redis or SQLite before DATABASE_URL (store.ts).
  `CREATE TABLE bot_watch_imports (source TEXT PRIMARY KEY, imported_at BIGINT NOT NULL, scopes INTEGER NOT NULL, channels INTEGER NOT NULL)`,
];

/** The newest schema version this build knows. */
export const WATCH_POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

const SCHEMA: Schema = { migrations: MIGRATIONS, versionTable: 'bot_watch_schema_migrations', lock: 7_146_921_338, name: 'watch' };

/** Serialises imports across processes (held for one transaction). */
const IMPORT_LOCK = 7_146_921_339;

const SCOPED_TABLES = [
  'bot_watch_channels',
  'bot_watch_exempt',
  'bot_watch_scope',
  'bot_watch_pending',
  'bot_watch_scores',
  'bot_watch_author_cards',
  'bot_watch_channel_hours',
] as const;

/** Where a deployment kept its watch configuration before `DATABASE_URL`, read once at the first start on PostgreSQL. */
export interface LegacyWatchConfigs {
  /** `redis` or `sqlite`: recorded in `bot_watch_imports`, so each is imported once. */
  source: string;
  /** Every scope's configuration; only called when the source was not imported yet. */
  read(): Promise<Map<string, WatchConfig>>;
}

export interface PostgresWatchStoreOptions {
  logger?: Logger | undefined;
  /** Stops the migrations at this version (tests of upgrades from an older version). */
  targetVersion?: number;
  maxConnections?: number;
  /** Imported once after the migrations (see LegacyWatchConfigs). */
  legacy?: LegacyWatchConfigs | undefined;
}

export class PostgresWatchStore implements WatchStore {
  readonly kind = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #url: string;
  readonly #targetVersion: number;
  readonly #legacy: LegacyWatchConfigs | undefined;
  readonly #logger: Logger | undefined;
  #ready: Promise<void> | undefined;

  constructor(url: string, options: PostgresWatchStoreOptions = {}) {
    this.#url = url;
    this.#targetVersion = options.targetVersion ?? MIGRATIONS.length;
    this.#legacy = options.legacy;
    this.#logger = options.logger;
    this.#pool = openPool(url, { logger: options.logger, maxConnections: options.maxConnections, what: 'watch database' });
  }

  /** Runs the migrations (and the one-time import); every other method waits for it. */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      await migrate(this.#pool, this.#url, SCHEMA, this.#targetVersion);
      if (this.#legacy && this.#targetVersion >= 2) await this.#import(this.#legacy);
    })().catch((err: unknown) => {
      this.#ready = undefined; // a later call tries again (the database may come up)
      throw err;
    });
    return this.#ready;
  }

  async readSchemaVersion(): Promise<number> {
    return currentVersion(this.#pool, SCHEMA);
  }

  async getConfig(scope: string): Promise<WatchConfig> {
    await this.ready();
    const [channels, exempt, config] = await Promise.all([
      this.#pool.query<{ channel_id: string; since: string; cards: boolean }>(
        'SELECT channel_id, since, cards FROM bot_watch_channels WHERE scope = $1 ORDER BY since, channel_id',
        [scope],
      ),
      this.#pool.query<{ id: string }>('SELECT id FROM bot_watch_exempt WHERE scope = $1 ORDER BY id', [scope]),
      this.#pool.query<{ preset: string | null; retention_days: number | null }>(
        'SELECT preset, retention_days FROM bot_watch_scope WHERE scope = $1',
        [scope],
      ),
    ]);
    const row = config.rows[0];
    return {
      channels: channels.rows.map((r) => ({ channelId: r.channel_id, since: Number(r.since), cards: r.cards })),
      // Ordered in JavaScript as the other stores order it (the database's collation may differ).
      exemptIds: exempt.rows.map((r) => r.id).sort(),
      preset: row?.preset ? (row.preset as Preset) : undefined,
      retentionDays: row?.retention_days === null || row?.retention_days === undefined ? undefined : Number(row.retention_days),
    };
  }

  async watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }> {
    await this.ready();
    const added = await this.#pool.query(
      'INSERT INTO bot_watch_channels (scope, channel_id, since, cards) VALUES ($1, $2, $3, FALSE) ON CONFLICT DO NOTHING',
      [scope, channelId, since],
    );
    const channel = await this.#channel(scope, channelId);
    return { channel: channel ?? { channelId, since, cards: false }, added: (added.rowCount ?? 0) > 0 };
  }

  async unwatchChannel(scope: string, channelId: string): Promise<boolean> {
    await this.ready();
    const result = await this.#pool.query('DELETE FROM bot_watch_channels WHERE scope = $1 AND channel_id = $2', [scope, channelId]);
    return (result.rowCount ?? 0) > 0;
  }

  async setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined> {
    await this.ready();
    const { rows } = await this.#pool.query<{ since: string; cards: boolean }>(
      'UPDATE bot_watch_channels SET cards = $1 WHERE scope = $2 AND channel_id = $3 RETURNING since, cards',
      [on, scope, channelId],
    );
    return rows[0] ? { channelId, since: Number(rows[0].since), cards: rows[0].cards } : undefined;
  }

  async setExempt(scope: string, id: string, exempt: boolean): Promise<string[]> {
    await this.ready();
    if (exempt) await this.#pool.query('INSERT INTO bot_watch_exempt (scope, id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [scope, id]);
    else await this.#pool.query('DELETE FROM bot_watch_exempt WHERE scope = $1 AND id = $2', [scope, id]);
    return (await this.getConfig(scope)).exemptIds;
  }

  async setPreset(scope: string, preset: Preset | null): Promise<void> {
    await this.ready();
    await this.#pool.query(
      'INSERT INTO bot_watch_scope (scope, preset) VALUES ($1, $2) ON CONFLICT (scope) DO UPDATE SET preset = EXCLUDED.preset',
      [scope, preset],
    );
  }

  async setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void> {
    await this.ready();
    const keep = (days ?? defaultDays) * DAY_MS;
    await transaction(this.#pool, async (client) => {
      await client.query(
        `INSERT INTO bot_watch_scope (scope, retention_days) VALUES ($1, $2)
         ON CONFLICT (scope) DO UPDATE SET retention_days = EXCLUDED.retention_days`,
        [scope, days],
      );
      await client.query('UPDATE bot_watch_scores SET expires_at = posted_at + $1 WHERE scope = $2', [keep, scope]);
      await client.query('DELETE FROM bot_watch_scores WHERE scope = $1 AND expires_at <= $2', [scope, now]);
    });
  }

  async scopes(): Promise<string[]> {
    await this.ready();
    const { rows } = await this.#pool.query<{ scope: string }>(
      SCOPED_TABLES.filter((t) => t !== 'bot_watch_author_cards' && t !== 'bot_watch_channel_hours')
        .map((t) => `SELECT scope FROM ${t}`)
        .join(' UNION '),
    );
    return rows.map((r) => r.scope).sort();
  }

  async enqueue(item: PendingItem): Promise<boolean> {
    await this.ready();
    const key = itemKey(item);
    // One statement: a message scored meanwhile by another instance is not queued again.
    const result = await this.#pool.query(
      `INSERT INTO bot_watch_pending (key, scope, channel_id, message_id, thread_id, author_id, posted_at, enqueued_at, available_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $8 WHERE NOT EXISTS (SELECT 1 FROM bot_watch_scores WHERE key = $1)
       ON CONFLICT DO NOTHING`,
      [key, item.scope, item.channelId, item.messageId, item.threadId ?? null, item.authorId, item.postedAt, item.enqueuedAt],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async claim(now: number, leaseMs: number): Promise<PendingItem | undefined> {
    await this.ready();
    // SKIP LOCKED: a row another instance is claiming right now is passed over, not waited for; the
    // lease condition is checked again on the locked row, so a message is never handed out twice.
    const { rows } = await this.#pool.query<Record<string, unknown>>(
      `UPDATE bot_watch_pending SET lease_until = $1 WHERE key = (
         SELECT key FROM bot_watch_pending WHERE available_at <= $2 AND lease_until <= $2
         ORDER BY available_at, enqueued_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED
       ) RETURNING *`,
      [now + leaseMs, now],
    );
    return rows[0] ? pendingFromRow(rows[0]) : undefined;
  }

  async renew(keys: string[], until: number): Promise<void> {
    if (keys.length === 0) return;
    await this.ready();
    await this.#pool.query('UPDATE bot_watch_pending SET lease_until = $1 WHERE key = ANY($2::text[]) AND lease_until > 0', [until, keys]);
  }

  async release(key: string, availableAt: number): Promise<void> {
    await this.ready();
    await this.#pool.query('UPDATE bot_watch_pending SET lease_until = 0, available_at = $1 WHERE key = $2', [availableAt, key]);
  }

  async complete(key: string): Promise<void> {
    await this.ready();
    await this.#pool.query('DELETE FROM bot_watch_pending WHERE key = $1', [key]);
  }

  async drop(scope: string, channelId: string, messageId: string): Promise<boolean> {
    await this.ready();
    // A message being scored stays with its claimer (the watcher that holds it knows it was deleted).
    const result = await this.#pool.query('DELETE FROM bot_watch_pending WHERE key = $1 AND lease_until = 0', [
      itemKey({ scope, channelId, messageId }),
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async pendingCount(): Promise<number> {
    await this.ready();
    const { rows } = await this.#pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM bot_watch_pending');
    return Number(rows[0]?.n ?? 0);
  }

  async isScored(scope: string, channelId: string, messageId: string): Promise<boolean> {
    await this.ready();
    const { rowCount } = await this.#pool.query('SELECT 1 FROM bot_watch_scores WHERE key = $1', [
      itemKey({ scope, channelId, messageId }),
    ]);
    return (rowCount ?? 0) > 0;
  }

  async isPending(scope: string, channelId: string, messageId: string): Promise<boolean> {
    await this.ready();
    const { rowCount } = await this.#pool.query('SELECT 1 FROM bot_watch_pending WHERE key = $1', [
      itemKey({ scope, channelId, messageId }),
    ]);
    return (rowCount ?? 0) > 0;
  }

  async recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean> {
    await this.ready();
    const result = await this.#pool.query(
      `INSERT INTO bot_watch_scores (key, scope, channel_id, message_id, thread_id, author_id, posted_at, probability, verdict, confidence,
         presets, request_id, expires_at, flag_id, card) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT DO NOTHING`,
      [
        itemKey(record),
        record.scope,
        record.channelId,
        record.messageId,
        record.threadId ?? null,
        record.authorId,
        record.postedAt,
        record.probability,
        record.verdict,
        record.confidence,
        record.presets,
        record.requestId,
        expiresAt,
        record.flagId ?? null,
        record.flagId ? (record.card ?? 'failed') : null,
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation> {
    await this.ready();
    const hour = Math.floor(now / HOUR_MS);
    return transaction(this.#pool, async (client) => {
      // Both rows exist and are locked, always the channel's hour first, so concurrent reservations
      // queue up one behind the other instead of both reading the old count.
      await client.query(
        'INSERT INTO bot_watch_channel_hours (scope, channel_id, hour, cards) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING',
        [scope, channelId, hour],
      );
      const used = await client.query<{ cards: number }>(
        'SELECT cards FROM bot_watch_channel_hours WHERE scope = $1 AND channel_id = $2 AND hour = $3 FOR UPDATE',
        [scope, channelId, hour],
      );
      await client.query('INSERT INTO bot_watch_author_cards (scope, author_id, until) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING', [
        scope,
        authorId,
      ]);
      const author = await client.query<{ until: string }>(
        'SELECT until FROM bot_watch_author_cards WHERE scope = $1 AND author_id = $2 FOR UPDATE',
        [scope, authorId],
      );
      if (Number(author.rows[0]?.until ?? 0) > now) return { ok: false, reason: 'author_window' } as const;
      const count = Number(used.rows[0]?.cards ?? 0);
      if (count >= limits.cap) return { ok: false, reason: 'cap' } as const;
      await client.query('UPDATE bot_watch_channel_hours SET cards = cards + 1 WHERE scope = $1 AND channel_id = $2 AND hour = $3', [
        scope,
        channelId,
        hour,
      ]);
      await client.query('UPDATE bot_watch_author_cards SET until = $1 WHERE scope = $2 AND author_id = $3', [
        now + limits.windowMs,
        scope,
        authorId,
      ]);
      return { ok: true, slot: count + 1, cap: limits.cap, hourEndsAt: (hour + 1) * HOUR_MS } as const;
    });
  }

  async setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void> {
    await this.ready();
    await this.#pool.query('UPDATE bot_watch_scores SET card = $1, card_id = $2, card_channel_id = $3 WHERE scope = $4 AND flag_id = $5', [
      state,
      card?.cardId ?? null,
      card?.cardChannelId ?? null,
      scope,
      flagId,
    ]);
  }

  async getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined> {
    await this.ready();
    const { rows } = await this.#pool.query<Record<string, unknown>>('SELECT * FROM bot_watch_scores WHERE scope = $1 AND flag_id = $2', [
      scope,
      flagId,
    ]);
    return rows[0] ? flagFromRow(rows[0]) : undefined;
  }

  async review(scope: string, flagId: string, outcome: Outcome, reviewerId: string, at: number): Promise<ReviewResult | undefined> {
    await this.ready();
    const changed = await this.#pool.query(
      `UPDATE bot_watch_scores SET outcome = $1, reviewer_id = $2, reviewed_at = $3
       WHERE scope = $4 AND flag_id = $5 AND outcome IS NULL`,
      [outcome, reviewerId, at, scope, flagId],
    );
    const flag = await this.getFlag(scope, flagId);
    return flag ? { applied: (changed.rowCount ?? 0) > 0, flag } : undefined;
  }

  async report(scope: string, now: number): Promise<ReportData> {
    await this.ready();
    const today = dayOf(now);
    const [week, month] = await Promise.all([this.#counts(scope, (today - 6) * DAY_MS), this.#counts(scope, (today - 29) * DAY_MS)]);
    return reportFrom(week, month);
  }

  async sweep(now: number): Promise<void> {
    await this.ready();
    await this.#pool.query('DELETE FROM bot_watch_scores WHERE expires_at <= $1', [now]);
    await this.#pool.query('DELETE FROM bot_watch_author_cards WHERE until <= $1', [now]);
    await this.#pool.query('DELETE FROM bot_watch_channel_hours WHERE hour < $1', [Math.floor(now / HOUR_MS) - 1]);
  }

  async deleteScope(scope: string): Promise<void> {
    await this.ready();
    await transaction(this.#pool, async (client) => {
      for (const table of SCOPED_TABLES) await client.query(`DELETE FROM ${table} WHERE scope = $1`, [scope]);
    });
  }

  async close(): Promise<void> {
    if (this.#pool.ended) return;
    await this.#pool.end();
  }

  /** The sources imported so far (tests, and the log at start). */
  async imports(): Promise<{ source: string; scopes: number; channels: number }[]> {
    await this.ready();
    const { rows } = await this.#pool.query<{ source: string; scopes: number; channels: number }>(
      'SELECT source, scopes, channels FROM bot_watch_imports ORDER BY source',
    );
    return rows;
  }

  async #channel(scope: string, channelId: string): Promise<WatchedChannel | undefined> {
    const { rows } = await this.#pool.query<{ since: string; cards: boolean }>(
      'SELECT since, cards FROM bot_watch_channels WHERE scope = $1 AND channel_id = $2',
      [scope, channelId],
    );
    return rows[0] ? { channelId, since: Number(rows[0].since), cards: rows[0].cards } : undefined;
  }

  async #counts(scope: string, from: number): Promise<Map<string, ChannelCounts>> {
    const presetColumns = PRESETS.map((p) => `COUNT(*) FILTER (WHERE presets & ${PRESET_BITS[p]} > 0) AS "p_${p}"`).join(', ');
    const cardColumns = CARD_STATES.map((c) => `COUNT(*) FILTER (WHERE card = '${c}') AS "c_${c}"`).join(', ');
    const outcomeColumns = OUTCOMES.map((o) => `COUNT(*) FILTER (WHERE outcome = '${o}') AS "o_${o}"`).join(', ');
    const { rows } = await this.#pool.query<Record<string, unknown>>(
      `SELECT channel_id, COUNT(*) AS scored, ${presetColumns}, ${cardColumns}, ${outcomeColumns}
       FROM bot_watch_scores WHERE scope = $1 AND posted_at >= $2 GROUP BY channel_id`,
      [scope, from],
    );
    return countsByChannel(rows);
  }

  /**
   * Copies the watched channels, exempt ids, preset and retention a deployment kept before it set
   * `DATABASE_URL`, once per source. A scope that already has configuration here keeps it. Scores,
   * flags and the queue are not copied: they run out with their retention where they are.
   */
  async #import(legacy: LegacyWatchConfigs): Promise<void> {
    const done = await this.#pool.query('SELECT 1 FROM bot_watch_imports WHERE source = $1', [legacy.source]);
    if ((done.rowCount ?? 0) > 0) return;
    const configs = await legacy.read();
    const imported = await transaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK]);
      // Another process may have imported while this one read the source.
      const again = await client.query('SELECT 1 FROM bot_watch_imports WHERE source = $1', [legacy.source]);
      if ((again.rowCount ?? 0) > 0) return undefined;
      let scopes = 0;
      let channels = 0;
      for (const [scope, config] of configs) {
        if (config.channels.length === 0 && config.exemptIds.length === 0 && !config.preset && config.retentionDays === undefined) continue;
        const present = await client.query(
          'SELECT 1 FROM bot_watch_channels WHERE scope = $1 UNION ALL SELECT 1 FROM bot_watch_exempt WHERE scope = $1 UNION ALL SELECT 1 FROM bot_watch_scope WHERE scope = $1 LIMIT 1',
          [scope],
        );
        if ((present.rowCount ?? 0) > 0) continue;
        for (const c of config.channels) {
          await client.query(
            'INSERT INTO bot_watch_channels (scope, channel_id, since, cards) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
            [scope, c.channelId, c.since, c.cards],
          );
        }
        for (const id of config.exemptIds) {
          await client.query('INSERT INTO bot_watch_exempt (scope, id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [scope, id]);
        }
        if (config.preset || config.retentionDays !== undefined) {
          await client.query('INSERT INTO bot_watch_scope (scope, preset, retention_days) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
            scope,
            config.preset ?? null,
            config.retentionDays ?? null,
          ]);
        }
        scopes += 1;
        channels += config.channels.length;
      }
      await client.query('INSERT INTO bot_watch_imports (source, imported_at, scopes, channels) VALUES ($1, $2, $3, $4)', [
        legacy.source,
        Date.now(),
        scopes,
        channels,
      ]);
      return { scopes, channels };
    });
    if (imported && imported.scopes > 0) {
      this.#logger?.info(
        { source: legacy.source, ...imported },
        'watched channels kept before DATABASE_URL was set were copied to PostgreSQL (once)',
      );
    }
  }
}
