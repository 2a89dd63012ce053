/**
 * Sharding across processes: the fake gateway recommends 4 shards (GET /gateway/bot); two real bot
 * processes (`adapters/discord/main.ts`, as `npm run discord` runs it) serve shards 0–1 and 2–3 with
 * settings in a real PostgreSQL (a throw-away database) and re-check texts and the queue in real
 * Redis. Interactions and settings changes reach the right guild's state whichever process takes
 * them; killing one process leaves the other serving its shards; a replacement process finds what
 * the killed one stored; SIGTERM lets an interaction in flight be answered before the process ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseShardIds,
  readShardSettings,
  RedisIdentifyThrottler,
  resolveShards,
  restGlobalShare,
  shardOfGuild,
} from '../../adapters/discord/shards.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { DetectProxy } from '../slack/proxy.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { buttonPress, chatInputDetect, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';
import { settingsCommand } from '../../demo/discord/watch-payloads.ts';
import { WAIT_MS } from '../helpers/load.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.sharded-bot-token`;
const TEXT = [
  'The ferry was late again, so the whole choir waited on the pier with their folders under their coats.',
  'Somebody started humming the alto line of the spring concert, and within a minute half the queue had joined in.',
  'By the time the boat arrived the captain asked whether we took requests, and we sang him the sea shanty twice.',
].join(' ');

describe('shard settings', () => {
  it('reads DISCORD_SHARDS and DISCORD_SHARD_IDS, and names what is wrong', () => {
    expect(readShardSettings({})).toBeUndefined();
    expect(readShardSettings({ DISCORD_SHARDS: 'auto' })).toEqual({ count: 'auto', ids: undefined, restGlobalPerSecond: undefined });
    expect(readShardSettings({ DISCORD_SHARDS: '8', DISCORD_SHARD_IDS: '0-2, 6' })).toEqual({
      count: 8,
      ids: [0, 1, 2, 6],
      restGlobalPerSecond: undefined,
    });
    expect(parseShardIds('3,1,1,2')).toEqual([1, 2, 3]);
    expect(() => readShardSettings({ DISCORD_SHARD_IDS: '0,1' })).toThrow(/DISCORD_SHARD_IDS is set without DISCORD_SHARDS/);
    expect(() => readShardSettings({ DISCORD_SHARDS: 'many' })).toThrow(/DISCORD_SHARDS="many" must be auto or a whole number/);
    expect(() => readShardSettings({ DISCORD_SHARDS: '4', DISCORD_SHARD_IDS: '3-4' })).toThrow(/names shard 4, but the bot has 4 shards/);
    expect(() => readShardSettings({ DISCORD_SHARDS: '4', DISCORD_SHARD_IDS: '2-1' })).toThrow(/runs backwards/);
    expect(() => readShardSettings({ DISCORD_SHARDS: '4', DISCORD_SHARD_IDS: 'one' })).toThrow(/must list shard numbers/);
    expect(() => readShardSettings({ DISCORD_SHARDS: '4', DISCORD_REST_GLOBAL_PER_SECOND: '80' })).toThrow(/from 1 to 50/);
  });

  it('splits the global REST limit by shards served, and maps guilds to shards as Discord does', () => {
    expect(restGlobalShare({ ids: [0, 1], count: 4 })).toBe(25);
    expect(restGlobalShare({ ids: [0], count: 3 })).toBe(16);
    expect(restGlobalShare({ ids: [0], count: 200 })).toBe(1);
    expect(restGlobalShare('auto')).toBe(50);
    expect(restGlobalShare({ ids: [0, 1], count: 4 }, 10)).toBe(10);
    // Discord's documented example: guild 41771983423143937 with 4 shards... ((id >> 22) % n).
    expect(shardOfGuild('41771983423143937', 4)).toBe(Number((41771983423143937n >> 22n) % 4n));
  });

  it('resolves auto through GET /gateway/bot and refuses shards beyond the total', async () => {
    const fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN, shards: 4 });
    try {
      expect(await resolveShards({ count: 'auto', ids: [2, 3], restGlobalPerSecond: undefined }, TOKEN, fake.apiUrl)).toEqual({
        ids: [2, 3],
        count: 4,
      });
      expect(await resolveShards({ count: 'auto', ids: undefined, restGlobalPerSecond: undefined }, TOKEN, fake.apiUrl)).toBe('auto');
      expect(await resolveShards({ count: 2, ids: undefined, restGlobalPerSecond: undefined }, TOKEN, fake.apiUrl)).toEqual({
        ids: [0, 1],
        count: 2,
      });
      await expect(resolveShards({ count: 'auto', ids: [5], restGlobalPerSecond: undefined }, TOKEN, fake.apiUrl)).rejects.toThrow(
        /names shard 5, but the bot has 4 shards \(Discord’s recommendation/,
      );
    } finally {
      await fake.close();
    }
  });

  it('a process given a shard beyond Discord’s total stops with exit 2 and a sentence', async () => {
    const discord = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN, shards: 4 });
    try {
      const env = {
        ...process.env,
        DISCORD_TOKEN: TOKEN,
        DISCORD_API_URL: discord.apiUrl,
        DISCORD_SHARDS: 'auto',
        DISCORD_SHARD_IDS: '6-7',
      };
      const child = spawn(process.execPath, ['--import', 'tsx', 'adapters/discord/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).toBe(2);
      expect(stderr).toContain('DISCORD_SHARD_IDS names shard 6, 7, but the bot has 4 shards');
      expect(discord.identifies).toHaveLength(0);
    } finally {
      await discord.close();
    }
  });

  it('paces identifies across processes through Redis: one per bucket per window', async () => {
    const key = `test-${Date.now()}`;
    const a = new Redis(process.env.REDIS_URL!);
    const b = new Redis(process.env.REDIS_URL!);
    try {
      // Two processes, max_concurrency 2, a 400 ms window.
      const first = new RedisIdentifyThrottler(a, 2, key, undefined, 400);
      const second = new RedisIdentifyThrottler(b, 2, key, undefined, 400);
      const signal = new AbortController().signal;
      const started = Date.now();
      const at = async (t: RedisIdentifyThrottler, shard: number) => {
        await t.waitForIdentify(shard, signal);
        return Date.now() - started;
      };
      const [s0, s1, s2, s3] = await Promise.all([at(first, 0), at(second, 1), at(second, 2), at(first, 3)]);
      // Per bucket (shard % 2), whichever process asked first goes at once, the other a window later.
      for (const bucket of [
        [s0, s2],
        [s1, s3],
      ]) {
        const [early, late] = bucket.sort((x, y) => x - y) as [number, number];
        // The first of a bucket does not wait for the second's window (an order: how soon it goes is the machine's load).
        expect(early).toBeLessThan(late);
        expect(late).toBeGreaterThanOrEqual(380);
      }
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});

interface BotProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  /** Interaction ids this process logged. */
  handled(): Set<string>;
}

