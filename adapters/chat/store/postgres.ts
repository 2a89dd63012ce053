/**
 * The PostgreSQL backend (`DATABASE_URL`), shared by every bot process on every machine: settings,
 * installations and watching's records with its queue, over one pool. Table names start with `bot_`
 * so the bots can share a database with other applications.
 *
 * Two schemas, each versioned as it shipped: `bot_schema_migrations` (settings, installations) and
 * `bot_watch_schema_migrations` (watching). Each migration runs once, in order, in one transaction
 * that holds an advisory lock, so processes starting together migrate once. A database at a newer
 * version than this build knows is refused, as is one that cannot be reached.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { migrationsAfter, type Row, type SqlConnection, type SqlRunner, SqlStore } from './sql.ts';
import type { LegacyWatchSource } from './types.ts';

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

const WATCH_MIGRATIONS: readonly string[] = [
  // 1: `seq` orders messages queued in the same millisecond by arrival.
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
  // 2: the one-time imports of what an earlier version kept elsewhere (index.ts).
  `CREATE TABLE bot_watch_imports (source TEXT PRIMARY KEY, imported_at BIGINT NOT NULL, scopes INTEGER NOT NULL, channels INTEGER NOT NULL)`,
  // 3 (issue 33): what reviews teach: the preset and words behind each score, moderators' clearings
  // of members, the scope's precision bound, and the last stricter preset suggested per channel.
  `ALTER TABLE bot_watch_scores ADD COLUMN preset TEXT;
   ALTER TABLE bot_watch_scores ADD COLUMN words INTEGER;
   ALTER TABLE bot_watch_scope ADD COLUMN precision_bound DOUBLE PRECISION;
   CREATE INDEX bot_watch_scores_reviewed ON bot_watch_scores (scope, reviewed_at) WHERE outcome IS NOT NULL;
   CREATE TABLE bot_watch_clearings (scope TEXT NOT NULL, flag_id TEXT NOT NULL, author_id TEXT NOT NULL, channel_id TEXT NOT NULL,
     reviewer_id TEXT NOT NULL, cleared_at BIGINT NOT NULL, probability DOUBLE PRECISION NOT NULL, words INTEGER NOT NULL,
     expires_at BIGINT NOT NULL, PRIMARY KEY (scope, flag_id));
   CREATE INDEX bot_watch_clearings_author ON bot_watch_clearings (scope, author_id);
   CREATE INDEX bot_watch_clearings_expiry ON bot_watch_clearings (expires_at);
   CREATE TABLE bot_watch_suggestions (scope TEXT NOT NULL, channel_id TEXT NOT NULL, preset TEXT NOT NULL, reviews INTEGER NOT NULL,
     posted_at BIGINT NOT NULL, PRIMARY KEY (scope, channel_id))`,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;
export const WATCH_POSTGRES_SCHEMA_VERSION = WATCH_MIGRATIONS.length;

interface Schema {
  migrations: readonly string[];
  versionTable: string;
  /** Advisory lock key: any constant, the same in every process, one per schema. */
  lock: number;
  /** For messages: "bot", "watch". */
  name: string;
}
const BOT_SCHEMA: Schema = { migrations: MIGRATIONS, versionTable: 'bot_schema_migrations', lock: 7_146_921_337, name: 'bot' };
const WATCH_SCHEMA: Schema = {
  migrations: WATCH_MIGRATIONS,
  versionTable: 'bot_watch_schema_migrations',
  lock: 7_146_921_338,
  name: 'watch',
};

/** A URL with its password replaced, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'an unreadable DATABASE_URL';
  }
}

/** `?` → `$n` and `~` → `bot_`, once per statement text. */
const translated = new Map<string, string>();
function translate(sql: string): string {
  let out = translated.get(sql);
  if (out === undefined) {
    let n = 0;
    out = sql.replace(/~/g, 'bot_').replace(/\?/g, () => `$${++n}`);
    translated.set(sql, out);
  }
  return out;
}

