/**
 * The durable store (settings, installations, organisation links) on a real PostgreSQL (a
 * throw-away database per run) and on a real SQLite file; the split store over Redis; and the
 * versioned migrations of both databases, from an empty database and from the previous version.
 */
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openChatStore,
  PostgresStore,
  RedisStore,
  SqliteStore,
  storeLocationFromEnv,
  type DurableStore,
  type InstallationRow,
} from '../../adapters/chat/store/index.ts';
import { POSTGRES_SCHEMA_VERSION } from '../../adapters/chat/store/postgres.ts';
import { DATABASE_FILE, SQLITE_SCHEMA_VERSION } from '../../adapters/chat/store/sqlite.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const REDIS_URL = process.env.REDIS_URL!;
let dir: string;
let db: TestDatabase;
const extraDatabases: TestDatabase[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-store-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
  for (const extra of extraDatabases) await extra.drop();
});

function installation(key: string, over: Partial<InstallationRow> = {}): InstallationRow {
  return {
    key,
    enterpriseId: undefined,
    teamId: key.slice(6),
    isEnterpriseInstall: false,
    data: `sealed:${key}`,
    tokenExpiresAt: 1_000,
    ...over,
  };
}

let seq = 0;
const implementations: [string, () => DurableStore][] = [
  ['PostgreSQL', () => new PostgresStore(db.url)],
  ['SQLite', () => new SqliteStore(join(dir, `sqlite-${++seq}`))],
];

