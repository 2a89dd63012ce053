/**
 * State that outlives one bot process, server settings, and bursts: the real discord.js client
 * against the fake Discord (REST + gateway) on loopback, the real detection service, real SQLite and
 * real Redis. Interaction payloads follow Discord's documented INTERACTION_CREATE shapes (payloads.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import type { StoreLocation } from '../../adapters/chat/store/index.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { stillQueuedSentence } from '../../adapters/discord/check.ts';
import type { DiscordBotSettings } from '../../adapters/discord/config.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { DetectProxy } from '../slack/proxy.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { buttonPress, chatInputDetect, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
const MANAGE_GUILD = 1n << 5n;

// Written for this test: a few ordinary sentences, well over the ~40 words the detector wants.
const TEXT = [
  'Our allotment flooded again after the storm, so the beans are floating and the onions gave up.',
  'Dad says the drainage ditch was never dug deep enough, and he has said so every spring since 2009.',
  'We borrowed a pump from the neighbour, who wanted cake in return, which seemed fair to everyone.',
  'By evening the paths were walkable and the robin was back on the fence, judging us as usual.',
].join(' ');

let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let key: string;
let pacedKey: string;
let windowKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'discord-state-'));
  const apiKeysFile = join(dir, 'keys.json');
  // The burst key: 10 checks per 5 s window.
  key = (await createApiKey(apiKeysFile, { name: 'discord-state', rateLimitMax: 10 })).key;
  // Keys of their own for the queue tests, so the other tests' use of the window does not matter.
  pacedKey = (await createApiKey(apiKeysFile, { name: 'discord-queue-paced', rateLimitMax: 10 })).key;
  windowKey = (await createApiKey(apiKeysFile, { name: 'discord-queue-window', rateLimitMax: 10 })).key;
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, rateLimitWindow: '5 seconds', logLevel: 'silent' });
  proxy = new DetectProxy(service.url);
  await proxy.start();
});

afterAll(async () => {
  await proxy?.stop();
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface BotUnderTest {
  fake: FakeDiscord;
  bot: DiscordBot;
  backend: DetectionBackend;
  place: Place;
  /** Texts in the order the bot handed them to the queue. */
  taken: string[];
}

async function startBot(
  state: StoreLocation,
  fake?: FakeDiscord,
  env: Record<string, string> = {},
  place?: Place,
  extra: { key?: string; settings?: Partial<DiscordBotSettings> } = {},
): Promise<BotUnderTest> {
  const discord = fake ?? (await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN }));
  const backend = await connectDetectionBackend(
    {
      DETECT_API_URL: proxy.url,
      DETECT_API_KEY: extra.key ?? key,
      DETECT_MAX_RETRIES: '0',
      ...(state.redisUrl ? { REDIS_URL: state.redisUrl } : {}),
      ...env,
    },
    { logger: pino({ level: 'silent' }) },
  );
  const taken: string[] = [];
  const detect = {
    detect: (
      request: Parameters<DetectionBackend['detector']['detect']>[0],
      options?: Parameters<DetectionBackend['detector']['detect']>[1],
    ) => {
      taken.push(request.text);
      return backend.detector.detect(request, options);
    },
  };
  // Settings go to the durable store: SQLite in this run's folder unless the case names its own.
  const bot = createDiscordBot({
    token: TOKEN,
    detect,
    settings: { apiUrl: discord.apiUrl, state: { dataDir: join(dir, 'durable'), ...state }, ...extra.settings },
  });
  await bot.start();
  return { fake: discord, bot, backend, taken, place: place ?? { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() } };
}

async function stopBot(b: BotUnderTest | undefined, closeFake = true): Promise<void> {
  if (!b) return;
  await b.bot.stop();
  await b.backend.close();
  if (closeFake) await b.fake.close();
}

/** Sends an interaction and waits for the deferral and the final edit (the one with an embed or text, not a "queued" notice). */
async function interact(
  fake: FakeDiscord,
  payload: { id: string; token: string },
): Promise<{ sentAt: number; callback: RecordedRequest; edit: RecordedRequest }> {
  const sentAt = Date.now();
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
  return { sentAt, callback, edit };
}

