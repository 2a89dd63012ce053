/**
 * `npm run discord` as a process: with DETECT_API_URL unset it starts the detection service
 * in-process, connects to (fake) Discord, answers a /detect, logs neither the text nor a secret,
 * and exits cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiKey, startService } from '../../src/service/index.ts';
import { DetectProxy } from '../slack/proxy.ts';
import { startBotProcess, type BotProcess } from './bot-process.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, user } from '../../demo/discord/payloads.ts';
import { WAIT_MS } from '../helpers/load.ts';
import { VERDICT_HEADLINE } from '../helpers/texts.ts';

const APP_ID = snowflake();
const TOKEN = 'main-test-bot-token.secret-part';
const TEXT =
  'The committee met twice in March to review the budget. Several members asked why the travel line had doubled, ' +
  'and the treasurer explained that two conferences had moved from online to in person. After a long discussion the ' +
  'members agreed to cap travel at last year’s level and revisit the question in the autumn, once the figures were clearer.';

let fake: FakeDiscord;
let bot: BotProcess | undefined;

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
});

afterAll(async () => {
  if (bot && bot.child.exitCode === null) bot.child.kill('SIGKILL');
  await fake?.close();
});

it('starts with an in-process service, answers /detect and stops on SIGTERM', async () => {
  bot = await startBotProcess(fake, TOKEN);
  const { child, exited } = bot;
  expect(fake.identifies[0]?.intents).toBe(1);

  const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
  const payload = chatInputDetect(place, user(), { text: TEXT, mode: 'general' });
  fake.sendInteraction(payload);
  const edit = await fake.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token), WAIT_MS);
  const embed = edit.body.embeds[0];
  expect(embed.title).toMatch(VERDICT_HEADLINE);
  expect(embed.fields.find((f: { name: string }) => f.name === 'Request ID').value).toMatch(/^`req_\w+`$/);

  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const output = bot.output();
  if (process.env.SHOW_BOT_OUTPUT) console.log(output);

  const logLines = output.split('\n').filter((l) => l.startsWith('{'));
  expect(logLines.some((l) => JSON.parse(l).msg === 'discord bot ready')).toBe(true);
  // The SQLite state store opens without Node 22's ExperimentalWarning on every start.
  expect(output).not.toContain('ExperimentalWarning');
  const done = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'check done');
  expect(done).toMatchObject({
    trigger: 'detect',
    mode: 'general',
    verdict: expect.any(String),
    requestId: expect.stringMatching(/^req_/),
  });
  // The bot's log line and the service's request log share the caller request id.
  const served = logLines.map((l) => JSON.parse(l)).find((l) => l.request_id === done.requestId && l.path === '/v1/detect');
  expect(served?.caller_request_id).toBe(done.callerRequestId);
  // Never the submitted text, the bot token or the interaction token in the logs.
  expect(output).not.toContain('committee');
  expect(output).not.toContain('secret-part');
  expect(output).not.toContain(payload.token);
});

it('names itself to the detection service in its User-Agent', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'discord-main-ua-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-ua' });
  const service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  const proxy = new DetectProxy(service.url);
  await proxy.start();
  // A Discord of its own: the shared one still counts the first test's session as ready.
  const discord = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  try {
    bot = await startBotProcess(discord, TOKEN, { DETECT_API_URL: proxy.url, DETECT_API_KEY: key, LOG_LEVEL: 'warn' });
    const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
    const payload = chatInputDetect(place, user(), { text: TEXT, mode: 'general' });
    discord.sendInteraction(payload);
    const edit = await discord.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token), WAIT_MS);
    expect(edit.body.embeds[0].title).toMatch(VERDICT_HEADLINE);
    const version = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    // The client's own part, then the bot's, as the Slack app sends `textdetect-slack/…`.
    expect(proxy.detectUserAgents.at(-1)).toMatch(
      new RegExp(`^textdetect-client/\\S+ node/\\S+ textdetect-discord/${version.replace(/\./g, '\\.')}$`),
    );
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
  } finally {
    await discord.close();
    await proxy.stop();
    await service.close();
    await rm(dir, { recursive: true, force: true });
  }
});

/** Runs the bot to its exit with a throw-away DATA_DIR, never the user's data folder. */
async function runBot(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'discord-main-'));
  try {
    return await new Promise((resolve) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', 'adapters/discord/main.ts'], {
        env: { ...env, DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      proc.stdout.on('data', (d: Buffer) => (text += d.toString()));
      proc.stderr.on('data', (d: Buffer) => (text += d.toString()));
      proc.once('close', (code) => resolve({ code, output: text }));
    });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

it('exits 2 with a sentence when DISCORD_TOKEN is missing, and 3 when Discord refuses it', async () => {
  const base: NodeJS.ProcessEnv = { ...process.env, DISCORD_API_URL: fake.apiUrl, LOG_LEVEL: 'warn' };
  delete base.DETECT_API_URL;
  delete base.DETECT_API_KEY;
  const [missing, refused] = await Promise.all([
    runBot({ ...base, DISCORD_TOKEN: '' }),
    runBot({ ...base, DISCORD_TOKEN: 'not-the-right-token' }),
  ]);
  expect(missing.code).toBe(2);
  expect(missing.output).toContain('DISCORD_TOKEN is not set: copy the bot token from the Discord Developer Portal');
  expect(refused.code).toBe(3);
  expect(refused.output).toContain(
    'Could not start the Discord bot: Discord refused DISCORD_TOKEN. Copy a fresh token from the Developer Portal (your application → Bot → Reset Token).',
  );
  expect(refused.output).not.toContain('not-the-right-token');
  // The token is checked first: nothing about intents or watching before the refusal.
  expect(refused.output).not.toContain('could not read the application');
  expect(refused.output).not.toContain('Message Content intent');
});
