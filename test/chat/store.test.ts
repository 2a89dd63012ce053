/**
 * The bots' state store against the real thing: node:sqlite on a temporary folder alone, and with
 * the short-lived part (button records, claims) in the Redis server of this test run.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultDataDir,
  openChatStore,
  PostgresStore,
  RedisStore,
  SplitChatStore,
  SqliteStore,
  storeLocationFromEnv,
  type ChatStore,
} from '../../adapters/chat/store/index.ts';
import { DATABASE_FILE, SQLITE_SCHEMA_VERSION } from '../../adapters/chat/store/sqlite.ts';
import { clearEverySetting } from '../../adapters/chat/store/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const REDIS_URL = process.env.REDIS_URL!;
const STORE_MODULE = fileURLToPath(new URL('../../adapters/chat/store/index.ts', import.meta.url));
const SQLITE_MODULE = fileURLToPath(new URL('../../adapters/chat/store/sqlite.ts', import.meta.url));
// By address: a child started in another folder would not find tsx from there.
const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** Runs an ES module snippet in a fresh node (with tsx, as the bots run from sources), in `cwd`. */
async function runNode(
  code: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  await mkdir(cwd, { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', code], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (exitCode) => resolve({ code: exitCode, stdout, stderr }));
  });
}
const RUN = Date.now();
let dir: string;
let db: TestDatabase;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-store-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

const implementations: [string, (name: string) => ChatStore][] = [
  ['SQLite', (name) => openChatStore({ dataDir: join(dir, name) })],
  [
    'SQLite with Redis',
    (name) =>
      new SplitChatStore(
        new SqliteStore(join(dir, `redis-${name}`)),
        new RedisStore(REDIS_URL, { prefix: `test:chat-store:${RUN}:${name}:` }),
      ),
  ],
  [
    'PostgreSQL with Redis',
    (name) => new SplitChatStore(new PostgresStore(db.url), new RedisStore(REDIS_URL, { prefix: `test:chat-store:${RUN}:pg-${name}:` })),
  ],
];