describe.each(implementations)('%s durable store', (_kind, open) => {
  it('keeps settings field by field, per scope', async () => {
    const store = open();
    try {
      await store.ready();
      const scope = `slack:T${Date.now()}`;
      expect(await store.getSettings(scope)).toEqual({});
      expect(await store.updateSettings(scope, { defaultMode: 'legal', auditChannelId: 'C0AUDIT' })).toEqual({
        defaultMode: 'legal',
        auditChannelId: 'C0AUDIT',
      });
      expect(await store.updateSettings(scope, { auditChannelId: null, checkerId: 'S0MODS' })).toEqual({
        defaultMode: 'legal',
        checkerId: 'S0MODS',
      });
      expect(await store.getSettings(`${scope}x`)).toEqual({});
    } finally {
      await store.close();
    }
  });

  it('stores, replaces and finds installations', async () => {
    const store = open();
    try {
      const key = `slack:T${++seq}INST`;
      expect(await store.findInstallation(key)).toBeUndefined();
      const before = await store.countInstallations();
      await store.saveInstallation(installation(key));
      const found = await store.findInstallation(key);
      expect(found).toMatchObject({ key, teamId: key.slice(6), isEnterpriseInstall: false, data: `sealed:${key}`, tokenExpiresAt: 1_000 });
      expect(found?.refreshLeaseUntil).toBeUndefined();
      await store.saveInstallation(installation(key, { data: 'sealed:again', tokenExpiresAt: undefined }));
      expect(await store.findInstallation(key)).toMatchObject({ data: 'sealed:again', tokenExpiresAt: undefined });
      expect(await store.countInstallations()).toBe(before + 1);
      const org = `slack:E${seq}ORG`;
      await store.saveInstallation(installation(org, { enterpriseId: org.slice(6), teamId: undefined, isEnterpriseInstall: true }));
      expect(await store.findInstallation(org)).toMatchObject({ enterpriseId: org.slice(6), teamId: undefined, isEnterpriseInstall: true });
    } finally {
      await store.close();
    }
  });

  it('gives the refresh lease to exactly one of many concurrent callers, and stores refreshed tokens only for its holder', async () => {
    const store = open();
    try {
      const key = `slack:T${++seq}LEASE`;
      await store.saveInstallation(installation(key));
      const owners = Array.from({ length: 12 }, (_, i) => `owner-${i}`);
      const won = await Promise.all(owners.map((o) => store.takeRefreshLease(key, o, 60_000)));
      expect(won.filter(Boolean)).toHaveLength(1);
      const holder = owners[won.indexOf(true)]!;
      expect((await store.findInstallation(key))?.refreshLeaseUntil).toBeGreaterThan(Date.now());
      // A caller without the lease cannot overwrite the tokens.
      expect(await store.saveRefreshedInstallation(key, 'someone-else', 'sealed:spent', 5_000)).toBe(false);
      expect(await store.saveRefreshedInstallation(key, holder, 'sealed:fresh', 9_000)).toBe(true);
      const after = await store.findInstallation(key);
      expect(after).toMatchObject({ data: 'sealed:fresh', tokenExpiresAt: 9_000, refreshLeaseUntil: undefined });
      // Released: the next refresh can be taken again; the old holder cannot store a second time.
      expect(await store.saveRefreshedInstallation(key, holder, 'sealed:late', 9_500)).toBe(false);
      expect(await store.takeRefreshLease(key, 'next', 60_000)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('refuses the lease to a caller that read the installation before another caller’s refresh landed', async () => {
    const store = open();
    try {
      const key = `slack:T${++seq}STALE`;
      await store.saveInstallation(installation(key, { data: 'sealed:old' }));
      const seenBySlowCaller = (await store.findInstallation(key))!.data;
      expect(await store.takeRefreshLease(key, 'first', 60_000, seenBySlowCaller)).toBe(true);
      expect(await store.saveRefreshedInstallation(key, 'first', 'sealed:refreshed', 9_000)).toBe(true);
      // The lease is free again, but the slow caller still holds the old pair: refreshing with its
      // spent refresh token would kill the pair just stored.
      expect(await store.takeRefreshLease(key, 'slow', 60_000, seenBySlowCaller)).toBe(false);
      expect(await store.takeRefreshLease(key, 'reread', 60_000, 'sealed:refreshed')).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('lets a lease run out, and a fresh install clear it', async () => {
    const store = open();
    try {
      const key = `slack:T${++seq}EXPIRY`;
      await store.saveInstallation(installation(key));
      expect(await store.takeRefreshLease(key, 'crashed', 150)).toBe(true);
      expect(await store.takeRefreshLease(key, 'waiting', 60_000)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(await store.takeRefreshLease(key, 'waiting', 60_000)).toBe(true);
      expect(await store.saveRefreshedInstallation(key, 'crashed', 'sealed:stale', 1)).toBe(false);
      await store.saveInstallation(installation(key, { data: 'sealed:reinstalled' }));
      expect((await store.findInstallation(key))?.refreshLeaseUntil).toBeUndefined();
      expect(await store.takeRefreshLease(key, 'after-reinstall', 60_000)).toBe(true);
      expect(await store.takeRefreshLease(`${key}-missing`, 'nobody', 60_000)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('deletes a scope with the scopes linked under it, and nothing else', async () => {
    const store = open();
    try {
      const org = `slack:E${++seq}DEL`;
      const teams = [`slack:T${seq}A`, `slack:T${seq}B`];
      const other = `slack:T${seq}OTHER`;
      await store.saveInstallation(installation(org, { isEnterpriseInstall: true, enterpriseId: org.slice(6), teamId: undefined }));
      await store.saveInstallation(installation(other));
      for (const t of teams) {
        await store.linkScope(org, t);
        await store.linkScope(org, t); // twice: links are a set
        await store.updateSettings(t, { defaultMode: 'academic' });
      }
      await store.updateSettings(other, { defaultMode: 'financial' });
      const deleted = await store.forgetScope(org);
      expect(deleted[0]).toBe(org);
      expect(deleted.slice(1).sort()).toEqual([...teams].sort());
      expect(await store.findInstallation(org)).toBeUndefined();
      for (const t of teams) expect(await store.getSettings(t)).toEqual({});
      expect(await store.getSettings(other)).toEqual({ defaultMode: 'financial' });
      expect(await store.findInstallation(other)).toBeDefined();
      // Links went too: deleting again finds nothing linked.
      expect(await store.forgetScope(org)).toEqual([org]);
      expect(await store.forgetScope(other)).toEqual([other]);
      expect(await store.findInstallation(other)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL migrations', () => {
  async function freshDatabase(): Promise<TestDatabase> {
    const extra = await createTestDatabase();
    extraDatabases.push(extra);
    return extra;
  }

  it('migrates an empty database to the newest version, once, even with several processes starting together', async () => {
    const empty = await freshDatabase();
    const stores = Array.from({ length: 4 }, () => new PostgresStore(empty.url));
    try {
      await Promise.all(stores.map((s) => s.ready()));
      expect(await stores[0]!.readSchemaVersion()).toBe(POSTGRES_SCHEMA_VERSION);
      const client = new pg.Client({ connectionString: empty.url });
      await client.connect();
      const { rows } = await client.query<{ version: number }>('SELECT version FROM bot_schema_migrations ORDER BY version');
      await client.end();
      expect(rows.map((r) => r.version)).toEqual([1, 2]);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('upgrades a database at the previous version without losing its settings', async () => {
    const old = await freshDatabase();
    const v1 = new PostgresStore(old.url, { targetVersion: 1 });
    await v1.ready();
    expect(await v1.readSchemaVersion()).toBe(1);
    await v1.updateSettings('discord:123456789012345678', { defaultMode: 'legal', auditChannelId: '223456789012345678' });
    await v1.close();

    const current = new PostgresStore(old.url);
    try {
      await current.ready();
      expect(await current.readSchemaVersion()).toBe(2);
      expect(await current.getSettings('discord:123456789012345678')).toEqual({
        defaultMode: 'legal',
        auditChannelId: '223456789012345678',
      });
      await current.saveInstallation(installation('slack:T0AFTER'));
      expect(await current.findInstallation('slack:T0AFTER')).toBeDefined();
    } finally {
      await current.close();
    }
  });

  it('refuses a database from a newer build, and says which address it could not reach', async () => {
    const newer = await freshDatabase();
    const store = new PostgresStore(newer.url);
    await store.ready();
    await store.close();
    const client = new pg.Client({ connectionString: newer.url });
    await client.connect();
    await client.query('INSERT INTO bot_schema_migrations (version, applied_at) VALUES (99, 0)');
    await client.end();
    const again = new PostgresStore(newer.url);
    await expect(again.ready()).rejects.toThrow(/schema version 99, newer than this build knows \(2\)/);
    await again.close();

    const unreachable = new PostgresStore('postgres://bots:secret-password@127.0.0.1:1/textdetect');
    const err = await unreachable.ready().then(
      () => undefined,
      (e: Error) => e,
    );
    await unreachable.close();
    expect(err?.message).toMatch(
      /^Could not connect to the bot database at postgres:\/\/bots:\*\*\*@127\.0\.0\.1:1\/textdetect .*check DATABASE_URL/,
    );
    expect(err?.message).not.toContain('secret-password');
  });
});

describe('SQLite migrations', () => {
  it('upgrades a file at the previous version (1) without losing its settings or checks', async () => {
    const folder = join(dir, 'sqlite-upgrade');
    const v1 = new SqliteStore(folder, { targetVersion: 1 });
    expect(v1.schemaVersion).toBe(1);
    await v1.updateSettings('slack:T0OLD', { defaultMode: 'financial' });
    await v1.saveCheck('slack:check:T0OLD:c1', { text: 'kept' }, 60_000);
    await v1.close();
    const current = new SqliteStore(folder);
    try {
      expect(current.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
      expect(await current.readSchemaVersion()).toBe(2);
      expect(await current.getSettings('slack:T0OLD')).toEqual({ defaultMode: 'financial' });
      expect(await current.loadCheck('slack:check:T0OLD:c1', 60_000)).toEqual({ text: 'kept' });
      await current.saveInstallation(installation('slack:T0OLD'));
      expect(await current.findInstallation('slack:T0OLD')).toBeDefined();
    } finally {
      await current.close();
    }
    const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
      DatabaseSync: new (p: string) => { prepare(s: string): { all(): { version: number }[] }; close(): void };
    };
    const file = new DatabaseSync(join(folder, DATABASE_FILE));
    expect(
      file
        .prepare('SELECT version FROM schema_migrations ORDER BY version')
        .all()
        .map((r) => Number(r.version)),
    ).toEqual([1, 2]);
    file.close();
  });
});

describe('the split store', () => {
  it('reads DATABASE_URL and refuses one that is not PostgreSQL', () => {
    expect(storeLocationFromEnv({ DATABASE_URL: ' postgres://u@h/db ', REDIS_URL: 'redis://h' })).toEqual({
      redisUrl: 'redis://h',
      dataDir: undefined,
      databaseUrl: 'postgres://u@h/db',
    });
    expect(storeLocationFromEnv({})).toEqual({ redisUrl: undefined, dataDir: undefined });
    expect(() => storeLocationFromEnv({ DATABASE_URL: 'mysql://u@h/db' })).toThrow(
      /^DATABASE_URL is not a postgres:\/\/ or postgresql:\/\/ URL/,
    );
  });

  it('keeps settings in PostgreSQL and checks in Redis, and an uninstall deletes both for the scope and its linked scopes', async () => {
    const store = openChatStore({ databaseUrl: db.url, redisUrl: REDIS_URL, dataDir: join(dir, 'unused') });
    const team = `T${Date.now()}SPLIT`;
    const org = `E${Date.now()}SPLIT`;
    const hooked: string[] = [];
    store.onScopeDeleted(async (scope) => void hooked.push(scope));
    try {
      await store.ready();
      expect([store.kind, store.durableKind]).toEqual(['redis', 'postgres']);
      await store.durable.saveInstallation(
        installation(`slack:${org}`, { isEnterpriseInstall: true, enterpriseId: org, teamId: undefined }),
      );
      await store.durable.linkScope(`slack:${org}`, `slack:${team}`);
      await store.updateSettings(`slack:${team}`, { defaultMode: 'legal' });
      await store.saveCheck(`slack:check:${team}:a`, { text: 'one' }, 60_000);
      await store.saveCheck(`slack:check:${team}:b`, { text: 'two' }, 60_000);
      await store.saveCheck(`slack:check:${team}X:c`, { text: 'another workspace' }, 60_000);
      // Settings went to PostgreSQL, not to Redis.
      const direct = new PostgresStore(db.url);
      expect(await direct.getSettings(`slack:${team}`)).toEqual({ defaultMode: 'legal' });
      await direct.close();

      const scopes = await store.deleteScope(`slack:${org}`, (scope) => `slack:check:${scope.slice(6)}:`);
      expect(scopes).toEqual([`slack:${org}`, `slack:${team}`]);
      expect(hooked).toEqual(scopes);
      expect(await store.getSettings(`slack:${team}`)).toEqual({});
      expect(await store.loadCheck(`slack:check:${team}:a`, 60_000)).toBeUndefined();
      expect(await store.loadCheck(`slack:check:${team}:b`, 60_000)).toBeUndefined();
      expect(await store.loadCheck(`slack:check:${team}X:c`, 60_000)).toEqual({ text: 'another workspace' });
    } finally {
      await store.close();
    }
  });

  it('on SQLite alone, is one file for both parts and forgets a workspace’s checks by prefix', async () => {
    const store = openChatStore({ dataDir: join(dir, 'split-sqlite') });
    try {
      await store.ready();
      expect(store.durable).toBe(store.shortLived);
      expect([store.kind, store.durableKind]).toEqual(['sqlite', 'sqlite']);
      await store.saveCheck('slack:check:T1:a', { text: 'a' }, 60_000);
      await store.saveCheck('slack:check:T1_:b', { text: 'underscore is not a wildcard' }, 60_000);
      expect(await store.shortLived.forgetChecks('slack:check:T1:')).toBe(1);
      expect(await store.loadCheck('slack:check:T1:a', 60_000)).toBeUndefined();
      expect(await store.loadCheck('slack:check:T1_:b', 60_000)).toEqual({ text: 'underscore is not a wildcard' });
    } finally {
      await store.close();
      await store.close(); // idempotent, and the shared file is closed once
    }
  });

  it('moves settings an earlier version kept in Redis into the durable store, once', async () => {
    const prefix = 'textdetect:chat:';
    const scope = `slack:T${Date.now()}LEGACY`;
    const kept = `slack:T${Date.now()}KEPT`;
    const redis = new Redis(REDIS_URL);
    const extra = await createTestDatabase();
    extraDatabases.push(extra);
    try {
      await redis.hset(`${prefix}settings:${scope}`, { defaultMode: 'academic', checkerId: 'S0LEGACY' });
      await redis.hset(`${prefix}settings:${kept}`, { defaultMode: 'legal' });
      const pre = new PostgresStore(extra.url);
      await pre.updateSettings(kept, { defaultMode: 'financial' }); // already set in the database: wins
      await pre.close();

      const store = openChatStore({ databaseUrl: extra.url, redisUrl: REDIS_URL });
      await store.ready();
      expect(await store.getSettings(scope)).toEqual({ defaultMode: 'academic', checkerId: 'S0LEGACY' });
      expect(await store.getSettings(kept)).toEqual({ defaultMode: 'financial' });
      expect(await redis.exists(`${prefix}settings:${scope}`)).toBe(0);
      expect(await redis.hgetall(`${prefix}imported-settings:${scope}`)).toEqual({ defaultMode: 'academic', checkerId: 'S0LEGACY' });
      // A setting cleared after the import is not brought back by the next start.
      await store.updateSettings(scope, { defaultMode: null, checkerId: null });
      await store.close();
      const again = openChatStore({ databaseUrl: extra.url, redisUrl: REDIS_URL });
      await again.ready();
      expect(await again.getSettings(scope)).toEqual({});
      await again.close();
    } finally {
      await redis.del(
        `${prefix}imported-settings:${scope}`,
        `${prefix}imported-settings:${kept}`,
        `${prefix}settings:${scope}`,
        `${prefix}settings:${kept}`,
      );
      redis.disconnect();
    }
  });

  it('Redis forgets checks by prefix, taking glob characters literally', async () => {
    const prefix = `test:durable:${Date.now()}:`;
    const store = new RedisStore(REDIS_URL, { prefix });
    try {
      await store.saveCheck('slack:check:T*:a', { n: 1 }, 60_000);
      await store.saveCheck('slack:check:T9:b', { n: 2 }, 60_000);
      expect(await store.forgetChecks('slack:check:T*:')).toBe(1);
      expect(await store.loadCheck('slack:check:T9:b', 60_000)).toEqual({ n: 2 });
    } finally {
      await store.close();
    }
  });
});
