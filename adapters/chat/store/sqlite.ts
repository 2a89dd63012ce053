/**
 * The SQLite backend (the default, one machine): node:sqlite (built into Node 22, no native add-on)
 * in WAL mode, so a second process on the machine can share the files. Two files under `DATA_DIR`,
 * as earlier versions kept them: `textdetect-bots.sqlite` (settings, installations, and the
 * short-lived texts behind buttons and retry claims when no Redis is set) and
 * `textdetect-watch.sqlite` (watching's records and its queue). Each schema is versioned: every
 * migration runs once, in order, recorded in `schema_migrations`.
 *
 * Deleted rows leave no text behind: `secure_delete` overwrites freed content, and after a deletion
 * the WAL is checkpointed and truncated, so a removed text is neither in the WAL nor in the file.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { migrationsAfter, type Row, type SqlConnection, type SqlRunner, SqlStore } from './sql.ts';
import type { ChatStore, LegacyWatchSource, ShortLivedStore } from './types.ts';

export const DATABASE_FILE = 'textdetect-bots.sqlite';
export const WATCH_DATABASE_FILE = 'textdetect-watch.sqlite';

/** Index = version - 1. Append new migrations; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE checks (id TEXT PRIMARY KEY, record TEXT NOT NULL, expires_at INTEGER NOT NULL);
   CREATE INDEX checks_expiry ON checks (expires_at);
   CREATE TABLE settings (scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (scope, name));
   CREATE TABLE claims (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
   CREATE INDEX claims_expiry ON claims (expires_at);`,
  // 2: installations (Slack OAuth) with their token-refresh lease, and organisation → workspace links.
  `CREATE TABLE installations (key TEXT PRIMARY KEY, enterprise_id TEXT, team_id TEXT, is_enterprise_install INTEGER NOT NULL DEFAULT 0,
     data TEXT NOT NULL, token_expires_at INTEGER, refresh_lease_owner TEXT, refresh_lease_until INTEGER,
     installed_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
   CREATE INDEX installations_enterprise ON installations (enterprise_id);
   CREATE TABLE scope_links (parent TEXT NOT NULL, scope TEXT NOT NULL, PRIMARY KEY (parent, scope));`,
];

const WATCH_MIGRATIONS: readonly string[] = [
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
  // 2: the one-time imports of what an earlier version kept elsewhere (index.ts).
  `CREATE TABLE watch_imports (source TEXT PRIMARY KEY, imported_at INTEGER NOT NULL, scopes INTEGER NOT NULL, channels INTEGER NOT NULL);`,
  // 3 (issue 33): what reviews teach: the preset and words behind each score, moderators' clearings
  // of members, the scope's precision bound, and the last stricter preset suggested per channel.
  `ALTER TABLE watch_scores ADD COLUMN preset TEXT;
   ALTER TABLE watch_scores ADD COLUMN words INTEGER;
   ALTER TABLE watch_scope ADD COLUMN precision_bound REAL;
   CREATE INDEX watch_scores_reviewed ON watch_scores (scope, reviewed_at) WHERE outcome IS NOT NULL;
   CREATE TABLE watch_clearings (scope TEXT NOT NULL, flag_id TEXT NOT NULL, author_id TEXT NOT NULL, channel_id TEXT NOT NULL,
     reviewer_id TEXT NOT NULL, cleared_at INTEGER NOT NULL, probability REAL NOT NULL, words INTEGER NOT NULL, expires_at INTEGER NOT NULL,
     PRIMARY KEY (scope, flag_id));
   CREATE INDEX watch_clearings_author ON watch_clearings (scope, author_id);
   CREATE INDEX watch_clearings_expiry ON watch_clearings (expires_at);
   CREATE TABLE watch_suggestions (scope TEXT NOT NULL, channel_id TEXT NOT NULL, preset TEXT NOT NULL, reviews INTEGER NOT NULL,
     posted_at INTEGER NOT NULL, PRIMARY KEY (scope, channel_id));`,
];

/** The newest schema version of the bots' file this build knows. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/** Expired rows are deleted at most this often (and on open), so texts do not linger past their TTL. */
const SWEEP_INTERVAL_MS = 60_000;

/** The part of node:sqlite used here (typed locally: the installed @types/node predates the module). */
interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  all(...params: unknown[]): Row[];
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

/**
 * node:sqlite, loaded without the `ExperimentalWarning` Node 22 prints on every start: only that
 * one warning, emitted synchronously while the module loads, is held back.
 */
function loadDatabaseSync(): new (path: string) => Database {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const message = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    const name = typeof warning === 'string' ? type : warning.name;
    if (name === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(message)) return;
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return (createRequire(import.meta.url)('node:sqlite') as { DatabaseSync: new (path: string) => Database }).DatabaseSync;
  } finally {
    process.emitWarning = emitWarning;
  }
}

const versionOf = (db: Database): number =>
  Number(db.prepare('SELECT MAX(version) AS version FROM schema_migrations').all()[0]?.version ?? 0);

/** Brings a file up to `targetVersion`, each migration once, in order; a file from a newer build is refused. */
function migrate(db: Database, migrations: readonly string[], name: string, targetVersion: number): void {
  db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;');
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  // IMMEDIATE takes the write lock first, so two instances starting together do not both migrate.
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const { version, sql } of migrationsAfter(migrations, versionOf(db), targetVersion, name, 'DATA_DIR')) {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    db.close();
    throw err;
  }
}

