/**
 * The durable store in PostgreSQL (`DATABASE_URL`), shared by every bot process on every machine:
 * installations, per-workspace/per-server settings and organisation → workspace links. Every SQL
 * statement of this store is in this module.
 *
 * The schema is versioned: each migration runs once, in order, in one transaction that holds an
 * advisory lock, so processes starting together migrate once; the version reached is recorded in
 * `bot_schema_migrations`. A database at a newer version than this build knows is refused. Table
 * names start with `bot_` so the bots can share a database with other applications.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { currentVersion, migrate, openPool, type Schema, transaction } from '../pg-driver.ts';
import {
  SETTING_NAMES,
  settingsFromFields,
  type DurableStore,
  type InstallationRow,
  type ScopeSettings,
  type SettingsPatch,
  type StoredInstallation,
} from './types.ts';

/** Index = version - 1. Append new migrations; never edit one that has shipped. */
const MIGRATIONS: readonly string[] = [
  // 1: settings, as the bots kept them before installations existed.
  `CREATE TABLE bot_settings (scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at BIGINT NOT NULL,
     PRIMARY KEY (scope, name))`,
  // 2: installations (Slack OAuth) with their token-refresh lease, and organisation → workspace links.
  `CREATE TABLE bot_installations (key TEXT PRIMARY KEY, enterprise_id TEXT, team_id TEXT,
     is_enterprise_install BOOLEAN NOT NULL DEFAULT FALSE, data TEXT NOT NULL, token_expires_at BIGINT,
     refresh_lease_owner TEXT, refresh_lease_until BIGINT, installed_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
   CREATE INDEX bot_installations_enterprise ON bot_installations (enterprise_id);
   CREATE TABLE bot_scope_links (parent TEXT NOT NULL, scope TEXT NOT NULL, PRIMARY KEY (parent, scope))`,
];

/** The newest schema version this build knows. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

const SCHEMA: Schema = { migrations: MIGRATIONS, versionTable: 'bot_schema_migrations', lock: 7_146_921_337, name: 'bot' };

export interface PostgresStoreOptions {
  logger?: Logger | undefined;
  now?: () => number;
  /** Stops the migrations at this version (tests of upgrades from an older version). */
  targetVersion?: number;
  /** Connections per process; default 10. */
  maxConnections?: number;
}

