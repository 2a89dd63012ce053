/**
 * Watching chosen channels, end to end: the real discord.js client against the fake Discord (REST
 * and gateway), the real detection service behind the counting proxy, real SQLite, Redis and PostgreSQL. Gateway
 * dispatches follow Discord's documented shapes (watch-payloads.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFlags } from 'discord.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import type { StoreLocation } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { openWatchStore, PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { parseReviewCustomId } from '../../adapters/discord/watch/card.ts';
import { INTENT_MISSING_REPLY } from '../../adapters/discord/watch/runtime.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { startRedisServer } from '../helpers/redis.ts';
import { DetectProxy } from '../slack/proxy.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, user, type Place } from '../../demo/discord/payloads.ts';
import {
  cardButtonPress,
  guildWithChannels,
  messageCreate,
  messageDelete,
  messageUpdate,
  resolvedChannel,
  settingsCommand,
  threadCreate,
  type Author,
} from '../../demo/discord/watch-payloads.ts';
import { firstFlagId } from '../helpers/watch-db.ts';
import { AI_TEXTS, ENGINE_MIN_MESSAGES, HUMAN_TEXT } from '../slack/watch-texts.ts';
import { VERDICT_HEADLINE } from '../helpers/texts.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;

let clock = Date.now();
/** Increasing message times, so a member's messages have a clear order. */
function nextTime(): string {
  clock = Math.max(clock + 5, Date.now());
  return new Date(clock).toISOString();
}

/** A member posting `count` of the AI texts, one after another; by default just enough for an author verdict. */
function aiPosts(place: Place, author: Author, count = ENGINE_MIN_MESSAGES): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => messageCreate(place, author, AI_TEXTS[i % AI_TEXTS.length]!, { timestamp: nextTime() }));
}

const MANAGE_MESSAGES = (1n << 13n).toString();

let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let key: string;
const databases: TestDatabase[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'discord-watch-'));
  const apiKeysFile = join(dir, 'keys.json');
  key = (await createApiKey(apiKeysFile, { name: 'discord-watch', rateLimitMax: 100_000 })).key;
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  proxy = new DetectProxy(service.url);
  await proxy.start();
});

