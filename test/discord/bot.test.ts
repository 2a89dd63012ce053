/**
 * The real discord.js Client against a fake Discord on loopback (REST + gateway), with the real
 * detection service and client behind the bot.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import type { DetectionApi } from '../../adapters/discord/check.ts';
import { DetectClient } from '../../src/client/index.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { freePort } from '../helpers/redis.ts';
import { DetectProxy } from '../slack/proxy.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { buttonPress, chatInputDetect, guildCreate, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';
import { GENERATED_PARAGRAPH, HUMAN_POST, VERDICT_HEADLINE } from '../helpers/texts.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
const MODLOG_CHANNEL = snowflake();

// Written for this test: several sentences, well over the ~40 words the detector needs.
const ENGLISH_TEXT = [
  'We drove up to the lake on Friday, later than planned because the car needed new wipers.',
  'My sister insisted on stopping for pie at the diner by the bridge, and honestly she was right.',
  'The cabin smelled of pine and old newspapers, and the stove took an hour to warm the place.',
  'On Saturday it rained, so we played cards and argued about who had cheated last summer.',
  'By Sunday the sky cleared and we rowed out to the island before breakfast.',
].join(' ');

let fake: FakeDiscord;
let service: RunningService;
let keysDir: string;
let goodKey: string;
let bot: DiscordBot;
let goodClient: DetectClient;
let limitedClient: DetectClient;
let exhaustingClient: DetectClient;
let downClient: DetectClient;
let burstClient: DetectClient;
/** The client the bot calls in the current test; all are real clients against real servers. */
let current: DetectClient;
let detectCalls = 0;

const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
const moderator = user(snowflake(), 'moderator');

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  keysDir = await mkdtemp(join(tmpdir(), 'discord-test-keys-'));
  const apiKeysFile = join(keysDir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-test' });
  goodKey = key;
  const { key: limitedKey } = await createApiKey(apiKeysFile, { name: 'discord-test-limited', rateLimitMax: 1 });
  service = await startService({
    host: '127.0.0.1',
    port: 0,
    apiKeysFile,
    redisUrl: process.env.REDIS_URL,
    // Small, so "too long" is reachable with a text a Discord message can hold.
    maxTextChars: 2000,
    logLevel: 'silent',
  });
  goodClient = new DetectClient({ apiKey: key, baseUrl: service.url, maxRetries: 0 });
  // Two clients on the limited key: one spends its budget, the other (which has not seen the
  // exhausted headers) then meets the 429 and, with a short wait cap, reports it at once.
  exhaustingClient = new DetectClient({ apiKey: limitedKey, baseUrl: service.url, maxRetries: 0, limiter: false });
  limitedClient = new DetectClient({ apiKey: limitedKey, baseUrl: service.url, maxRetries: 0, limiter: false, maxRateLimitWaitMs: 500 });
  downClient = new DetectClient({ apiKey: key, baseUrl: `http://127.0.0.1:${await freePort()}`, maxRetries: 0, timeoutMs: 3000 });
  // The default client paces calls to the key's budget (one per second at 60/min); the burst test
  // measures the bot and Discord's deadline, so its client sends at once.
  burstClient = new DetectClient({ apiKey: key, baseUrl: service.url, maxRetries: 0, limiter: false });
  current = goodClient;
  const detect: DetectionApi = {
    detect: (request, options) => {
      detectCalls += 1;
      return current.detect(request, options);
    },
  };
  bot = createDiscordBot({
    token: TOKEN,
    detect,
    settings: { apiUrl: fake.apiUrl, modLogChannelId: MODLOG_CHANNEL, state: { dataDir: join(keysDir, 'state') } },
  });
  await bot.start();
});

