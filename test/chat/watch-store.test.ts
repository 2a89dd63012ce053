/**
 * Watching's records, both database backends against the real thing: node:sqlite in a temporary
 * folder and PostgreSQL (a throw-away database per run, one schema per case). The same sequence
 * must give the same answers in both. Then PostgreSQL's migrations and the one-time imports of
 * what an earlier version kept in SQLite or Redis.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatchStore, PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { WATCH_POSTGRES_SCHEMA_VERSION } from '../../adapters/chat/store/postgres.ts';
import type { SqlStore } from '../../adapters/chat/store/sql.ts';
import { DAY_MS, HOUR_MS, itemKey, type PendingItem, type ScoreRecord } from '../../adapters/chat/watch/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const REDIS_URL = process.env.REDIS_URL!;
const RUN = Date.now();
const CASES = ['config', 'queue', 'race', 'cards', 'delete'] as const;
let dir: string;
let db: TestDatabase;
const extraDatabases: TestDatabase[] = [];

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-store-'));
  db = await createTestDatabase();
  // One schema per case and implementation: the queue's counts are the whole store's.
  await sql(db.url, CASES.map((c) => `CREATE SCHEMA postgres_${c}`).join('; '));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
  for (const extra of extraDatabases) await extra.drop();
});

/** The test database with `search_path` set to one schema. */
function inSchema(schema: string): string {
  const url = new URL(db.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

const implementations: [string, (name: (typeof CASES)[number]) => WatchStore][] = [
  ['SQLite', (name) => new SqliteStore(join(dir, name))],
  ['PostgreSQL', (name) => new PostgresStore(inSchema(`postgres_${name}`))],
];

function item(scope: string, messageId: string, over: Partial<PendingItem> = {}): PendingItem {
  const now = Date.now();
  return { scope, channelId: 'C1', messageId, authorId: 'A1', postedAt: now - 1_000, enqueuedAt: now, ...over };
}

function score(scope: string, messageId: string, over: Partial<ScoreRecord> = {}): ScoreRecord {
  return {
    scope,
    channelId: 'C1',
    messageId,
    authorId: 'A1',
    postedAt: Date.now() - 1_000,
    probability: 0.5,
    verdict: 'mixed',
    confidence: 'low',
    presets: 0,
    requestId: `req_${messageId}`,
    ...over,
  };
}

describe.each(implementations)('%s watch store', (_kind, open) => {
  it('keeps watched channels, exempt roles, preset and retention per scope', async () => {
    const store = open('config');
    try {
      expect(await store.getConfig('discord:1')).toEqual({ channels: [], exemptIds: [], preset: undefined, retentionDays: undefined });
      expect((await store.watchChannel('discord:1', 'C1', 1000)).added).toBe(true);
      const again = await store.watchChannel('discord:1', 'C1', 5000);
      expect(again).toEqual({ added: false, channel: { channelId: 'C1', since: 1000, cards: false } });
      expect(await store.setCards('discord:1', 'C1', true)).toEqual({ channelId: 'C1', since: 1000, cards: true });
      expect(await store.setCards('discord:1', 'C404', true)).toBeUndefined();
      expect(await store.setExempt('discord:1', 'R2', true)).toEqual(['R2']);
      expect(await store.setExempt('discord:1', 'R1', true)).toEqual(['R1', 'R2']);
      expect(await store.setExempt('discord:1', 'R2', false)).toEqual(['R1']);
      await store.setPreset('discord:1', 'loose');
      await store.setRetention('discord:1', 7, 30, Date.now());
      expect(await store.getConfig('discord:1')).toEqual({
        channels: [{ channelId: 'C1', since: 1000, cards: true }],
        exemptIds: ['R1'],
        preset: 'loose',
        retentionDays: 7,
      });
      expect(await store.getConfig('discord:12')).toEqual({ channels: [], exemptIds: [], preset: undefined, retentionDays: undefined });
      expect(await store.unwatchChannel('discord:1', 'C1')).toBe(true);
      expect(await store.unwatchChannel('discord:1', 'C1')).toBe(false);
      expect(await store.scopes()).toContain('discord:1');
    } finally {
      await store.close();
    }
  });

  it('queues each message once, hands it to one claimer at a time, and takes it back when a lease runs out', async () => {
    const store = open('queue');
    const scope = 'slack:T1';
    try {
      const base = Date.now();
      expect(await store.enqueue(item(scope, 'm1', { enqueuedAt: base }))).toBe(true);
      expect(await store.enqueue(item(scope, 'm1', { enqueuedAt: base + 1 }))).toBe(false);
      expect(await store.enqueue(item(scope, 'm2', { enqueuedAt: base + 2 }))).toBe(true);
      expect(await store.enqueue(item(scope, 'm3', { enqueuedAt: base + 3 }))).toBe(true);
      expect(await store.pendingCount()).toBe(3);
      expect(await store.isPending(scope, 'C1', 'm2')).toBe(true);

      const first = await store.claimNext(base + 10, 300);
      expect(first?.messageId).toBe('m1');
      const second = await store.claimNext(base + 10, 60_000);
      expect(second?.messageId).toBe('m2');
      // A deleted message that waits is dropped; one being scored is not taken from its claimer.
      expect(await store.drop(scope, 'C1', 'm3')).toBe(true);
      expect(await store.drop(scope, 'C1', 'm2')).toBe(false);
      expect(await store.claimNext(base + 10, 60_000)).toBeUndefined();
      // m1's claimer died: after its lease another claim takes it again.
      const reclaimed = await store.claimNext(base + 400, 60_000);
      expect(reclaimed?.messageId).toBe('m1');
      await store.complete(itemKey(reclaimed!));
      // Put back with a delay (a 429): not before its time.
      await store.release(itemKey(second!), base + 5_000);
      expect(await store.claimNext(base + 1_000, 60_000)).toBeUndefined();
      expect((await store.claimNext(base + 5_000, 60_000))?.messageId).toBe('m2');
      await store.complete(itemKey(second!));
      expect(await store.pendingCount()).toBe(0);

      // A scored message is never queued again.
      expect(await store.recordScore(score(scope, 'm1'), Date.now() + DAY_MS)).toBe(true);
      expect(await store.recordScore(score(scope, 'm1', { probability: 0.9 }), Date.now() + DAY_MS)).toBe(false);
      expect(await store.isScored(scope, 'C1', 'm1', Date.now() - 1_000)).toBe(true);
      expect(await store.enqueue(item(scope, 'm1'))).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('two claimers never take the same message', async () => {
    const a = open('race');
    const b = open('race');
    try {
      const base = Date.now() - 1_000;
      for (let i = 0; i < 40; i++) await a.enqueue(item('discord:race', `m${i}`, { enqueuedAt: base + i }));
      const taken: string[] = [];
      const drain = async (store: WatchStore): Promise<void> => {
        for (;;) {
          const next = await store.claimNext(Date.now(), 60_000);
          if (!next) return;
          taken.push(next.messageId);
        }
      };
      await Promise.all([drain(a), drain(b)]);
      expect(taken).toHaveLength(40);
      expect(new Set(taken).size).toBe(40);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('one card per member per window, a per-channel hourly cap, the first review stands, and the report counts it all', async () => {
    const store = open('cards');
    const scope = 'discord:9';
    try {
      const now = Date.now();
      const limits = { windowMs: 60_000, cap: 2 };
      expect(await store.reserveCard(scope, 'C1', 'A1', now, limits)).toMatchObject({ ok: true, slot: 1, cap: 2 });
      expect(await store.reserveCard(scope, 'C1', 'A1', now, limits)).toEqual({ ok: false, reason: 'author_window' });
      const second = await store.reserveCard(scope, 'C1', 'A2', now, limits);
      expect(second).toEqual({ ok: true, slot: 2, cap: 2, hourEndsAt: (Math.floor(now / HOUR_MS) + 1) * HOUR_MS });
      expect(await store.reserveCard(scope, 'C1', 'A3', now, limits)).toEqual({ ok: false, reason: 'cap' });
      expect(await store.reserveCard(scope, 'C2', 'A3', now, limits)).toMatchObject({ ok: true, slot: 1 });
      // A card that could not be posted gives its place back: the member's window and the hour's count.
      await store.releaseCard(scope, 'C2', 'A3', now);
      expect(await store.reserveCard(scope, 'C2', 'A3', now, limits)).toMatchObject({ ok: true, slot: 1 });

      const expires = now + 30 * DAY_MS;
      await store.recordScore(
        score(scope, 'm1', { presets: 7, verdict: 'likely_ai', probability: 0.99, flagId: 'f1', card: 'failed' }),
        expires,
      );
      await store.recordScore(score(scope, 'm2', { presets: 4, probability: 0.85 }), expires);
      await store.recordScore(
        score(scope, 'm3', { presets: 6, verdict: 'likely_ai', probability: 0.9, flagId: 'f3', card: 'failed' }),
        expires,
      );
      await store.recordScore(
        score(scope, 'm4', { channelId: 'C2', presets: 6, verdict: 'likely_ai', flagId: 'f4', card: 'shadow' }),
        expires,
      );
      await store.recordScore(score(scope, 'm5', { postedAt: now - 10 * DAY_MS }), expires);
      await store.setCard(scope, 'f1', 'posted', { cardId: 'card1', cardChannelId: 'MOD' });
      await store.setCard(scope, 'f3', 'cap');

      const reviewed = await store.review(scope, 'f1', 'confirmed', 'MODA', now);
      expect(reviewed?.applied).toBe(true);
      const late = await store.review(scope, 'f1', 'false_positive', 'MODB', now + 5);
      expect(late?.applied).toBe(false);
      expect(late?.flag).toMatchObject({ outcome: 'confirmed', reviewerId: 'MODA', reviewedAt: now, cardId: 'card1', card: 'posted' });
      expect(await store.review(scope, 'nope', 'confirmed', 'MODA', now)).toBeUndefined();
      expect(await store.getFlag(scope, 'f3')).toMatchObject({ messageId: 'm3', card: 'cap', probability: 0.9, verdict: 'likely_ai' });

      const report = await store.report(scope, now);
      const c1 = report.channels.get('C1')!;
      expect(c1.week).toMatchObject({
        scored: 3,
        byPreset: { strict: 1, standard: 2, loose: 3 },
        cards: { shadow: 0, posted: 1, author_window: 0, cap: 1, failed: 0 },
        outcomes: { confirmed: 1, false_positive: 0, dismissed: 0 },
      });
      expect(c1.month.scored).toBe(4);
      expect(report.channels.get('C2')!.week).toMatchObject({ scored: 1, cards: { shadow: 1 } });
    } finally {
      await store.close();
    }
  });

  it('a shorter retention deletes older records at once; deleting a scope leaves nothing of it and keeps the others', async () => {
    const store = open('delete');
    try {
      const now = Date.now();
      for (const scope of ['discord:7', 'discord:77']) {
        await store.watchChannel(scope, 'C1', now);
        await store.setExempt(scope, 'R1', true);
        await store.enqueue(item(scope, 'waiting'));
        await store.recordScore(
          score(scope, 'recent', { flagId: 'f1', presets: 6, verdict: 'likely_ai', card: 'shadow' }),
          now + 30 * DAY_MS,
        );
        await store.recordScore(score(scope, 'old', { postedAt: now - 20 * DAY_MS }), now + 10 * DAY_MS);
      }
      await store.setRetention('discord:7', 10, 30, now);
      expect((await store.report('discord:7', now)).channels.get('C1')!.month.scored).toBe(1);
      expect(await store.isScored('discord:7', 'C1', 'old', now - 20 * DAY_MS)).toBe(false);

      await store.deleteScope('discord:7');
      expect(await store.getConfig('discord:7')).toEqual({ channels: [], exemptIds: [], preset: undefined, retentionDays: undefined });
      expect(await store.isPending('discord:7', 'C1', 'waiting')).toBe(false);
      expect(await store.getFlag('discord:7', 'f1')).toBeUndefined();
      expect((await store.report('discord:7', now)).channels.size).toBe(0);
      expect(await store.scopes()).not.toContain('discord:7');
      // The neighbouring scope, whose id starts with the same digits, is untouched.
      expect(await store.isPending('discord:77', 'C1', 'waiting')).toBe(true);
      expect(await store.getFlag('discord:77', 'f1')).toBeDefined();
      expect((await store.getConfig('discord:77')).exemptIds).toEqual(['R1']);
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL watch migrations', () => {
  async function freshDatabase(): Promise<TestDatabase> {
    const extra = await createTestDatabase();
    extraDatabases.push(extra);
    return extra;
  }

  it('migrates an empty database once, with several processes starting together, beside the durable store’s tables', async () => {
    const empty = await freshDatabase();
    const stores = Array.from({ length: 3 }, () => new PostgresStore(empty.url));
    try {
      await Promise.all(stores.map((s) => s.ready()));
      expect(await stores[0]!.readWatchSchemaVersion()).toBe(WATCH_POSTGRES_SCHEMA_VERSION);
      const { rows } = await sql(empty.url, 'SELECT version FROM bot_watch_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: WATCH_POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
      const tables = await sql(empty.url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
      expect(tables.rows.map((r) => r.tablename).every((t: string) => t.startsWith('bot_'))).toBe(true);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('upgrades a database at the previous version without losing its channels, scores or queue', async () => {
    const old = await freshDatabase();
    const v1 = new PostgresStore(old.url, { watchTargetVersion: 1 });
    await v1.ready();
    expect(await v1.readWatchSchemaVersion()).toBe(1);
    await v1.watchChannel('discord:5', 'C1', 1_000);
    await v1.enqueue(item('discord:5', 'waiting'));
    // A score as version 1 kept it (later versions add columns this build's statements write).
    await sql(
      old.url,
      `INSERT INTO bot_watch_scores (key, scope, channel_id, message_id, author_id, posted_at, probability, verdict, confidence, presets,
         request_id, expires_at, flag_id, card, outcome, reviewer_id, reviewed_at)
       VALUES ('${itemKey({ scope: 'discord:5', channelId: 'C1', messageId: 'scored' })}', 'discord:5', 'C1', 'scored', 'A1', ${Date.now()},
         0.95, 'likely_ai', 'high', 6, 'req_1', ${Date.now() + DAY_MS}, 'f1', 'posted', 'false_positive', 'MOD', ${Date.now()})`,
    );
    await v1.close();

    const current = new PostgresStore(old.url);
    try {
      await current.ready();
      expect(await current.readWatchSchemaVersion()).toBe(WATCH_POSTGRES_SCHEMA_VERSION);
      expect((await current.getConfig('discord:5')).channels).toEqual([{ channelId: 'C1', since: 1_000, cards: false }]);
      expect(await current.isPending('discord:5', 'C1', 'waiting')).toBe(true);
      expect(await current.isScored('discord:5', 'C1', 'scored')).toBe(true);
      // Reviewed before the preset was kept: exported and counted under "preset not recorded".
      expect(await current.reviewedFlags('discord:5', 0)).toMatchObject([
        { flagId: 'f1', presets: 6, preset: undefined, words: undefined },
      ]);
      expect(await current.imports()).toEqual([]);
    } finally {
      await current.close();
    }
  });

  it('refuses a database from a newer build with a sentence that says what to do', async () => {
    const newer = await freshDatabase();
    const store = new PostgresStore(newer.url);
    await store.ready();
    await store.close();
    await sql(newer.url, 'INSERT INTO bot_watch_schema_migrations (version, applied_at) VALUES (99, 0)');
    const again = new PostgresStore(newer.url);
    await expect(again.getConfig('discord:1')).rejects.toThrow(
      new RegExp(
        `^The watch database is at schema version 99, newer than this build knows \\(${WATCH_POSTGRES_SCHEMA_VERSION}\\); run the newer bot or point DATABASE_URL elsewhere\\.$`,
      ),
    );
    await again.close();
  });
});

describe('choosing the watch store, and the one-time import', () => {
  it('picks PostgreSQL when DATABASE_URL is set, else SQLite, whether REDIS_URL is set or not', async () => {
    const target = await createTestDatabase();
    extraDatabases.push(target);
    const stores = [
      openWatchStore({ dataDir: join(dir, 'choose') }),
      openWatchStore({ redisUrl: REDIS_URL, dataDir: join(dir, 'choose-redis') }),
      openWatchStore({ databaseUrl: target.url, dataDir: join(dir, 'choose-none') }),
      openWatchStore({ databaseUrl: target.url, redisUrl: REDIS_URL }),
    ];
    try {
      expect(stores.map((s) => s.kind)).toEqual(['sqlite', 'sqlite', 'postgres', 'postgres']);
      for (const s of stores) await s.ready?.();
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('says which variable to look at when the Redis to copy from cannot be reached', async () => {
    const store = openWatchStore({ redisUrl: 'redis://127.0.0.1:1', dataDir: join(dir, 'no-redis') });
    try {
      await expect(store.ready()).rejects.toThrow(/^Could not reach REDIS_URL to copy the watch records an earlier version kept there/);
    } finally {
      await store.close();
    }
  });

  it('copies the watched channels kept in SQLite into PostgreSQL once; a later start does not bring back what was changed', async () => {
    const dataDir = join(dir, 'import-sqlite');
    const before = new SqliteStore(dataDir);
    await before.watchChannel('slack:T1', 'C1', 1_000);
    await before.setCards('slack:T1', 'C1', true);
    await before.watchChannel('slack:T1', 'C2', 2_000);
    await before.setExempt('slack:T1', 'S0GROUP', true);
    await before.setPreset('slack:T1', 'strict');
    await before.setRetention('slack:T1', 7, 30, Date.now());
    await before.watchChannel('slack:T2', 'C9', 3_000);
    await before.recordScore(score('slack:T1', 'not-copied'), Date.now() + DAY_MS);
    await before.close();

    const target = await createTestDatabase();
    extraDatabases.push(target);
    const seeded = new PostgresStore(target.url);
    await seeded.watchChannel('slack:T2', 'C8', 4_000); // already configured here: kept as it is
    await seeded.close();

    const store = openWatchStore({ databaseUrl: target.url, dataDir });
    try {
      await store.ready?.();
      expect(await store.getConfig('slack:T1')).toEqual({
        channels: [
          { channelId: 'C1', since: 1_000, cards: true },
          { channelId: 'C2', since: 2_000, cards: false },
        ],
        exemptIds: ['S0GROUP'],
        preset: 'strict',
        retentionDays: 7,
      });
      expect((await store.getConfig('slack:T2')).channels.map((c) => c.channelId)).toEqual(['C8']);
      expect(await store.isScored('slack:T1', 'C1', 'not-copied', Date.now())).toBe(false);
      expect(await (store as SqlStore).imports()).toEqual([{ source: 'sqlite', scopes: 1, channels: 2 }]);
      await store.unwatchChannel('slack:T1', 'C2');
    } finally {
      await store.close();
    }
    const again = openWatchStore({ databaseUrl: target.url, dataDir });
    try {
      await again.ready?.();
      expect((await again.getConfig('slack:T1')).channels.map((c) => c.channelId)).toEqual(['C1']);
    } finally {
      await again.close();
    }
  });

  it.each([
    ['SQLite', false],
    ['PostgreSQL', true],
  ])('copies the watch records an earlier version kept in Redis into %s once, then removes them from Redis', async (_kind, postgres) => {
    const redis = new Redis(REDIS_URL);
    const scope = `discord:${RUN}${postgres ? 'pg' : 'lite'}`;
    const prefix = 'textdetect:chat:watch:';
    const day = Math.floor(Date.now() / DAY_MS);
    const target = postgres ? await createTestDatabase() : undefined;
    if (target) extraDatabases.push(target);
    const location = { redisUrl: REDIS_URL, dataDir: join(dir, `import-redis-${postgres}`), databaseUrl: target?.url };
    // The layout the Redis watch store of earlier versions wrote.
    await redis.hset(`${prefix}s:${scope}:channels`, 'C1', '1000|1');
    await redis.sadd(`${prefix}s:${scope}:exempt`, 'R1');
    await redis.hset(`${prefix}s:${scope}:config`, 'preset', 'strict');
    await redis.sadd(`${prefix}scopes`, scope);
    await redis.hset(
      `${prefix}s:${scope}:scores:${day}`,
      'C1:m1',
      JSON.stringify({ a: 'A1', p: 0.97, v: 'likely_ai', c: 'high', m: 7, f: 'f1' }),
    );
    await redis.pexpire(`${prefix}s:${scope}:scores:${day}`, 5 * DAY_MS);
    await redis.hset(`${prefix}s:${scope}:flag:f1`, {
      ...{ flagId: 'f1', scope, channelId: 'C1', messageId: 'm1', authorId: 'A1', postedAt: String(day * DAY_MS + 5), probability: '0.97' },
      ...{ verdict: 'likely_ai', requestId: 'req_1', card: 'posted', cardId: 'K1', cardChannelId: 'MOD', day: String(day) },
      ...{ outcome: 'confirmed', reviewerId: 'MODA', reviewedAt: '123' },
    });
    const waiting = item(scope, 'm2');
    await redis.hset(`${prefix}items`, itemKey(waiting), JSON.stringify(waiting));
    try {
      const store = openWatchStore(location);
      try {
        await store.ready();
        expect(store.kind).toBe(postgres ? 'postgres' : 'sqlite');
        expect(await store.getConfig(scope)).toEqual({
          channels: [{ channelId: 'C1', since: 1_000, cards: true }],
          exemptIds: ['R1'],
          preset: 'strict',
          retentionDays: undefined,
        });
        expect(await store.getFlag(scope, 'f1')).toMatchObject({ messageId: 'm1', outcome: 'confirmed', reviewerId: 'MODA', cardId: 'K1' });
        expect(await store.isPending(scope, 'C1', 'm2')).toBe(true);
        expect((await (store as SqlStore).imports()).map((i) => i.source)).toEqual(['redis']);
        // Redis holds none of it any more: an uninstall's deletion in the database is the whole deletion.
        expect(await redis.keys(`${prefix}s:${scope}:*`)).toEqual([]);
        expect(await redis.hexists(`${prefix}items`, itemKey(waiting))).toBe(0);
        await store.unwatchChannel(scope, 'C1');
      } finally {
        await store.close();
      }
      const again = openWatchStore(location);
      try {
        expect((await again.getConfig(scope)).channels).toEqual([]);
      } finally {
        await again.close();
      }
    } finally {
      await redis.del(`${prefix}s:${scope}:channels`, `${prefix}s:${scope}:exempt`, `${prefix}s:${scope}:config`);
      await redis.srem(`${prefix}scopes`, scope);
      redis.disconnect();
    }
  });
});
