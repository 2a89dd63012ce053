/**
 * `npm run discord`'s exit codes as docs/discord.md lists them (issue 32, items 11 and 26), each from a
 * real process against the loopback fake of Discord: the code and the sentence it prints. Exit 3 (a
 * refused token) and a missing DISCORD_TOKEN (2) are in main.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBotProcess } from './bot-process.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, user } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = 'exit-codes-bot-token.secret-part';
const TEXT =
  'The committee met twice in March to review the budget. Several members asked why the travel line had doubled, ' +
  'and the treasurer explained that two conferences had moved from online to in person, so the line grew.';

let fake: FakeDiscord;
let closedPort: number;

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  // A port nothing listens on: bound once to learn a free one, then closed.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
});

afterAll(async () => {
  await fake?.close();
});

async function runBot(extra: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string; output: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'discord-exit-codes-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DISCORD_TOKEN: TOKEN,
    DISCORD_API_URL: fake.apiUrl,
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
  };
  delete env.DETECT_API_URL;
  delete env.DETECT_API_KEY;
  Object.assign(env, extra);
  try {
    return await new Promise((resolve) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', 'adapters/discord/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let output = '';
      proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
      proc.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        output += d.toString();
      });
      proc.once('close', (code) => resolve({ code, stderr, output }));
    });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

it('exits 2 for a mode that does not exist, and for DETECT_API_URL without DETECT_API_KEY', async () => {
  const [mode, key] = await Promise.all([
    runBot({ DISCORD_MESSAGE_MODE: 'medical' }),
    runBot({ DETECT_API_URL: `http://127.0.0.1:${closedPort}` }),
  ]);
  expect(mode.stderr).toContain('DISCORD_MESSAGE_MODE="medical" is not a mode; use one of: general, academic, financial, legal.');
  expect(mode.code).toBe(2);
  expect(key.stderr).toContain('DETECT_API_URL is set but DETECT_API_KEY is not: set the key the detection service issued to this bot.');
  expect(key.code).toBe(2);
}, 60_000);

it('exits 5 with one sentence when Discord’s API cannot be reached, and no warning about the application before it', async () => {
  const run = await runBot({ DISCORD_API_URL: `http://127.0.0.1:${closedPort}` });
  expect(run.stderr).toContain(
    `Could not start the Discord bot: Could not reach Discord's API at http://127.0.0.1:${closedPort} (ECONNREFUSED); check the network, a proxy or firewall, or DISCORD_API_URL.`,
  );
  expect(run.output).not.toContain('could not read the application');
  expect(run.output).not.toContain('connect ECONNREFUSED');
  expect(run.output).not.toContain('secret-part');
  expect(run.code).toBe(5);
}, 60_000);

it('starts when the detection service at DETECT_API_URL is unreachable, and a check says so (docs/discord.md)', async () => {
  const bot = await startBotProcess(fake, TOKEN, {
    DETECT_API_URL: `http://127.0.0.1:${closedPort}`,
    DETECT_API_KEY: 'sk_test_exit',
    DETECT_MAX_RETRIES: '0',
  });
  try {
    const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
    const payload = chatInputDetect(place, user(), { text: TEXT, mode: 'general' });
    fake.sendInteraction(payload);
    const edit = await fake.waitForRequest((r) => r.method === 'PATCH' && r.path.includes(payload.token), 30_000);
    expect(JSON.stringify(edit.body)).toContain('The detection service is unreachable right now.');
    expect(bot.output()).toContain('"detectApi":"http://127.0.0.1:');
  } finally {
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
  }
}, 60_000);