/**
 * One file. node:sqlite is synchronous, but a transaction's work is async (the shared statements
 * await each one), so everything on the file runs one after the other: a statement never lands
 * inside another caller's open transaction.
 */
class SqliteFile implements SqlConnection {
  readonly dialect = 'sqlite' as const;
  readonly #open: () => Database;
  readonly #statements = new Map<string, Statement>();
  #db: Database | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  /** `lazy`: opened at its first use (the watch file of a process that never watches is not created). */
  constructor(path: string, migrations: readonly string[], name: string, options: { targetVersion?: number; lazy?: boolean } = {}) {
    this.#open = () => {
      const db = new (loadDatabaseSync())(path);
      migrate(db, migrations, name, options.targetVersion ?? migrations.length);
      return db;
    };
    if (!options.lazy) this.#db = this.#open();
  }

  get db(): Database {
    this.#db ??= this.#open();
    return this.#db;
  }

  get opened(): boolean {
    return this.#db !== undefined;
  }

  version(): number {
    return versionOf(this.db);
  }

  run(sql: string, params: unknown[] = []): Promise<{ rows: Row[]; changes: number }> {
    return this.serial(() => this.#exec(sql, params));
  }

  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const value = await work({ run: async (sql, params = []) => this.#exec(sql, params) });
        this.db.exec('COMMIT');
        return value;
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  serial<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.#tail.then(work);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Copies the WAL into the file and empties it, so deleted rows' bytes are gone from both. */
  checkpoint(): Promise<void> {
    return this.serial(() => this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)'));
  }

  #exec(sql: string, params: unknown[] = []): { rows: Row[]; changes: number } {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql.replace(/~/g, ''));
      this.#statements.set(sql, statement);
    }
    const values = params.map((v) => (typeof v === 'boolean' ? Number(v) : (v ?? null)));
    if (/^\s*SELECT|RETURNING/i.test(sql)) {
      const rows = statement.all(...values);
      return { rows, changes: rows.length };
    }
    return { rows: [], changes: Number(statement.run(...values).changes) };
  }
}

export class SqliteStore extends SqlStore implements ChatStore, ShortLivedStore {
  readonly kind = 'sqlite' as const;
  /** The bots' file; `watchPath` is watching's. */
  readonly path: string;
  readonly watchPath: string;
  readonly #bots: SqliteFile;
  readonly #watch: SqliteFile;
  readonly #sweeper: NodeJS.Timeout;

  /** `targetVersion` stops the bots' file's migrations there (tests of upgrades from an older version). */
  constructor(dataDir: string, options: { now?: () => number; targetVersion?: number; imports?: LegacyWatchSource[] } = {}) {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, DATABASE_FILE);
    const watchPath = join(dataDir, WATCH_DATABASE_FILE);
    const bots = new SqliteFile(path, MIGRATIONS, 'bot', { targetVersion: options.targetVersion });
    const watch = new SqliteFile(watchPath, WATCH_MIGRATIONS, 'watch', { lazy: true });
    super(bots, watch, options.now, options.imports);
    this.path = path;
    this.watchPath = watchPath;
    this.#bots = bots;
    this.#watch = watch;
    void this.#sweep();
    this.#sweeper = setInterval(() => void this.#sweep(), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  /** The schema version the bots' file is at. */
  get schemaVersion(): number {
    return this.#bots.version();
  }

  override async readSchemaVersion(): Promise<number> {
    return this.#bots.version();
  }

  async saveCheck(id: string, record: unknown, ttlMs: number): Promise<void> {
    await this.b(
      'INSERT INTO checks (id, record, expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at',
      [id, JSON.stringify(record), this.now() + ttlMs],
    );
  }

  async loadCheck(id: string, ttlMs: number): Promise<unknown> {
    const now = this.now();
    const { rows } = await this.b('UPDATE checks SET expires_at = ? WHERE id = ? AND expires_at > ? RETURNING record', [
      now + ttlMs,
      id,
      now,
    ]);
    return rows[0] ? JSON.parse(String(rows[0].record)) : undefined;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    // One statement, so two processes on the same file cannot both win: an expired claim is taken
    // over, a live one is left alone (0 rows changed).
    const result = await this.b(
      'INSERT INTO claims (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE claims.expires_at <= ?',
      [key, now + ttlMs, now],
    );
    return result.changes > 0;
  }

  async forgetChecks(idPrefix: string): Promise<number> {
    // substr rather than LIKE: ids may hold % or _, which LIKE would read as wildcards.
    const result = await this.b('DELETE FROM checks WHERE substr(id, 1, ?) = ?', [idPrefix.length, idPrefix]);
    if (result.changes > 0) await this.#bots.checkpoint();
    return result.changes;
  }

  protected override async deleted(): Promise<void> {
    await this.#bots.checkpoint();
    if (this.#watch.opened) await this.#watch.checkpoint();
  }

  override async close(): Promise<void> {
    clearInterval(this.#sweeper);
    for (const file of [this.#bots, this.#watch].filter((f) => f.opened)) {
      await file.serial(() => {
        try {
          file.db.close();
        } catch {
          // Already closed: close() is idempotent.
        }
      });
    }
  }

  async #sweep(): Promise<void> {
    const now = this.now();
    try {
      const checks = await this.b('DELETE FROM checks WHERE expires_at <= ?', [now]);
      await this.b('DELETE FROM claims WHERE expires_at <= ?', [now]);
      if (checks.changes > 0) await this.#bots.checkpoint();
    } catch {
      // Closed meanwhile; the next open sweeps.
    }
  }
}
