/**
 * The embedded store: one SQLite file under `DATA_DIR`, opened with node:sqlite (built into Node 22,
 * no native add-on to compile). WAL mode lets a second process on the same machine share the file.
 * The schema is versioned: each migration runs once, in order, inside a transaction, and the
 * version reached is recorded in `schema_migrations`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { currentVersion, type Database, loadDatabaseSync, migrate } from '../sqlite-driver.ts';
import {
  SETTING_NAMES,
  settingsFromFields,
  type ChatStore,
  type DurableStore,
  type InstallationRow,
  type ScopeSettings,
  type SettingsPatch,
  type ShortLivedStore,
  type StoredInstallation,
} from './types.ts';

export const DATABASE_FILE = 'textdetect-bots.sqlite';

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

/** The newest schema version this build knows. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/** Expired rows are deleted at most this often (and on open), so texts do not linger past their TTL. */
const SWEEP_INTERVAL_MS = 60_000;

export class SqliteChatStore implements ChatStore, DurableStore, ShortLivedStore {
  readonly kind = 'sqlite' as const;
  readonly path: string;
  readonly #db: Database;
  readonly #sweeper: NodeJS.Timeout;
  readonly #now: () => number;

  /** `targetVersion` stops the migrations there (tests of upgrades from an older version). */
  constructor(dataDir: string, options: { now?: () => number; targetVersion?: number } = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, DATABASE_FILE);
    const DatabaseSync = loadDatabaseSync();
    this.#db = new DatabaseSync(this.path);
    this.#now = options.now ?? Date.now;
    this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000; PRAGMA synchronous = NORMAL;');
    migrate(this.#db, MIGRATIONS, 'bot', options.targetVersion);
    this.#sweep();
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  /** The schema version the file is at. */
  get schemaVersion(): number {
    return currentVersion(this.#db);
  }

  /** Migrations run in the constructor; nothing is left to wait for. */
  async ready(): Promise<void> {}

  async readSchemaVersion(): Promise<number> {
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

  async forgetChecks(idPrefix: string): Promise<number> {
    // substr rather than LIKE: ids may hold % or _, which LIKE would read as wildcards.
    const result = this.#db.prepare('DELETE FROM checks WHERE substr(id, 1, ?) = ?').run(idPrefix.length, idPrefix);
    return Number(result.changes);
  }

  async saveInstallation(row: InstallationRow): Promise<void> {
    const now = this.#now();
    this.#db
      .prepare(
        `INSERT INTO installations (key, enterprise_id, team_id, is_enterprise_install, data, token_expires_at, installed_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET enterprise_id = excluded.enterprise_id, team_id = excluded.team_id,
           is_enterprise_install = excluded.is_enterprise_install, data = excluded.data, token_expires_at = excluded.token_expires_at,
           refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = excluded.updated_at`,
      )
      .run(
        row.key,
        row.enterpriseId ?? null,
        row.teamId ?? null,
        row.isEnterpriseInstall ? 1 : 0,
        row.data,
        row.tokenExpiresAt ?? null,
        now,
        now,
      );
  }

  async findInstallation(key: string): Promise<StoredInstallation | undefined> {
    const row = this.#db.prepare('SELECT * FROM installations WHERE key = ?').get(key);
    if (!row) return undefined;
    const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
    return {
      key: String(row.key),
      enterpriseId: row.enterprise_id === null ? undefined : String(row.enterprise_id),
      teamId: row.team_id === null ? undefined : String(row.team_id),
      isEnterpriseInstall: Number(row.is_enterprise_install) === 1,
      data: String(row.data),
      tokenExpiresAt: num(row.token_expires_at),
      installedAt: Number(row.installed_at),
      updatedAt: Number(row.updated_at),
      refreshLeaseUntil: num(row.refresh_lease_until),
    };
  }

  async takeRefreshLease(key: string, owner: string, leaseMs: number, seenData?: string): Promise<boolean> {
    const now = this.#now();
    // One statement: of two processes on the file, only one sees its update change the row.
    const result = this.#db
      .prepare(
        `UPDATE installations SET refresh_lease_owner = ?, refresh_lease_until = ?
         WHERE key = ? AND (refresh_lease_until IS NULL OR refresh_lease_until <= ?) AND (? IS NULL OR data = ?)`,
      )
      .run(owner, now + leaseMs, key, now, seenData ?? null, seenData ?? null);
    return Number(result.changes) > 0;
  }

  async saveRefreshedInstallation(key: string, owner: string, data: string, tokenExpiresAt: number | undefined): Promise<boolean> {
    const result = this.#db
      .prepare(
        `UPDATE installations SET data = ?, token_expires_at = ?, refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = ?
         WHERE key = ? AND refresh_lease_owner = ?`,
      )
      .run(data, tokenExpiresAt ?? null, this.#now(), key, owner);
    return Number(result.changes) > 0;
  }

  async countInstallations(): Promise<number> {
    return Number(this.#db.prepare('SELECT COUNT(*) AS n FROM installations').get()?.n ?? 0);
  }

  async recentInstallationData(limit: number): Promise<string[]> {
    return this.#db
      .prepare('SELECT data FROM installations ORDER BY updated_at DESC LIMIT ?')
      .all(limit)
      .map((row) => String(row.data));
  }

  async linkScope(parent: string, scope: string): Promise<void> {
    this.#db.prepare('INSERT INTO scope_links (parent, scope) VALUES (?, ?) ON CONFLICT DO NOTHING').run(parent, scope);
  }

  async findParentScope(scope: string): Promise<string | undefined> {
    const row = this.#db.prepare('SELECT parent FROM scope_links WHERE scope = ? LIMIT 1').get(scope);
    return row ? String(row.parent) : undefined;
  }

  async deleteScope(scope: string): Promise<string[]> {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const linked = this.#db
        .prepare('SELECT scope FROM scope_links WHERE parent = ?')
        .all(scope)
        .map((r) => String(r.scope));
      const scopes = [scope, ...linked.filter((s) => s !== scope)];
      const dropSettings = this.#db.prepare('DELETE FROM settings WHERE scope = ?');
      for (const s of scopes) dropSettings.run(s);
      this.#db.prepare('DELETE FROM scope_links WHERE parent = ? OR scope = ?').run(scope, scope);
      this.#db.prepare('DELETE FROM installations WHERE key = ?').run(scope);
      this.#db.exec('COMMIT');
      return scopes;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
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