function field(embed: any, name: string): string | undefined {
  return embed.fields?.find((f: { name: string }) => f.name === name)?.value;
}

function recheckButton(edit: RecordedRequest, label: string): { custom_id: string } {
  return edit.body.components[0].components.find((b: { label: string }) => b.label === label);
}

describe.each([
  ['SQLite', false],
  ['Redis', true],
])('restart between a result and its re-check click (%s)', (_name, useRedis) => {
  let first: BotUnderTest | undefined;
  let second: BotUnderTest | undefined;
  afterAll(async () => {
    await stopBot(second);
  });

  it('the restarted bot still has the text behind the button', async () => {
    const state: StoreLocation = useRedis ? { redisUrl: process.env.REDIS_URL! } : { dataDir: join(dir, `restart-${Date.now()}`) };
    first = await startBot(state);
    const moderator = user(snowflake(), 'moderator');
    const result = await interact(first.fake, chatInputDetect(first.place, moderator, { text: TEXT, mode: 'general' }));
    expect(field(result.edit.body.embeds[0], 'Mode')).toBe('General');
    const legal = recheckButton(result.edit, 'Re-check as Legal');

    await stopBot(first, false);
    second = await startBot(state, first.fake, {}, first.place);
    const calls = proxy.detectCalls;
    const after = await interact(second.fake, buttonPress(second.place, moderator, legal.custom_id, result.edit.body));
    expect(field(after.edit.body.embeds[0], 'Mode')).toBe('Legal');
    expect(proxy.detectCalls).toBe(calls + 1);
    expect(proxy.detectBodies.at(-1)?.text).toBe(TEXT);
  });
});

describe('two bot instances on one Redis', () => {
  let a: BotUnderTest | undefined;
  let b: BotUnderTest | undefined;
  afterAll(async () => {
    await stopBot(a);
    await stopBot(b);
  });

  it('a button pressed through the other instance finds the check, and server settings are shared', async () => {
    const state = { redisUrl: process.env.REDIS_URL! };
    a = await startBot(state);
    b = await startBot(state, undefined, {}, a.place);
    const moderator = user(snowflake(), 'moderator');
    const result = await interact(a.fake, chatInputDetect(a.place, moderator, { text: TEXT, mode: 'general' }));
    const financial = recheckButton(result.edit, 'Re-check as Financial');
    const other = await interact(b.fake, buttonPress(b.place, moderator, financial.custom_id, result.edit.body));
    expect(field(other.edit.body.embeds[0], 'Mode')).toBe('Financial');

    const admin = user(snowflake(), 'admin');
    const set = await interact(
      a.fake,
      settingsCommand(a.place, admin, 'mode', [{ name: 'mode', type: 3, value: 'academic' }], { manageGuild: true }),
    );
    expect(set.edit.body.content).toContain('"Check for AI text" now checks in Academic mode.');
    const check = await interact(b.fake, messageCommand(b.place, moderator, { content: TEXT }));
    expect(field(check.edit.body.embeds[0], 'Mode')).toBe('Academic');
  });
});

/** `/detect-settings <subcommand>` as Discord sends it: the subcommand as an option of type 1, resolved channels and roles alongside. */
function settingsCommand(
  place: Place,
  who: ReturnType<typeof user>,
  subcommand: string,
  options: { name: string; type: number; value: string }[] = [],
  extra: { manageGuild?: boolean; resolved?: Record<string, unknown> } = {},
) {
  const base = chatInputDetect(place, who, { text: '', mode: 'general' });
  const permissions = (BigInt(base.member.permissions) | (extra.manageGuild ? MANAGE_GUILD : 0n)).toString();
  return {
    ...base,
    member: { ...base.member, permissions },
    data: {
      id: snowflake(),
      name: 'detect-settings',
      type: 1,
      options: [{ name: subcommand, type: 1, options }],
      ...(extra.resolved ? { resolved: extra.resolved } : {}),
    },
  };
}

