/**
 * `npm run bench:bots`: the bots at scale, on the fakes (docs/slack.md and docs/discord.md quote it).
 *
 * 1. Slack events per second across many installed workspaces: the compiled Slack app (`dist/`, as
 *    `npm run slack` runs it) in OAuth mode, installations in PostgreSQL, short-lived state in Redis,
 *    each workspace installed through the real OAuth flow against the fake Slack; then signed Events
 *    API requests round-robin over the workspaces, each authorized from the installation store,
 *    de-duplicated in Redis and acknowledged.
 * 2. Discord interactions per second across 4 shards in 2 processes: two compiled bot processes
 *    (shards 0–1 and 2–3 of the 4 the fake gateway recommends), settings in PostgreSQL, queue and
 *    re-check texts in Redis, the real detection service; `/detect` interactions spread over four
 *    guilds, one per shard, answered end to end (deferral, detection, edited reply).
 * 3. Memory (RSS) of each shard process, idle after start and after the load.
 * 4. One installation lookup (Bolt's `fetchInstallation`: read, decrypt, parse), p50/p99, in
 *    PostgreSQL and in SQLite.
 *
 *   npm run bench:bots
 *   npm run bench:bots -- --duration 10 --connections 32 --workspaces 100 --lookups 5000
 *
 * PostgreSQL: a throw-away database on TEST_POSTGRES_URL's server (default the local one). Redis:
 * REDIS_URL, else a private redis-server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DurableStore } from '../adapters/chat/store/index.ts';
import type { FakeOAuthInstall } from '../demo/slack/fake-slack.ts';
import { scriptArgs } from './lib/options.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = scriptArgs(import.meta.url, {
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    workspaces: { type: 'string', default: '100' },
    lookups: { type: 'string', default: '5000' },
  },
});
// Loaded once the options are read, so that --help and a mistyped option answer at once, not
// after seconds of loading what the run needs.
const { default: pino } = await import('pino');
const { PostgresStore, SqliteStore } = await import('../adapters/chat/store/index.ts');
const { DurableInstallationStore } = await import('../adapters/slack/installation-store.ts');
const { shardOfGuild } = await import('../adapters/discord/shards.ts');
const { createApiKey, startService } = await import('../src/service/index.ts');
const { FakeDiscord, snowflake } = await import('../demo/discord/fake-discord.ts');
const { chatInputDetect, user } = await import('../demo/discord/payloads.ts');
const { createTestDatabase } = await import('../test/helpers/postgres.ts');
const { startRedisServer } = await import('../test/helpers/redis.ts');
const { FakeSlack, signSlackRequest } = await import('../demo/slack/fake-slack.ts');

const DURATION_MS = Number(args.duration) * 1000;
const CONNECTIONS = Number(args.connections);
const WORKSPACES = Number(args.workspaces);
const LOOKUPS = Number(args.lookups);

const SIGNING_SECRET = 'bench-signing-secret';
const CLIENT_ID = '1000.2000';
const CLIENT_SECRET = 'bench-client-secret';
const INSTALLATION_KEY = 'bench-installation-key-0123456789abcdef0123';
const TEXT =
  'The library board met on Tuesday to decide what to do with the old reading room. Some members wanted a quiet study ' +
  'space, others a room for the children’s club, and the treasurer only wanted the roof fixed before winter. In the end ' +
  'they agreed to fix the roof first and to ask the readers what they would like.';

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function rssMb(pid: number | undefined): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? Number.NaN) / 1024);
}

interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startChild(script: string, env: NodeJS.ProcessEnv, readyMarker: string): Promise<Child> {
  const proc = spawn(process.execPath, [join(ROOT, script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const child = { proc, output: () => output, exited };
  return Promise.race([
    (async () => {
      while (!output.includes(readyMarker)) await new Promise((r) => setTimeout(r, 50));
      return child;
    })(),
    exited.then((code) => {
      throw new Error(`${script} exited (${code}) before it was ready:\n${output}`);
    }),
  ]);
}

/** Runs `send` with `connections` requests outstanding for `durationMs`; returns completions and latencies. */
async function load(
  durationMs: number,
  connections: number,
  send: (i: number) => Promise<number>,
): Promise<{ done: number; failed: number; latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let i = 0;
  let failed = 0;
  const started = performance.now();
  const stopAt = started + durationMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < stopAt) {
        const t = performance.now();
        try {
          const ok = await send(i++);
          if (ok) latencies.push(performance.now() - t);
          else failed++;
        } catch {
          failed++;
        }
      }
    }),
  );
  return { done: latencies.length, failed, latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}