export class PostgresDurableStore implements DurableStore {
  readonly kind = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #now: () => number;
  readonly #targetVersion: number;
  readonly #url: string;
  #ready: Promise<void> | undefined;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#url = url;
    this.#now = options.now ?? Date.now;
    this.#targetVersion = options.targetVersion ?? MIGRATIONS.length;
    this.#pool = openPool(url, { logger: options.logger, maxConnections: options.maxConnections, what: 'bot database' });
  }

  ready(): Promise<void> {
    this.#ready ??= this.#migrate().catch((err: unknown) => {
      this.#ready = undefined; // a later call tries again (the database may come up)
      throw err;
    });
    return this.#ready;
  }

  async readSchemaVersion(): Promise<number> {
    return currentVersion(this.#pool, SCHEMA);
  }

  async getSettings(scope: string): Promise<ScopeSettings> {
    await this.ready();
    const { rows } = await this.#pool.query<{ name: string; value: string }>('SELECT name, value FROM bot_settings WHERE scope = $1', [
      scope,
    ]);
    return settingsFromFields(Object.fromEntries(rows.map((r) => [r.name, r.value])));
  }

  async updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    await this.ready();
    await this.#transaction(async (client) => {
      for (const name of SETTING_NAMES) {
        const value = patch[name];
        if (value === undefined) continue;
        if (value === null) await client.query('DELETE FROM bot_settings WHERE scope = $1 AND name = $2', [scope, name]);
        else
          await client.query(
            `INSERT INTO bot_settings (scope, name, value, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (scope, name) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
            [scope, name, value, this.#now()],
          );
      }
    });
    return this.getSettings(scope);
  }

  async saveInstallation(row: InstallationRow): Promise<void> {
    await this.ready();
    const now = this.#now();
    await this.#pool.query(
      `INSERT INTO bot_installations (key, enterprise_id, team_id, is_enterprise_install, data, token_expires_at, installed_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (key) DO UPDATE SET enterprise_id = EXCLUDED.enterprise_id, team_id = EXCLUDED.team_id,
         is_enterprise_install = EXCLUDED.is_enterprise_install, data = EXCLUDED.data, token_expires_at = EXCLUDED.token_expires_at,
         refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = EXCLUDED.updated_at`,
      [row.key, row.enterpriseId ?? null, row.teamId ?? null, row.isEnterpriseInstall, row.data, row.tokenExpiresAt ?? null, now],
    );
  }

  async findInstallation(key: string): Promise<StoredInstallation | undefined> {
    await this.ready();
    const { rows } = await this.#pool.query<Record<string, unknown>>(
      `SELECT key, enterprise_id, team_id, is_enterprise_install, data, token_expires_at, refresh_lease_until, installed_at, updated_at
       FROM bot_installations WHERE key = $1`,
      [key],
    );
    const row = rows[0];
    if (!row) return undefined;
    // BIGINT arrives as a string (pg keeps 64-bit integers exact); these are ms timestamps, safe as numbers.
    const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
    return {
      key: String(row.key),
      enterpriseId: row.enterprise_id === null ? undefined : String(row.enterprise_id),
      teamId: row.team_id === null ? undefined : String(row.team_id),
      isEnterpriseInstall: row.is_enterprise_install === true,
      data: String(row.data),
      tokenExpiresAt: num(row.token_expires_at),
      installedAt: Number(row.installed_at),
      updatedAt: Number(row.updated_at),
      refreshLeaseUntil: num(row.refresh_lease_until),
    };
  }

  async takeRefreshLease(key: string, owner: string, leaseMs: number, seenData?: string): Promise<boolean> {
    await this.ready();
    const now = this.#now();
    // The row lock taken by UPDATE serialises concurrent callers; the loser re-checks the WHERE
    // against the winner's row and changes nothing.
    const result = await this.#pool.query(
      `UPDATE bot_installations SET refresh_lease_owner = $1, refresh_lease_until = $2
       WHERE key = $3 AND (refresh_lease_until IS NULL OR refresh_lease_until <= $4) AND ($5::text IS NULL OR data = $5)`,
      [owner, now + leaseMs, key, now, seenData ?? null],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async saveRefreshedInstallation(key: string, owner: string, data: string, tokenExpiresAt: number | undefined): Promise<boolean> {
    await this.ready();
    const result = await this.#pool.query(
      `UPDATE bot_installations SET data = $1, token_expires_at = $2, refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = $3
       WHERE key = $4 AND refresh_lease_owner = $5`,
      [data, tokenExpiresAt ?? null, this.#now(), key, owner],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async countInstallations(): Promise<number> {
    await this.ready();
    const { rows } = await this.#pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM bot_installations');
    return Number(rows[0]?.n ?? 0);
  }

  async recentInstallationData(limit: number): Promise<string[]> {
    await this.ready();
    const { rows } = await this.#pool.query<{ data: string }>('SELECT data FROM bot_installations ORDER BY updated_at DESC LIMIT $1', [
      limit,
    ]);
    return rows.map((row) => row.data);
  }

  async linkScope(parent: string, scope: string): Promise<void> {
    await this.ready();
    await this.#pool.query('INSERT INTO bot_scope_links (parent, scope) VALUES ($1, $2) ON CONFLICT DO NOTHING', [parent, scope]);
  }

  async findParentScope(scope: string): Promise<string | undefined> {
    await this.ready();
    const { rows } = await this.#pool.query<{ parent: string }>('SELECT parent FROM bot_scope_links WHERE scope = $1 LIMIT 1', [scope]);
    return rows[0]?.parent;
  }

  async deleteScope(scope: string): Promise<string[]> {
    await this.ready();
    return this.#transaction(async (client) => {
      const { rows } = await client.query<{ scope: string }>('SELECT scope FROM bot_scope_links WHERE parent = $1', [scope]);
      const scopes = [scope, ...rows.map((r) => r.scope).filter((s) => s !== scope)];
      await client.query('DELETE FROM bot_settings WHERE scope = ANY($1::text[])', [scopes]);
      await client.query('DELETE FROM bot_scope_links WHERE parent = $1 OR scope = $1', [scope]);
      await client.query('DELETE FROM bot_installations WHERE key = $1', [scope]);
      return scopes;
    });
  }

  async close(): Promise<void> {
    if (this.#pool.ended) return;
    await this.#pool.end();
  }

  #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return transaction(this.#pool, work);
  }

  #migrate(): Promise<void> {
    return migrate(this.#pool, this.#url, SCHEMA, this.#targetVersion);
  }
}