afterAll(async () => {
  await proxy?.stop();
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

interface World {
  place: Place;
  general: string;
  modlog: string;
  other: string;
  modRole: string;
  exemptRole: string;
}

function newWorld(): World {
  const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
  return { place, general: place.channelId, modlog: snowflake(), other: snowflake(), modRole: snowflake(), exemptRole: snowflake() };
}

interface Running {
  fake: FakeDiscord;
  bot: DiscordBot;
  backend: DetectionBackend;
  store: WatchStore;
  world: World;
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Watching's records are in the database whether REDIS_URL is set or not. */
function openStore(state: StoreLocation, _name: string): WatchStore {
  return state.databaseUrl ? new PostgresStore(state.databaseUrl) : new SqliteStore(state.dataDir as string);
}

/** Where a run keeps its state: settings and watch records alike (PostgreSQL: a throw-away database). */
async function stateFor(kind: 'sqlite' | 'redis' | 'postgres', name: string): Promise<StoreLocation> {
  if (kind === 'redis') return { redisUrl: process.env.REDIS_URL!, dataDir: join(dir, `main-${name}`) };
  if (kind === 'sqlite') return { dataDir: join(dir, `main-${name}`) };
  const db = await createTestDatabase();
  databases.push(db);
  return { databaseUrl: db.url, dataDir: join(dir, `main-${name}`) };
}

async function startWatchBot(
  state: StoreLocation,
  world: World,
  options: { fake?: FakeDiscord; flags?: number; settings?: Partial<WatchSettings>; store?: WatchStore; leaseMs?: number } = {},
): Promise<Running> {
  const fake =
    options.fake ??
    (await FakeDiscord.start({
      applicationId: APP_ID,
      token: TOKEN,
      applicationFlags: options.flags ?? ApplicationFlags.GatewayMessageContentLimited,
    }));
  const backend = await connectDetectionBackend(
    { DETECT_API_URL: proxy.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0', ...(state.redisUrl ? { REDIS_URL: state.redisUrl } : {}) },
    { logger: pino({ level: 'silent' }) },
  );
  const store = options.store ?? openStore(state, 'default');
  const bot = createDiscordBot({
    token: TOKEN,
    detect: backend.detector,
    settings: { apiUrl: fake.apiUrl, state },
    watch: {
      detector: watchDetectorFor(backend),
      store,
      settings: { ...DEFAULT_WATCH_SETTINGS, ...options.settings },
      idlePollMs: 50,
      configTtlMs: 0,
      leaseMs: options.leaseMs,
    },
  });
  await bot.start();
  fake.dispatch(
    'GUILD_CREATE',
    guildWithChannels(
      world.place,
      [
        { id: world.general, name: 'general' },
        { id: world.modlog, name: 'mod-log' },
        { id: world.other, name: 'other' },
      ],
      [
        { id: world.modRole, name: 'Moderators', permissions: MANAGE_MESSAGES },
        { id: world.exemptRole, name: 'Regulars', permissions: '0' },
      ],
      APP_ID,
    ),
  );
  await waitUntil(() => bot.client.guilds.cache.has(world.place.guildId), 5_000, 'GUILD_CREATE');
  return { fake, bot, backend, store, world };
}

async function stopWatchBot(r: Running | undefined, options: { closeFake?: boolean; closeStore?: boolean } = {}): Promise<void> {
  if (!r) return;
  await r.bot.stop();
  await r.backend.close();
  if (options.closeStore !== false) await r.store.close();
  if (options.closeFake !== false) await r.fake.close();
}

async function interact(
  fake: FakeDiscord,
  payload: { id: string; token: string },
): Promise<{ callback: RecordedRequest; edit?: RecordedRequest }> {
  fake.sendInteraction(payload);
  const callback = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
  );
  if (callback.body?.type !== 5) return { callback };
  const edit = await fake.waitForRequest(
    (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`,
  );
  return { callback, edit };
}

async function settings(
  r: Running,
  admin: ReturnType<typeof user>,
  subcommand: string,
  options: { name: string; type: number; value: string | boolean | number }[] = [],
  resolved?: Record<string, unknown>,
): Promise<string> {
  const { edit } = await interact(r.fake, settingsCommand(r.world.place, admin, subcommand, options, resolved));
  return String(edit?.body.content ?? edit?.body.embeds?.[0]?.description ?? '');
}

function channelOption(id: string, name: string) {
  return { options: [{ name: 'channel', type: 7, value: id }], resolved: { channels: { [id]: resolvedChannel(id, name) } } };
}

async function watch(r: Running, admin: ReturnType<typeof user>, channelId = r.world.general): Promise<string> {
  const o = channelOption(channelId, 'general');
  return settings(r, admin, 'watch', o.options, o.resolved);
}

async function cardsOn(r: Running, admin: ReturnType<typeof user>): Promise<string> {
  const modlog = channelOption(r.world.modlog, 'mod-log');
  await settings(r, admin, 'modlog', modlog.options, modlog.resolved);
  const o = channelOption(r.world.general, 'general');
  return settings(r, admin, 'cards', [...o.options, { name: 'state', type: 3, value: 'on' }], o.resolved);
}

function cardsPosted(r: Running): RecordedRequest[] {
  return r.fake.requests.filter((q) => q.method === 'POST' && q.path === `/channels/${r.world.modlog}/messages` && q.body?.components);
}

/** Every request the bot made that could act in a watched channel: posting, deleting, reacting, timing a member out. */
function publicActions(r: Running): RecordedRequest[] {
  const w = r.world;
  return r.fake.requests.filter(
    (q) =>
      (q.method !== 'GET' && (q.path.startsWith(`/channels/${w.general}/`) || q.path.startsWith(`/channels/${w.other}/`))) ||
      q.path.includes('/members/') ||
      q.path.includes('/bans/') ||
      q.method === 'DELETE',
  );
}

describe.each([
  ['SQLite', 'sqlite'],
  ['SQLite with Redis', 'redis'],
  ['PostgreSQL', 'postgres'],
] as const)('watching a channel (%s)', (name, kind) => {
  let r: Running | undefined;
  let state: StoreLocation;
  let second: Running | undefined;
  const admin = user(snowflake(), 'admin');
  const poster = user(snowflake(), 'poster') as Author;
  afterAll(async () => {
    await stopWatchBot(second);
    await stopWatchBot(r);
  });

  it('asks for the message intents, starts in shadow mode and records flags without a card', async () => {
    state = await stateFor(kind, name);
    r = await startWatchBot(state, newWorld(), { store: openStore(state, `main-${name}`) });
    // Guilds | GuildMessages | MessageContent
    expect(r.fake.identifies.at(-1).intents).toBe(1 | 512 | 32768);
    const reply = await watch(r, admin);
    expect(reply).toContain(`Watching <#${r.world.general}> (and its threads) in **shadow mode**`);
    expect(reply).toContain('judged with the same member’s recent messages in the channel');
    expect(reply).toContain('never the text');
    expect(reply).toContain('Kept 30 days');
    expect(reply).toContain('never deletes, mutes or replies');

    const before = proxy.detectCalls;
    const bodiesBefore = proxy.detectBodies.length;
    for (const m of aiPosts(r.world.place, poster, AI_TEXTS.length)) r.fake.dispatch('MESSAGE_CREATE', m);
    r.fake.dispatch('MESSAGE_CREATE', messageCreate(r.world.place, user(snowflake(), 'gamer'), HUMAN_TEXT, { timestamp: nextTime() }));
    const watcher = r.bot.context.watch!.watcher!;
    await waitUntil(() => watcher.counters.scored === 6, 15_000, 'six scores');
    expect(proxy.detectCalls).toBe(before + 6);
    // Judged as an author: each message with the member's earlier ones. Below the engine's least
    // evidence the verdict is held back, so only the judgments from that message on flag, under
    // every preset (loose too: each text alone is far above its 80%).
    // The bodies that arrived during this case (the proxy records a body on arrival, so a call an
    // earlier case held back with delayMs cannot land among them).
    const authorCalls = proxy.detectBodies.slice(bodiesBefore) as unknown as { messages?: string[] }[];
    expect(authorCalls).toHaveLength(6);
    expect(authorCalls.map((b) => b.messages?.length).sort()).toEqual([1, 1, 2, 3, 4, 5]);
    const flags = AI_TEXTS.length - ENGINE_MIN_MESSAGES + 1;
    expect(flags).toBeGreaterThan(1);
    expect(watcher.counters.flagged).toBe(flags);
    expect(cardsPosted(r)).toHaveLength(0);

    const report = await settings(r, admin, 'report');
    expect(report).toContain(`<#${r.world.general}>: shadow mode`);
    expect(report).toContain(`Last 7 days: 6 messages scored · would flag: strict ${flags} · **standard ${flags}** · loose ${flags}`);
    expect(report).toContain(`Flags: ${flags}: ${flags} in shadow mode (no card)`);
  });

  it('with cards on, posts one card per flag in the mod-log channel, never pinging and never acting in the channel', async () => {
    const reply = await cardsOn(r!, admin);
    expect(reply).toContain(`Review cards are on for <#${r!.world.general}>`);
    const second = user(snowflake(), 'second') as Author;
    const posts: Record<string, unknown>[] = aiPosts(r!.world.place, second).map((m) => ({
      ...m,
      member: { ...(m.member as object), nick: 'Posty' },
    }));
    for (const m of posts) r!.fake.dispatch('MESSAGE_CREATE', m);
    const message = posts.at(-1) as { id: string };
    const poster = second;
    const card = await r!.fake.waitForRequest((q) => q.method === 'POST' && q.path === `/channels/${r!.world.modlog}/messages`);
    const embed = card.body.embeds[0];
    expect(card.body.allowed_mentions).toEqual({ parse: [] });
    expect(embed.description).toContain(`**Author:** Posty (${poster.id})`);
    expect(embed.description).not.toContain(`<@${poster.id}>`);
    expect(embed.description).toContain(`https://discord.com/channels/${r!.world.place.guildId}/${r!.world.general}/${message.id}`);
    const field = (n: string) => embed.fields.find((f: { name: string }) => f.name === n)?.value as string;
    expect(field('Reads as')).toBe('🔴 Reads as AI-written');
    expect(field('Probability')).toMatch(/^█+░* \d+%$/);
    expect(embed.title).toBe('🔴 Flag for review: this member’s recent messages look AI-written');
    // The member posted just enough for a verdict, so only their last message flags, judged on all of them.
    expect(field('Evidence')).toMatch(
      new RegExp(
        `^${ENGINE_MIN_MESSAGES} messages?, \\d+ words \\(this member’s recent messages in the channel\\) · General mode · standard preset$`,
      ),
    );
    const quoted = field('Most AI-like messages').split('\n');
    expect(quoted).toHaveLength(Math.min(3, ENGINE_MIN_MESSAGES));
    for (const line of quoted) expect(line).toMatch(/^\*\*\d+%\*\* \[message\]\(https:\/\/discord\.com\/channels\/\d+\/\d+\/\d+\) “.+”$/);
    expect(field('Request ID')).toMatch(/^`req_/);
    expect(card.body.components[0].components.map((b: { label: string }) => b.label)).toEqual(['Confirm', 'False positive', 'Dismiss']);
    expect(publicActions(r!)).toEqual([]);
    // The flag is the card's nonce, enforced: the card posted again for the same flag (by the next
    // process, when one was killed before recording it) is answered with the first, not shown twice.
    const flagId = parseReviewCustomId(card.body.components[0].components[0].custom_id)?.flagId;
    expect(card.body).toMatchObject({ nonce: flagId, enforce_nonce: true });
    const shown = r!.fake.created.filter((m) => m.channel_id === r!.world.modlog);
    const again = await fetch(`${r!.fake.apiUrl}/v10/channels/${r!.world.modlog}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(card.body),
    });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(shown.find((m) => m.nonce === flagId)?.id);
    expect(r!.fake.created.filter((m) => m.channel_id === r!.world.modlog)).toHaveLength(shown.length);
  });

  it('records Confirm on the card, edited in place; a later press and a non-moderator change nothing', async () => {
    const card = cardsPosted(r!).at(-1)!;
    const confirm = card.body.components[0].components[0].custom_id as string;
    const cardMessage = { id: snowflake(), channelId: r!.world.modlog, embeds: card.body.embeds, components: card.body.components };
    const member = user(snowflake(), 'member');
    const refused = await interact(r!.fake, cardButtonPress(r!.world.place, member, confirm, cardMessage, '1024'));
    expect(refused.callback.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(refused.callback.body.data.content).toContain('Only moderators');

    const mod = user(snowflake(), 'alice');
    const pressed = await interact(r!.fake, cardButtonPress(r!.world.place, mod, confirm, cardMessage));
    expect(pressed.callback.body.type).toBe(7);
    expect(pressed.callback.body.data.components).toEqual([]);
    const review = pressed.callback.body.data.embeds[0].fields.find((f: { name: string }) => f.name === 'Review').value as string;
    expect(review).toMatch(new RegExp(`^✅ Confirmed by alice \\(${mod.id}\\) · <t:\\d+:f>$`));

    const answered = { ...cardMessage, embeds: pressed.callback.body.data.embeds, components: [] };
    const falsePositive = confirm.replace(':confirmed:', ':false_positive:');
    const late = await interact(r!.fake, cardButtonPress(r!.world.place, user(snowflake(), 'bob'), falsePositive, answered));
    expect(late.callback.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(late.callback.body.data.content).toContain('already answered: ✅ Confirmed');

    const report = await settings(r!, admin, 'report');
    expect(report).toContain('Reviewed 1 of 1 cards: confirmed 1 (100%), false positive 0, dismissed 0');
  });

  it('gives a member one card per window however many flagged messages they post', async () => {
    const before = cardsPosted(r!).length;
    const watcher = r!.bot.context.watch!.watcher!;
    const scored = watcher.counters.scored;
    const flooder = user(snowflake(), 'flooder') as Author;
    for (const m of aiPosts(r!.world.place, flooder, 7)) r!.fake.dispatch('MESSAGE_CREATE', m);
    await waitUntil(() => watcher.counters.scored === scored + 7, 15_000, 'seven scores');
    // Every judgment from the engine's least evidence on flags; the first of them gets the card.
    const flags = 7 - ENGINE_MIN_MESSAGES + 1;
    expect(flags).toBeGreaterThan(2);
    const scope = `discord:${r!.world.place.guildId}`;
    const heldBack = async () => (await r!.store.report(scope, Date.now())).channels.get(r!.world.general)!.week.cards.author_window;
    await waitUntil(async () => (await heldBack()) === flags - 1, 5_000, 'held back flags');
    expect(cardsPosted(r!).length).toBe(before + 1);
  });

  it('a late press keeps the first reviewer’s name, on the card and in the private reply (issue 32, item 8)', async () => {
    const card = cardsPosted(r!).at(-1)!;
    const confirm = card.body.components[0].components[0].custom_id as string;
    const dismiss = confirm.replace(':confirmed:', ':dismissed:');
    const cardMessage = { id: snowflake(), channelId: r!.world.modlog, embeds: card.body.embeds, components: card.body.components };
    const first = user(snowflake(), 'first-mod');
    // Discord's guild member object (GET /guilds/{guild}/members/{user}): the server nickname is what the card shows.
    r!.fake.route('GET', new RegExp(`^/guilds/\\d+/members/${first.id}$`), () => ({
      status: 200,
      body: {
        user: { id: first.id, username: 'first-mod', global_name: null, discriminator: '0', avatar: null },
        nick: 'Admin',
        roles: [],
      },
    }));
    const press = cardButtonPress(r!.world.place, first, confirm, cardMessage);
    const withNick = { ...press, member: { ...press.member, nick: 'Admin' as string | null } };
    const pressed = await interact(r!.fake, withNick);
    const byAdmin = `✅ Confirmed by Admin (${first.id})`;
    const review = (embeds: { fields: { name: string; value: string }[] }[]) => embeds[0]!.fields.find((f) => f.name === 'Review')!.value;
    expect(review(pressed.callback.body.data.embeds)).toMatch(new RegExp(`^${byAdmin.replace(/[()]/g, '\\$&')} · <t:\\d+:f>$`));

    // Pressed on the card as it was before the first answer reached this moderator's screen.
    const stale = cardButtonPress(r!.world.place, user(snowflake(), 'bob'), dismiss, cardMessage);
    const late = await interact(r!.fake, stale);
    expect(late.callback.body.type).toBe(7);
    expect(review(late.callback.body.data.embeds)).toContain(byAdmin);
    const followUp = await r!.fake.waitForRequest((q) => q.method === 'POST' && q.path === `/webhooks/${APP_ID}/${stale.token}`);
    expect(followUp.body.content).toBe(`This flag was already answered: ${byAdmin}. Your answer was not recorded.`);

    // Pressed on the answered card.
    const answered = { ...cardMessage, embeds: pressed.callback.body.data.embeds, components: [] };
    const later = await interact(r!.fake, cardButtonPress(r!.world.place, user(snowflake(), 'carol'), dismiss, answered));
    expect(later.callback.body.data.content).toBe(`This flag was already answered: ${byAdmin}. Your answer was not recorded.`);
  });

  it('a burst of presses on a new card, the member lookup failing (404), never renames the first reviewer (issue 40, item 6)', async () => {
    const poster = user(snowflake(), 'burst-poster') as Author;
    for (const m of aiPosts(r!.world.place, poster)) r!.fake.dispatch('MESSAGE_CREATE', m);
    const card = await r!.fake.waitForRequest(
      (q) =>
        q.method === 'POST' && q.path === `/channels/${r!.world.modlog}/messages` && q.body?.embeds?.[0]?.description?.includes(poster.id),
    );
    const confirm = card.body.components[0].components[0].custom_id as string;
    const cardMessage = { id: snowflake(), channelId: r!.world.modlog, embeds: card.body.embeds, components: card.body.components };
    // No route answers these members: the fake answers GET /guilds/{guild}/members/{user} 404 (Unknown Member).
    const pressers = [
      ['Admin', confirm],
      ['Bob', confirm.replace(':confirmed:', ':dismissed:')],
      ['Carol', confirm.replace(':confirmed:', ':false_positive:')],
    ].map(([nick, customId]) => {
      const press = cardButtonPress(r!.world.place, user(snowflake(), nick!.toLowerCase()), customId!, cardMessage);
      return { nick: nick!, press: { ...press, member: { ...press.member, nick: nick as string | null } } };
    });
    // All three pressed on the card as first posted, before any answer reached their screens.
    const answers = await Promise.all(pressers.map(({ press }) => interact(r!.fake, press)));
    const lookups = r!.fake.requests.filter((q) => q.method === 'GET' && /^\/guilds\/\d+\/members\/\d+$/.test(q.path));
    expect(lookups.length).toBeGreaterThanOrEqual(2);
    const updates = answers.flatMap((a, i) => (a.callback.body.type === 7 ? [{ ...pressers[i]!, body: a.callback.body }] : []));
    expect(updates).toHaveLength(1);
    const winner = updates[0]!;
    const review = winner.body.data.embeds[0].fields.find((f: { name: string }) => f.name === 'Review').value as string;
    expect(review).toMatch(
      new RegExp(`^\\S+ [A-Z][a-z]+( positive)? by ${winner.nick} \\(${winner.press.member.user.id}\\) · <t:\\d+:f>$`),
    );
    const late = answers.filter((a) => a.callback.body.type !== 7);
    expect(late).toHaveLength(2);
    for (const a of late) {
      expect(a.callback.body).toMatchObject({ type: 4, data: { flags: 64 } });
      expect(a.callback.body.data.content).toMatch(
        new RegExp(`^This flag was already answered: .+ by <@${winner.press.member.user.id}>\\. Your answer was not recorded\\.$`),
      );
      expect(a.callback.body.data.content).not.toContain('member (');
    }
  });

  it('restarted mid-queue, scores every waiting message exactly once, reading the texts again by id', async () => {
    const first = r!;
    const watcher = first.bot.context.watch!.watcher!;
    const messages = AI_TEXTS.slice(0, 3).map((text, i) =>
      messageCreate(first.world.place, user(snowflake(), `late${i}`) as Author, `${text} Number ${i}.`),
    );
    // The fake keeps the messages, as Discord does, for the restarted bot to read by id.
    first.fake.route('GET', /^\/channels\/(\d+)\/messages\/(\d+)$/, (_req, m) => {
      const found = messages.find((x) => x.id === m[2] && x.channel_id === m[1]);
      return found ? { status: 200, body: found } : { status: 404, body: { message: 'Unknown Message', code: 10008 } };
    });
    proxy.delayMs = 1_500;
    const sentBefore = proxy.detectBodies.length;
    const callsBefore = proxy.detectCalls;
    for (const m of messages) first.fake.dispatch('MESSAGE_CREATE', m);
    await waitUntil(async () => (await first.store.pendingCount()) === 3, 5_000, 'three queued');
    await waitUntil(() => proxy.detectCalls > callsBefore, 5_000, 'a call on the wire');
    const scoredBefore = watcher.counters.scored;
    await stopWatchBot(first, { closeFake: false, closeStore: false });
    expect(watcher.counters.scored).toBe(scoredBefore);
    expect(await first.store.pendingCount()).toBe(3);
    proxy.delayMs = 0;

    second = await startWatchBot(state, first.world, {
      fake: first.fake,
      store: first.store,
    });
    r = undefined;
    const next = second.bot.context.watch!.watcher!;
    await waitUntil(() => next.counters.scored === 3, 15_000, 'the three scored after the restart');
    // A score is recorded just before its message leaves the queue: wait for the last one to leave.
    await waitUntil(async () => (await second!.store.pendingCount()) === 0, 5_000, 'an empty queue');
    for (const m of messages)
      expect(await second.store.isScored(`discord:${first.world.place.guildId}`, first.world.general, String(m.id), Date.now())).toBe(true);
    const reads = second.fake.requests.filter((q) => q.method === 'GET' && /^\/channels\/\d+\/messages\/\d+$/.test(q.path));
    expect(reads).toHaveLength(3);
    // A message the first instance had on the wire is sent again (its answer was lost), never recorded twice.
    const sentAfter = (proxy.detectBodies.slice(sentBefore) as unknown as { messages: string[] }[]).map((b) => b.messages.at(-1));
    for (const m of messages) expect(sentAfter.filter((t) => t === m.content).length).toBeGreaterThanOrEqual(1);
    const report = await second.store.report(`discord:${first.world.place.guildId}`, Date.now());
    expect(report.channels.get(first.world.general)!.week.scored).toBe(
      // The earlier cases' messages: shadow mode, the cards-on poster, the flooder, the burst's poster, and these three.
      6 + ENGINE_MIN_MESSAGES + 7 + ENGINE_MIN_MESSAGES + 3,
    );
  });

  it('deletes everything of the server when the bot is removed, but not in an outage', async () => {
    const s = second!;
    const scope = `discord:${s.world.place.guildId}`;
    s.fake.dispatch('GUILD_DELETE', { id: s.world.place.guildId, unavailable: true });
    await new Promise((res) => setTimeout(res, 200));
    expect((await s.store.getConfig(scope)).channels).toHaveLength(1);
    s.fake.dispatch('GUILD_DELETE', { id: s.world.place.guildId });
    // The watch records go first, then the server's settings: wait for the whole deletion.
    await waitUntil(
      async () =>
        (await s.store.getConfig(scope)).channels.length === 0 && Object.keys(await s.bot.context.state.getSettings(scope)).length === 0,
      5_000,
      'deletion',
    );
    expect((await s.store.report(scope, Date.now())).channels.size).toBe(0);
    expect(await s.bot.context.state.getSettings(scope)).toEqual({});
    expect(await s.store.scopes()).not.toContain(scope);
  });
});

describe('a Redis restart without persistence (the compose default)', () => {
  it('loses no watched channel, flag or outcome: they are in the database, whatever REDIS_URL says', async () => {
    const redis = await startRedisServer();
    const state = { redisUrl: redis.url, dataDir: join(dir, 'redis-restart') };
    // The store the bot opens itself from its location (REDIS_URL set, DATABASE_URL not).
    const r = await startWatchBot(state, newWorld(), { store: openWatchStore(state) });
    try {
      const admin = user(snowflake(), 'admin');
      await watch(r, admin);
      for (const m of aiPosts(r.world.place, user(snowflake(), 'poster') as Author, AI_TEXTS.length)) r.fake.dispatch('MESSAGE_CREATE', m);
      const watcher = r.bot.context.watch!.watcher!;
      await waitUntil(() => watcher.counters.scored === AI_TEXTS.length && watcher.counters.flagged > 0, 15_000, 'scores and a flag');
      const scope = `discord:${r.world.place.guildId}`;
      const flagId = firstFlagId(state.dataDir, scope);
      expect((await r.store.review(scope, flagId, 'confirmed', admin.id, Date.now()))?.applied).toBe(true);

      await redis.stop();
      await redis.start(); // empty: no RDB, no AOF
      const report = await settings(r, admin, 'report');
      expect(report).not.toContain('No channel is watched');
      expect(report).toContain(`<#${r.world.general}>: shadow mode`);
      expect(report).toContain(`Last 7 days: ${AI_TEXTS.length} messages scored`);
      expect(await r.store.getFlag(scope, flagId)).toMatchObject({ outcome: 'confirmed', reviewerId: admin.id });
    } finally {
      await stopWatchBot(r);
      await redis.stop();
    }
  });
});

describe('GUILD_DELETE while the database is unreachable', () => {
  it('is tried again until the server’s records are gone', async () => {
    const state = { dataDir: join(dir, 'guild-delete-outage') };
    const real = openStore(state, 'guild-delete-outage');
    // The database refuses the first two deletions, as an unreachable PostgreSQL does.
    let refusals = 2;
    const store = new Proxy(real, {
      get(target, property) {
        if (property === 'deleteScope') {
          return async (scope: string) => {
            if (refusals-- > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
            return target.deleteScope(scope);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const r = await startWatchBot(state, newWorld(), { store });
    try {
      const admin = user(snowflake(), 'admin');
      await watch(r, admin);
      const scope = `discord:${r.world.place.guildId}`;
      expect((await real.getConfig(scope)).channels).toHaveLength(1);
      r.fake.dispatch('GUILD_DELETE', { id: r.world.place.guildId });
      // Refused at once and after 1 s; the third try (2 s later) deletes.
      await waitUntil(async () => (await real.getConfig(scope)).channels.length === 0, 10_000, 'the deletion, tried again');
      expect(refusals).toBeLessThan(0);
      expect(await real.scopes()).not.toContain(scope);
    } finally {
      await stopWatchBot(r);
    }
  });
});

describe('what watching leaves out (SQLite)', () => {
  let r: Running | undefined;
  const admin = user(snowflake(), 'admin');
  beforeAll(async () => {
    const state = { dataDir: join(dir, 'filters') };
    // One at a time, so messages wait in the queue behind a slow call.
    r = await startWatchBot(state, newWorld(), { settings: { concurrency: 1 } });
    await watch(r, admin);
  });
  afterAll(async () => {
    await stopWatchBot(r);
  });

  it('bots, webhooks, system messages, commands, short messages, moderators, exempt roles, history, DMs and other channels', async () => {
    const w = r!.world;
    const watcher = r!.bot.context.watch!.watcher!;
    const exempt = channelOption(w.general, 'general');
    await settings(
      r!,
      admin,
      'exempt-role',
      [
        { name: 'role', type: 8, value: w.exemptRole },
        { name: 'action', type: 3, value: 'add' },
      ],
      {
        ...exempt.resolved,
        roles: {
          [w.exemptRole]: {
            id: w.exemptRole,
            name: 'Regulars',
            color: 0,
            hoist: false,
            icon: null,
            unicode_emoji: null,
            position: 2,
            permissions: '0',
            managed: false,
            mentionable: false,
            flags: 0,
          },
        },
      },
    );
    const calls = proxy.detectCalls;
    const member = user(snowflake(), 'member') as Author;
    const text = AI_TEXTS[2]!;
    const sent = [
      messageCreate(w.place, { ...user(snowflake(), 'somebot'), bot: true }, text),
      messageCreate(w.place, member, text, { webhookId: snowflake() }),
      messageCreate(w.place, member, text, { type: 7 }), // a member joined
      messageCreate(w.place, member, `!warn @someone ${text}`),
      messageCreate(w.place, member, 'short and sweet, not twenty words'),
      messageCreate(w.place, member, text, { roles: [w.modRole] }),
      messageCreate(w.place, member, text, { roles: [w.exemptRole] }),
      messageCreate(w.place, member, text, { timestamp: new Date(Date.now() - 3_600_000).toISOString() }),
      messageCreate(w.place, member, text, { guildId: null }),
      messageCreate(w.place, member, text, { channelId: w.other }),
    ];
    for (const m of sent) r!.fake.dispatch('MESSAGE_CREATE', m);
    // A member's ordinary message after them all: once it is scored, every earlier dispatch was handled.
    r!.fake.dispatch('MESSAGE_CREATE', messageCreate(w.place, member, HUMAN_TEXT));
    await waitUntil(() => watcher.counters.scored === 1, 15_000, 'the one message that counts');
    expect(proxy.detectCalls).toBe(calls + 1);
    expect(watcher.counters.skipped).toMatchObject({ too_short: 1, exempt: 2, history: 1 });
  });

  it('scores thread replies as the watched channel’s, an edit of a waiting message with its new text, never an edit of a scored one, and drops a deleted one', async () => {
    const w = r!.world;
    const watcher = r!.bot.context.watch!.watcher!;
    const thread = threadCreate(w.place, w.general, snowflake());
    r!.fake.dispatch('THREAD_CREATE', thread);
    await waitUntil(() => r!.bot.client.channels.cache.has(String(thread.id)), 5_000, 'THREAD_CREATE');
    const scored = watcher.counters.scored;
    const member = user(snowflake(), 'threader') as Author;
    r!.fake.dispatch('MESSAGE_CREATE', messageCreate(w.place, member, AI_TEXTS[0]!, { channelId: String(thread.id) }));
    await waitUntil(() => watcher.counters.scored === scored + 1, 15_000, 'the thread reply');
    const scope = `discord:${w.place.guildId}`;
    const report = await r!.store.report(scope, Date.now());
    expect(report.channels.get(w.general)!.week.scored).toBeGreaterThanOrEqual(1);

    // Held in the queue (slow service) while edited and deleted.
    proxy.delayMs = 800;
    try {
      const blocker = messageCreate(w.place, member, HUMAN_TEXT);
      const sentBefore = proxy.detectBodies.length;
      const callsBefore = proxy.detectCalls;
      r!.fake.dispatch('MESSAGE_CREATE', blocker);
      await waitUntil(() => proxy.detectCalls > callsBefore, 5_000, 'a call on the wire');
      const toEdit = messageCreate(w.place, member, AI_TEXTS[1]!);
      const toDelete = messageCreate(w.place, member, AI_TEXTS[2]!);
      r!.fake.dispatch('MESSAGE_CREATE', toEdit);
      r!.fake.dispatch('MESSAGE_CREATE', toDelete);
      await waitUntil(async () => (await r!.store.pendingCount()) >= 2, 5_000, 'queued');
      r!.fake.dispatch('MESSAGE_UPDATE', messageUpdate(toEdit, `${HUMAN_TEXT} edited later`));
      r!.fake.dispatch('MESSAGE_DELETE', messageDelete(toDelete));
      await waitUntil(async () => (await r!.store.pendingCount()) === 0, 15_000, 'drained');
      await waitUntil(() => proxy.detectBodies.length >= sentBefore + 2, 5_000, 'both calls');
      const texts = (proxy.detectBodies.slice(sentBefore) as unknown as { messages: string[] }[]).flatMap((b) => b.messages);
      expect(texts).toContain(`${HUMAN_TEXT} edited later`);
      expect(texts).not.toContain(AI_TEXTS[1]);
      expect(texts).not.toContain(AI_TEXTS[2]);
      expect(await r!.store.isScored(scope, w.general, String(toDelete.id), Date.now())).toBe(false);

      const calls = proxy.detectCalls;
      r!.fake.dispatch('MESSAGE_UPDATE', messageUpdate(toEdit, AI_TEXTS[0]!));
      r!.fake.dispatch('MESSAGE_CREATE', messageCreate(w.place, member, 'a short message after the edit'));
      await waitUntil(() => (watcher.counters.skipped.too_short ?? 0) >= 2, 5_000, 'the marker message');
      expect(proxy.detectCalls).toBe(calls);
    } finally {
      proxy.delayMs = 0;
    }
  });

  it('reports what each preset would flag and keeps to the chosen one; refuses delete-data without confirm', async () => {
    const shown = await settings(r!, admin, 'show');
    expect(shown).toContain(`• Watched channels: <#${r!.world.general}> (shadow mode)`);
    expect(shown).toContain(`• Exempt roles: <@&${r!.world.exemptRole}> (moderators always are)`);
    const preset = await settings(r!, admin, 'preset', [{ name: 'preset', type: 3, value: 'loose' }]);
    expect(preset).toContain('**loose** preset');
    const report = await settings(r!, admin, 'report');
    expect(report).toContain('preset **loose**');
    expect(report).toMatch(/would flag: strict \d+ · standard \d+ · \*\*loose \d+\*\*/);
    const kept = await settings(r!, admin, 'delete-data', [{ name: 'confirm', type: 5, value: false }]);
    expect(kept).toMatch(/^Nothing was deleted\./);
    const scope = `discord:${r!.world.place.guildId}`;
    expect((await r!.store.getConfig(scope)).channels).toHaveLength(1);
    const deleted = await settings(r!, admin, 'delete-data', [{ name: 'confirm', type: 5, value: true }]);
    expect(deleted).toMatch(/^Deleted everything the bot kept about this server/);
    expect(await r!.store.getConfig(scope)).toEqual({ channels: [], exemptIds: [], preset: undefined, retentionDays: undefined });
    expect((await r!.store.report(scope, Date.now())).channels.size).toBe(0);
  });
});

describe('the hourly card cap', () => {
  let r: Running | undefined;
  afterAll(async () => {
    await stopWatchBot(r);
  });

  it('posts at most the cap per channel per hour, and the last card says so', async () => {
    r = await startWatchBot({ dataDir: join(dir, 'cap') }, newWorld(), { settings: { cardsPerChannelHour: 2 } });
    const admin = user(snowflake(), 'admin');
    await watch(r, admin);
    await cardsOn(r, admin);
    const watcher = r.bot.context.watch!.watcher!;
    for (let i = 0; i < 3; i++) {
      for (const m of aiPosts(r.world.place, user(snowflake(), `someone${i}`) as Author)) r.fake.dispatch('MESSAGE_CREATE', m);
    }
    // Each member posts just enough for one flag: three flags for a cap of two.
    await waitUntil(() => watcher.counters.scored === 3 * ENGINE_MIN_MESSAGES, 15_000, 'every message scored');
    expect(watcher.counters.flagged).toBe(3);
    await waitUntil(() => cardsPosted(r!).length === 2, 5_000, 'two cards');
    await new Promise((res) => setTimeout(res, 200));
    const cards = cardsPosted(r);
    expect(cards).toHaveLength(2);
    const capField = (c: RecordedRequest) => c.body.embeds[0].fields.find((f: { name: string }) => f.name.includes('Hourly card limit'));
    expect(capField(cards[0]!)).toBeUndefined();
    expect(capField(cards[1]!).value).toContain('This is card 2 of 2');
    const report = await settings(r, admin, 'report');
    expect(report).toContain('held back (same member within the window 0, hourly cap 1)');
  });
});

describe('without the Message Content intent', () => {
  let r: Running | undefined;
  afterAll(async () => {
    await stopWatchBot(r);
  });

  it('logs in with Guilds only, keeps every command working, and says what to switch on', async () => {
    r = await startWatchBot({ dataDir: join(dir, 'no-intent') }, newWorld(), { flags: 0 });
    expect(r.fake.identifies.at(-1).intents).toBe(1);
    expect(r.bot.context.watch!.status).toBe('intent_missing');
    const admin = user(snowflake(), 'admin');
    expect(await watch(r, admin)).toBe(INTENT_MISSING_REPLY);
    expect((await r.store.getConfig(`discord:${r.world.place.guildId}`)).channels).toEqual([]);
    const { edit } = await interact(r.fake, chatInputDetect(r.world.place, admin, { text: HUMAN_TEXT, mode: 'general' }));
    expect(edit?.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
  });
});

describe('judged message by message (WATCH_JUDGE=message)', () => {
  let r: Running | undefined;
  afterAll(async () => {
    await stopWatchBot(r);
  });

  it('flags one long message on its own and quotes its most AI-like sentences', async () => {
    r = await startWatchBot({ dataDir: join(dir, 'by-message') }, newWorld(), { settings: { judge: 'message' } });
    const admin = user(snowflake(), 'admin');
    expect(await watch(r, admin)).toContain('each new message of 40 words or more is scored on its own');
    await cardsOn(r, admin);
    const calls = proxy.detectBodies.length;
    r.fake.dispatch('MESSAGE_CREATE', messageCreate(r.world.place, user(snowflake(), 'once') as Author, AI_TEXTS[0]!));
    const card = await r.fake.waitForRequest((q) => q.method === 'POST' && q.path === `/channels/${r!.world.modlog}/messages`);
    expect(proxy.detectBodies[calls]).toMatchObject({ text: AI_TEXTS[0], segments: true });
    const embed = card.body.embeds[0];
    expect(embed.title).toBe('🔴 Flag for review: possible AI-written message');
    const field = (n: string) => embed.fields.find((f: { name: string }) => f.name === n)?.value as string;
    expect(field('Evidence')).toMatch(/^1 message, \d+ words · General mode · standard preset$/);
    expect(field('Most AI-like sentences').split('\n')).toHaveLength(3);
  });
});