async function runOn(client: pg.Pool | pg.PoolClient, sql: string, params: unknown[] = []): Promise<{ rows: Row[]; changes: number }> {
  const result = await client.query<Row>(translate(sql), params);
  return { rows: result.rows, changes: result.rowCount ?? 0 };
}

class PgConnection implements SqlConnection {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  run(sql: string, params?: unknown[]): Promise<{ rows: Row[]; changes: number }> {
    return runOn(this.pool, sql, params);
  }

  async transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const value = await work({ run: (sql, params) => runOn(client, sql, params) });
      await client.query('COMMIT');
      return value;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

export interface PostgresStoreOptions {
  logger?: Logger | undefined;
  now?: () => number;
  /** Stops the bot schema's migrations at this version (tests of upgrades from an older version). */
  targetVersion?: number;
  /** The same for watching's schema. */
  watchTargetVersion?: number;
  /** Connections per process; default 10. */
  maxConnections?: number;
  /** What an earlier version kept elsewhere, imported once after the migrations (index.ts). */
  imports?: LegacyWatchSource[];
}

export class PostgresStore extends SqlStore {
  readonly kind = 'postgres' as const;
  readonly #connection: PgConnection;
  readonly #url: string;
  readonly #options: PostgresStoreOptions;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'textdetect-bots',
    });
    // A connection the server drops (a restart, pg_terminate_backend) emits 'error' on its client,
    // idle in the pool or checked out; unhandled, that ends the process. The pool's own handler
    // covers idle clients only, so every client gets one; the query in flight fails on its own.
    let lastLogged = 0;
    const log = (err: Error): void => {
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      options.logger?.warn({ err: err.message }, 'bot database connection error');
    };
    pool.on('error', log);
    pool.on('connect', (client) => client.on('error', log));
    const connection = new PgConnection(pool);
    super(connection, connection, options.now, options.imports);
    this.#connection = connection;
    this.#url = url;
    this.#options = options;
  }

  /** The pool (diagnostics and tests: a connection the server drops must not end the process). */
  get pool(): pg.Pool {
    return this.#connection.pool;
  }

  override readSchemaVersion(): Promise<number> {
    return this.#version(this.#connection.pool, BOT_SCHEMA);
  }

  readWatchSchemaVersion(): Promise<number> {
    return this.#version(this.#connection.pool, WATCH_SCHEMA);
  }

  override async close(): Promise<void> {
    if (!this.#connection.pool.ended) await this.#connection.pool.end();
  }

  protected override async migrate(): Promise<void> {
    await this.#migrate(BOT_SCHEMA, this.#options.targetVersion);
    await this.#migrate(WATCH_SCHEMA, this.#options.watchTargetVersion);
  }

  async #version(client: pg.Pool | pg.PoolClient, schema: Schema): Promise<number> {
    const { rows } = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${schema.versionTable}`);
    return Number(rows[0]?.version ?? 0);
  }

  async #migrate(schema: Schema, targetVersion = schema.migrations.length): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.#connection.pool.connect();
    } catch (err) {
      throw new Error(
        `Could not connect to the ${schema.name} database at ${redactDatabaseUrl(this.#url)} (${(err as Error).message}); check DATABASE_URL and that PostgreSQL is running.`,
      );
    }
    try {
      await client.query('BEGIN');
      // Held until COMMIT: a second process starting now waits here, then finds the work done.
      await client.query('SELECT pg_advisory_xact_lock($1)', [schema.lock]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${schema.versionTable} (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
      const from = await this.#version(client, schema);
      for (const { version, sql } of migrationsAfter(schema.migrations, from, targetVersion, schema.name, 'DATABASE_URL')) {
        await client.query(sql);
        await client.query(`INSERT INTO ${schema.versionTable} (version, applied_at) VALUES ($1, $2)`, [version, Date.now()]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
