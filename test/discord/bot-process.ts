/**
 * `npm run discord` as a real child process against the fake Discord, started with the in-process
 * detection service (no DETECT_API_URL), for tests of the process as a whole.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeDiscord } from '../../demo/discord/fake-discord.ts';

export interface BotProcess {
  child: ChildProcess;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Starts the bot and resolves once it has identified on the fake gateway; rejects with its output if it
 * exits first. Its state goes to a throw-away DATA_DIR (not the user's data folder); `extraEnv` adds
 * to or overrides its environment (e.g. DETECT_API_URL for a service of the test's own).
 */
export async function startBotProcess(fake: FakeDiscord, token: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<BotProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'discord-bot-process-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DISCORD_TOKEN: token,
    DISCORD_API_URL: fake.apiUrl,
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
  };
  delete env.DETECT_API_URL;
  delete env.DETECT_API_KEY;
  Object.assign(env, extraEnv);
  const child = spawn(process.execPath, ['--import', 'tsx', 'adapters/discord/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      void rm(dataDir, { recursive: true, force: true }).finally(() => resolve(code));
    }),
  );
  await Promise.race([
    fake.waitForReady(),
    exited.then((code) => {
      throw new Error(`bot exited (${code}) before identifying:\n${output}`);
    }),
  ]);
  return { child, exited, output: () => output };
}
