/**
 * Missing Slack scopes are named (issue 32, item 5): the granted scopes are read at start (the
 * `x-oauth-scopes` header of `auth.test`, as Slack sends it on every Web API answer) and what is
 * missing is logged; a reply that needs a missing scope names it instead of "only admins may change
 * these settings" or "try again in a minute". Real Bolt app and service, the fake Slack on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import type { RecordedCall } from './fake-slack.ts';
import { type Harness, postToApp, slashCommandBody, startHarness } from './harness.ts';

const logs: Record<string, unknown>[] = [];
const appLogger = pino(
  { level: 'info' },
  {
    write(line: string) {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  },
);
const watchDir = mkdtempSync(join(tmpdir(), 'slack-scopes-'));
let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    appLogger,
    slack: {
      // An app installed before users:read and channels:read were in its manifest.
      scopes: DEFAULT_SCOPES.filter((s) => s !== 'users:read' && s !== 'channels:read'),
      admins: ['U0MOD'],
    },
    watch: (backend) => ({
      detector: watchDetectorFor(backend),
      store: new SqliteStore(join(watchDir, 'watch')),
      settings: DEFAULT_WATCH_SETTINGS,
      idlePollMs: 50,
      configTtlMs: 0,
    }),
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  rmSync(watchDir, { recursive: true, force: true });
});

async function settings(text: string): Promise<string> {
  const cmd = slashCommandBody(h, text, { command: '/detect-settings' });
  expect((await postToApp(h, cmd.body)).status).toBe(200);
  const id = cmd.responseUrl.split('/').pop();
  const reply: RecordedCall = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
  return String(reply.args.text);
}

describe('missing Slack scopes', () => {
  it('are logged at start, from the scopes auth.test reports', () => {
    const line = logs.find((l) => Array.isArray(l.missing_scopes));
    expect(line?.missing_scopes).toEqual(['users:read', 'channels:read']);
  });

  it('an admin changing a setting without users:read is told the scope, not that only admins may', async () => {
    const answer = await settings('mode academic');
    expect(answer).toContain('it lacks the Slack scope `users:read`');
    expect(answer).not.toContain('Only workspace admins');
  });

  it('watching a channel without channels:read names the scope, with no "try again in a minute"', async () => {
    // An admin's check goes first and needs users:read too: with it granted, channels:read is next.
    const withUsers = await startHarness({
      slack: { scopes: DEFAULT_SCOPES.filter((s) => s !== 'channels:read'), admins: ['U0MOD'] },
      watch: (backend) => ({
        detector: watchDetectorFor(backend),
        store: new SqliteStore(join(watchDir, 'watch2')),
        settings: DEFAULT_WATCH_SETTINGS,
        idlePollMs: 50,
        configTtlMs: 0,
      }),
    });
    try {
      const cmd = slashCommandBody(withUsers, 'watch <#C0GENERAL|general>', { command: '/detect-settings' });
      await postToApp(withUsers, cmd.body);
      const id = cmd.responseUrl.split('/').pop();
      const reply = await withUsers.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
      expect(String(reply.args.text)).toContain('it lacks the Slack scope `channels:read`');
      expect(String(reply.args.text)).not.toContain('try again in a minute');
    } finally {
      await withUsers.close();
    }
  }, 60_000);
});