let fake: FakeDiscord;
let db: TestDatabase;
let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let apiKey: string;
const processes: BotProcess[] = [];

async function startShardProcess(name: string, shardIds: string, extraEnv: Record<string, string> = {}): Promise<BotProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DISCORD_TOKEN: TOKEN,
    DISCORD_API_URL: fake.apiUrl,
    DISCORD_SHARDS: 'auto',
    DISCORD_SHARD_IDS: shardIds,
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL!,
    DATA_DIR: join(dir, name),
    DETECT_API_URL: proxy.url,
    DETECT_API_KEY: apiKey,
    DETECT_MAX_RETRIES: '0',
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'adapters/discord/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const proc: BotProcess = {
    name,
    child,
    exited,
    output: () => output,
    handled: () =>
      new Set(
        output
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l).interactionId)
          .filter(Boolean),
      ),
  };
  processes.push(proc);
  await Promise.race([
    (async () => {
      while (!output.includes('"msg":"discord bot ready"')) await new Promise((r) => setTimeout(r, 50));
    })(),
    exited.then((code) => {
      throw new Error(`bot ${name} exited (${code}) before it was ready:\n${output}`);
    }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`bot ${name} not ready in time:\n${output}`)), WAIT_MS)),
  ]);
  return proc;
}

/** A guild id that Discord routes to `shard` of 4. */
function guildOnShard(shard: number): string {
  for (;;) {
    const id = snowflake();
    if (shardOfGuild(id, 4) === shard) return id;
  }
}

