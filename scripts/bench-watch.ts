/**
 * Part of `npm run bench`: a watched Discord channel under a flood, on the fakes. The real
 * discord.js bot (with watching on) runs against the fake Discord (demo/discord/fake-discord.ts), the
 * real detection service behind it on loopback, and the bots' real queue and store. The fake
 * gateway sends MESSAGE_CREATE at `--rate` messages per second for `--seconds`, while a moderator
 * runs `/detect` once a second; the bench prints messages scored per second, the queue depth, the
 * interactive checks' latency before and during the flood (p50/p95), and memory.
 *
 *   npm run bench                                   # after the service bench
 *   npx tsx scripts/bench-watch.ts                  # this bench alone: 50 messages/s for 60 s
 *   npx tsx scripts/bench-watch.ts -- --rate 50 --seconds 60 --store sqlite+redis --budget 12000 --judge author
 *
 * `--store`: sqlite (default), sqlite+redis (records in SQLite, the short-lived state and the
 * detection queue's budget in REDIS_URL), postgres (a throw-away database on the server of
 * TEST_POSTGRES_URL, default the local one, dropped at the end; the bot's settings go there too), or
 * postgres+redis (records in that database, the short-lived state in REDIS_URL), as the bots choose
 * from DATA_DIR, REDIS_URL and DATABASE_URL.
 *
 * Messages are real sentences of the corpus (../shared/data/corpus-dev.jsonl), 25 to 60 words, from
 * `--members` different members, so author windows fill as they would. Memory is the whole process:
 * bot, detection service (its worker threads included), fake Discord and the load generator.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreLocation, WatchStore } from '../adapters/chat/store/index.ts';
import type { TestDatabase } from '../test/helpers/postgres.ts';
import { scriptArgs } from './lib/options.mjs';

const args = scriptArgs(import.meta.url, {
  options: {
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    members: { type: 'string', default: '200' },
    store: { type: 'string', default: 'sqlite' },
    // The API key's budget per minute (the service's limit and DETECT_QUEUE_RATE alike).
    budget: { type: 'string', default: '12000' },
    judge: { type: 'string', default: 'author' },
    'drain-seconds': { type: 'string', default: '120' },
  },
});
// Loaded once the options are read, so that --help and a mistyped option answer at once, not
// after seconds of loading what the run needs.
const { ApplicationFlags } = await import('discord.js');
const { default: pino } = await import('pino');
const { connectDetectionBackend } = await import('../adapters/chat/backend.ts');
const { DEFAULT_WATCH_SETTINGS } = await import('../adapters/chat/watch/config.ts');
const { watchDetectorFor } = await import('../adapters/chat/watch/detector.ts');
const { PostgresStore, SqliteStore } = await import('../adapters/chat/store/index.ts');
const { createDiscordBot } = await import('../adapters/discord/bot.ts');
const { createApiKey, startService } = await import('../src/service/index.ts');
const { FakeDiscord, snowflake } = await import('../demo/discord/fake-discord.ts');
const { chatInputDetect, user } = await import('../demo/discord/payloads.ts');
const { createTestDatabase } = await import('../test/helpers/postgres.ts');
const { guildWithChannels, messageCreate, resolvedChannel, settingsCommand } = await import('../demo/discord/watch-payloads.ts');
const { benchTexts } = await import('./bench-texts.ts');

const rate = Number(args.rate);
const seconds = Number(args.seconds);
const members = Number(args.members);
const budget = Number(args.budget);
const judge = args.judge === 'message' ? 'message' : 'author';
// Watching's records and queue are in the database either way; `+redis` adds Redis for the bots' short-lived state.
const STORES = ['sqlite', 'sqlite+redis', 'postgres', 'postgres+redis'] as const;
type StoreKind = (typeof STORES)[number];
if (!(STORES as readonly string[]).includes(args.store ?? '')) throw new Error(`--store must be one of ${STORES.join(', ')}`);
const storeKind = args.store as StoreKind;
const STORE_NAMES: Record<StoreKind, string> = {
  sqlite: 'SQLite',
  'sqlite+redis': 'SQLite, with Redis',
  postgres: 'PostgreSQL',
  'postgres+redis': 'PostgreSQL, with Redis',
};

/** Messages cut from English sentences of the dev set, or of Brown corpus texts without it (scripts/bench-texts.ts). */
async function corpusMessages(count: number): Promise<string[]> {
  const corpus = benchTexts();
  console.log(`texts: ${corpus.source}`);
  const sentences: string[] = [];
  for (const record of corpus.rows) {
    if (record.language !== 'en') continue;
    for (const sentence of record.text.split(/(?<=[.!?])\s+/)) {
      const words = sentence.split(/\s+/).length;
      if (words >= 8 && words <= 40) sentences.push(sentence);
    }
  }
  const out: string[] = [];
  for (let i = 0, s = 0; out.length < count; i++) {
    const parts: string[] = [];
    let words = 0;
    const target = 25 + (i % 36);
    while (words < target) {
      const sentence = sentences[s++ % sentences.length]!;
      parts.push(sentence);
      words += sentence.split(/\s+/).length;
    }
    out.push(parts.join(' '));
  }
  return out;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(0)} MB`;
const ms = (n: number): string => `${Math.round(n)} ms`;
const sleep = (n: number): Promise<void> => new Promise((r) => setTimeout(r, n));

async function main(): Promise<void> {
  const total = Math.round(rate * seconds);
  const texts = await corpusMessages(total + 200);
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-watch-'));
  const logger = pino({ level: 'silent' });
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'bench-watch', rateLimitMax: budget });
  const service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, rateLimitWindow: '1 minute', logger });
  const backend = await connectDetectionBackend(
    { DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_QUEUE_RATE: `${budget}/1m`, DETECT_MAX_RETRIES: '0' },
    { logger },
  );
  const redisUrl = process.env.REDIS_URL;
  if (storeKind.includes('redis') && !redisUrl) throw new Error(`--store ${storeKind} needs REDIS_URL`);
  const database: TestDatabase | undefined = storeKind.startsWith('postgres') ? await createTestDatabase() : undefined;
  const store: WatchStore = database ? new PostgresStore(database.url) : new SqliteStore(join(dir, 'state'));
  const state: StoreLocation = {
    dataDir: join(dir, 'state'),
    ...(database ? { databaseUrl: database.url } : {}),
    ...(storeKind.includes('redis') ? { redisUrl } : {}),
  };
  const applicationId = snowflake();
  const token = `${Buffer.from(applicationId).toString('base64')}.fake.bench-token`;
  const fake = await FakeDiscord.start({ applicationId, token, applicationFlags: ApplicationFlags.GatewayMessageContentLimited });
  const bot = createDiscordBot({
    token,
    detect: backend.detector,
    logger,
    settings: { apiUrl: fake.apiUrl, state },
    watch: { detector: watchDetectorFor(backend), store, settings: { ...DEFAULT_WATCH_SETTINGS, judge } },
  });
  const cleanup = async (): Promise<void> => {
    await bot.stop();
    await backend.close();
    await store.close();
    await fake.close();
    await service.close();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await bot.start();
    const place = { applicationId, guildId: snowflake(), channelId: snowflake() };
    const modlog = snowflake();
    fake.dispatch(
      'GUILD_CREATE',
      guildWithChannels(
        place,
        [
          { id: place.channelId, name: 'general' },
          { id: modlog, name: 'mod-log' },
        ],
        [],
        applicationId,
      ),
    );
    while (!bot.client.guilds.cache.has(place.guildId)) await sleep(20);
    const admin = user(snowflake(), 'admin');
    const command = async (payload: { id: string; token: string }): Promise<void> => {
      fake.sendInteraction(payload);
      await fake.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token));
    };
    const channelOption = (id: string, name: string) => ({
      options: [{ name: 'channel', type: 7, value: id }],
      resolved: { channels: { [id]: resolvedChannel(id, name) } },
    });
    const general = channelOption(place.channelId, 'general');
    await command(settingsCommand(place, admin, 'watch', general.options, general.resolved));
    const log = channelOption(modlog, 'mod-log');
    await command(settingsCommand(place, admin, 'modlog', log.options, log.resolved));
    await command(settingsCommand(place, admin, 'cards', [...general.options, { name: 'state', type: 3, value: 'on' }], general.resolved));

    const moderator = user(snowflake(), 'moderator');
    let nextText = total;
    /** One /detect from a moderator: time from the dispatch to the answer replacing the deferral. */
    const interactive = async (): Promise<number> => {
      const payload = chatInputDetect(place, moderator, { text: texts[nextText++ % texts.length]!, mode: 'general' });
      const started = performance.now();
      fake.sendInteraction(payload);
      await fake.waitForRequest(
        (r) => r.method === 'PATCH' && r.path.includes(payload.token) && Array.isArray(r.body?.embeds) && r.body.embeds.length > 0,
        120_000,
      );
      return performance.now() - started;
    };

    const watcher = bot.context.watch!.watcher!;
    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) {
      baseline.push(await interactive());
      await sleep(300);
    }
    const memoryBefore = process.memoryUsage();

    const authors = Array.from({ length: members }, (_, i) => user(snowflake(), `member${i}`));
    const samples: { at: number; depth: number; scored: number; rss: number; heap: number }[] = [];
    const scoredAtStart = watcher.counters.scored;
    const floodStart = performance.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const memory = process.memoryUsage();
        samples.push({
          at: performance.now() - floodStart,
          depth: await watcher.pendingCount(),
          scored: watcher.counters.scored - scoredAtStart,
          rss: memory.rss,
          heap: memory.heapUsed,
        });
        await sleep(1_000);
      }
    })();
    const during: Promise<number>[] = [];
    let sent = 0;
    const startWall = Date.now();
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - floodStart) / 1000) * rate) + 1);
      for (; sent < due; sent++) {
        const author = authors[sent % authors.length]!;
        fake.dispatch(
          'MESSAGE_CREATE',
          messageCreate(place, author, texts[sent]!, { timestamp: new Date(startWall + (sent * 1000) / rate).toISOString() }),
        );
        if (sent % rate === 0) during.push(interactive());
      }
      await sleep(5);
    }
    const floodEnd = performance.now();
    const scoredInFlood = watcher.counters.scored - scoredAtStart;
    const depthAtEnd = await watcher.pendingCount();
    const duringLatencies = await Promise.all(during);
    const drainDeadline = performance.now() + Number(args['drain-seconds']) * 1000;
    while ((await watcher.pendingCount()) > 0 && performance.now() < drainDeadline) await sleep(250);
    const drainedAt = performance.now();
    sampling = false;
    await sampler;
    const memoryAfter = process.memoryUsage();

    const c = watcher.counters;
    const depths = samples.map((s) => s.depth);
    const floodSamples = samples.filter((s) => s.at <= floodEnd - floodStart + 1);
    const rss = Math.max(...samples.map((s) => s.rss));
    const heap = Math.max(...samples.map((s) => s.heap));
    const totalScored = c.scored - scoredAtStart;
    console.log(
      `\ntextdetect watch bench — Discord fakes, ${rate} messages/s for ${seconds} s (${total} messages, ${members} members), judged ${judge === 'author' ? 'as authors (POST /v1/detect/author, up to 20 recent messages)' : 'message by message'}, ${STORE_NAMES[storeKind]} store, key budget ${budget.toLocaleString('en-US')}/min, ${cpus().length} CPUs, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `scored: ${totalScored} of ${c.queued} queued (${c.offered} offered; left out: ${JSON.stringify(c.skipped)}); during the flood ${scoredInFlood} = ${(scoredInFlood / ((floodEnd - floodStart) / 1000)).toFixed(1)}/s; all ${(totalScored / ((drainedAt - floodStart) / 1000)).toFixed(1)}/s until the queue was empty ${((drainedAt - floodStart) / 1000).toFixed(1)} s after the flood began`,
    );
    console.log(
      `queue depth (waiting + being scored), sampled each second: max ${Math.max(...depths)}, mean during the flood ${(floodSamples.reduce((a, s) => a + s.depth, 0) / Math.max(1, floodSamples.length)).toFixed(1)}, at the end of the flood ${depthAtEnd}, after draining ${await watcher.pendingCount()}`,
    );
    console.log(
      `interactive /detect (dispatch → answer): before the flood p50 ${ms(percentile(baseline, 50))}, p95 ${ms(percentile(baseline, 95))} (n=${baseline.length}); during the flood p50 ${ms(percentile(duringLatencies, 50))}, p95 ${ms(percentile(duringLatencies, 95))}, max ${ms(Math.max(...duringLatencies))} (n=${duringLatencies.length})`,
    );
    console.log(
      `memory (whole process) RSS / heap used: before the flood ${mb(memoryBefore.rss)} / ${mb(memoryBefore.heapUsed)}; max while flooding and draining ${mb(rss)} / ${mb(heap)}; after ${mb(memoryAfter.rss)} / ${mb(memoryAfter.heapUsed)}; texts held for waiting messages ${watcher.cachedTexts}, recent messages held ${watcher.recentMessages}`,
    );
    console.log(
      `flags ${c.flagged}, cards posted ${c.cards} (cap ${DEFAULT_WATCH_SETTINGS.cardsPerChannelHour}/h per channel, one per member per ${DEFAULT_WATCH_SETTINGS.cardWindowMs / 60_000} min); retried ${c.retried}, refused ${c.refused}, gone ${c.gone}`,
    );
  } finally {
    await cleanup();
  }
}

main().catch((err: Error) => {
  console.error(`watch bench failed: ${err.stack ?? err.message}`);
  process.exit(1);
});
