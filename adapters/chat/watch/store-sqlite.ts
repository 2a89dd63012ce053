/**
 * Watching's embedded store: its own SQLite file next to the bots' state (`DATA_DIR`), opened with
 * node:sqlite in WAL mode so a second process on the machine can share it. Every change that must
 * not be half-made (a claim, a card's place, a review) is one statement or one IMMEDIATE
 * transaction, so two processes cannot both win.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, loadDatabaseSync, migrate } from '../sqlite-driver.ts';
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

export const WATCH_DATABASE_FILE = 'textdetect-watch.sqlite';

/** Index = version - 1. Append new migrations; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE watch_channels (scope TEXT NOT NULL, channel_id TEXT NOT NULL, since INTEGER NOT NULL, cards INTEGER NOT NULL, PRIMARY KEY (scope, channel_id));
   CREATE TABLE watch_exempt (scope TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (scope, id));
   CREATE TABLE watch_scope (scope TEXT PRIMARY KEY, preset TEXT, retention_days INTEGER);
   CREATE TABLE watch_pending (key TEXT PRIMARY KEY, scope TEXT NOT NULL, channel_id TEXT NOT NULL, message_id TEXT NOT NULL,
     thread_id TEXT, author_id TEXT NOT NULL, posted_at INTEGER NOT NULL, enqueued_at INTEGER NOT NULL,
     available_at INTEGER NOT NULL, lease_until INTEGER NOT NULL DEFAULT 0);
   CREATE INDEX watch_pending_turn ON watch_pending (available_at, enqueued_at);
   CREATE INDEX watch_pending_scope ON watch_pending (scope);
   CREATE TABLE watch_scores (key TEXT PRIMARY KEY, scope TEXT NOT NULL, channel_id TEXT NOT NULL, message_id TEXT NOT NULL,
     thread_id TEXT, author_id TEXT NOT NULL, posted_at INTEGER NOT NULL, probability REAL NOT NULL, verdict TEXT NOT NULL,
     confidence TEXT NOT NULL, presets INTEGER NOT NULL, request_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
     flag_id TEXT, card TEXT, card_id TEXT, card_channel_id TEXT, outcome TEXT, reviewer_id TEXT, reviewed_at INTEGER);
   CREATE INDEX watch_scores_report ON watch_scores (scope, posted_at);
   CREATE INDEX watch_scores_expiry ON watch_scores (expires_at);
   CREATE UNIQUE INDEX watch_scores_flag ON watch_scores (scope, flag_id) WHERE flag_id IS NOT NULL;
   CREATE TABLE watch_author_cards (scope TEXT NOT NULL, author_id TEXT NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (scope, author_id));
   CREATE TABLE watch_channel_hours (scope TEXT NOT NULL, channel_id TEXT NOT NULL, hour INTEGER NOT NULL, cards INTEGER NOT NULL,
     PRIMARY KEY (scope, channel_id, hour));`,
];

export class SqliteWatchStore implements WatchStore {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  readonly #db: Database;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, WATCH_DATABASE_FILE);
    const DatabaseSync = loadDatabaseSync();
    this.#db = new DatabaseSync(this.path);
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000; PRAGMA synchronous = NORMAL;');
    migrate(this.#db, MIGRATIONS, 'watch');
  }

  async getConfig(scope: string): Promise<WatchConfig> {
    const channels = this.#db
      .prepare('SELECT channel_id, since, cards FROM watch_channels WHERE scope = ? ORDER BY since, channel_id')
      .all(scope)
      .map((r) => ({ channelId: String(r.channel_id), since: Number(r.since), cards: Number(r.cards) === 1 }));
    const exemptIds = this.#db
      .prepare('SELECT id FROM watch_exempt WHERE scope = ? ORDER BY id')
      .all(scope)
      .map((r) => String(r.id));
    const row = this.#db.prepare('SELECT preset, retention_days FROM watch_scope WHERE scope = ?').get(scope);
    return {
      channels,
      exemptIds,
      preset: row?.preset ? (String(row.preset) as Preset) : undefined,
      retentionDays: row?.retention_days === null || row?.retention_days === undefined ? undefined : Number(row.retention_days),
    };
  }

  async watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }> {
    const added = this.#db
      .prepare('INSERT INTO watch_channels (scope, channel_id, since, cards) VALUES (?, ?, ?, 0) ON CONFLICT DO NOTHING')
      .run(scope, channelId, since);
    const row = this.#db.prepare('SELECT since, cards FROM watch_channels WHERE scope = ? AND channel_id = ?').get(scope, channelId);
    return { channel: { channelId, since: Number(row?.since), cards: Number(row?.cards) === 1 }, added: Number(added.changes) > 0 };
  }

  async unwatchChannel(scope: string, channelId: string): Promise<boolean> {
    return Number(this.#db.prepare('DELETE FROM watch_channels WHERE scope = ? AND channel_id = ?').run(scope, channelId).changes) > 0;
  }

  async setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined> {
    this.#db.prepare('UPDATE watch_channels SET cards = ? WHERE scope = ? AND channel_id = ?').run(on ? 1 : 0, scope, channelId);
    const row = this.#db.prepare('SELECT since, cards FROM watch_channels WHERE scope = ? AND channel_id = ?').get(scope, channelId);
    return row ? { channelId, since: Number(row.since), cards: Number(row.cards) === 1 } : undefined;
  }

  async setExempt(scope: string, id: string, exempt: boolean): Promise<string[]> {
    if (exempt) this.#db.prepare('INSERT INTO watch_exempt (scope, id) VALUES (?, ?) ON CONFLICT DO NOTHING').run(scope, id);
    else this.#db.prepare('DELETE FROM watch_exempt WHERE scope = ? AND id = ?').run(scope, id);
    return (await this.getConfig(scope)).exemptIds;
  }

  async setPreset(scope: string, preset: Preset | null): Promise<void> {
    this.#db
      .prepare('INSERT INTO watch_scope (scope, preset) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET preset = excluded.preset')
      .run(scope, preset);
  }

  async setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void> {
    const keep = (days ?? defaultDays) * DAY_MS;
    this.#transaction(() => {
      this.#db
        .prepare(
          'INSERT INTO watch_scope (scope, retention_days) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET retention_days = excluded.retention_days',
        )
        .run(scope, days);
      this.#db.prepare('UPDATE watch_scores SET expires_at = posted_at + ? WHERE scope = ?').run(keep, scope);
      this.#db.prepare('DELETE FROM watch_scores WHERE scope = ? AND expires_at <= ?').run(scope, now);
    });
  }

  async scopes(): Promise<string[]> {
    return this.#db
      .prepare(
        `SELECT scope FROM watch_channels UNION SELECT scope FROM watch_exempt UNION SELECT scope FROM watch_scope
         UNION SELECT scope FROM watch_pending UNION SELECT DISTINCT scope FROM watch_scores`,
      )
      .all()
      .map((r) => String(r.scope));
  }

  async enqueue(item: PendingItem): Promise<boolean> {
    const key = itemKey(item);
    return this.#transaction(() => {
      if (this.#db.prepare('SELECT 1 FROM watch_scores WHERE key = ?').get(key)) return false;
      const inserted = this.#db
        .prepare(
          `INSERT INTO watch_pending (key, scope, channel_id, message_id, thread_id, author_id, posted_at, enqueued_at, available_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .run(
          key,
          item.scope,
          item.channelId,
          item.messageId,
          item.threadId ?? null,
          item.authorId,
          item.postedAt,
          item.enqueuedAt,
          item.enqueuedAt,
        );
      return Number(inserted.changes) > 0;
    });
  }

  async claim(now: number, leaseMs: number): Promise<PendingItem | undefined> {
    // One statement: two processes on the file cannot take the same message.
    const row = this.#db
      .prepare(
        `UPDATE watch_pending SET lease_until = ? WHERE key = (
           SELECT key FROM watch_pending WHERE available_at <= ? AND lease_until <= ? ORDER BY available_at, enqueued_at LIMIT 1
         ) RETURNING *`,
      )
      .get(now + leaseMs, now, now);
    return row ? pendingFromRow(row) : undefined;
  }

  async renew(keys: string[], until: number): Promise<void> {
    const statement = this.#db.prepare('UPDATE watch_pending SET lease_until = ? WHERE key = ? AND lease_until > 0');
    for (const key of keys) statement.run(until, key);
  }

  async release(key: string, availableAt: number): Promise<void> {
    this.#db.prepare('UPDATE watch_pending SET lease_until = 0, available_at = ? WHERE key = ?').run(availableAt, key);
  }

  async complete(key: string): Promise<void> {
    this.#db.prepare('DELETE FROM watch_pending WHERE key = ?').run(key);
  }

  async drop(scope: string, channelId: string, messageId: string): Promise<boolean> {
    // A message being scored stays with its claimer (the watcher that holds it knows it was deleted).
    return (
      Number(
        this.#db.prepare('DELETE FROM watch_pending WHERE key = ? AND lease_until = 0').run(itemKey({ scope, channelId, messageId }))
          .changes,
      ) > 0
    );
  }

  async pendingCount(): Promise<number> {
    return Number(this.#db.prepare('SELECT COUNT(*) AS n FROM watch_pending').get()?.n ?? 0);
  }

  async isScored(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return this.#db.prepare('SELECT 1 FROM watch_scores WHERE key = ?').get(itemKey({ scope, channelId, messageId })) !== undefined;
  }

  async isPending(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return this.#db.prepare('SELECT 1 FROM watch_pending WHERE key = ?').get(itemKey({ scope, channelId, messageId })) !== undefined;
  }

  async recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean> {
    const inserted = this.#db
      .prepare(
        `INSERT INTO watch_scores (key, scope, channel_id, message_id, thread_id, author_id, posted_at, probability, verdict, confidence,
           presets, request_id, expires_at, flag_id, card) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
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
      );
    return Number(inserted.changes) > 0;
  }

  async reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation> {
    const hour = Math.floor(now / HOUR_MS);
    return this.#transaction(() => {
      const author = this.#db.prepare('SELECT until FROM watch_author_cards WHERE scope = ? AND author_id = ?').get(scope, authorId);
      if (author && Number(author.until) > now) return { ok: false, reason: 'author_window' } as const;
      const row = this.#db
        .prepare('SELECT cards FROM watch_channel_hours WHERE scope = ? AND channel_id = ? AND hour = ?')
        .get(scope, channelId, hour);
      const used = Number(row?.cards ?? 0);
      if (used >= limits.cap) return { ok: false, reason: 'cap' } as const;
      this.#db
        .prepare(
          'INSERT INTO watch_channel_hours (scope, channel_id, hour, cards) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET cards = cards + 1',
        )
        .run(scope, channelId, hour);
      this.#db
        .prepare(
          'INSERT INTO watch_author_cards (scope, author_id, until) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET until = excluded.until',
        )
        .run(scope, authorId, now + limits.windowMs);
      return { ok: true, slot: used + 1, cap: limits.cap, hourEndsAt: (hour + 1) * HOUR_MS } as const;
    });
  }

  async setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void> {
    this.#db
      .prepare('UPDATE watch_scores SET card = ?, card_id = ?, card_channel_id = ? WHERE scope = ? AND flag_id = ?')
      .run(state, card?.cardId ?? null, card?.cardChannelId ?? null, scope, flagId);
  }

  async getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined> {
    const row = this.#db.prepare('SELECT * FROM watch_scores WHERE scope = ? AND flag_id = ?').get(scope, flagId);
    return row ? flagFromRow(row) : undefined;
  }

  async review(scope: string, flagId: string, outcome: Outcome, reviewerId: string, at: number): Promise<ReviewResult | undefined> {
    const changed = this.#db
      .prepare('UPDATE watch_scores SET outcome = ?, reviewer_id = ?, reviewed_at = ? WHERE scope = ? AND flag_id = ? AND outcome IS NULL')
      .run(outcome, reviewerId, at, scope, flagId);
    const flag = await this.getFlag(scope, flagId);
    return flag ? { applied: Number(changed.changes) > 0, flag } : undefined;
  }

  async report(scope: string, now: number): Promise<ReportData> {
    const today = dayOf(now);
    return reportFrom(this.#counts(scope, (today - 6) * DAY_MS), this.#counts(scope, (today - 29) * DAY_MS));
  }

  async sweep(now: number): Promise<void> {
    this.#db.prepare('DELETE FROM watch_scores WHERE expires_at <= ?').run(now);
    this.#db.prepare('DELETE FROM watch_author_cards WHERE until <= ?').run(now);
    this.#db.prepare('DELETE FROM watch_channel_hours WHERE hour < ?').run(Math.floor(now / HOUR_MS) - 1);
  }

  async deleteScope(scope: string): Promise<void> {
    this.#transaction(() => {
      for (const table of [
        'watch_channels',
        'watch_exempt',
        'watch_scope',
        'watch_pending',
        'watch_scores',
        'watch_author_cards',
        'watch_channel_hours',
      ]) {
        this.#db.prepare(`DELETE FROM ${table} WHERE scope = ?`).run(scope);
      }
    });
  }

  async close(): Promise<void> {
    try {
      this.#db.close();
    } catch {
      // Already closed: close() is idempotent.
    }
  }

  #counts(scope: string, from: number): Map<string, ChannelCounts> {
    const presetColumns = PRESETS.map((p) => `SUM(presets & ${PRESET_BITS[p]} > 0) AS "p_${p}"`).join(', ');
    const cardColumns = CARD_STATES.map((c) => `SUM(card = '${c}') AS "c_${c}"`).join(', ');
    const outcomeColumns = OUTCOMES.map((o) => `SUM(outcome = '${o}') AS "o_${o}"`).join(', ');
    const rows = this.#db
      .prepare(
        `SELECT channel_id, COUNT(*) AS scored, ${presetColumns}, ${cardColumns}, ${outcomeColumns}
         FROM watch_scores WHERE scope = ? AND posted_at >= ? GROUP BY channel_id`,
      )
      .all(scope, from);
    return countsByChannel(rows);
  }

  #transaction<T>(work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }
}