afterAll(async () => {
  await bot?.stop();
  await Promise.all([goodClient, limitedClient, exhaustingClient, downClient, burstClient].map((c) => c?.close()));
  await service?.close();
  await fake?.close();
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

interface Exchange {
  sentAt: number;
  callback: RecordedRequest;
  edit: RecordedRequest;
}

/** Sends an interaction and waits for the bot's deferral and its edit of the reply. */
async function interact(payload: { id: string; token: string }): Promise<Exchange> {
  const sentAt = Date.now();
  fake.sendInteraction(payload);
  const callback = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
  );
  const edit = await fake.waitForRequest(
    (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original` && r.at >= callback.at,
  );
  return { sentAt, callback, edit };
}

function expectEphemeralDeferral(x: Exchange): void {
  // type 5 = DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE; flags 64 = EPHEMERAL. Deferred before the answer (the
  // check's wait is not in Discord's 3 s window); how many ms that takes is this machine's load, not the bot's.
  expect(x.callback.body).toEqual({ type: 5, data: { flags: 64 } });
  // Interaction callbacks are authorised by the token in the URL, not the bot token.
  expect(x.callback.headers.authorization).toBeUndefined();
  expect(x.edit.at).toBeGreaterThanOrEqual(x.callback.at);
}

function field(embed: any, name: string): string | undefined {
  return embed.fields?.find((f: { name: string }) => f.name === name)?.value;
}

describe('gateway session', () => {
  it('identifies with the Guilds intent only, JSON encoding and no compression', () => {
    expect(fake.gatewayQueries[0]?.get('v')).toBe('10');
    expect(fake.gatewayQueries[0]?.get('encoding')).toBe('json');
    expect(fake.gatewayQueries[0]?.has('compress')).toBe(false);
    const identify = fake.identifies[0];
    expect(identify.token).toBe(TOKEN);
    expect(identify.intents).toBe(1); // GUILDS; MESSAGE_CONTENT (1 << 15) is not asked for
    expect(identify.shard).toEqual([0, 1]);
    expect(bot.client.user?.id).toBe(APP_ID);
    expect(bot.client.application?.id).toBe(APP_ID);
  });
});

describe('/detect', () => {
  it('defers ephemerally, then edits the reply with a verdict embed and re-check buttons', async () => {
    const payload = chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'academic' });
    const x = await interact(payload);
    expectEphemeralDeferral(x);

    const embed = x.edit.body.embeds[0];
    expect(embed.title).toMatch(
      /^(🔴 Reads as AI-written|🟣 Reads as the author's own text, polished by an AI|🟡 Unclear|🟢 Likely human-written)$/,
    );
    expect([0xd93f0b, 0x8250df, 0xfbca04, 0x2da44e]).toContain(embed.color);
    expect(embed.description).toMatch(/\*\*\d{1,2}%\*\* probability that an AI wrote it/);
    expect(field(embed, 'Mode')).toBe('Academic');
    expect(field(embed, 'Language')).toBe('English (detected)');
    expect(field(embed, 'Request ID')).toMatch(/^`req_\w+`$/);
    expect(field(embed, 'Most AI-like sentences')).toBeUndefined();

    const buttons = x.edit.body.components[0].components;
    expect(buttons.map((b: { label: string }) => b.label)).toEqual(['Re-check as General', 'Re-check as Financial', 'Re-check as Legal']);
    for (const b of buttons) expect(b.custom_id).toMatch(/^recheck:(general|financial|legal):[\w-]{22}$/);
    // The reply must never ping anyone (discord.js applies the client-wide allowedMentions).
    expect(x.edit.body.allowed_mentions).toEqual({ parse: [] });
  });

  it('refuses a mode it does not know (a stale registration) with a sentence, without a detection', async () => {
    const before = detectCalls;
    const x = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'xyz' }));
    expectEphemeralDeferral(x);
    expect(x.edit.body.embeds[0].description).toContain(
      '“xyz” is not a mode this bot knows, so nothing was checked. Choose General, Academic, Financial, Legal;',
    );
    expect(detectCalls).toBe(before);
  });

  it('quotes the most AI-like sentences when segments is on, and honours the language option', async () => {
    const payload = chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general', language: 'en', segments: true });
    const x = await interact(payload);
    expectEphemeralDeferral(x);
    const embed = x.edit.body.embeds[0];
    expect(field(embed, 'Language')).toBe('English');
    const quoted = field(embed, 'Most AI-like sentences') ?? '';
    const lines = quoted.split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const m = /^\*\*(\d{1,2})%\*\* “(.+)”$/.exec(line);
      expect(m, line).not.toBeNull();
      expect(ENGLISH_TEXT).toContain(m![2]);
    }
  });

  it('headlines a post followed by a generated paragraph as partly AI-written, with the share', async () => {
    const post = HUMAN_POST;
    const generated = GENERATED_PARAGRAPH;
    const x = await interact(chatInputDetect(place, moderator, { text: `${post}\n\n${generated}`, mode: 'general', segments: true }));
    const embed = x.edit.body.embeds[0];
    expect(embed.title).toMatch(/^🟠 Partly AI-written: about \d{1,2}% of the words look generated$/);
    expect(embed.color).toBe(0xe8773a);
    expect(embed.description).toMatch(
      /Partly generated: [a-z ]+ of the text looks AI-generated \(\d{1,2}% of its words, one passage\); the rest reads as the author's own writing\./,
    );
    expect(embed.description).not.toMatch(/most likely written by an AI/);
    expect(embed.fields.find((f: { name: string }) => f.name.startsWith('Passages that look AI-generated'))?.value).toContain(
      'Ramen has become',
    );
  });

  it('a re-check button runs the same text in the other mode; only for the person who ran it', async () => {
    const first = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' }));
    const legal = first.edit.body.components[0].components.find((b: { label: string }) => b.label === 'Re-check as Legal');

    const press = buttonPress(place, moderator, legal.custom_id, first.edit.body);
    const x = await interact(press);
    expectEphemeralDeferral(x);
    const embed = x.edit.body.embeds[0];
    expect(field(embed, 'Mode')).toBe('Legal');
    expect(field(embed, 'Request ID')).not.toBe(field(first.edit.body.embeds[0], 'Request ID'));
    expect(x.edit.body.components[0].components.map((b: { label: string }) => b.label)).toContain('Re-check as General');

    const stranger = await interact(buttonPress(place, user(snowflake(), 'someone'), legal.custom_id, first.edit.body));
    expect(stranger.edit.body.embeds[0].description).toBe('Only the person who ran this check can re-check it. Run the check yourself.');

    const forgotten = await interact(buttonPress(place, moderator, 'recheck:legal:AAAAAAAAAAAAAAAAAAAAAA', first.edit.body));
    expect(forgotten.edit.body.embeds[0].description).toMatch(/^This button has expired: the bot remembers a checked text for 30 minutes/);
  });

  it('with DISCORD_EPHEMERAL=false the answer is public (no ephemeral flag)', async () => {
    const settings = bot.context.settings;
    settings.ephemeral = false;
    try {
      const x = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' }));
      expect(x.callback.body).toEqual({ type: 5, data: { flags: 0 } });
      expect(x.edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
    } finally {
      settings.ephemeral = true;
    }
  });

  it('says the service is busy, with the wait, when the API key is rate limited', async () => {
    await exhaustingClient.detect({ text: ENGLISH_TEXT });
    current = limitedClient;
    try {
      const x = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' }));
      expectEphemeralDeferral(x);
      const embed = x.edit.body.embeds[0];
      expect(embed.title).toBe('Could not check this text');
      expect(embed.description).toMatch(
        /^The detection service is busy \(rate limit reached\)\. Try again in \d+ s\. \(request id: req_\w+\)$/,
      );
      const [retry] = x.edit.body.components[0].components;
      expect(retry.label).toBe('Try again');
      expect(retry.custom_id).toMatch(/^recheck:general:/);
    } finally {
      current = goodClient;
    }
  });

  it('says when the text is in a language the detector does not support', async () => {
    const german =
      'Gestern sind wir mit dem Zug nach Hamburg gefahren, weil das Auto wieder in der Werkstatt war. ' +
      'Am Hafen haben wir Fischbrötchen gegessen und den Schiffen zugesehen, bis es dunkel wurde und der Wind kalt.';
    const x = await interact(chatInputDetect(place, moderator, { text: german, mode: 'general' }));
    expectEphemeralDeferral(x);
    expect(x.edit.body.embeds[0].description).toMatch(
      /^This text is in a language the detector does not support: only English and Turkish can be checked\. \(request id: req_\w+\)$/,
    );
    expect(x.edit.body.components).toEqual([]);
  });

  it('tells the moderator the service took too long when it does not answer within the deadline, with no made-up request id', async () => {
    // A real service behind a proxy that holds each request back: the call reaches it and hangs there.
    const proxy = new DetectProxy(service.url);
    await proxy.start();
    proxy.delayMs = 3000;
    const slow = new DetectClient({ apiKey: goodKey, baseUrl: proxy.url, maxRetries: 0, limiter: false, timeoutMs: 10_000 });
    const settings = bot.context.settings;
    const saved = settings.checkDeadlineMs;
    current = slow;
    settings.checkDeadlineMs = 400;
    try {
      const x = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' }));
      // Not before the 400 ms deadline; and the sentence below (not a result) shows it was the deadline
      // that answered, not the proxy's answer at 3 s.
      expect(x.edit.at - x.callback.at).toBeGreaterThanOrEqual(350);
      expect(proxy.detectCalls).toBe(1);
      // The bot's own X-Request-Id is not an id the service's support could look up: not shown.
      expect(x.edit.body.embeds[0].description).toBe('The detection service took too long to answer. Try again in a minute.');
      expect(x.edit.body.components[0].components[0].label).toBe('Try again');
    } finally {
      settings.checkDeadlineMs = saved;
      current = goodClient;
      await slow.close();
      await proxy.stop();
    }
  });

  it('says the service is unreachable when it is down', async () => {
    current = downClient;
    try {
      const x = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' }));
      expectEphemeralDeferral(x);
      expect(x.edit.body.embeds[0].description).toBe(
        'The detection service is unreachable right now. Try again in a few minutes; if it persists, tell the bot admin.',
      );
      expect(x.edit.body.components[0].components[0].label).toBe('Try again');
    } finally {
      current = goodClient;
    }
  });
});

describe('"Check for AI text" message command', () => {
  it('checks the message content plus embed descriptions and writes a mod-log line', async () => {
    const author = user(snowflake(), 'poster');
    const payload = messageCommand(place, moderator, {
      content: ENGLISH_TEXT,
      embeds: [{ title: 'ignored title', description: 'The lake froze early that year, and nobody could remember why.' }],
      author,
    });
    const x = await interact(payload);
    expectEphemeralDeferral(x);
    const embed = x.edit.body.embeds[0];
    const link = `https://discord.com/channels/${place.guildId}/${place.channelId}/${payload.data.target_id}`;
    expect(field(embed, 'Message')).toBe(link);
    expect(field(embed, 'Mode')).toBe('General');
    // Message checks ask for sentences by default; the embed's sentence was part of the text.
    expect(field(embed, 'Most AI-like sentences')).toBeDefined();

    const log = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === `/channels/${MODLOG_CHANNEL}/messages` && r.body.content.includes(link),
    );
    expect(log.headers.authorization).toBe(`Bot ${TOKEN}`);
    expect(log.body.allowed_mentions).toEqual({ parse: [] });
    const requestId = /`(req_\w+)`/.exec(field(embed, 'Request ID') ?? '')?.[1];
    expect(log.body.content).toBe(
      `<@${moderator.id}> checked ${link} (by <@${author.id}>) in general mode: ${embed.title}, ${/\*\*(\d+%)\*\*/.exec(embed.description)?.[1]} · request \`${requestId}\``,
    );
    expect(log.body.content).not.toContain('lake');
  });

  it('quotes a sentence the message repeats only once among the most AI-like', async () => {
    const repeated = 'We are thrilled to announce the launch of our innovative new platform for seamless collaboration.';
    const x = await interact(messageCommand(place, moderator, { content: `${repeated} ${repeated} ${ENGLISH_TEXT} ${repeated}` }));
    const quoted = (field(x.edit.body.embeds[0], 'Most AI-like sentences') ?? '').split('\n').map((line) => /“(.*)”/.exec(line)?.[1]);
    expect(quoted.length).toBeGreaterThan(1);
    expect(new Set(quoted).size).toBe(quoted.length);
  });

  it('answers per file for a message with only a document, downloading nothing from another host', async () => {
    const x = await interact(
      messageCommand(place, moderator, {
        content: '',
        attachments: [
          {
            id: snowflake(),
            filename: 'essay.pdf',
            size: 20_000,
            url: 'https://cdn.example/essay.pdf',
            proxy_url: 'https://cdn.example/essay.pdf',
          },
        ],
      }),
    );
    expectEphemeralDeferral(x);
    // cdn.example is not Discord's CDN: the file is named with the reason, never fetched (test/discord/files.test.ts checks documents).
    expect(x.edit.body.embeds[0].title).toBe('📄 essay.pdf: not checked');
    expect(x.edit.body.embeds[0].description).toBe(
      'It is not stored on the chat platform’s own file host, so the bot does not download it.',
    );
  });

  it('says a message of emoji holds no words to check, without calling the service', async () => {
    const calls = detectCalls;
    // As Discord sends them: Unicode emoji from the picker, and a server's custom emoji.
    const unicode = await interact(messageCommand(place, moderator, { content: '🎉🎉 🚀' }));
    expect(unicode.edit.body.embeds[0].description).toBe(
      'That message has only emoji, so there is nothing to check: the detector scores the words a person wrote.',
    );
    const custom = await interact(
      messageCommand(place, moderator, { content: '<:blobwave:112233445566778899> <a:party:112233445566778800>' }),
    );
    expect(custom.edit.body.embeds[0].description).toBe(
      'That message has only emoji, so there is nothing to check: the detector scores the words a person wrote.',
    );
    const pasted = await interact(chatInputDetect(place, moderator, { text: '👍🏽👍🏽', mode: 'general' }));
    expect(pasted.edit.body.embeds[0].description).toBe(
      'This text has only emoji, so there is nothing to check: the detector scores the words a person wrote.',
    );
    expect(detectCalls).toBe(calls);
  });

  it('answers clearly for an empty message', async () => {
    const x = await interact(messageCommand(place, moderator, { content: '   ' }));
    expect(x.edit.body.embeds[0].description).toBe('That message has no text to check.');
  });

  it('says when the text is longer than the service accepts', async () => {
    const long = Array.from({ length: 30 }, () => ENGLISH_TEXT).join('\n\n'); // ~13,000 characters > the service's 2,000
    const x = await interact(messageCommand(place, moderator, { content: long.slice(0, 4000) }));
    expectEphemeralDeferral(x);
    expect(x.edit.body.embeds[0].description).toMatch(
      /^This text is too long to check\. Shorten it \(or check it in parts\) and try again\. \(request id: req_\w+\)$/,
    );
    expect(x.edit.body.components).toEqual([]);
  });
});

