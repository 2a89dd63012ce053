/**
 * Throw-away PostgreSQL databases for tests: each call creates `textdetect_test_<random>` on the
 * server of `TEST_POSTGRES_URL` (default the local server, user postgres, trust authentication) and
 * drops it afterwards, so runs never share or leave state.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** Connection URL of the new, empty database. */
  readonly url: string;
  readonly name: string;
  /** Drops the database (closing whatever is still connected to it). */
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (${(err as Error).message}). The tests need a real server: start it ` +
        '(e.g. pg_ctlcluster <version> main start) or point TEST_POSTGRES_URL at one.',
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `textdetect_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}
