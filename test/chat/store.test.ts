/**
 * The bots' state store, both implementations against the real thing: node:sqlite on a temporary
 * folder, and the Redis server of this test run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChatStore, RedisChatStore, SqliteChatStore, storeLocationFromEnv, type ChatStore } from '../../adapters/chat/store/index.ts';
import { DATABASE_FILE, SQLITE_SCHEMA_VERSION } from '../../adapters/chat/store/sqlite.ts';

const REDIS_URL = process.env.REDIS_URL!;
const RUN = Date.now();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'chat-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const implementations: [string, (name: string) => ChatStore][] = [
  ['SQLite', (name) => new SqliteChatStore(join(dir, name))],
  ['Redis', (name) => new RedisChatStore(REDIS_URL, { prefix: `test:chat-store:${RUN}:${name}:` })],
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
  it('sees checks, settings and claims written by the other one', async () => {
    const prefix = `test:chat-store:two:${Date.now()}:`;
    const a = new RedisChatStore(REDIS_URL, { prefix });
    const b = new RedisChatStore(REDIS_URL, { prefix });
    try {
      await a.saveCheck('c', { text: 'shared' }, 60_000);
      await a.updateSettings('slack:T1', { defaultMode: 'financial' });
      expect(await a.claim('retry', 60_000)).toBe(true);
      expect(await b.loadCheck('c', 60_000)).toEqual({ text: 'shared' });
      expect(await b.getSettings('slack:T1')).toEqual({ defaultMode: 'financial' });
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
    const first = new SqliteChatStore(folder);
    expect(first.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await first.close();
    const again = new SqliteChatStore(folder);
    expect(again.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await again.close();

    const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
      DatabaseSync: new (p: string) => { exec(s: string): void; close(): void };
    };
    const db = new DatabaseSync(join(folder, DATABASE_FILE));
    db.exec('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)');
    db.close();
    expect(() => new SqliteChatStore(folder)).toThrow(/schema version 99, newer than this build knows \(2\)/);
  });

  it('says which folder it could not use', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a folder');
    expect(() => openChatStore({ dataDir: join(file, 'data') })).toThrow(
      /^Could not open the bot database in DATA_DIR=.*a-file\/data .*point DATA_DIR at a writable folder/,
    );
  });

  it('chooses Redis when REDIS_URL is set and refuses a URL that is not redis://', async () => {
    expect(storeLocationFromEnv({ DATA_DIR: ' /srv/bot ' })).toEqual({ redisUrl: undefined, dataDir: '/srv/bot' });
    expect(() => storeLocationFromEnv({ REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL="localhost:6379" is not a redis:\/\//);
    const store = openChatStore(storeLocationFromEnv({ REDIS_URL, DATA_DIR: join(dir, 'with-redis') }));
    expect(store.kind).toBe('redis');
    await store.close();
  });
});
