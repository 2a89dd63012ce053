/**
 * What deletions leave behind, on the real databases: a text deleted from SQLite is gone from the
 * file's bytes and the WAL's (secure_delete, then a checkpoint), and a PostgreSQL connection the
 * server terminates while the bot holds it does not end the process with an unhandled 'error'.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, SqliteStore } from '../../adapters/chat/store/index.ts';
import { DATABASE_FILE } from '../../adapters/chat/store/sqlite.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

let dir: string;
let db: TestDatabase;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'store-deletion-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

/** Whether `marker` is anywhere in the bytes of the database file or its WAL. */
function inFileBytes(folder: string, marker: string): { file: boolean; wal: boolean } {
  const read = (path: string) => (existsSync(path) ? readFileSync(path).includes(Buffer.from(marker)) : false);
  return { file: read(join(folder, DATABASE_FILE)), wal: read(join(folder, `${DATABASE_FILE}-wal`)) };
}

describe('SQLite: a deleted text leaves no bytes behind', () => {
  it('after the sweep removed an expired record, in a later run', async () => {
    const folder = join(dir, 'sweep');
    const marker = `secret-text-${Date.now()}-sweep`;
    let now = Date.now();
    const first = new SqliteStore(folder, { now: () => now });
    await first.saveCheck('c1', { text: marker }, 1_000);
    await first.close(); // the last connection checkpoints: the text is in the file now
    expect(inFileBytes(folder, marker).file).toBe(true);
    now += 5_000;
    const second = new SqliteStore(folder, { now: () => now }); // sweeps expired records on open
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(await second.loadCheck('c1', 1_000)).toBeUndefined();
      expect(inFileBytes(folder, marker)).toEqual({ file: false, wal: false });
    } finally {
      await second.close();
    }
    expect(inFileBytes(folder, marker)).toEqual({ file: false, wal: false });
  });

  it('after an uninstall forgot a workspace’s records, while the store stays open', async () => {
    const folder = join(dir, 'forget');
    const marker = `secret-text-${Date.now()}-forget`;
    const store = new SqliteStore(folder);
    try {
      await store.saveCheck('slack:check:T1:a', { text: marker }, 60_000);
      expect(inFileBytes(folder, marker).wal).toBe(true);
      expect(await store.forgetChecks('slack:check:T1:')).toBe(1);
      expect(inFileBytes(folder, marker)).toEqual({ file: false, wal: false });
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL: a terminated connection', () => {
  it('is logged, not thrown, while the bot holds it; the store keeps working', async () => {
    const store = new PostgresStore(db.url);
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      await store.ready();
      // Checked out and idle between two statements, as inside a transaction.
      const client = await store.pool.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await admin.end();
      await new Promise((r) => setTimeout(r, 500));
      client.release(true);
      expect(uncaught).toEqual([]);
      await store.updateSettings('discord:1', { defaultMode: 'legal' });
      expect(await store.getSettings('discord:1')).toEqual({ defaultMode: 'legal' });
    } finally {
      process.off('uncaughtException', onUncaught);
      await store.close();
    }
  });
});
