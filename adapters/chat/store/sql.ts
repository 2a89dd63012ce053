/**
 * Every statement of the two database backends, written once: the SQLite module (sqlite.ts) and the
 * PostgreSQL module (postgres.ts) each bring a connection that runs them. Statements use `?`
 * placeholders and `~` before table names; the PostgreSQL connection turns those into `$n` and its
 * `bot_` prefix (so the bots can share a database with other applications), SQLite into nothing.
 * Both dialects understand the rest (ON CONFLICT, RETURNING, CASE); the few differences follow `dialect`.
 */
import type { Confidence, Verdict } from '../../../src/contract.ts';
import { PRESET_BITS } from '../watch/presets.ts';
import {
  CARD_STATES,
  DAY_MS,
  dayOf,
  emptyCounts,
  HOUR_MS,
  itemKey,
  OUTCOMES,
  PRESETS,
  type CardReservation,
  type CardState,
  type ChannelCounts,
  type Clearing,
  type FlagRecord,
  type Outcome,
  type PendingItem,
  type Preset,
  type ReportData,
  type ReviewResult,
  type ScoreRecord,
  type WatchConfig,
  type WatchedChannel,
} from '../watch/types.ts';
import {
  onceUntilItWorks,
  SETTING_NAMES,
  settingsFromFields,
  type BotDatabase,
  type CardLimits,
  type InstallationRow,
  type LegacyScore,
  type LegacyWatchRecords,
  type LegacyWatchSource,
  type ScopeSettings,
  type SettingsPatch,
  type StoredInstallation,
} from './types.ts';

export type Row = Record<string, unknown>;

export interface SqlRunner {
  /** Runs one statement (an undefined parameter is NULL); its rows (SELECT, RETURNING) and how many rows it changed. */
  run(sql: string, params?: unknown[]): Promise<{ rows: Row[]; changes: number }>;
}

export interface SqlConnection extends SqlRunner {
  /** SQLite's transactions take the write lock first; PostgreSQL locks rows (FOR UPDATE). */
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `work` in one transaction (rolled back if it throws). */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
}

/** The migrations after version `from` up to `target`, each with its version; a newer build's schema is refused. */
export function migrationsAfter(migrations: readonly string[], from: number, target: number, name: string, setting: string) {
  if (from > migrations.length) {
    throw new Error(
      `The ${name} database is at schema version ${from}, newer than this build knows (${migrations.length}); run the newer bot or point ${setting} elsewhere.`,
    );
  }
  return migrations.slice(from, target).map((sql, i) => ({ version: from + i + 1, sql }));
}

const WATCH_TABLES = [
  'channels',
  'exempt',
  'scope',
  'pending',
  'scores',
  'author_cards',
  'channel_hours',
  'clearings',
  'suggestions',
] as const;

