/**
 * `npm run slack` as a real process with only Slack settings: no DETECT_API_URL, so it starts the
 * detection service in-process with its own sandbox key, and a signed /detect gets a real answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../../demo/slack/fake-slack.ts';
import { LONG_TEXT, postToApp, slashCommandBody } from './harness.ts';
import { WAIT_MS } from '../helpers/load.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = 'xoxb-main-test';
const SECRET = 'main-test-secret';

let slack: FakeSlack;
let child: ChildProcess | undefined;
let output = '';
// The bot's home and state folder: never the user's (issue 25, item 12).
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'slack-main-'));
  slack = new FakeSlack({ botToken: TOKEN });
  await slack.start();
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await slack.stop();
  await rm(home, { recursive: true, force: true });
});

function waitForLog(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no log matching ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = (): void => {
      const m = pattern.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child!.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      check();
    });
    child!.stderr!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    check();
  });
}

describe('npm run slack', () => {
  it('the package script runs the compiled adapters/slack/main.ts', async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', `file://${ROOT}`), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.slack).toBe('node dist/adapters/slack/main.js');
  });

  it('starts with only Slack credentials, serving /detect from an in-process service, and stops on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      DATA_DIR: join(home, 'data'),
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_PORT: '0',
      SLACK_HOST: '127.0.0.1',
      SLACK_API_URL: slack.apiUrl,
      LOG_LEVEL: 'info',
    };
    child = spawn(process.execPath, ['--import', 'tsx', 'adapters/slack/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const ready = await waitForLog(/"detect_api":"in-process","events_url":"(http:\/\/127\.0\.0\.1:\d+\/slack\/events)"/, WAIT_MS);
    const eventsUrl = ready[1]!;

    const { body, responseUrl } = slashCommandBody({ slack }, LONG_TEXT);
    const res = await postToApp({ eventsUrl }, body, { secret: SECRET });
    expect(res.status).toBe(200);
    const id = responseUrl.split('/').pop();
    const reply = await slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
    expect(JSON.stringify(reply.args.blocks)).toMatch(/Request id: `req_/);
    // Logs are structured and never carry the text or the key.
    expect(output).not.toContain('cafeteria');
    expect(output).not.toMatch(/sk_test_[0-9A-Za-z]{32}/);

    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Its state went to DATA_DIR, and nothing else appeared in its home.
    expect(existsSync(join(home, 'data', 'textdetect-bots.sqlite'))).toBe(true);
    expect(existsSync(join(home, '.local'))).toBe(false);
  });
});

describe('npm run slack: start-up failures', () => {
  function runMain(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', 'adapters/slack/main.ts'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      proc.stdout.on('data', (d: Buffer) => (text += d.toString()));
      proc.stderr.on('data', (d: Buffer) => (text += d.toString()));
      proc.once('close', (code) => resolve({ code, output: text }));
    });
  }

  it('a token that is not a bot token stops at once with exit 2; one Slack refuses exits 3, as docs/slack.md says', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'slack-main-fail-'));
    try {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        // Never the user's home: the state goes to a throw-away folder.
        HOME: dataDir,
        DATA_DIR: dataDir,
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_PORT: '0',
        SLACK_HOST: '127.0.0.1',
        SLACK_API_URL: slack.apiUrl,
        LOG_LEVEL: 'warn',
      };
      const authTests = slack.callsOf('auth.test').length;
      const [fake, refused] = await Promise.all([
        runMain({ ...env, SLACK_BOT_TOKEN: 'fake' }),
        runMain({ ...env, SLACK_BOT_TOKEN: 'xoxb-not-the-right-one' }),
      ]);
      expect(fake.code).toBe(2);
      expect(fake.output).toContain('SLACK_BOT_TOKEN is not a Slack bot token: the app needs the bot token, which starts with xoxb-.');
      expect(refused.code).toBe(3);
      expect(refused.output).toContain('Slack refused SLACK_BOT_TOKEN (auth.test answered invalid_auth)');
      expect(refused.output).not.toContain('xoxb-not-the-right-one');
      // Only the refused one reached Slack.
      expect(slack.callsOf('auth.test').length - authTests).toBe(1);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