describe('under load and surprises', () => {
  it('acknowledges 20 simultaneous checks within the 3-second window and answers all of them', async () => {
    const payloads = Array.from({ length: 20 }, (_, i) =>
      chatInputDetect(place, user(snowflake(), `mod${i}`), { text: ENGLISH_TEXT, mode: 'general', segments: i % 2 === 0 }),
    );
    current = burstClient;
    let exchanges: Exchange[];
    try {
      exchanges = await Promise.all(payloads.map((p) => interact(p)));
    } finally {
      current = goodClient;
    }
    const deferMs = exchanges.map((x) => x.callback.at - x.sentAt).sort((a, b) => a - b);
    const answerMs = exchanges.map((x) => x.edit.at - x.sentAt).sort((a, b) => a - b);
    for (const x of exchanges) {
      expectEphemeralDeferral(x);
      expect(x.edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
    }
    const pct = (xs: number[], q: number): number => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
    // Printed for docs/discord.md ("Measured").
    console.log(
      `discord bot, 20 simultaneous /detect: deferral p50 ${pct(deferMs, 0.5)} ms, max ${deferMs.at(-1)} ms; ` +
        `answer p50 ${pct(answerMs, 0.5)} ms, max ${answerMs.at(-1)} ms`,
    );
  });

  it('through the default (paced) client, a burst is acknowledged at once and answered about one a second', async () => {
    const payloads = Array.from({ length: 5 }, (_, i) =>
      chatInputDetect(place, user(snowflake(), `paced${i}`), { text: ENGLISH_TEXT, mode: 'general' }),
    );
    const exchanges = await Promise.all(payloads.map((p) => interact(p)));
    const deferMax = Math.max(...exchanges.map((x) => x.callback.at - x.sentAt));
    const answers = exchanges.map((x) => x.edit.at - x.sentAt).sort((a, b) => a - b);
    // Acknowledged at once: every deferral before the second answer, which the paced client holds back
    // about a second after the first.
    expect(Math.max(...exchanges.map((x) => x.callback.at))).toBeLessThanOrEqual(
      [...exchanges.map((x) => x.edit.at)].sort((a, b) => a - b)[1]!,
    );
    for (const x of exchanges) expect(x.edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
    console.log(
      `discord bot, 5 simultaneous /detect through the paced client: deferral max ${deferMax} ms; answers at ${answers.join(', ')} ms`,
    );
  });

  it('answers a command it does not know (stale registration) instead of leaving Discord waiting', async () => {
    const payload = chatInputDetect(place, moderator, { text: 'x', mode: 'general' });
    payload.data.name = 'old-command';
    const x = await interact(payload);
    expectEphemeralDeferral(x);
    expect(x.edit.body.content).toBe(
      'This command is not known to the running bot. Ask the bot admin to run `npm run discord:register` again.',
    );
  });
  it('stops when Discord no longer accepts the acknowledgement (interaction older than 3 s)', async () => {
    const payload = chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' });
    const callsBefore = detectCalls;
    // Dispatched without registering its token: the fake answers the callback 404 Unknown interaction (10062).
    fake.dispatch('INTERACTION_CREATE', payload);
    const callback = await fake.waitForRequest((r) => r.method === 'POST' && r.path.includes(payload.token));
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.requests.filter((r) => r.path.includes(payload.token))).toEqual([callback]);
    expect(detectCalls).toBe(callsBefore);
  });

  it('still answers the moderator when the mod-log channel refuses the post', async () => {
    fake.overrideOnce('POST', new RegExp(`^/channels/${MODLOG_CHANNEL}/messages$`), {
      status: 403,
      body: { message: 'Missing Access', code: 50001 },
    });
    const payload = messageCommand(place, moderator, { content: ENGLISH_TEXT });
    const x = await interact(payload);
    expect(x.edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
    const refused = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === `/channels/${MODLOG_CHANNEL}/messages` && r.body.content.includes(payload.data.target_id),
    );
    expect(refused.at).toBeGreaterThanOrEqual(x.edit.at);
    // The bot keeps working afterwards.
    const next = await interact(chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'legal' }));
    expect(field(next.edit.body.embeds[0], 'Mode')).toBe('Legal');
  });
});