const INSERT_SCORE = `INSERT INTO ~watch_scores (key, scope, channel_id, message_id, thread_id, author_id, posted_at, probability, verdict,
  confidence, presets, request_id, expires_at, flag_id, card, card_id, card_channel_id, outcome, reviewer_id, reviewed_at, preset, words)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;

// One statement: a message scored meanwhile by another instance is not queued again.
const INSERT_PENDING = `INSERT INTO ~watch_pending (key, scope, channel_id, message_id, thread_id, author_id, posted_at, enqueued_at,
  available_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM ~watch_scores WHERE key = ?) ON CONFLICT DO NOTHING`;
const pendingRow = (p: PendingItem): unknown[] => {
  const key = itemKey(p);
  return [key, p.scope, p.channelId, p.messageId, p.threadId, p.authorId, p.postedAt, p.enqueuedAt, p.enqueuedAt, key];
};

/** A score's row; a new score has no card id or outcome yet, an imported one may. */
function scoreRow(s: LegacyScore): unknown[] {
  const { scope, channelId, messageId, threadId, authorId, postedAt, probability, verdict, confidence, presets, requestId } = s;
  const { expiresAt, flagId, cardId, cardChannelId, outcome, reviewerId, reviewedAt } = s;
  const item = [itemKey(s), scope, channelId, messageId, threadId, authorId, postedAt];
  const score = [probability, verdict, confidence, presets, requestId, expiresAt];
  const review = [outcome, reviewerId, reviewedAt];
  return [...item, ...score, flagId, flagId ? (s.card ?? 'failed') : null, cardId, cardChannelId, ...review, s.preset, s.words];
}

const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const str = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));

/** The columns a queued message and a score share. */
const itemFrom = (row: Row) => ({
  scope: String(row.scope),
  channelId: String(row.channel_id),
  messageId: String(row.message_id),
  threadId: str(row.thread_id),
  authorId: String(row.author_id),
  postedAt: Number(row.posted_at),
});

const pendingFrom = (row: Row): PendingItem => ({ ...itemFrom(row), enqueuedAt: Number(row.enqueued_at) });

function flagFrom(row: Row): FlagRecord {
  return {
    ...itemFrom(row),
    flagId: String(row.flag_id),
    probability: Number(row.probability),
    verdict: String(row.verdict) as Verdict,
    requestId: String(row.request_id),
    card: String(row.card ?? 'failed') as CardState,
    cardId: str(row.card_id),
    cardChannelId: str(row.card_channel_id),
    outcome: str(row.outcome) as Outcome | undefined,
    reviewerId: str(row.reviewer_id),
    reviewedAt: num(row.reviewed_at),
    confidence: str(row.confidence) as Confidence | undefined,
    presets: Number(row.presets ?? 0),
    preset: str(row.preset) as Preset | undefined,
    words: num(row.words),
  };
}

const clearingFrom = (row: Row): Clearing => ({
  flagId: String(row.flag_id),
  authorId: String(row.author_id),
  channelId: String(row.channel_id),
  reviewerId: String(row.reviewer_id),
  clearedAt: Number(row.cleared_at),
  probability: Number(row.probability),
  words: Number(row.words),
});

const channelFrom = (channelId: string, row: Row): WatchedChannel => ({
  channelId,
  since: Number(row.since),
  cards: Number(row.cards) === 1,
});

/**
 * The lasting records over two connections: `bots` (settings, installations, links) and `watch`
 * (watching's tables). PostgreSQL passes the same pool twice; SQLite keeps them in two files, as
 * earlier versions did.
 */
export abstract class SqlStore implements BotDatabase {
  abstract readonly kind: 'sqlite' | 'postgres';
  protected readonly now: () => number;
  readonly #b: SqlConnection;
  readonly #w: SqlConnection;
  readonly #imports: LegacyWatchSource[];

  constructor(bots: SqlConnection, watch: SqlConnection, now: () => number = Date.now, imports: LegacyWatchSource[] = []) {
    this.#b = bots;
    this.#w = watch;
    this.now = now;
    this.#imports = imports;
  }

  /** Runs the migrations and the one-time imports once per process; every other method waits for it. */
  readonly ready = onceUntilItWorks(async () => {
    await this.migrate();
    for (const source of this.#imports) await this.#import(source);
  });

  /** The backend's migrations (SQLite runs them on open). */
  protected async migrate(): Promise<void> {}
  abstract readSchemaVersion(): Promise<number>;
  abstract close(): Promise<void>;
  /** After rows that may have held a text or a member's records were deleted (SQLite: out of the file's bytes). */
  protected async deleted(): Promise<void> {}

  protected async b(sql: string, params: unknown[] = []): Promise<{ rows: Row[]; changes: number }> {
    await this.ready();
    return this.#b.run(sql, params);
  }

  protected async w(sql: string, params: unknown[] = []): Promise<{ rows: Row[]; changes: number }> {
    await this.ready();
    return this.#w.run(sql, params);
  }

  // ---- settings, installations, links (DurableStore) ----

  async getSettings(scope: string): Promise<ScopeSettings> {
    const { rows } = await this.b('SELECT name, value FROM ~settings WHERE scope = ?', [scope]);
    return settingsFromFields(Object.fromEntries(rows.map((r) => [String(r.name), String(r.value)])));
  }

  async updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    await this.ready();
    await this.#b.transaction(async (tx) => {
      for (const name of SETTING_NAMES) {
        const value = patch[name];
        if (value === null) await tx.run('DELETE FROM ~settings WHERE scope = ? AND name = ?', [scope, name]);
        else if (value !== undefined)
          await tx.run(
            `INSERT INTO ~settings (scope, name, value, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
            [scope, name, value, this.now()],
          );
      }
    });
    return this.getSettings(scope);
  }

  async saveInstallation(row: InstallationRow): Promise<void> {
    const now = this.now();
    await this.b(
      `INSERT INTO ~installations (key, enterprise_id, team_id, is_enterprise_install, data, token_expires_at, installed_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET enterprise_id = excluded.enterprise_id, team_id = excluded.team_id,
         is_enterprise_install = excluded.is_enterprise_install, data = excluded.data, token_expires_at = excluded.token_expires_at,
         refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = excluded.updated_at`,
      [row.key, row.enterpriseId, row.teamId, row.isEnterpriseInstall, row.data, row.tokenExpiresAt, now, now],
    );
  }

  async findInstallation(key: string): Promise<StoredInstallation | undefined> {
    const row = (await this.b('SELECT * FROM ~installations WHERE key = ?', [key])).rows[0];
    if (!row) return undefined;
    // PostgreSQL hands BIGINT over as a string and BOOLEAN as a boolean, SQLite both as numbers.
    return {
      key: String(row.key),
      enterpriseId: str(row.enterprise_id),
      teamId: str(row.team_id),
      isEnterpriseInstall: Number(row.is_enterprise_install) === 1,
      data: String(row.data),
      tokenExpiresAt: num(row.token_expires_at),
      refreshLeaseUntil: num(row.refresh_lease_until),
    };
  }

  async takeRefreshLease(key: string, owner: string, leaseMs: number, seenData?: string): Promise<boolean> {
    const now = this.now();
    // One statement: of concurrent callers only one sees its update change the row (PostgreSQL's row
    // lock, SQLite's write lock). COALESCE: without `seenData` the data condition is always true.
    const result = await this.b(
      `UPDATE ~installations SET refresh_lease_owner = ?, refresh_lease_until = ?
       WHERE key = ? AND (refresh_lease_until IS NULL OR refresh_lease_until <= ?) AND data = COALESCE(?, data)`,
      [owner, now + leaseMs, key, now, seenData],
    );
    return result.changes > 0;
  }

  async saveRefreshedInstallation(key: string, owner: string, data: string, tokenExpiresAt: number | undefined): Promise<boolean> {
    const result = await this.b(
      `UPDATE ~installations SET data = ?, token_expires_at = ?, refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = ?
       WHERE key = ? AND refresh_lease_owner = ?`,
      [data, tokenExpiresAt, this.now(), key, owner],
    );
    return result.changes > 0;
  }

  async countInstallations(): Promise<number> {
    return Number((await this.b('SELECT COUNT(*) AS n FROM ~installations')).rows[0]?.n ?? 0);
  }

  async linkScope(parent: string, scope: string): Promise<void> {
    await this.b('INSERT INTO ~scope_links (parent, scope) VALUES (?, ?) ON CONFLICT DO NOTHING', [parent, scope]);
  }

  async recentInstallationData(limit: number): Promise<string[]> {
    const { rows } = await this.b('SELECT data FROM ~installations ORDER BY updated_at DESC LIMIT ?', [limit]);
    return rows.map((r) => String(r.data));
  }

  async findParentScope(scope: string): Promise<string | undefined> {
    return str((await this.b('SELECT parent FROM ~scope_links WHERE scope = ? LIMIT 1', [scope])).rows[0]?.parent);
  }

  async forgetScope(scope: string): Promise<string[]> {
    await this.ready();
    const scopes = await this.#b.transaction(async (tx) => {
      const linked = (await tx.run('SELECT scope FROM ~scope_links WHERE parent = ?', [scope])).rows.map((r) => String(r.scope));
      const all = [scope, ...linked.filter((s) => s !== scope)];
      for (const s of all) await tx.run('DELETE FROM ~settings WHERE scope = ?', [s]);
      await tx.run('DELETE FROM ~scope_links WHERE parent = ? OR scope = ?', [scope, scope]);
      await tx.run('DELETE FROM ~installations WHERE key = ?', [scope]);
      return all;
    });
    await this.deleted();
    return scopes;
  }

  // ---- watching (WatchStore) ----

  async getConfig(scope: string): Promise<WatchConfig> {
    const channels = await this.w('SELECT channel_id, since, cards FROM ~watch_channels WHERE scope = ? ORDER BY since, channel_id', [
      scope,
    ]);
    const exempt = await this.w('SELECT id FROM ~watch_exempt WHERE scope = ?', [scope]);
    const row = (await this.w('SELECT preset, retention_days, precision_bound FROM ~watch_scope WHERE scope = ?', [scope])).rows[0];
    return {
      channels: channels.rows.map((r) => channelFrom(String(r.channel_id), r)),
      // Ordered here, not by the database, whose collation may differ.
      exemptIds: exempt.rows.map((r) => String(r.id)).sort(),
      preset: (str(row?.preset) as Preset | undefined) || undefined,
      retentionDays: num(row?.retention_days),
      precisionBound: num(row?.precision_bound),
    };
  }

  async watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }> {
    const added = await this.w(
      'INSERT INTO ~watch_channels (scope, channel_id, since, cards) VALUES (?, ?, ?, FALSE) ON CONFLICT DO NOTHING',
      [scope, channelId, since],
    );
    const row = (await this.w('SELECT since, cards FROM ~watch_channels WHERE scope = ? AND channel_id = ?', [scope, channelId])).rows[0];
    return { channel: row ? channelFrom(channelId, row) : { channelId, since, cards: false }, added: added.changes > 0 };
  }

  async unwatchChannel(scope: string, channelId: string): Promise<boolean> {
    return (await this.w('DELETE FROM ~watch_channels WHERE scope = ? AND channel_id = ?', [scope, channelId])).changes > 0;
  }

  async setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined> {
    const { rows } = await this.w('UPDATE ~watch_channels SET cards = ? WHERE scope = ? AND channel_id = ? RETURNING since, cards', [
      on,
      scope,
      channelId,
    ]);
    return rows[0] ? channelFrom(channelId, rows[0]) : undefined;
  }

  async setExempt(scope: string, id: string, exempt: boolean): Promise<string[]> {
    if (exempt) await this.w('INSERT INTO ~watch_exempt (scope, id) VALUES (?, ?) ON CONFLICT DO NOTHING', [scope, id]);
    else await this.w('DELETE FROM ~watch_exempt WHERE scope = ? AND id = ?', [scope, id]);
    return (await this.getConfig(scope)).exemptIds;
  }

  async setPreset(scope: string, preset: Preset | null): Promise<void> {
    await this.w('INSERT INTO ~watch_scope (scope, preset) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET preset = excluded.preset', [
      scope,
      preset,
    ]);
  }

  async setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void> {
    await this.ready();
    await this.#w.transaction(async (tx) => {
      await tx.run(
        'INSERT INTO ~watch_scope (scope, retention_days) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET retention_days = excluded.retention_days',
        [scope, days],
      );
      const retentionMs = (days ?? defaultDays) * DAY_MS;
      await tx.run('UPDATE ~watch_scores SET expires_at = posted_at + ? WHERE scope = ?', [retentionMs, scope]);
      await tx.run('DELETE FROM ~watch_scores WHERE scope = ? AND expires_at <= ?', [scope, now]);
      // A shorter retention shortens the clearings too (never lengthens them past their window).
      await tx.run('UPDATE ~watch_clearings SET expires_at = cleared_at + ? WHERE scope = ? AND expires_at > cleared_at + ?', [
        retentionMs,
        scope,
        retentionMs,
      ]);
      await tx.run('DELETE FROM ~watch_clearings WHERE scope = ? AND expires_at <= ?', [scope, now]);
    });
    await this.deleted();
  }

  async scopes(): Promise<string[]> {
    const union = WATCH_TABLES.slice(0, 5)
      .map((t) => `SELECT scope FROM ~watch_${t}`)
      .join(' UNION ');
    return (await this.w(union)).rows.map((r) => String(r.scope)).sort();
  }

  async enqueue(item: PendingItem): Promise<boolean> {
    return (await this.w(INSERT_PENDING, pendingRow(item))).changes > 0;
  }

  async claimNext(now: number, leaseMs: number): Promise<PendingItem | undefined> {
    // One statement. PostgreSQL: SKIP LOCKED passes over a row another instance is claiming, and the
    // lease condition is checked again on the locked row; SQLite: the write lock serialises claims.
    // Messages queued in the same millisecond go by arrival (PostgreSQL's `seq`, SQLite's rowid).
    const pg = this.#w.dialect === 'postgres';
    const { rows } = await this.w(
      `UPDATE ~watch_pending SET lease_until = ? WHERE key = (
         SELECT key FROM ~watch_pending WHERE available_at <= ? AND lease_until <= ?
         ORDER BY available_at, enqueued_at, ${pg ? 'seq LIMIT 1 FOR UPDATE SKIP LOCKED' : 'rowid LIMIT 1'}
       ) RETURNING *`,
      [now + leaseMs, now, now],
    );
    return rows[0] ? pendingFrom(rows[0]) : undefined;
  }

  async renew(keys: string[], until: number): Promise<void> {
    for (const key of keys) await this.w('UPDATE ~watch_pending SET lease_until = ? WHERE key = ? AND lease_until > 0', [until, key]);
  }

  async release(key: string, availableAt: number): Promise<void> {
    await this.w('UPDATE ~watch_pending SET lease_until = 0, available_at = ? WHERE key = ?', [availableAt, key]);
  }

  async complete(key: string): Promise<void> {
    await this.w('DELETE FROM ~watch_pending WHERE key = ?', [key]);
  }

  async drop(scope: string, channelId: string, messageId: string): Promise<boolean> {
    // A message being scored stays with its claimer (the watcher that holds it knows it was deleted).
    const key = itemKey({ scope, channelId, messageId });
    return (await this.w('DELETE FROM ~watch_pending WHERE key = ? AND lease_until = 0', [key])).changes > 0;
  }

  async pendingCount(): Promise<number> {
    return Number((await this.w('SELECT COUNT(*) AS n FROM ~watch_pending')).rows[0]?.n ?? 0);
  }

  async isScored(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return (await this.w('SELECT 1 FROM ~watch_scores WHERE key = ?', [itemKey({ scope, channelId, messageId })])).rows.length > 0;
  }

  async isPending(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return (await this.w('SELECT 1 FROM ~watch_pending WHERE key = ?', [itemKey({ scope, channelId, messageId })])).rows.length > 0;
  }

  async recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean> {
    return (await this.w(INSERT_SCORE, scoreRow({ ...record, expiresAt }))).changes > 0;
  }

  async reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation> {
    await this.ready();
    const hour = Math.floor(now / HOUR_MS);
    const lock = this.#w.dialect === 'postgres' ? ' FOR UPDATE' : '';
    const channelHour = [scope, channelId, hour];
    return this.#w.transaction(async (tx) => {
      // Both rows exist and are locked, the channel's hour first, so concurrent reservations queue up
      // one behind the other instead of both reading the old count.
      await tx.run(
        'INSERT INTO ~watch_channel_hours (scope, channel_id, hour, cards) VALUES (?, ?, ?, 0) ON CONFLICT DO NOTHING',
        channelHour,
      );
      const used = await tx.run(
        `SELECT cards FROM ~watch_channel_hours WHERE scope = ? AND channel_id = ? AND hour = ?${lock}`,
        channelHour,
      );
      await tx.run('INSERT INTO ~watch_author_cards (scope, author_id, until) VALUES (?, ?, 0) ON CONFLICT DO NOTHING', [scope, authorId]);
      const author = await tx.run(`SELECT until FROM ~watch_author_cards WHERE scope = ? AND author_id = ?${lock}`, [scope, authorId]);
      if (Number(author.rows[0]?.until ?? 0) > now) return { ok: false, reason: 'author_window' } as const;
      const count = Number(used.rows[0]?.cards ?? 0);
      if (count >= limits.cap) return { ok: false, reason: 'cap' } as const;
      await tx.run('UPDATE ~watch_channel_hours SET cards = cards + 1 WHERE scope = ? AND channel_id = ? AND hour = ?', channelHour);
      await tx.run('UPDATE ~watch_author_cards SET until = ? WHERE scope = ? AND author_id = ?', [now + limits.windowMs, scope, authorId]);
      return { ok: true, slot: count + 1, cap: limits.cap, hourEndsAt: (hour + 1) * HOUR_MS } as const;
    });
  }

  async releaseCard(scope: string, channelId: string, authorId: string, now: number): Promise<void> {
    await this.ready();
    await this.#w.transaction(async (tx) => {
      await tx.run('UPDATE ~watch_author_cards SET until = 0 WHERE scope = ? AND author_id = ?', [scope, authorId]);
      await tx.run('UPDATE ~watch_channel_hours SET cards = cards - 1 WHERE scope = ? AND channel_id = ? AND hour = ? AND cards > 0', [
        scope,
        channelId,
        Math.floor(now / HOUR_MS),
      ]);
    });
  }

  async setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void> {
    await this.w('UPDATE ~watch_scores SET card = ?, card_id = ?, card_channel_id = ? WHERE scope = ? AND flag_id = ?', [
      state,
      card?.cardId,
      card?.cardChannelId,
      scope,
      flagId,
    ]);
  }

  async flagOfMessage(scope: string, channelId: string, messageId: string): Promise<FlagRecord | undefined> {
    const key = itemKey({ scope, channelId, messageId });
    const row = (await this.w('SELECT * FROM ~watch_scores WHERE key = ? AND flag_id IS NOT NULL', [key])).rows[0];
    return row ? flagFrom(row) : undefined;
  }

  async getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined> {
    const row = (await this.w('SELECT * FROM ~watch_scores WHERE scope = ? AND flag_id = ?', [scope, flagId])).rows[0];
    return row ? flagFrom(row) : undefined;
  }

  async review(
    scope: string,
    flagId: string,
    outcome: Outcome,
    reviewerId: string,
    at: number,
    options: { clearForMs?: number } = {},
  ): Promise<ReviewResult | undefined> {
    await this.ready();
    const clearForMs = options.clearForMs ?? 0;
    const applied = await this.#w.transaction(async (tx) => {
      const changed = await tx.run(
        'UPDATE ~watch_scores SET outcome = ?, reviewer_id = ?, reviewed_at = ? WHERE scope = ? AND flag_id = ? AND outcome IS NULL',
        [outcome, reviewerId, at, scope, flagId],
      );
      // The clearing copies the flag's ids and scores in the same transaction, so it may outlive the
      // score; but a record of the member is kept no longer than the scope keeps any: for the
      // clearing window or the scope's retention (the score's own, expires_at - posted_at) from the
      // review, whichever is shorter.
      if (changed.changes > 0 && outcome === 'false_positive' && clearForMs > 0) {
        await tx.run(
          `INSERT INTO ~watch_clearings (scope, flag_id, author_id, channel_id, reviewer_id, cleared_at, probability, words, expires_at)
           SELECT scope, flag_id, author_id, channel_id, ?, ?, probability, COALESCE(words, 0),
             CASE WHEN expires_at - posted_at < ? THEN expires_at - posted_at + ? ELSE ? END FROM ~watch_scores
           WHERE scope = ? AND flag_id = ? ON CONFLICT DO NOTHING`,
          [reviewerId, at, clearForMs, at, at + clearForMs, scope, flagId],
        );
      }
      return changed.changes > 0;
    });
    const flag = await this.getFlag(scope, flagId);
    return flag ? { applied, flag } : undefined;
  }

  // ---- what reviews teach (adapters/chat/watch/clearings.ts, precision.ts) ----

  async clearingsOf(scope: string, authorId: string, now: number): Promise<Clearing[]> {
    const { rows } = await this.w(
      'SELECT * FROM ~watch_clearings WHERE scope = ? AND author_id = ? AND expires_at > ? ORDER BY cleared_at, flag_id',
      [scope, authorId, now],
    );
    return rows.map(clearingFrom);
  }

  async confirmedSince(scope: string, authorId: string, since: number): Promise<number> {
    const { rows } = await this.w(
      "SELECT COUNT(*) AS n FROM ~watch_scores WHERE scope = ? AND author_id = ? AND outcome = 'confirmed' AND reviewed_at >= ?",
      [scope, authorId, since],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async deleteClearings(scope: string): Promise<number> {
    await this.ready();
    const changes = await this.#w.transaction(async (tx) => {
      const gone = await tx.run('DELETE FROM ~watch_clearings WHERE scope = ?', [scope]);
      await tx.run('DELETE FROM ~watch_suggestions WHERE scope = ?', [scope]);
      return gone.changes;
    });
    await this.deleted();
    return changes;
  }

  async reviewedFlags(scope: string | undefined, from: number): Promise<FlagRecord[]> {
    const where = scope === undefined ? '' : 'scope = ? AND ';
    const { rows } = await this.w(
      `SELECT * FROM ~watch_scores WHERE ${where}outcome IS NOT NULL AND reviewed_at >= ? ORDER BY reviewed_at, key`,
      scope === undefined ? [from] : [scope, from],
    );
    return rows.map(flagFrom);
  }

  async setPrecisionBound(scope: string, bound: number | null): Promise<void> {
    await this.w(
      'INSERT INTO ~watch_scope (scope, precision_bound) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET precision_bound = excluded.precision_bound',
      [scope, bound],
    );
  }

  async claimSuggestion(scope: string, channelId: string, preset: Preset, reviews: number, now: number): Promise<boolean> {
    // One statement: of two moderators answering at once, one posts the suggestion. Again only for
    // another preset, or after ten more reviews.
    const { changes } = await this.w(
      `INSERT INTO ~watch_suggestions (scope, channel_id, preset, reviews, posted_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (scope, channel_id) DO UPDATE SET preset = excluded.preset, reviews = excluded.reviews, posted_at = excluded.posted_at
       WHERE ~watch_suggestions.preset <> excluded.preset OR excluded.reviews >= ~watch_suggestions.reviews + 10`,
      [scope, channelId, preset, reviews, now],
    );
    return changes > 0;
  }

  /** The report of the last 7 and 30 days; a channel with nothing in the week shows empty counts there. */
  async report(scope: string, now: number): Promise<ReportData> {
    const today = dayOf(now);
    const week = await this.#counts(scope, (today - 6) * DAY_MS);
    const month = await this.#counts(scope, (today - 29) * DAY_MS);
    const channels: ReportData['channels'] = new Map();
    for (const [channelId, counts] of month) channels.set(channelId, { week: week.get(channelId) ?? emptyCounts(), month: counts });
    return { channels };
  }

  async sweep(now: number): Promise<void> {
    const gone = await this.w('DELETE FROM ~watch_scores WHERE expires_at <= ?', [now]);
    await this.w('DELETE FROM ~watch_author_cards WHERE until <= ?', [now]);
    await this.w('DELETE FROM ~watch_channel_hours WHERE hour < ?', [Math.floor(now / HOUR_MS) - 1]);
    const cleared = await this.w('DELETE FROM ~watch_clearings WHERE expires_at <= ?', [now]);
    if (gone.changes + cleared.changes > 0) await this.deleted();
  }

  async deleteScope(scope: string): Promise<void> {
    await this.ready();
    await this.#w.transaction(async (tx) => {
      for (const table of WATCH_TABLES) await tx.run(`DELETE FROM ~watch_${table} WHERE scope = ?`, [scope]);
    });
    await this.deleted();
  }

  /** The sources imported so far, with what each brought (the log at start, and tests). */
  async imports(): Promise<{ source: string; scopes: number; channels: number }[]> {
    const { rows } = await this.w('SELECT source, scopes, channels FROM ~watch_imports ORDER BY source');
    return rows.map((r) => ({ source: String(r.source), scopes: Number(r.scopes), channels: Number(r.channels) }));
  }

  /**
   * Copies what an earlier version kept in `legacy` once: the import row is taken first, in the
   * same transaction, so of processes starting together one imports and the others find it done.
   * A scope that already has configuration here keeps it; scores and queued messages already here
   * win over the copies.
   */
  async #import(legacy: LegacyWatchSource): Promise<void> {
    const done = await this.#w.run('SELECT 1 FROM ~watch_imports WHERE source = ?', [legacy.source]);
    if (done.rows.length === 0) await this.#copy(legacy, await legacy.read());
    await legacy.done?.();
  }

  async #copy(legacy: LegacyWatchSource, records: LegacyWatchRecords): Promise<void> {
    await this.#w.transaction(async (tx) => {
      const taken = await tx.run(
        'INSERT INTO ~watch_imports (source, imported_at, scopes, channels) VALUES (?, ?, 0, 0) ON CONFLICT DO NOTHING',
        [legacy.source, this.now()],
      );
      if (taken.changes === 0) return;
      let scopes = 0;
      let channels = 0;
      for (const [scope, config] of records.configs) {
        const present = await tx.run(
          'SELECT 1 FROM ~watch_channels WHERE scope = ? UNION ALL SELECT 1 FROM ~watch_exempt WHERE scope = ? UNION ALL SELECT 1 FROM ~watch_scope WHERE scope = ?',
          [scope, scope, scope],
        );
        if (present.rows.length > 0) continue;
        for (const c of config.channels) {
          await tx.run('INSERT INTO ~watch_channels (scope, channel_id, since, cards) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [
            scope,
            c.channelId,
            c.since,
            c.cards,
          ]);
        }
        for (const id of config.exemptIds)
          await tx.run('INSERT INTO ~watch_exempt (scope, id) VALUES (?, ?) ON CONFLICT DO NOTHING', [scope, id]);
        if (config.preset || config.retentionDays !== undefined) {
          await tx.run('INSERT INTO ~watch_scope (scope, preset, retention_days) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
            scope,
            config.preset,
            config.retentionDays,
          ]);
        }
        if (config.channels.length > 0 || config.exemptIds.length > 0 || config.preset || config.retentionDays !== undefined) scopes += 1;
        channels += config.channels.length;
      }
      for (const score of records.scores ?? []) await tx.run(INSERT_SCORE, scoreRow(score));
      for (const item of records.pending ?? []) await tx.run(INSERT_PENDING, pendingRow(item));
      await tx.run('UPDATE ~watch_imports SET scopes = ?, channels = ? WHERE source = ?', [scopes, channels, legacy.source]);
    });
  }

  async #counts(scope: string, from: number): Promise<Map<string, ChannelCounts>> {
    const count = (condition: string, name: string) => `SUM(CASE WHEN ${condition} THEN 1 ELSE 0 END) AS "${name}"`;
    const columns = [
      ...PRESETS.map((p) => count(`(presets & ${PRESET_BITS[p]}) > 0`, `p_${p}`)),
      ...CARD_STATES.map((c) => count(`card = '${c}'`, `c_${c}`)),
      ...OUTCOMES.map((o) => count(`outcome = '${o}'`, `o_${o}`)),
    ];
    const { rows } = await this.w(
      `SELECT channel_id, COUNT(*) AS scored, ${columns.join(', ')} FROM ~watch_scores WHERE scope = ? AND posted_at >= ? GROUP BY channel_id`,
      [scope, from],
    );
    const out = new Map<string, ChannelCounts>();
    for (const row of rows) {
      const counts = emptyCounts();
      counts.scored = Number(row.scored);
      for (const p of PRESETS) counts.byPreset[p] = Number(row[`p_${p}`] ?? 0);
      for (const c of CARD_STATES) counts.cards[c] = Number(row[`c_${c}`] ?? 0);
      for (const o of OUTCOMES) counts.outcomes[o] = Number(row[`o_${o}`] ?? 0);
      out.set(String(row.channel_id), counts);
    }
    return out;
  }
}