async function interact(payload: { id: string; token: string }): Promise<{ callback: RecordedRequest; edit: RecordedRequest }> {
  fake.sendInteraction(payload);
  const callback = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
  );
  const edit = await fake.waitForRequest(
    (r) =>
      r.method === 'PATCH' &&
      r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original` &&
      !String(r.body?.content ?? '').startsWith('⏳'),
    30_000,
  );
  return { callback, edit };
}

const modeOf = (edit: RecordedRequest): string | undefined =>
  edit.body.embeds?.[0]?.fields?.find((f: { name: string }) => f.name === 'Mode')?.value;

describe('two bot processes, two shards each', () => {
  const placeA: Place = { applicationId: APP_ID, guildId: guildOnShard(0), channelId: snowflake() };
  const placeB: Place = { applicationId: APP_ID, guildId: guildOnShard(3), channelId: snowflake() };
  const admin = user(snowflake(), 'admin');
  const moderator = user(snowflake(), 'moderator');
  let a: BotProcess;
  let b: BotProcess;
  let recheck: { customId: string; reply: RecordedRequest } | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'discord-shards-'));
    db = await createTestDatabase();
    const apiKeysFile = join(dir, 'keys.json');
    apiKey = (await createApiKey(apiKeysFile, { name: 'discord-shards', rateLimitMax: 1000 })).key;
    service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
    proxy = new DetectProxy(service.url);
    await proxy.start();
    fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN, shards: 4, maxConcurrency: 16 });
    [a, b] = await Promise.all([startShardProcess('a', '0,1'), startShardProcess('b', '2-3')]);
    await fake.waitForShards([0, 1, 2, 3]);
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await fake?.close();
    await proxy?.stop();
    await service?.close();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('each process identifies its own shards of the 4 Discord recommends', () => {
    const shards = fake.identifies.map((i) => i.shard as [number, number]);
    expect(shards.map(([id]) => id).sort()).toEqual([0, 1, 2, 3]);
    expect(shards.every(([, count]) => count === 4)).toBe(true);
    expect(a.output()).toMatch(/"shards":\[0,1\],"shardCount":4/);
    expect(b.output()).toMatch(/"shards":\[2,3\],"shardCount":4/);
  });

  it('a settings change and an interaction reach the right guild’s state, whichever process takes them', async () => {
    const setA = settingsCommand(placeA, admin, 'mode', [{ name: 'mode', type: 3, value: 'academic' }]);
    const setB = settingsCommand(placeB, admin, 'mode', [{ name: 'mode', type: 3, value: 'legal' }]);
    expect((await interact(setA)).edit.body.content).toContain('Academic mode');
    expect((await interact(setB)).edit.body.content).toContain('Legal mode');
    const checkA = messageCommand(placeA, moderator, { content: TEXT });
    const checkB = messageCommand(placeB, moderator, { content: TEXT });
    const [resultA, resultB] = await Promise.all([interact(checkA), interact(checkB)]);
    expect(modeOf(resultA.edit)).toBe('Academic');
    expect(modeOf(resultB.edit)).toBe('Legal');
    // Guild A's shard 0 is served by process a, guild B's shard 3 by process b. A process logs the
    // interaction after its reply, and its stdout reaches this test through a pipe, so the line can
    // arrive after the fake has recorded the reply: wait for it.
    await expect.poll(() => a.handled()).toContain(setA.id);
    await expect.poll(() => a.handled()).toContain(checkA.id);
    await expect.poll(() => b.handled()).toContain(setB.id);
    await expect.poll(() => b.handled()).toContain(checkB.id);
    expect(a.handled()).not.toContain(checkB.id);

    const detect = chatInputDetect(placeA, moderator, { text: TEXT, mode: 'general' });
    const result = await interact(detect);
    const button = result.edit.body.components[0].components.find((c: { label: string }) => c.label === 'Re-check as Legal');
    recheck = { customId: button.custom_id, reply: result.edit };
  });

  it('killing one process leaves the other serving its shards; a replacement finds what the killed one stored', async () => {
    a.child.kill('SIGKILL');
    await a.exited;
    await expect.poll(() => fake.connectedShards(), { timeout: 10_000 }).toEqual([2, 3]);
    const stillServed = await interact(messageCommand(placeB, moderator, { content: TEXT }));
    expect(modeOf(stillServed.edit)).toBe('Legal');
    expect(() => fake.sendInteraction(messageCommand(placeA, moderator, { content: TEXT }))).toThrow(
      /no gateway client connected for shard 0/,
    );

    const c = await startShardProcess('c', '0-1');
    await fake.waitForShards([0, 1, 2, 3]);
    const calls = proxy.detectCalls;
    const press = buttonPress(placeA, moderator, recheck!.customId, recheck!.reply.body);
    const pressed = await interact(press);
    expect(modeOf(pressed.edit)).toBe('Legal');
    expect(proxy.detectBodies.at(-1)?.text).toBe(TEXT); // the text process a stored in Redis
    expect(proxy.detectCalls).toBe(calls + 1);
    const settingsKept = await interact(messageCommand(placeA, moderator, { content: TEXT }));
    expect(modeOf(settingsKept.edit)).toBe('Academic'); // the setting process a stored in PostgreSQL
    await expect.poll(() => c.handled()).toContain(press.id);
  });

  it('SIGTERM lets an interaction already taken be answered before the process ends', async () => {
    proxy.delayMs = 1_500;
    try {
      const slow = messageCommand(placeB, moderator, { content: TEXT });
      fake.sendInteraction(slow);
      await fake.waitForRequest((r) => r.method === 'POST' && r.path === `/interactions/${slow.id}/${slow.token}/callback`);
      b.child.kill('SIGTERM');
      const edit = await fake.waitForRequest(
        (r) => r.method === 'PATCH' && r.path.includes(slow.token) && !String(r.body?.content ?? '').startsWith('⏳'),
        20_000,
      );
      expect(modeOf(edit)).toBe('Legal');
      expect(await b.exited).toBe(0);
      expect(b.output()).toContain('waiting for interactions already taken to be answered');
      expect(b.output()).not.toContain('stopping with interactions still unanswered');
    } finally {
      proxy.delayMs = 0;
    }
  });
});