describe('/detect-settings', () => {
  let b: BotUnderTest | undefined;
  const admin = user(snowflake(), 'admin');
  const moderator = user(snowflake(), 'moderator');
  beforeAll(async () => {
    b = await startBot({ dataDir: join(dir, 'settings') });
  });
  afterAll(async () => {
    await stopBot(b);
  });

  it('is refused without Manage Server, always ephemerally', async () => {
    const x = await interact(b!.fake, settingsCommand(b!.place, moderator, 'show'));
    expect(x.callback.body).toEqual({ type: 5, data: { flags: 64 } });
    expect(x.edit.body.content).toBe('Only members with the Manage Server permission can see or change these settings.');
  });

  it('sets the mod-log channel and the checker role, and refuses bad choices with a sentence', async () => {
    const channelId = snowflake();
    const voiceId = snowflake();
    const roleId = snowflake();
    const channel = (id: string, type: number) => ({
      id,
      name: type === 0 ? 'mod-log' : 'voice',
      type,
      permissions: '1024',
      parent_id: null,
    });
    const role = (id: string, managed = false) => ({
      id,
      name: 'checkers',
      color: 0,
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position: 1,
      permissions: '0',
      managed,
      mentionable: false,
      flags: 0,
    });

    const voice = await interact(
      b!.fake,
      settingsCommand(b!.place, admin, 'modlog', [{ name: 'channel', type: 7, value: voiceId }], {
        manageGuild: true,
        resolved: { channels: { [voiceId]: channel(voiceId, 2) } },
      }),
    );
    expect(voice.edit.body.content).toBe(`<#${voiceId}> is not a text channel; choose a text or announcement channel for the mod log.`);

    const modlog = await interact(
      b!.fake,
      settingsCommand(b!.place, admin, 'modlog', [{ name: 'channel', type: 7, value: channelId }], {
        manageGuild: true,
        resolved: { channels: { [channelId]: channel(channelId, 0) } },
      }),
    );
    expect(modlog.edit.body.content).toContain(`Message checks are now logged in <#${channelId}>`);
    expect(modlog.edit.body.allowed_mentions).toEqual({ parse: [] });

    const everyone = await interact(
      b!.fake,
      settingsCommand(b!.place, admin, 'checker-role', [{ name: 'role', type: 8, value: b!.place.guildId }], {
        manageGuild: true,
        resolved: { roles: { [b!.place.guildId]: role(b!.place.guildId) } },
      }),
    );
    expect(everyone.edit.body.content).toMatch(/^@everyone would let every member check messages/);

    const set = await interact(
      b!.fake,
      settingsCommand(b!.place, admin, 'checker-role', [{ name: 'role', type: 8, value: roleId }], {
        manageGuild: true,
        resolved: { roles: { [roleId]: role(roleId) } },
      }),
    );
    expect(set.edit.body.content).toContain(`Only members with <@&${roleId}> (or Manage Server) may run "Check for AI text" now.`);

    // A moderator without the role is refused before any detection; with it, the check runs and is logged in the new channel.
    const calls = proxy.detectCalls;
    const refused = await interact(b!.fake, messageCommand(b!.place, moderator, { content: TEXT }));
    expect(refused.edit.body.embeds[0].description).toContain(`only members with <@&${roleId}> may run "Check for AI text"`);
    expect(proxy.detectCalls).toBe(calls);

    const withRole = messageCommand(b!.place, moderator, { content: TEXT });
    (withRole as { member: Record<string, unknown> }).member = { ...withRole.member, roles: [roleId] };
    const checked = await interact(b!.fake, withRole);
    expect(field(checked.edit.body.embeds[0], 'Mode')).toBe('General');
    const line = await b!.fake.waitForRequest((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages`);
    expect(line.body.content).toContain(`<@${moderator.id}> checked`);
    expect(line.body.content).not.toContain(TEXT.slice(0, 30));

    const shown = await interact(b!.fake, settingsCommand(b!.place, admin, 'show', [], { manageGuild: true }));
    expect(shown.edit.body.content).toContain(`• Mod-log channel: <#${channelId}>`);
    expect(shown.edit.body.content).toContain(`• Who may run "Check for AI text": members with <@&${roleId}> or Manage Server`);
    const cleared = await interact(b!.fake, settingsCommand(b!.place, admin, 'checker-role', [], { manageGuild: true }));
    expect(cleared.edit.body.content).toContain('Who may run "Check for AI text": everyone who has the command');
  });
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('a burst of 30 checks against a key limited to 10 per 5 s', () => {
  let b: BotUnderTest | undefined;
  afterAll(async () => {
    await stopBot(b);
  });

  it('answers every check, refuses none, starts them in the order taken and reports the wait', async () => {
    // Shared through Redis, as several instances would run; the queue learns the budget from the service's 429s.
    b = await startBot({ redisUrl: process.env.REDIS_URL! }, undefined, {});
    const moderator = user(snowflake(), 'moderator');
    const firstCall = proxy.detectBodies.length;
    const payloads = Array.from({ length: 30 }, (_, i) =>
      chatInputDetect(b!.place, moderator, { text: `Check number ${i + 1}. ${TEXT}`, mode: 'general' }),
    );
    const started = Date.now();
    const exchanges = await Promise.all(
      payloads.map(async (p, i) => {
        // Sent 5 ms apart so their order of arrival is defined; all 30 arrive within 150 ms, far inside one 5 s window.
        await new Promise((r) => setTimeout(r, i * 5));
        return interact(b!.fake, p);
      }),
    );
    const total = Date.now() - started;

    const deferrals = exchanges.map((x) => x.callback.at - x.sentAt).sort((x, y) => x - y);
    const answers = exchanges.map((x) => x.edit.at - x.sentAt).sort((x, y) => x - y);
    for (const x of exchanges) {
      expect(x.callback.body).toEqual({ type: 5, data: { flags: 64 } });
      expect(field(x.edit.body.embeds[0], 'Request ID')).toMatch(/req_/);
    }
    expect(exchanges.every((x) => !/busy|Try again/.test(JSON.stringify(x.edit.body)))).toBe(true);
    // Every check was deferred at once, not after waiting its turn: all 30 deferrals went out before the
    // 11th answer, which the key's 10 per 5 s cannot allow before its second window (an order, not a
    // number of milliseconds, so it holds on a loaded machine too).
    const answerTimes = exchanges.map((x) => x.edit.at).sort((x, y) => x - y);
    expect(Math.max(...exchanges.map((x) => x.callback.at))).toBeLessThan(answerTimes[10]!);

    // Checks waiting behind others were told their position.
    const notices = b.fake.requests.filter((r) => r.method === 'PATCH' && String(r.body?.content ?? '').startsWith('⏳ Queued (position '));
    expect(notices.length).toBeGreaterThan(0);

    // Order: the bot takes a check when its deferral is done (discord.js finishes those in its own
    // order); from then on the queue keeps the order: the service first sees the checks in the order
    // they were taken, up to the queue's concurrency (8 on the wire at once).
    const takenOrder = b.taken.map((text) => Number(/^Check number (\d+)\./.exec(text)?.[1]));
    expect(takenOrder).toHaveLength(30);
    const askedDisplacement = Math.max(...takenOrder.map((n, i) => Math.abs(n - 1 - i)));
    const firstSeen: number[] = [];
    for (const body of proxy.detectBodies.slice(firstCall)) {
      const n = Number(/^Check number (\d+)\./.exec(body.text)?.[1]);
      if (!firstSeen.includes(n)) firstSeen.push(n);
    }
    expect(firstSeen).toHaveLength(30);
    for (const [index, n] of firstSeen.entries()) expect(Math.abs(takenOrder.indexOf(n) - index)).toBeLessThan(8);
    const queueDisplacement = Math.max(...firstSeen.map((n, i) => Math.abs(takenOrder.indexOf(n) - i)));

    console.info(
      `[measure] Discord burst, 30 checks, key 10/5 s: deferral p50 ${percentile(deferrals, 50)} ms, p99 ${percentile(deferrals, 99)} ms; ` +
        `answer p50 ${percentile(answers, 50)} ms, p99 ${percentile(answers, 99)} ms, all 30 in ${total} ms; ` +
        `${notices.length} queued notices; taken at most ${askedDisplacement} places from the order sent, reached the service at most ${queueDisplacement} places from the order taken; 0 refused`,
    );
  });
});

describe('waiting in the queue is not the service taking too long', () => {
  let b: BotUnderTest | undefined;
  afterEach(async () => {
    await stopBot(b);
    b = undefined;
  });

  it('a check that waits in the queue longer than the service deadline is still answered', async () => {
    // The key's budget, known to the queue: one call every 500 ms, so the 8th waits ~3.5 s for its turn.
    b = await startBot(
      { dataDir: join(dir, `paced-${Date.now()}`) },
      undefined,
      { DETECT_QUEUE_RATE: '10/5s', DETECT_QUEUE_MAX_WAIT_MS: '60000' },
      undefined,
      { key: pacedKey, settings: { checkDeadlineMs: 1_500 } },
    );
    const moderator = user(snowflake(), 'moderator');
    const payloads = Array.from({ length: 8 }, (_, i) =>
      chatInputDetect(b!.place, moderator, { text: `Paced check ${i + 1}. ${TEXT}`, mode: 'general' }),
    );
    const exchanges = await Promise.all(
      payloads.map(async (p, i) => {
        await new Promise((r) => setTimeout(r, i * 5));
        return interact(b!.fake, p);
      }),
    );
    for (const x of exchanges) {
      expect(x.edit.body.embeds[0].description).not.toMatch(/took too long|still waiting/);
      expect(field(x.edit.body.embeds[0], 'Request ID')).toMatch(/^`req_\w+`$/);
    }
    // The last ones waited their turn longer than the 1.5 s the service is given, and were told their place.
    expect(Math.max(...exchanges.map((x) => x.edit.at - x.callback.at))).toBeGreaterThan(2_000);
    const notices = b.fake.requests.filter((r) => r.method === 'PATCH' && String(r.body?.content ?? '').startsWith('⏳ Queued (position '));
    expect(notices.length).toBeGreaterThan(0);
  });

  it('when Discord’s time to answer runs out in the queue, it says so, with the position, and sends nothing', async () => {
    // One call per 10 s, and a 4 s answer window (Discord's is 15 minutes): the second and third checks
    // are still queued when only the service's 1 s is left of it, at about 3 s.
    b = await startBot(
      { dataDir: join(dir, `window-${Date.now()}`) },
      undefined,
      { DETECT_QUEUE_RATE: '1/10s', DETECT_QUEUE_MAX_WAIT_MS: '60000' },
      undefined,
      { key: windowKey, settings: { checkDeadlineMs: 1_000, answerWithinMs: 4_000 } },
    );
    const moderator = user(snowflake(), 'moderator');
    const sentBefore = proxy.detectBodies.length;
    const payloads = Array.from({ length: 3 }, (_, i) =>
      chatInputDetect(b!.place, moderator, { text: `Window check ${i + 1}. ${TEXT}`, mode: 'general' }),
    );
    const exchanges = await Promise.all(
      payloads.map(async (p, i) => {
        await new Promise((r) => setTimeout(r, i * 5));
        return interact(b!.fake, p);
      }),
    );
    const [first, ...queued] = exchanges;
    expect(field(first!.edit.body.embeds[0], 'Request ID')).toMatch(/^`req_\w+`$/);
    const sentences = queued.map((x) => x.edit.body.embeds[0].description);
    expect(sentences.sort()).toEqual([stillQueuedSentence(1), stillQueuedSentence(2)].sort());
    for (const x of queued) {
      expect(x.edit.at - x.callback.at).toBeGreaterThan(2_500);
      // Told while still queued: the queue's next turn (10 s after the first call) never came for them.
      expect(x.edit.at - x.callback.at).toBeLessThan(10_000);
      expect(x.edit.body.components[0].components[0].label).toBe('Try again');
      // The queued notice is cleared by the answer.
      expect(x.edit.body.content).toBe('');
    }
    // Only the first check reached the service.
    expect(proxy.detectBodies.slice(sentBefore).map((body) => /^Window check (\d)/.exec(body.text)?.[1])).toEqual(['1']);
  });
});
