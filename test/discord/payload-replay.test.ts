/**
 * The real discord.js client, against the fake Discord on loopback, fed the INTERACTION_CREATE
 * examples of Discord's own documentation (documented-payloads.ts names each source) and payloads
 * broken beyond repair: the bot answers or explains, logs the interaction id, and keeps serving.
 * Also the markup path end to end: a message with mentions and a code block is scored as its words.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import type { DetectionApi } from '../../adapters/discord/check.ts';
import { UNREADABLE_INTERACTION_REPLY } from '../../adapters/discord/gateway-guard.ts';
import { DetectClient } from '../../src/client/index.ts';
import type { DetectRequest } from '../../src/client/types.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { buttonExample, messageCommandExample, slashCommandExample } from './documented-payloads.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';
import { VERDICT_HEADLINE } from '../helpers/texts.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-replay`;
const TEXT = [
  'We drove up to the lake on Friday, later than planned because the car needed new wipers.',
  'My sister insisted on stopping for pie at the diner by the bridge, and honestly she was right.',
  'The cabin smelled of pine and old newspapers, and the stove took an hour to warm the place.',
  'On Saturday it rained, so we played cards and argued about who had cheated last summer.',
].join(' ');

let fake: FakeDiscord;
let service: RunningService;
let keysDir: string;
let client: DetectClient;
let bot: DiscordBot;
const logs: Record<string, any>[] = [];
const sent: DetectRequest[] = [];
const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  keysDir = await mkdtemp(join(tmpdir(), 'discord-replay-keys-'));
  const apiKeysFile = join(keysDir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-replay' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  client = new DetectClient({ apiKey: key, baseUrl: service.url, maxRetries: 0, limiter: false });
  const detect: DetectionApi = {
    detect: (request, options) => {
      sent.push(request);
      return client.detect(request, options);
    },
  };
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  bot = createDiscordBot({ token: TOKEN, detect, settings: { apiUrl: fake.apiUrl }, logger: pino({ level: 'info' }, sink) });
  await bot.start();
});

afterAll(async () => {
  await bot?.stop();
  await client?.close();
  await service?.close();
  await fake?.close();
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

/** Each replay gets its own token: Discord, and the fake, accept one answer per interaction token. */
function replay(payload: Record<string, any>): { id: string; token: string } {
  payload.token = `${payload.token}-${snowflake()}`;
  fake.sendInteraction(payload as { id: string; token: string });
  return payload as { id: string; token: string };
}

function callbackOf(p: { id: string; token: string }): Promise<RecordedRequest> {
  return fake.waitForRequest((r) => r.method === 'POST' && r.path === `/interactions/${p.id}/${p.token}/callback`);
}

function editOf(p: { token: string }): Promise<RecordedRequest> {
  return fake.waitForRequest((r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${p.token}/messages/@original`);
}

/** The bot is still serving: a well-formed /detect gets its verdict. */
async function expectStillServing(): Promise<void> {
  const payload = chatInputDetect(place, user(snowflake(), 'moderator'), { text: TEXT, mode: 'general' });
  fake.sendInteraction(payload);
  const edit = await editOf(payload);
  expect(edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
}

describe("Discord's documented INTERACTION_CREATE examples", () => {
  it('the slash command example (no entitlements, no application_id) is answered, not a crash', async () => {
    const p = replay(slashCommandExample());
    const callback = await callbackOf(p);
    expect(callback.body).toEqual({ type: 5, data: { flags: 64 } });
    // `/cardsearch` is not this bot's command: it says so instead of leaving "thinking…".
    const edit = await editOf(p);
    expect(edit.body.content).toMatch(/not known to the running bot/);
    await expectStillServing();
  });

  it('the message command example, addressed to this bot as "Check for AI text", is checked', async () => {
    const payload = messageCommandExample();
    payload.application_id = APP_ID;
    payload.data.name = 'Check for AI text';
    const p = replay(payload);
    const edit = await editOf(p);
    const embed = edit.body.embeds[0];
    // "some message" is two words, under the evidence floor: too short to judge, and no percentage.
    expect(embed.title).toBe('⚪ Too short to judge');
    expect(embed.description).toContain('Under about 40 words the detector cannot tell');
    expect(embed.description).not.toMatch(/\d%/);
    expect(sent.at(-1)?.text).toBe('some message');
  });

  it('the button example (a component of another app) is answered', async () => {
    const payload = buttonExample();
    payload.application_id = APP_ID;
    const p = replay(payload);
    expect((await callbackOf(p)).body.type).toBe(5);
    await expectStillServing();
  });
});

describe('payloads discord.js cannot read', () => {
  it('logs the interaction id, answers with an error, and keeps serving', async () => {
    const payload = slashCommandExample();
    payload.application_id = APP_ID;
    delete payload.member; // neither member nor user: no one to attribute the command to
    const p = replay(payload);
    const callback = await callbackOf(p);
    expect(callback.body).toEqual({ type: 4, data: { content: UNREADABLE_INTERACTION_REPLY, flags: 64, allowed_mentions: { parse: [] } } });
    const line = logs.find((l) => l.msg?.startsWith('could not handle a gateway dispatch') && l.interactionId === p.id);
    expect(line).toMatchObject({ level: 50, event: 'INTERACTION_CREATE', err: { name: 'TypeError' } });
    expect(JSON.stringify(logs)).not.toContain(p.token);
    await expectStillServing();
  });

  it('survives dispatches that are not even objects', async () => {
    fake.dispatch('INTERACTION_CREATE', null);
    fake.dispatch('INTERACTION_CREATE', { id: snowflake(), type: 2 });
    fake.dispatch('MESSAGE_CREATE', 'not an object');
    await expectStillServing();
  });
});

describe('markup, end to end through discord.js', () => {
  it('scores the words of a message: mentions, custom emoji and code left out, and the reply says so', async () => {
    const author = user(snowflake(), 'poster');
    const target = {
      content: `**Heads up** <@${author.id}>: ${TEXT} <:blobwave:123456789012345678>\n\`\`\`js\nconst x = 1;\n\`\`\``,
      author,
    };
    const payload = messageCommand(place, user(snowflake(), 'moderator'), target);
    fake.sendInteraction(payload);
    const edit = await editOf(payload);
    expect(sent.at(-1)?.text).toBe(`Heads up: ${TEXT}`);
    expect(edit.body.embeds[0].description).toContain(
      "Not scored: 1 code block and 1 mention (code, names and addresses are not the author's prose).",
    );
  });

  it('"@Ada test" is scored as "test": a result with the short-text warning, not a language error', async () => {
    const payload = chatInputDetect(place, user(snowflake(), 'moderator'), { text: `<@${snowflake()}> test`, mode: 'general' });
    fake.sendInteraction(payload);
    const edit = await editOf(payload);
    expect(sent.at(-1)?.text).toBe('test');
    expect(edit.body.embeds[0].title).toBe('⚪ Too short to judge');
    expect(edit.body.embeds[0].description).not.toMatch(/\d%/);
  });

  it('a /detect text that is only a mention is refused with a sentence, not sent', async () => {
    const before = sent.length;
    const payload = chatInputDetect(place, user(snowflake(), 'moderator'), { text: `<@${snowflake()}>`, mode: 'general' });
    fake.sendInteraction(payload);
    const edit = await editOf(payload);
    expect(edit.body.embeds[0].description).toBe(
      'This text has only mentions, so there is nothing to check: the detector scores the words a person wrote.',
    );
    expect(sent.length).toBe(before);
  });
});
