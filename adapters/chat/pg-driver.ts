/**
 * The PostgreSQL side of the bots' stores, shared by the durable store (store/postgres.ts) and the
 * watch store (watch/store-postgres.ts): one pool setup, one transaction helper and one migration
 * runner, so both databases' schemas are versioned the same way.
 */
import pg from 'pg';
import type { Logger } from 'pino';

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

export function openPool(url: string, options: { logger?: Logger | undefined; maxConnections?: number; what: string }): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'textdetect-bots',
  });
  // An idle connection dropped by the server emits here; unhandled, it would end the process.
  let lastLogged = 0;
  pool.on('error', (err) => {
    if (Date.now() - lastLogged < 60_000) return;
    lastLogged = Date.now();
    options.logger?.warn({ err: err.message }, `${options.what} connection error`);
  });
  return pool;
}

export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const value = await work(client);
    await client.query('COMMIT');
    return value;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** A schema: its migrations (index = version - 1), the table recording the version, and who it is for messages. */
export interface Schema {
  migrations: readonly string[];
  /** `bot_schema_migrations` for the durable store, `bot_watch_schema_migrations` for watching. */
  versionTable: string;
  /** Advisory lock key: any constant, the same in every process of the application, one per schema. */
  lock: number;
  /** For the error about a newer database: "bot", "watch". */
  name: string;
}

/** The schema version a database has reached (0: none yet). */
export async function currentVersion(client: pg.Pool | pg.PoolClient, schema: Pick<Schema, 'versionTable'>): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${schema.versionTable}`);
  return Number(rows[0]?.version ?? 0);
}

/**
 * Brings the database up to `targetVersion` (default: every migration), each migration once, in
 * order, in one transaction that holds an advisory lock, so processes starting together migrate
 * once. A database at a newer version than this build knows is refused, as is one that cannot be reached.
 */
export async function migrate(pool: pg.Pool, url: string, schema: Schema, targetVersion = schema.migrations.length): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new Error(
      `Could not connect to the ${schema.name} database at ${redactDatabaseUrl(url)} (${(err as Error).message}); check DATABASE_URL and that PostgreSQL is running.`,
    );
  }
  try {
    await client.query('BEGIN');
    // Held until COMMIT: a second process starting now waits here, then finds the work done.
    await client.query('SELECT pg_advisory_xact_lock($1)', [schema.lock]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema.versionTable} (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const from = await currentVersion(client, schema);
    const known = schema.migrations.length;
    if (from > known) {
      throw new Error(
        `The ${schema.name} database is at schema version ${from}, newer than this build knows (${known}); run the newer bot or point DATABASE_URL elsewhere.`,
      );
    }
    for (let version = from + 1; version <= Math.min(targetVersion, known); version++) {
      await client.query(schema.migrations[version - 1]!);
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
