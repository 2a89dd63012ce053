/**
 * `npm run slack`'s exit codes as docs/slack.md lists them (issue 32, items 11 and 26): each documented
 * code from a real process, with the sentence it prints. Exit 3 (a token Slack refuses) is in main.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../../demo/slack/fake-slack.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let dataDir: string;
let closedPort: number;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'slack-exit-codes-'));
  // A port nothing listens on: bound once to learn a free one, then closed.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function runMain(extra: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dataDir,
    DATA_DIR: dataDir,
    SLACK_SIGNING_SECRET: 'exit-codes-secret',
    SLACK_PORT: '0',
    SLACK_HOST: '127.0.0.1',
    SLACK_API_URL: `http://127.0.0.1:${closedPort}/api/`,
    LOG_LEVEL: 'silent',
    ...extra,
  };
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'adapters/slack/main.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.once('close', (code) => resolve({ code, stderr }));
  });
}

describe('npm run slack: documented exit codes', () => {
  it('exits 2 for a mode that does not exist, naming the variable and the modes', async () => {
    const run = await runMain({ SLACK_BOT_TOKEN: 'xoxb-exit', SLACK_DEFAULT_MODE: 'medical' });
    expect(run.stderr).toContain(
      'textdetect-slack: SLACK_DEFAULT_MODE="medical" is not a mode; use one of: general, academic, financial, legal.',
    );
    expect(run.code).toBe(2);
  }, 60_000);

  it('exits 2 when DETECT_API_URL is set without DETECT_API_KEY', async () => {
    const run = await runMain({ SLACK_BOT_TOKEN: 'xoxb-exit', DETECT_API_URL: 'http://127.0.0.1:9/' });
    expect(run.stderr).toContain('DETECT_API_URL is set but DETECT_API_KEY is not');
    expect(run.code).toBe(2);
  }, 60_000);

  it('exits 2 with "both are set" when SLACK_BOT_TOKEN comes with SLACK_CLIENT_ID and none of its secrets', async () => {
    const run = await runMain({ SLACK_BOT_TOKEN: 'xoxb-exit', SLACK_CLIENT_ID: '123.456' });
    expect(run.stderr).toContain('SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set');
    expect(run.stderr).not.toContain('SLACK_CLIENT_SECRET is not set');
    expect(run.code).toBe(2);
  }, 60_000);

  it('exits 5 with a sentence when Slack’s Web API cannot be reached', async () => {
    const run = await runMain({ SLACK_BOT_TOKEN: 'xoxb-exit' });
    expect(run.stderr).toContain(`Could not reach Slack's Web API at http://127.0.0.1:${closedPort}/api/`);
    expect(run.stderr).toContain('check the network or SLACK_API_URL.');
    expect(run.code).toBe(5);
  }, 60_000);

  it('exits 5 naming SLACK_PORT when its port is taken (issue 40, item 7)', async () => {
    const slack = new FakeSlack({ botToken: 'xoxb-exit' });
    await slack.start();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runMain({ SLACK_BOT_TOKEN: 'xoxb-exit', SLACK_API_URL: slack.apiUrl, SLACK_PORT: String(port) });
      expect(run.stderr).toContain(
        `textdetect-slack: 127.0.0.1:${port} is already in use (another Slack app, or another program, listens there). ` +
          `Stop that one, or start this one on another port with SLACK_PORT, e.g. SLACK_PORT=${port + 1} npm run slack.\n`,
      );
      expect(run.stderr).not.toMatch(/EADDRINUSE|\n\s+at /);
      expect(run.code).toBe(5);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await slack.stop();
    }
  }, 60_000);
});