describe('in a server the bot has cached (GUILD_CREATE received)', () => {
  it('reads the target as a discord.js Message and answers the same way', async () => {
    const cached: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
    fake.dispatch('GUILD_CREATE', guildCreate(cached));
    await vi.waitFor(() => expect(bot.client.channels.cache.has(cached.channelId)).toBe(true));

    const payload = messageCommand(cached, moderator, { content: '', embeds: [{ description: ENGLISH_TEXT }] });
    const x = await interact(payload);
    expectEphemeralDeferral(x);
    // discord.js built a Message in the cached channel: the structured path was taken.
    const channel = bot.client.channels.cache.get(cached.channelId);
    expect(channel?.isTextBased() && channel.messages.cache.has(payload.data.target_id)).toBe(true);
    const embed = x.edit.body.embeds[0];
    expect(field(embed, 'Message')).toBe(`https://discord.com/channels/${cached.guildId}/${cached.channelId}/${payload.data.target_id}`);
    expect(field(embed, 'Request ID')).toMatch(/^`req_\w+`$/);

    const attachmentOnly = await interact(
      messageCommand(cached, moderator, {
        content: '',
        attachments: [
          {
            id: snowflake(),
            filename: 'a.png',
            size: 10,
            url: 'https://cdn.example/a.png',
            proxy_url: 'https://cdn.example/a.png',
            content_type: 'image/png',
          },
        ],
      }),
    );
    expect(attachmentOnly.edit.body.embeds[0].description).toMatch(/^That message has only attachments/);
  });
});

describe("Discord's own rate limits", () => {
  it('a 429 on the reply edit is waited out by discord.js, not retried by the bot', async () => {
    const payload = chatInputDetect(place, moderator, { text: ENGLISH_TEXT, mode: 'general' });
    fake.overrideOnce('PATCH', /\/messages\/@original$/, {
      status: 429,
      headers: { 'retry-after': '0.3', 'x-ratelimit-scope': 'user' },
      body: { message: 'You are being rate limited.', retry_after: 0.3, global: false },
    });
    const x = await interact(payload);
    const second = await fake.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token) && r !== x.edit);
    const edits = fake.requests.filter((r) => r.method === 'PATCH' && r.path.includes(payload.token));
    expect(edits).toEqual([x.edit, second]);
    expect(second.at - x.edit.at).toBeGreaterThanOrEqual(250);
    expect(second.body).toEqual(x.edit.body);
    expect(second.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
  });
});
