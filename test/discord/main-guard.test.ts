/**
 * `npm run discord` as a process, fed Discord's documented slash-command example (no
 * `entitlements`, see documented-payloads.ts) and an interaction discord.js cannot read: the process
 * answers both, logs the unreadable one with its interaction id, and goes on answering /detect.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBotProcess, type BotProcess } from './bot-process.ts';
import { slashCommandExample } from './documented-payloads.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, user } from '../../demo/discord/payloads.ts';
import { WAIT_MS } from '../helpers/load.ts';
import { VERDICT_HEADLINE } from '../helpers/texts.ts';

const APP_ID = snowflake();
const TOKEN = 'main-guard-bot-token.secret-part';
const TEXT =
  'The committee met twice in March to review the budget. Several members asked why the travel line had doubled, ' +
  'and the treasurer explained that two conferences had moved from online to in person. After a long discussion the ' +
  'members agreed to cap travel at last year’s level and revisit the question in the autumn.';

let fake: FakeDiscord;
let bot: BotProcess | undefined;

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
});

afterAll(async () => {
  if (bot && bot.child.exitCode === null) bot.child.kill('SIGKILL');
  await fake?.close();
});

it('survives the documented example and an unreadable interaction, and keeps answering', async () => {
  bot = await startBotProcess(fake, TOKEN);
  const { child, exited } = bot;

  const documented = { ...slashCommandExample(), token: `A_UNIQUE_TOKEN-${snowflake()}` } as { id: string; token: string };
  fake.sendInteraction(documented);
  const deferred = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${documented.id}/${documented.token}/callback`,
  );
  expect(deferred.body.type).toBe(5);

  const broken: Record<string, unknown> = {
    ...slashCommandExample(),
    id: snowflake(),
    token: `broken-${snowflake()}`,
    application_id: APP_ID,
  };
  delete broken.member;
  fake.sendInteraction(broken as { id: string; token: string });
  const answered = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${broken.id}/${broken.token}/callback`,
  );
  expect(answered.body.type).toBe(4);

  const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
  const payload = chatInputDetect(place, user(), { text: TEXT, mode: 'general' });
  fake.sendInteraction(payload);
  const edit = await fake.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token), WAIT_MS);
  expect(edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
  expect(child.exitCode).toBeNull();

  const output = bot.output();
  const lines = output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  expect(lines.find((l) => l.interactionId === broken.id)).toMatchObject({
    level: 50,
    event: 'INTERACTION_CREATE',
    err: { name: 'TypeError' },
  });
  expect(output).not.toContain(String(broken.token));
  expect(output).not.toContain('secret-part');

  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});
