/**
 * The part of node:sqlite the bots use, shared by the state store (store/sqlite.ts) and the watch store
 * (watch/store-sqlite.ts), so both open it the same way.
 */
import { createRequire } from 'node:module';

/** The part of node:sqlite used here (typed locally: the installed @types/node predates the module). */
export interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
export type DatabaseConstructor = new (path: string) => Database;

/**
 * node:sqlite, loaded without the `ExperimentalWarning: SQLite is an experimental feature` Node 22
 * prints on every start: the module is what the bots are built on, not an experiment to warn
 * moderators' admins about. Only that one warning is held back, while the module loads (node emits
 * it synchronously from the load); every other warning still goes out.
 */
export function loadDatabaseSync(): DatabaseConstructor {
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

/** The schema version a database file has reached (0: none yet). */
export function currentVersion(db: Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get();
  return Number(row?.version ?? 0);
}

/**
 * Brings a database file up to `targetVersion` (default: all of `migrations`), each migration once,
 * in order, recorded in `schema_migrations`. `name` says which file in the error for a newer one.
 */
export function migrate(db: Database, migrations: readonly string[], name: string, targetVersion = migrations.length): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  // IMMEDIATE takes the write lock first, so two instances starting together do not both migrate.
  db.exec('BEGIN IMMEDIATE');
  try {
    const from = currentVersion(db);
    if (from > migrations.length) {
      throw new Error(
        `The ${name} database is at schema version ${from}, newer than this build knows (${migrations.length}); run the newer bot or point DATA_DIR elsewhere.`,
      );
    }
    for (let version = from + 1; version <= Math.min(targetVersion, migrations.length); version++) {
      db.exec(migrations[version - 1]!);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