describe.each(implementations)('%s store', (_kind, open) => {
  it('keeps a check record until its TTL and renews it on each read', async () => {
    const store = open('ttl');
    try {
      await store.saveCheck('c1', { text: 'a moderator’s text', results: { general: { ai_probability: 0.4 } } }, 400);
      expect(await store.loadCheck('c1', 400)).toEqual({ text: 'a moderator’s text', results: { general: { ai_probability: 0.4 } } });
      await new Promise((r) => setTimeout(r, 250));
      expect(await store.loadCheck('c1', 400)).toBeDefined(); // renewed for another 400 ms
      await new Promise((r) => setTimeout(r, 250));
      expect(await store.loadCheck('c1', 400)).toBeDefined();
      await new Promise((r) => setTimeout(r, 500));
      expect(await store.loadCheck('c1', 400)).toBeUndefined();
      expect(await store.loadCheck('never-saved', 400)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('sets and clears settings field by field, per scope', async () => {
    const store = open('settings');
    try {
      expect(await store.getSettings('slack:T1')).toEqual({});
      expect(await store.updateSettings('slack:T1', { defaultMode: 'legal', auditChannelId: 'C0AUDIT' })).toEqual({
        defaultMode: 'legal',
        auditChannelId: 'C0AUDIT',
      });
      expect(await store.updateSettings('slack:T1', { checkerId: 'S0MODS' })).toEqual({
        defaultMode: 'legal',
        auditChannelId: 'C0AUDIT',
        checkerId: 'S0MODS',
      });
      expect(await store.updateSettings('slack:T1', { auditChannelId: null })).toEqual({ defaultMode: 'legal', checkerId: 'S0MODS' });
      expect(await store.getSettings('slack:T2')).toEqual({});
      // What an uninstall or a removed bot applies: every setting gone, the member-check window too.
      await store.updateSettings('slack:T3', { defaultMode: 'legal', checkerId: 'S0MODS', historyMessages: '80', historyDays: '14' });
      expect(await store.updateSettings('slack:T3', clearEverySetting())).toEqual({});
    } finally {
      await store.close();
    }
  });

  it('claims a key once until its TTL passes', async () => {
    const store = open('claims');
    try {
      expect(await store.claim('k', 150)).toBe(true);
      expect(await store.claim('k', 150)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(await store.claim('k', 150)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a second store on the same file / Redis (the bot after a restart, or another instance) sees the same state', async () => {
    const a = open('shared');
    await a.saveCheck('c2', { text: 'kept across restarts' }, 60_000);
    await a.updateSettings('discord:1', { defaultMode: 'academic' });
    expect(await a.claim('retry', 60_000)).toBe(true);
    await a.close();
    const b = open('shared');
    try {
      expect(await b.loadCheck('c2', 60_000)).toEqual({ text: 'kept across restarts' });
      expect(await b.getSettings('discord:1')).toEqual({ defaultMode: 'academic' });
      expect(await b.claim('retry', 60_000)).toBe(false);
    } finally {
      await b.close();
    }
  });
});

describe('Redis store shared by two instances', () => {
  it('sees checks and claims written by the other one', async () => {
    const prefix = `test:chat-store:two:${Date.now()}:`;
    const a = new RedisStore(REDIS_URL, { prefix });
    const b = new RedisStore(REDIS_URL, { prefix });
    try {
      await a.saveCheck('c', { text: 'shared' }, 60_000);
      expect(await a.claim('retry', 60_000)).toBe(true);
      expect(await b.loadCheck('c', 60_000)).toEqual({ text: 'shared' });
      expect(await b.claim('retry', 60_000)).toBe(false);
      // Redis itself forgets the text with the record's TTL.
      const redis = new Redis(REDIS_URL);
      const ttl = await redis.pttl(`${prefix}check:c`);
      redis.disconnect();
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('SQLite schema', () => {
  it('records its migrations, reopens without re-running them, and refuses a newer schema', async () => {
    const folder = join(dir, 'schema');
    const first = new SqliteStore(folder);
    expect(first.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await first.close();
    const again = new SqliteStore(folder);
    expect(again.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await again.close();

    const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
      DatabaseSync: new (p: string) => { exec(s: string): void; close(): void };
    };
    const db = new DatabaseSync(join(folder, DATABASE_FILE));
    db.exec('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)');
    db.close();
    expect(() => new SqliteStore(folder)).toThrow(/schema version 99, newer than this build knows \(2\)/);
  });

  it('says which folder it could not use', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a folder');
    expect(() => openChatStore({ dataDir: join(file, 'data') })).toThrow(
      /^Could not open the bot database in DATA_DIR=.*a-file\/data .*point DATA_DIR at a writable folder/,
    );
  });

  it('keeps its file in the user’s data folder by default, never in the working directory', async () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/srv/xdg', HOME: '/home/ada' })).toBe('/srv/xdg/textdetect');
    expect(defaultDataDir({ HOME: '/home/ada' })).toBe('/home/ada/.local/share/textdetect');
    // The XDG spec: a relative XDG_DATA_HOME is ignored.
    expect(defaultDataDir({ XDG_DATA_HOME: 'rel/path', HOME: '/home/ada' })).toBe('/home/ada/.local/share/textdetect');
    // A bot started with DATA_DIR unset, from a checkout: the file lands under XDG_DATA_HOME, nothing in the checkout.
    const home = join(dir, 'xdg-home');
    const checkout = join(dir, 'checkout');
    const opened = await runNode(
      `const { openChatStore, storeLocationFromEnv } = await import(${JSON.stringify(STORE_MODULE)});
       const store = openChatStore(storeLocationFromEnv(process.env)); console.log(store.durable.path); await store.close();`,
      { XDG_DATA_HOME: home, DATA_DIR: '', REDIS_URL: '' },
      checkout,
    );
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout.trim()).toBe(join(home, 'textdetect', DATABASE_FILE));
    expect(existsSync(join(home, 'textdetect', DATABASE_FILE))).toBe(true);
    expect(existsSync(join(checkout, 'data'))).toBe(false);
  });

  it('opens SQLite without Node’s ExperimentalWarning, and leaves other warnings alone', async () => {
    const run = await runNode(
      `const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
       const store = new SqliteStore(${JSON.stringify(join(dir, 'quiet'))}); await store.close();
       process.emitWarning('a warning of another kind', 'ExperimentalWarning');`,
      {},
      dir,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('SQLite is an experimental feature');
    expect(run.stderr).toContain('ExperimentalWarning: a warning of another kind');
  });

  it('opens the SQLite module alone without the warning either, when it is the first to load node:sqlite', async () => {
    const run = await runNode(
      `const { SqliteStore } = await import(${JSON.stringify(SQLITE_MODULE)});
       const store = new SqliteStore(${JSON.stringify(join(dir, 'quiet-watch'))}); await store.close();`,
      {},
      dir,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('SQLite is an experimental feature');
  });

  it('chooses Redis for the short-lived part when REDIS_URL is set and refuses a URL that is not redis://', async () => {
    expect(storeLocationFromEnv({ DATA_DIR: ' /srv/bot ' })).toEqual({ redisUrl: undefined, dataDir: '/srv/bot' });
    expect(() => storeLocationFromEnv({ REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL="localhost:6379" is not a redis:\/\//);
    const store = openChatStore(storeLocationFromEnv({ REDIS_URL, DATA_DIR: join(dir, 'with-redis') }));
    expect([store.kind, store.durableKind]).toEqual(['redis', 'sqlite']);
    await store.close();
  });

  it('refuses a setup that would keep lasting records in Redis, with a sentence', () => {
    expect(() => storeLocationFromEnv({ DATABASE_URL: REDIS_URL })).toThrow(
      /^DATABASE_URL points at Redis, .* the bots keep those only in a database: set DATABASE_URL to PostgreSQL/,
    );
  });
});
