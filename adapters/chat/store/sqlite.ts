/**
 * The embedded store: one SQLite file under `DATA_DIR`, opened with node:sqlite (built into Node 22,
 * no native add-on to compile). WAL mode lets a second process on the same machine share the file.
 * The schema is versioned: each migration runs once, in order, inside a transaction, and the
 * version reached is recorded in `schema_migrations`.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SETTING_NAMES, settingsFromFields, type ChatStore, type ScopeSettings, type SettingsPatch } from './types.ts';

/** The part of node:sqlite used here (typed locally: the installed @types/node predates the module). */
interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
type DatabaseConstructor = new (path: string) => Database;

export const DATABASE_FILE = 'textdetect-bots.sqlite';

/**
 * node:sqlite, loaded without the `ExperimentalWarning: SQLite is an experimental feature` Node 22
 * prints on every start: the module is what the bots are built on, not an experiment to warn
 * moderators' admins about. Only that one warning is held back, while the module loads (node emits
 * it synchronously from the load); every other warning still goes out.
 */
function loadDatabaseSync(): DatabaseConstructor {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const message = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    const name = typeof warning === 'string' ? type : warning.name;
    if (name === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(message)) return;
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return (createRequire(import.meta.url)('node:sqlite') as { DatabaseSync: DatabaseConstructor }).DatabaseSync;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** Index = version - 1. Append new migrations; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE checks (id TEXT PRIMARY KEY, record TEXT NOT NULL, expires_at INTEGER NOT NULL);
   CREATE INDEX checks_expiry ON checks (expires_at);
   CREATE TABLE settings (scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (scope, name));
   CREATE TABLE claims (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
   CREATE INDEX claims_expiry ON claims (expires_at);`,
];

/** Expired rows are deleted at most this often (and on open), so texts do not linger past their TTL. */
const SWEEP_INTERVAL_MS = 60_000;

export class SqliteChatStore implements ChatStore {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  readonly #db: Database;
  readonly #sweeper: NodeJS.Timeout;
  readonly #now: () => number;

  constructor(dataDir: string, options: { now?: () => number } = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, DATABASE_FILE);
    const DatabaseSync = loadDatabaseSync();
    this.#db = new DatabaseSync(this.path);
    this.#now = options.now ?? Date.now;
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000; PRAGMA synchronous = NORMAL;');
    migrate(this.#db);
    this.#sweep();
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  /** The schema version the file is at. */
  get schemaVersion(): number {
    return currentVersion(this.#db);
  }

  async saveCheck(id: string, record: unknown, ttlMs: number): Promise<void> {
    this.#db
      .prepare(
        'INSERT INTO checks (id, record, expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record, expires_at = excluded.expires_at',
      )
      .run(id, JSON.stringify(record), this.#now() + ttlMs);
  }

  async loadCheck(id: string, ttlMs: number): Promise<unknown> {
    const now = this.#now();
    const row = this.#db.prepare('SELECT record FROM checks WHERE id = ? AND expires_at > ?').get(id, now);
    if (!row) return undefined;
    this.#db.prepare('UPDATE checks SET expires_at = ? WHERE id = ?').run(now + ttlMs, id);
    return JSON.parse(String(row.record));
  }

  async getSettings(scope: string): Promise<ScopeSettings> {
    const rows = this.#db.prepare('SELECT name, value FROM settings WHERE scope = ?').all(scope);
    return settingsFromFields(Object.fromEntries(rows.map((r) => [String(r.name), String(r.value)])));
  }

  async updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    const upsert = this.#db.prepare(
      'INSERT INTO settings (scope, name, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    const remove = this.#db.prepare('DELETE FROM settings WHERE scope = ? AND name = ?');
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      for (const name of SETTING_NAMES) {
        const value = patch[name];
        if (value === undefined) continue;
        if (value === null) remove.run(scope, name);
        else upsert.run(scope, name, value, this.#now());
      }
      this.#db.exec('COMMIT');
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
    return this.getSettings(scope);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.#now();
    // One statement, so two processes on the same file cannot both win: an expired claim is taken
    // over, a live one is left alone (0 rows changed).
    const result = this.#db
      .prepare(
        'INSERT INTO claims (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE claims.expires_at <= ?',
      )
      .run(key, now + ttlMs, now);
    return Number(result.changes) > 0;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    try {
      this.#db.close();
    } catch {
      // Already closed: close() is idempotent.
    }
  }

  #sweep(): void {
    const now = this.#now();
    this.#db.prepare('DELETE FROM checks WHERE expires_at <= ?').run(now);
    this.#db.prepare('DELETE FROM claims WHERE expires_at <= ?').run(now);
  }
}

function currentVersion(db: Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get();
  return Number(row?.version ?? 0);
}

function migrate(db: Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  // IMMEDIATE takes the write lock first, so two instances starting together do not both migrate.
  db.exec('BEGIN IMMEDIATE');
  try {
    const from = currentVersion(db);
    if (from > MIGRATIONS.length) {
      throw new Error(
        `The bot database is at schema version ${from}, newer than this build knows (${MIGRATIONS.length}); run the newer bot or point DATA_DIR elsewhere.`,
      );
    }
    for (let version = from + 1; version <= MIGRATIONS.length; version++) {
      db.exec(MIGRATIONS[version - 1]!);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
