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
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { type Harness, interactionBody, messageShortcutPayload, postToApp, slashCommandBody, startHarness } from './harness.ts';

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

describe('documents with files:read granted (issue 32, item 6)', () => {
  it('a web page or a download sent off Slack is not blamed on files:read; an empty .txt is not "scanned pages"', async () => {
    const page = h.slack.shareFile('page.pdf', Buffer.from('%PDF-1.4'), {
      mimetype: 'application/pdf',
      filetype: 'pdf',
      serveAs: { html: true },
    });
    const moved = h.slack.shareFile('moved.pdf', Buffer.from('%PDF-1.4'), {
      mimetype: 'application/pdf',
      filetype: 'pdf',
      serveAs: { redirectTo: 'https://login.example.com/start' },
    });
    const empty = h.slack.shareFile('empty.txt', Buffer.from('  \n '), { mimetype: 'text/plain', filetype: 'text' });
    const { payload } = messageShortcutPayload(h, {
      ts: '1700008000.000100',
      text: '',
      files: [page, moved, empty],
      upload: false,
      subtype: 'file_share',
    });
    expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
    const reply = await h.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks ?? []).includes('empty.txt'),
      30_000,
    );
    const shown = JSON.stringify(reply.args.blocks);
    expect(shown).not.toContain('lacks the Slack scope `files:read`');
    expect(shown.split('Slack did not hand over the file: it answered with a web page, or sent the download elsewhere').length - 1).toBe(2);
    expect(shown).toContain('It is empty: there is no text in it, so there is nothing to check.');
    expect(shown).not.toContain('scanned pages');
  }, 60_000);
});