async function benchLookups(store: DurableStore): Promise<{ p50: number; p99: number }> {
  const installations = new DurableInstallationStore({ durable: store, secret: INSTALLATION_KEY, logger: pino({ level: 'silent' }) });
  for (let n = 0; n < WORKSPACES; n++) {
    const teamId = `T0LOOKUP${n}`;
    await installations.storeInstallation({
      team: { id: teamId, name: teamId },
      enterprise: undefined,
      user: { token: undefined, scopes: undefined, id: 'U0ADMIN' },
      bot: {
        token: `xoxe.xoxb-bench-${n}`,
        refreshToken: `xoxe-1-bench-${n}`,
        expiresAt: Math.floor(Date.now() / 1000) + 43_200,
        scopes: ['commands'],
        id: 'B0',
        userId: 'U0',
      },
      isEnterpriseInstall: false,
      authVersion: 'v2',
      appId: 'A0BENCH',
      tokenType: 'bot',
    });
  }
  for (let n = 0; n < 200; n++)
    await installations.fetchInstallation({ teamId: `T0LOOKUP${n % WORKSPACES}`, enterpriseId: undefined, isEnterpriseInstall: false });
  const times: number[] = [];
  for (let n = 0; n < LOOKUPS; n++) {
    const t = performance.now();
    await installations.fetchInstallation({ teamId: `T0LOOKUP${n % WORKSPACES}`, enterpriseId: undefined, isEnterpriseInstall: false });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist/adapters/slack/main.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm run bench:bots does).');
  const dir = await mkdtemp(join(tmpdir(), 'bench-bots-'));
  const redis = process.env.REDIS_URL ? undefined : await startRedisServer();
  const redisUrl = process.env.REDIS_URL ?? redis!.url;
  const dbSlack = await createTestDatabase();
  const dbDiscord = await createTestDatabase();
  const dbLookups = await createTestDatabase();
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'bench-bots', rateLimitMax: 1_000_000 });
  const service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, rateLimitMax: 1_000_000, logLevel: 'silent' });
  const children: Child[] = [];
  const rows: [string, string][] = [];
  // Interrupted (Ctrl-C, a timeout): stop the bot processes and drop the throw-away databases anyway.
  const interrupted = async (signal: NodeJS.Signals): Promise<void> => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    await Promise.allSettled([dbSlack.drop(), dbDiscord.drop(), dbLookups.drop()]);
    await redis?.stop();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', (signal) => void interrupted(signal));
  process.once('SIGTERM', (signal) => void interrupted(signal));
  try {
    // ---- 4. installation lookups (first: no other load on the machine) ----
    const pgStore = new PostgresStore(dbLookups.url);
    const pgLookup = await benchLookups(pgStore);
    await pgStore.close();
    const sqliteStore = new SqliteStore(join(dir, 'lookups'));
    const sqliteLookup = await benchLookups(sqliteStore);
    await sqliteStore.close();

    // ---- 1. Slack events across many workspaces ----
    const codes: Record<string, FakeOAuthInstall> = {};
    for (let n = 0; n < WORKSPACES; n++) codes[`code-${n}`] = { teamId: `T0BENCH${n}`, teamName: `Bench ${n}`, userId: 'U0ADMIN' };
    const slack = new FakeSlack({
      botToken: 'xoxb-unused',
      oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, appId: 'A0BENCH', codes },
    });
    await slack.start();
    const slackApp = await startChild(
      'dist/adapters/slack/main.js',
      {
        SLACK_CLIENT_ID: CLIENT_ID,
        SLACK_CLIENT_SECRET: CLIENT_SECRET,
        SLACK_STATE_SECRET: 'bench-state-secret',
        SLACK_INSTALLATION_KEY: INSTALLATION_KEY,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        SLACK_PORT: '0',
        SLACK_HOST: '127.0.0.1',
        DATABASE_URL: dbSlack.url,
        REDIS_URL: redisUrl,
        DATA_DIR: join(dir, 'slack'),
        DETECT_API_URL: service.url,
        DETECT_API_KEY: key,
        LOG_LEVEL: 'info',
      },
      'listening for Slack requests over HTTP',
    );
    children.push(slackApp);
    const base = `http://127.0.0.1:${/"port":(\d+)/.exec(slackApp.output())![1]}`;
    const installStarted = performance.now();
    for (let n = 0; n < WORKSPACES; n++) {
      const page = await fetch(`${base}/slack/install`);
      const html = await page.text();
      const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
      const state = new URL(/href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)![1]!.replaceAll('&amp;', '&')).searchParams.get('state')!;
      const done = await fetch(`${base}/slack/oauth_redirect?code=code-${n}&state=${encodeURIComponent(state)}`, { headers: { cookie } });
      await done.text();
      if (done.status !== 200) throw new Error(`install ${n} answered ${done.status}`);
    }
    const installSeconds = (performance.now() - installStarted) / 1000;
    const slackIdleMb = await rssMb(slackApp.proc.pid);
    // Event ids unique to this run: Slack's retry de-duplication (in Redis) would drop a repeat.
    const run = Date.now().toString(36);
    const sendEvent = async (i: number): Promise<number> => {
      const team = `T0BENCH${i % WORKSPACES}`;
      const body = JSON.stringify({
        token: 'unused',
        team_id: team,
        api_app_id: 'A0BENCH',
        event: { type: 'app_home_opened', user: 'U0MOD', channel: 'D0BENCH', tab: 'home', event_ts: `${Date.now() / 1000}` },
        type: 'event_callback',
        event_id: `Ev0${run}${i}`,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [{ enterprise_id: null, team_id: team, user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
      });
      const res = await fetch(`${base}/slack/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
        body,
      });
      await res.arrayBuffer();
      return res.status === 200 ? 1 : 0;
    };
    await load(2_000, CONNECTIONS, sendEvent); // warm-up
    const events = await load(DURATION_MS, CONNECTIONS, (i) => sendEvent(i + 10_000_000));
    const slackLoadedMb = await rssMb(slackApp.proc.pid);
    slackApp.proc.kill('SIGTERM');
    await slackApp.exited;
    await slack.stop();

    // ---- 2. Discord interactions across 4 shards in 2 processes ----
    const appId = snowflake();
    const token = `${Buffer.from(appId).toString('base64')}.bench.token`;
    const discord = await FakeDiscord.start({ applicationId: appId, token, shards: 4, maxConcurrency: 16 });
    const botEnv = (ids: string): NodeJS.ProcessEnv => ({
      DISCORD_TOKEN: token,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_SHARDS: 'auto',
      DISCORD_SHARD_IDS: ids,
      DATABASE_URL: dbDiscord.url,
      REDIS_URL: redisUrl,
      DATA_DIR: join(dir, `discord-${ids}`),
      DETECT_API_URL: service.url,
      DETECT_API_KEY: key,
      DETECT_QUEUE_CONCURRENCY: '16',
      LOG_LEVEL: 'info',
    });
    const bots = await Promise.all([
      startChild('dist/adapters/discord/main.js', botEnv('0,1'), '"msg":"discord bot ready"'),
      startChild('dist/adapters/discord/main.js', botEnv('2,3'), '"msg":"discord bot ready"'),
    ]);
    children.push(...bots);
    await discord.waitForShards([0, 1, 2, 3]);
    const idleMb = await Promise.all(bots.map((b) => rssMb(b.proc.pid)));
    // One guild per shard: guild i % 4 lands on shard i % 4, two on each process.
    const guilds: string[] = [];
    for (let shard = 0; shard < 4; shard++) {
      let id = snowflake();
      while (shardOfGuild(id, 4) !== shard) id = snowflake();
      guilds.push(id);
    }
    const moderator = user(snowflake(), 'moderator');
    const deferrals: number[] = [];
    const interact = async (i: number): Promise<number> => {
      const place = { applicationId: appId, guildId: guilds[i % 4]!, channelId: snowflake() };
      const payload = chatInputDetect(place, moderator, { text: TEXT, mode: 'general' });
      const sent = performance.now();
      discord.sendInteraction(payload);
      const deferred = discord
        .waitForRequest((r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`, 60_000)
        .then(() => deferrals.push(performance.now() - sent));
      const edit = await discord.waitForRequest(
        (r) => r.method === 'PATCH' && r.path.includes(payload.token) && !String(r.body?.content ?? '').startsWith('⏳'),
        60_000,
      );
      await deferred;
      if (discord.requests.length > 4_000) discord.requests.splice(0, 2_000);
      return edit.body?.embeds?.[0]?.fields?.some((f: { name: string }) => f.name === 'Request ID') ? 1 : 0;
    };
    await load(2_000, CONNECTIONS, interact); // warm-up
    deferrals.length = 0;
    const interactions = await load(DURATION_MS, CONNECTIONS, interact);
    deferrals.sort((a, b) => a - b);
    const loadedMb = await Promise.all(bots.map((b) => rssMb(b.proc.pid)));
    await Promise.all(
      bots.map(async (b) => {
        b.proc.kill('SIGTERM');
        await b.exited;
      }),
    );
    await discord.close();

    rows.push(
      [`Slack: ${WORKSPACES} workspaces installed through OAuth (sequential)`, `${fmt(installSeconds, 1)} s`],
      [
        `Slack: Events API events/s across ${WORKSPACES} workspaces (${CONNECTIONS} connections)`,
        `${fmt(events.done / events.seconds)} /s; ack p50 ${fmt(percentile(events.latencies, 50), 1)} ms, p99 ${fmt(percentile(events.latencies, 99), 1)} ms; ${events.failed} failed`,
      ],
      ['Slack app RSS: after start / after the load', `${fmt(slackIdleMb)} MB / ${fmt(slackLoadedMb)} MB`],
      [
        `Discord: /detect answered/s, 4 shards in 2 processes (${CONNECTIONS} in flight)`,
        `${fmt(interactions.done / interactions.seconds, 1)} /s; answer p50 ${fmt(percentile(interactions.latencies, 50))} ms, p99 ${fmt(percentile(interactions.latencies, 99))} ms; ${interactions.failed} failed`,
      ],
      [
        'Discord: deferral (ack) after dispatch',
        `p50 ${fmt(percentile(deferrals, 50), 1)} ms, p99 ${fmt(percentile(deferrals, 99), 1)} ms`,
      ],
      ...bots.map((_, n): [string, string] => [
        `Discord shard process ${n + 1} (shards ${n === 0 ? '0–1' : '2–3'}) RSS: after start / after the load`,
        `${fmt(idleMb[n]!)} MB / ${fmt(loadedMb[n]!)} MB`,
      ]),
      [
        `Installation lookup, PostgreSQL (${LOOKUPS} lookups over ${WORKSPACES} installations)`,
        `p50 ${fmt(pgLookup.p50, 3)} ms, p99 ${fmt(pgLookup.p99, 3)} ms`,
      ],
      [
        `Installation lookup, SQLite (${LOOKUPS} lookups over ${WORKSPACES} installations)`,
        `p50 ${fmt(sqliteLookup.p50, 3)} ms, p99 ${fmt(sqliteLookup.p99, 3)} ms`,
      ],
    );
    process.stdout.write(
      `\nbench-bots: ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(
          ' ',
        )}, ${args.duration} s per load, node ${process.version}\n\n| what | figure |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join('\n')}\n`,
    );
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    await service.close();
    await dbSlack.drop();
    await dbDiscord.drop();
    await dbLookups.drop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-bots: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
