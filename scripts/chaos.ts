/**
 * `npm run chaos`: the bots under the outages of issue 32, on the fakes, with real parts failing,
 * printing per fault how many were answered, lost and duplicated (docs/architecture.md quotes it).
 *
 * 1. redis: a private redis-server stopped for `--redis-seconds` (30) under both bots (Discord and
 *    Slack, REDIS_URL for the state store and the detection queue): `/detect` checks sent one after
 *    another on each bot the whole time; answered = a result with its request id.
 * 2. postgres + SIGTERM / SIGKILL: the Discord bot as a real process (`adapters/discord/main.ts`) on
 *    a PostgreSQL cluster of the script's own (initdb/pg_ctl in a temp folder, never the shared
 *    server), watching a channel with cards on, WATCH_JUDGE=message; `--messages` (200) watched
 *    messages, half before the cluster stops (`pg_ctl stop -m immediate`), half during the outage;
 *    the bot is sent the signal during the outage, the cluster starts again after `--pg-seconds`
 *    (10), the bot is started again. lost = delivered and never scored; duplicated = messages sent
 *    to the service more than once (one score kept); flags left without a card after the restart.
 * 3. crash: the same bot SIGKILLed in the middle of a burst (database up), then started again.
 *
 *   npm run chaos
 *   npm run chaos -- --redis-seconds 30 --pg-seconds 10 --messages 200 --only redis,postgres,crash
 *   npm run chaos -- --logs /some/folder   (each bot process's log lines, one file per run)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningService } from '../src/service/index.ts';
import type { FakeDiscord as RunningFakeDiscord, RecordedRequest } from '../demo/discord/fake-discord.ts';
import type { Place } from '../demo/discord/payloads.ts';
import type { Author } from '../demo/discord/watch-payloads.ts';
import type { PostgresCluster } from '../test/helpers/pg-cluster.ts';
import { scriptArgs } from './lib/options.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = scriptArgs(import.meta.url, {
  options: {
    'redis-seconds': { type: 'string', default: '30' },
    'pg-seconds': { type: 'string', default: '10' },
    messages: { type: 'string', default: '200' },
    only: { type: 'string', default: 'redis,postgres,crash' },
    logs: { type: 'string' },
  },
});
// Loaded once the options are read, so that --help and a mistyped option answer at once, not
// after seconds of loading what the run needs.
const { ApplicationFlags } = await import('discord.js');
const { default: pg } = await import('pg');
const { default: pino } = await import('pino');
const { connectDetectionBackend } = await import('../adapters/chat/backend.ts');
const { PostgresStore } = await import('../adapters/chat/store/index.ts');
const { createDiscordBot } = await import('../adapters/discord/bot.ts');
const { parseReviewCustomId } = await import('../adapters/discord/watch/card.ts');
const { createApiKey, startService } = await import('../src/service/index.ts');
const { FakeDiscord, snowflake } = await import('../demo/discord/fake-discord.ts');
const { chatInputDetect, user } = await import('../demo/discord/payloads.ts');
const { guildWithChannels, messageCreate } = await import('../demo/discord/watch-payloads.ts');
const { startPostgresCluster } = await import('../test/helpers/pg-cluster.ts');
const { startRedisServer } = await import('../test/helpers/redis.ts');
const { LONG_TEXT, postToApp, slashCommandBody, startHarness } = await import('../test/slack/harness.ts');
const { DetectProxy } = await import('../test/slack/proxy.ts');

const REDIS_SECONDS = Number(args['redis-seconds']);
const PG_SECONDS = Number(args['pg-seconds']);
const MESSAGES = Number(args.messages);
const ONLY = new Set(args.only.split(',').map((s) => s.trim()));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Bot processes and the PostgreSQL cluster still up: an interrupted run (Ctrl-C) stops them too. */
const running = { bots: new Set<ChildProcess>(), cluster: undefined as PostgresCluster | undefined };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const bot of running.bots) bot.kill('SIGKILL');
    void (running.cluster?.destroy() ?? Promise.resolve()).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}
const rows: string[][] = [];
const say = (line: string): void => void process.stderr.write(`chaos: ${line}\n`);

// Two texts in the register the engine rates likely AI, numbered so each message is its own.
const AI_TEXTS = [
  'It is important to note that effective communication plays a crucial role in fostering collaboration within any community. By leveraging clear guidelines and consistent moderation practices, communities can create an inclusive environment where every member feels valued and heard. Furthermore, regular feedback mechanisms enable continuous improvement, ensuring that the community remains vibrant, engaging, and aligned with its core values over time.',
  "In today's fast-paced digital landscape, maintaining a healthy online community requires a thoughtful and multifaceted approach. Moderators must balance the need for open dialogue with the importance of safety and respect. Additionally, implementing transparent policies helps build trust among members. Ultimately, a well-moderated community can serve as a valuable resource, fostering meaningful connections and promoting positive interactions for everyone involved.",
];
const watchedText = (i: number): string => `Note ${i}. ${AI_TEXTS[i % AI_TEXTS.length]}`;

