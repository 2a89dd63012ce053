/**
 * Redis holds only what may be lost (docs/architecture.md): while it is down, `/detect` is still
 * answered with its result, and the result's buttons say the check expired. The real discord.js
 * client against the fake Discord, the real service, and a private redis-server that is stopped and
 * started again (the run's shared one serves other suites).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { buttonPress, chatInputDetect, user, type Place } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
// Written for this test: ordinary sentences, well over the ~40 words the detector wants.
const TEXT = [
  'The ferry was late again, so we sat on the harbour wall and counted gulls until the ticket office opened.',
  'My aunt insists the timetable is a work of fiction, and after three summers of this I am starting to agree.',
  'When the boat finally came in, the captain waved as if nothing had happened and sold us tea on board.',
].join(' ');

let dir: string;
let service: RunningService;
let redis: RedisServerHandle;
let fake: FakeDiscord;
let backend: DetectionBackend;
let bot: DiscordBot;
const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'discord-redis-outage-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-redis-outage' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  redis = await startRedisServer();
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  backend = await connectDetectionBackend(
    { DETECT_API_URL: service.url, DETECT_API_KEY: key, REDIS_URL: redis.url },
    { logger: pino({ level: 'silent' }) },
  );
  bot = createDiscordBot({
    token: TOKEN,
    detect: backend.detector,
    settings: { apiUrl: fake.apiUrl, state: { dataDir: join(dir, 'state'), redisUrl: redis.url } },
  });
  await bot.start();
}, 60_000);

afterAll(async () => {
  await bot?.stop();
  await backend?.close();
  await fake?.close();
  await redis?.stop();
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function answer(payload: { id: string; token: string }): Promise<RecordedRequest> {
  fake.sendInteraction(payload);
  return fake.waitForRequest(
    (r) =>
      r.method === 'PATCH' &&
      r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original` &&
      !String(r.body?.content ?? '').startsWith('⏳'),
    30_000,
  );
}

const requestId = (edit: RecordedRequest): string | undefined =>
  edit.body?.embeds?.[0]?.fields?.find((f: { name: string }) => f.name === 'Request ID')?.value;

describe('Redis down', () => {
  it('answers /detect with its result; its buttons say the check expired; all is shared again once Redis is back', async () => {
    const moderator = user(snowflake(), 'moderator');
    expect(requestId(await answer(chatInputDetect(place, moderator, { text: TEXT, mode: 'general' })))).toMatch(/req_/);

    await redis.stop();
    const during: RecordedRequest[] = [];
    for (let i = 0; i < 3; i++) during.push(await answer(chatInputDetect(place, moderator, { text: TEXT, mode: 'general' })));
    expect(during.map((edit) => JSON.stringify(edit.body.embeds?.[0]?.title ?? ''))).not.toContain('Could not check this text');
    for (const edit of during) expect(requestId(edit)).toMatch(/req_/);

    await redis.start();
    // A button of a check made while Redis was down: nothing was stored behind it.
    const legal = during[0]!.body.components[0].components.find((b: { label: string }) => b.label === 'Re-check as Legal');
    // Pressed until the bot has reconnected (ioredis tries again after up to 2 s): until then the
    // press is told the store is unavailable, after it that the check expired.
    let pressed = await answer(buttonPress(place, moderator, legal.custom_id, during[0]!.body));
    for (let i = 0; i < 50 && JSON.stringify(pressed.body).includes('state store is unavailable'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      pressed = await answer(buttonPress(place, moderator, legal.custom_id, during[0]!.body));
    }
    expect(JSON.stringify(pressed.body)).toContain('This button has expired');

    const after = await answer(chatInputDetect(place, moderator, { text: TEXT, mode: 'general' }));
    expect(requestId(after)).toMatch(/req_/);
  }, 90_000);
});