// ---------------------------------------------------------------- 1. Redis down under both bots

async function redisFault(service: RunningService, key: string): Promise<void> {
  const redis = await startRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'chaos-redis-'));
  const appId = snowflake();
  const token = `${Buffer.from(appId).toString('base64')}.chaos.token`;
  const fake = await FakeDiscord.start({ applicationId: appId, token });
  const backend = await connectDetectionBackend(
    { DETECT_API_URL: service.url, DETECT_API_KEY: key, REDIS_URL: redis.url },
    { logger: pino({ level: 'silent' }) },
  );
  const bot = createDiscordBot({
    token,
    detect: backend.detector,
    settings: { apiUrl: fake.apiUrl, state: { dataDir: join(dir, 'discord'), redisUrl: redis.url } },
  });
  await bot.start();
  const slack = await startHarness({ env: { REDIS_URL: redis.url }, backendEnv: { REDIS_URL: redis.url } });
  const place: Place = { applicationId: appId, guildId: snowflake(), channelId: snowflake() };
  const moderator = user(snowflake(), 'moderator');
  const discordCheck = async (): Promise<boolean> => {
    const payload = chatInputDetect(place, moderator, { text: LONG_TEXT, mode: 'general' });
    fake.sendInteraction(payload);
    const edit: RecordedRequest = await fake.waitForRequest(
      (r) =>
        r.method === 'PATCH' &&
        r.path === `/webhooks/${appId}/${payload.token}/messages/@original` &&
        !String(r.body?.content ?? '').startsWith('⏳'),
      30_000,
    );
    if (fake.requests.length > 2_000) fake.requests.splice(0, 1_000);
    return edit.body?.embeds?.[0]?.fields?.some((f: { name: string }) => f.name === 'Request ID') === true;
  };
  const slackCheck = async (): Promise<boolean> => {
    const cmd = slashCommandBody(slack, LONG_TEXT);
    await postToApp(slack, cmd.body);
    const id = cmd.responseUrl.split('/').pop();
    const reply = await slack.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id, 30_000);
    return /Request id: `req_/.test(JSON.stringify(reply.args.blocks));
  };
  const counts = { discord: { sent: 0, answered: 0 }, slack: { sent: 0, answered: 0 } };
  try {
    await discordCheck();
    await slackCheck();
    say(`redis: stopping redis-server for ${REDIS_SECONDS} s`);
    await redis.stop();
    const until = Date.now() + REDIS_SECONDS * 1000;
    await Promise.all(
      (['discord', 'slack'] as const).map(async (which) => {
        while (Date.now() < until) {
          counts[which].sent += 1;
          const ok = await (which === 'discord' ? discordCheck() : slackCheck()).catch(() => false);
          if (ok) counts[which].answered += 1;
          await sleep(250);
        }
      }),
    );
    await redis.start();
  } finally {
    await bot.stop();
    await backend.close();
    await fake.close();
    await slack.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
  for (const which of ['discord', 'slack'] as const) {
    const c = counts[which];
    rows.push([
      `Redis stopped ${REDIS_SECONDS} s, ${which === 'discord' ? 'Discord' : 'Slack'} /detect`,
      `${c.sent}`,
      `${c.answered} with their result`,
      `${c.sent - c.answered}`,
      '–',
      '–',
    ]);
  }
}

// ------------------------------------------------ 2 and 3. the Discord bot process and PostgreSQL

interface BotProcess {
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

async function startBot(fake: RunningFakeDiscord, env: NodeJS.ProcessEnv): Promise<BotProcess> {
  const identified = fake.identifies.length;
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'adapters/discord/main.ts')], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-200_000);
  });
  child.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-200_000);
  });
  running.bots.add(child);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      running.bots.delete(child);
      if (!args.logs) return r();
      const file = join(args.logs, `discord-${Date.now()}-${child.pid}.log`);
      void mkdir(args.logs, { recursive: true })
        .then(() => writeFile(file, output))
        .finally(r);
    }),
  );
  const deadline = Date.now() + 60_000;
  while (fake.identifies.length <= identified) {
    if (child.exitCode !== null) throw new Error(`the bot exited (${child.exitCode}) before identifying:\n${output.slice(-4_000)}`);
    if (Date.now() > deadline) throw new Error(`the bot did not identify within 60 s:\n${output.slice(-4_000)}`);
    await sleep(50);
  }
  return { child, exited, output: () => output };
}

interface WatchRun {
  delivered: number;
  scored: number;
  duplicated: number;
  flags: number;
  withoutCard: number;
  cardsPosted: number;
  /** Card posts Discord answered with the card already posted for the flag. */
  postedAgain: number;
  cardsTwice: number;
}

/**
 * One watched burst: `fault` runs once half the messages are delivered (it stops the database
 * and/or signals the bot) and returns whether the database must be started again.
 */
async function watchRun(
  pgCluster: PostgresCluster,
  service: RunningService,
  key: string,
  name: string,
  fault: (bot: BotProcess, send: (from: number, to: number, perSecond: number) => Promise<void>) => Promise<void>,
): Promise<WatchRun> {
  const dbName = `chaos_${name.replace(/\W/g, '_')}_${Date.now().toString(36)}`.toLowerCase();
  const admin = new pg.Client({ connectionString: pgCluster.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const databaseUrl = pgCluster.url.replace(/\/postgres$/, `/${dbName}`);
  const dir = await mkdtemp(join(tmpdir(), 'chaos-watch-'));
  const proxy = new DetectProxy(service.url);
  await proxy.start();
  const appId = snowflake();
  const token = `${Buffer.from(appId).toString('base64')}.chaos.token`;
  const fake = await FakeDiscord.start({ applicationId: appId, token, applicationFlags: ApplicationFlags.GatewayMessageContentLimited });
  const place: Place = { applicationId: appId, guildId: snowflake(), channelId: snowflake() };
  const modlog = snowflake();
  const scope = `discord:${place.guildId}`;
  const store = new PostgresStore(databaseUrl);
  await store.ready();
  await store.watchChannel(scope, place.channelId, 0);
  await store.setCards(scope, place.channelId, true);
  await store.setPreset(scope, 'loose');
  await store.updateSettings(scope, { auditChannelId: modlog });
  await store.close();

  const messages = Array.from({ length: MESSAGES }, (_, i) =>
    messageCreate(place, user(snowflake(), `member${i}`) as Author, watchedText(i), { timestamp: new Date().toISOString() }),
  );
  // The fake keeps the messages, as Discord does, for the restarted bot to read by id.
  fake.route('GET', /^\/channels\/(\d+)\/messages\/(\d+)$/, (_req, m) => {
    const found = messages.find((x) => x.id === m[2] && x.channel_id === m[1]);
    return found ? { status: 200, body: found } : { status: 404, body: { message: 'Unknown Message', code: 10008 } };
  });
  const env: NodeJS.ProcessEnv = {
    DISCORD_TOKEN: token,
    DISCORD_API_URL: fake.apiUrl,
    DATABASE_URL: databaseUrl,
    DATA_DIR: join(dir, 'data'),
    DETECT_API_URL: proxy.url,
    DETECT_API_KEY: key,
    WATCH_JUDGE: 'message',
    WATCH_CARDS_PER_CHANNEL_HOUR: '1000',
    WATCH_CONCURRENCY: '4',
  };
  const guild = guildWithChannels(
    place,
    [
      { id: place.channelId, name: 'general' },
      { id: modlog, name: 'mod-log' },
    ],
    [],
    appId,
  );
  let delivered = 0;
  const send = async (from: number, to: number, perSecond: number): Promise<void> => {
    for (let i = from; i < to; i++) {
      fake.dispatch('MESSAGE_CREATE', messages[i]);
      delivered += 1;
      await sleep(1000 / perSecond);
    }
  };
  let bot = await startBot(fake, env);
  fake.dispatch('GUILD_CREATE', guild);
  await sleep(500);
  try {
    await fault(bot, send);
    await bot.exited;
    bot = await startBot(fake, env);
    fake.dispatch('GUILD_CREATE', guild);
    const check = new PostgresStore(databaseUrl);
    let scored = 0;
    const done = new Set<string>();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const pending = await check.pendingCount().catch(() => 1);
      for (const m of messages)
        if (!done.has(String(m.id)) && (await check.isScored(scope, place.channelId, String(m.id)).catch(() => false)))
          done.add(String(m.id));
      scored = done.size;
      if ((scored >= delivered && pending === 0) || Date.now() > deadline) break;
      await sleep(500);
    }
    // Cards still on their way (a recovered one goes after its message is scored again).
    await sleep(2_000);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const flagRows = await client.query<{ card: string; card_id: string | null; flag_id: string }>(
      'SELECT card, card_id, flag_id FROM bot_watch_scores WHERE flag_id IS NOT NULL',
    );
    await client.end();
    await check.close();
    const cardPosts = fake.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${modlog}/messages`);
    // What moderators see: the cards in the mod-log, a post Discord answered with an earlier card
    // of the same nonce (the flag) counted once.
    const cards = fake.created.filter((message) => message.channel_id === modlog);
    const perFlag = new Map<string, number>();
    for (const card of cards) {
      const buttons = card.components as Array<{ components: Array<{ custom_id: string }> }>;
      const flagId = parseReviewCustomId(buttons[0]?.components[0]?.custom_id ?? '')?.flagId ?? 'unknown';
      perFlag.set(flagId, (perFlag.get(flagId) ?? 0) + 1);
    }
    const lost = messages.slice(0, delivered).filter((m) => !done.has(String(m.id)));
    if (lost.length > 0) say(`${name}: not scored: ${lost.map((m) => messages.indexOf(m)).join(', ')} (message numbers)`);
    const sentTimes = new Map<string, number>();
    for (const body of proxy.detectBodies) sentTimes.set(body.text, (sentTimes.get(body.text) ?? 0) + 1);
    return {
      delivered,
      scored,
      duplicated: [...sentTimes.values()].filter((n) => n > 1).length,
      flags: flagRows.rows.length,
      withoutCard: flagRows.rows.filter((r) => r.card === 'failed' && r.card_id === null).length,
      cardsPosted: cards.length,
      postedAgain: cardPosts.length - cards.length,
      cardsTwice: [...perFlag.values()].filter((n) => n > 1).length,
    };
  } finally {
    if (bot.child.exitCode === null && bot.child.signalCode === null) {
      bot.child.kill('SIGTERM');
      await Promise.race([bot.exited, sleep(20_000)]);
      if (bot.child.exitCode === null && bot.child.signalCode === null) bot.child.kill('SIGKILL');
    }
    await fake.close();
    await proxy.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function watchRow(what: string, r: WatchRun): string[] {
  return [
    what,
    `${r.delivered} watched messages`,
    `${r.scored} scored; ${r.flags} flags, ${r.cardsPosted} cards posted${r.postedAgain > 0 ? ` (${r.postedAgain} posted again, answered with the first)` : ''}`,
    `${r.delivered - r.scored} messages; ${r.withoutCard} flags without a card`,
    `${r.duplicated} sent to the service twice (one score kept)`,
    `${r.cardsTwice} cards posted twice`,
  ];
}

async function postgresFaults(service: RunningService, key: string): Promise<void> {
  const cluster = await startPostgresCluster();
  running.cluster = cluster;
  try {
    if (ONLY.has('postgres')) {
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        say(`postgres: ${MESSAGES} watched messages, PostgreSQL stopped ${PG_SECONDS} s, ${signal} during the outage`);
        const half = Math.floor(MESSAGES / 2);
        const result = await watchRun(cluster, service, key, `pg_${signal}`, async (bot, send) => {
          await send(0, half, 50);
          const stoppedAt = Date.now();
          await cluster.stop('immediate');
          // The second half during the outage, then the signal while the database is still down.
          await send(half, MESSAGES, Math.max(1, (MESSAGES - half) / (PG_SECONDS * 0.5)));
          await sleep(500);
          bot.child.kill(signal);
          await Promise.race([bot.exited, sleep(30_000)]);
          if (bot.child.exitCode === null && bot.child.signalCode === null) bot.child.kill('SIGKILL');
          await bot.exited;
          const kept = /"kept":(\d+)/.exec(bot.output())?.[1];
          if (kept) say(`postgres: the stopped bot logged ${kept} messages kept in the spool`);
          await sleep(Math.max(0, stoppedAt + PG_SECONDS * 1000 - Date.now()));
          await cluster.start();
        });
        rows.push(watchRow(`PostgreSQL stopped ${PG_SECONDS} s, Discord bot ${signal} during it`, result));
      }
    }
    if (ONLY.has('crash')) {
      say(`crash: ${MESSAGES} watched messages, the bot SIGKILLed at message ${Math.floor(MESSAGES / 2)}`);
      const result = await watchRun(cluster, service, key, 'crash', async (bot, send) => {
        await send(0, Math.floor(MESSAGES / 2), 50);
        bot.child.kill('SIGKILL');
        await bot.exited;
      });
      rows.push(watchRow(`Discord bot SIGKILLed at message ${Math.floor(MESSAGES / 2)} (database up)`, result));
    }
  } finally {
    await cluster.destroy();
    running.cluster = undefined;
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'chaos-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'chaos', rateLimitMax: 1_000_000 });
  const service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, rateLimitMax: 1_000_000, logLevel: 'silent' });
  try {
    if (ONLY.has('redis')) await redisFault(service, key);
    if (ONLY.has('postgres') || ONLY.has('crash')) await postgresFaults(service, key);
  } finally {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    `\nchaos (node ${process.version}):\n\n| fault | sent | answered | lost | duplicated | cards twice |\n|---|---|---|---|---|---|\n${rows
      .map((r) => `| ${r.join(' | ')} |`)
      .join('\n')}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`chaos: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
