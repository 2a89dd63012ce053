/**
 * Installs to many workspaces with Bolt's OAuth support, against the fake Slack's `oauth.v2.access`
 * and `auth.test`: three installations (two workspaces and one Enterprise Grid organisation), the
 * install and redirect pages, token rotation with two concurrent requests that both find an expired
 * token, and uninstalls (`app_uninstalled`, `tokens_revoked`) that delete everything kept about the
 * workspace (watch records included). Installations and watch records in a real PostgreSQL (a
 * throw-away database), short-lived state and the watch queue in Redis.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChatStore, openWatchStore, type SplitChatStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { InstallationCipher } from '../../adapters/slack/installation-store.ts';
import { NOT_INSTALLED_REPLY } from '../../adapters/slack/oauth.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { signSlackRequest, type RecordedCall } from '../../demo/slack/fake-slack.ts';
import { LONG_TEXT, postToApp, SIGNING_SECRET, slashCommandBody, startHarness, type Harness } from './harness.ts';

const CLIENT_ID = '1111111111.2222222222';
const CLIENT_SECRET = 'fake-client-secret';
const INSTALLATION_KEY = 'test-installation-key-0123456789abcdef-0123456789';
const APP_ID = 'A0FAKEAPP';

let h: Harness;
let db: TestDatabase;
let stores: SplitChatStore;
/** The app's watch store, as the app opens it from DATABASE_URL and REDIS_URL. */
let watchStore: WatchStore;
const logLines: Record<string, unknown>[] = [];

function base(): string {
  return h.eventsUrl.replace(/\/slack\/events$/, '');
}
function responseFor(url: string) {
  const id = url.split('/').pop();
  return (c: RecordedCall) => c.method === 'response_url' && c.responseId === id;
}

/** The browser's side of an install: the install page, Slack's consent (the code), the redirect. */
async function install(code: string): Promise<{ status: number; html: string }> {
  const page = await fetch(`${base()}/slack/install`);
  const html = await page.text();
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  const href = /href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)?.[1]?.replaceAll('&amp;', '&');
  const state = href ? new URL(href).searchParams.get('state') : null;
  if (!cookie || !state) throw new Error('the install page carried no state');
  const done = await fetch(`${base()}/slack/oauth_redirect?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`, {
    headers: { cookie },
  });
  return { status: done.status, html: await done.text() };
}

/** An Events API request as Slack sends it: signed JSON, with the installation it is for. */
async function sendEvent(event: Record<string, unknown>, auth: { teamId?: string; enterpriseId?: string; org?: boolean }): Promise<number> {
  const body = JSON.stringify({
    token: 'verification-token-unused',
    team_id: auth.teamId ?? auth.enterpriseId,
    enterprise_id: auth.enterpriseId,
    api_app_id: APP_ID,
    event: { event_ts: `${Date.now() / 1000}`, ...event },
    type: 'event_callback',
    event_id: `Ev${Date.now()}${Math.floor(Math.random() * 1e6)}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: auth.enterpriseId ?? null,
        team_id: auth.org ? null : (auth.teamId ?? null),
        user_id: 'U0BOT',
        is_bot: true,
        is_enterprise_install: auth.org === true,
      },
    ],
  });
  const res = await fetch(h.eventsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
    body,
  });
  await res.text();
  return res.status;
}

/** A /detect (or other command) typed in `teamId`, within organisation `enterpriseId` when given. */
function command(teamId: string, text: string, over: Record<string, string> = {}) {
  return slashCommandBody(h, text, { team_id: teamId, ...over });
}
function orgCommand(teamId: string, enterpriseId: string, text: string, over: Record<string, string> = {}) {
  return command(teamId, text, { enterprise_id: enterpriseId, is_enterprise_install: 'true', ...over });
}

async function storedInstallation(key: string): Promise<{ bot?: { token: string; refreshToken?: string } } | undefined> {
  const row = await stores.durable.findInstallation(key);
  return row ? JSON.parse(new InstallationCipher(INSTALLATION_KEY).open(row.data)) : undefined;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  h = await startHarness({
    appLogger: pino({ level: 'info' }, sink),
    env: {
      SLACK_BOT_TOKEN: '',
      SLACK_CLIENT_ID: CLIENT_ID,
      SLACK_CLIENT_SECRET: CLIENT_SECRET,
      SLACK_STATE_SECRET: 'state-secret-for-tests',
      SLACK_INSTALLATION_KEY: INSTALLATION_KEY,
      DATABASE_URL: db.url,
      REDIS_URL: process.env.REDIS_URL!,
    },
    slack: {
      users: { U0AUTHOR: 'Ada Lovelace', U0MOD: 'Grace', U0ADMIN: 'Admin' },
      admins: ['U0ADMIN'],
      oauth: {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        appId: APP_ID,
        codes: {
          'code-T1': { teamId: 'T0ONE', teamName: 'One', userId: 'U0ADMIN' },
          'code-T2': { teamId: 'T0TWO', teamName: 'Two', userId: 'U0ADMIN' },
          'code-ORG': { enterpriseId: 'E0GRID', enterpriseName: 'Grid Org', userId: 'U0ADMIN' },
          'code-SHORT': { teamId: 'T0SHORT', teamName: 'Short-lived tokens', userId: 'U0ADMIN', expiresInSec: 1 },
          'code-REUSE-1': { teamId: 'T0REUSE1', teamName: 'First', userId: 'U0ADMIN' },
          'code-REUSE-2': { teamId: 'T0REUSE2', teamName: 'Second', userId: 'U0ADMIN' },
        },
      },
    },
    watch: (backend) => ({ detector: watchDetectorFor(backend), idlePollMs: 50, configTtlMs: 0 }),
  });
  stores = openChatStore({ databaseUrl: db.url, redisUrl: process.env.REDIS_URL! });
  await stores.ready();
  watchStore = openWatchStore({ databaseUrl: db.url, redisUrl: process.env.REDIS_URL! });
  await watchStore.ready?.();
});

afterAll(async () => {
  await watchStore?.close();
  await stores?.close();
  await h?.close();
  await db?.drop();
});

describe('install', () => {
  it('serves an "Add to Slack" page whose link carries the client id, the scopes and a signed state', async () => {
    const res = await fetch(`${base()}/slack/install`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain('Add to Slack');
    const href = /href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)![1]!.replaceAll('&amp;', '&');
    const url = new URL(href);
    expect(url.origin + url.pathname).toBe('https://slack.com/oauth/v2/authorize');
    expect(url.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(url.searchParams.get('scope')).toBe(
      'commands,chat:write,users:read,channels:read,groups:read,usergroups:read,channels:history,groups:history,files:read',
    );
    expect(res.headers.get('set-cookie')).toContain(`slack-app-oauth-state=${url.searchParams.get('state')}`);
  });

  it('installs two workspaces and one organisation, and says what to do next', async () => {
    const one = await install('code-T1');
    expect(one.status).toBe(200);
    expect(one.html).toContain('textdetect is installed in One');
    expect(one.html).toContain('/detect help');
    expect(one.html).toContain(`slack://app?team=T0ONE&amp;id=${APP_ID}`);
    expect((await install('code-T2')).html).toContain('textdetect is installed in Two');
    const org = await install('code-ORG');
    expect(org.status).toBe(200);
    expect(org.html).toContain('textdetect is installed for Grid Org');
    expect(org.html).toContain(`https://e0grid.enterprise.slack.com/manage/organization/apps/profile/${APP_ID}/workspaces/add`);

    expect(await stores.durable.countInstallations()).toBe(3);
    expect(await stores.durable.findInstallation('slack:E0GRID')).toMatchObject({ isEnterpriseInstall: true, enterpriseId: 'E0GRID' });
    // Tokens are encrypted at rest: the database holds no token in clear.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ data: string }>('SELECT data FROM bot_installations');
    await client.end();
    expect(rows).toHaveLength(3);
    // Checked against the tokens themselves: a pattern like /xox/ would also match the ciphertext's
    // random base64 by chance (about 1 run in 100).
    const secrets = h.slack.issuedSecrets();
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const row of rows) for (const secret of secrets) expect(row.data).not.toContain(secret);
    for (const row of rows) expect(row.data).not.toMatch(/xox[bpe]-1-/);
    expect((await storedInstallation('slack:T0ONE'))?.bot?.token).toBe(h.slack.tokensOf('T0ONE')[0]);
    // The fake grants fewer scopes than the app asks for (an admin who removed some): each
    // installation's missing ones are logged when it is stored (issue 32, item 5).
    const missing = logLines.find((l) => l.installation === 'slack:T0ONE' && Array.isArray(l.missing_scopes));
    expect(missing?.missing_scopes).toEqual(['channels:history', 'groups:history', 'files:read']);
  });

  it('a state and its cookie finish one install: used again, even within its 10 minutes, they install nothing', async () => {
    const page = await fetch(`${base()}/slack/install`);
    const html = await page.text();
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
    const state = new URL(/href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)![1]!.replaceAll('&amp;', '&')).searchParams.get('state')!;
    const redirect = (code: string) =>
      fetch(`${base()}/slack/oauth_redirect?code=${code}&state=${encodeURIComponent(state)}`, { headers: { cookie } });
    const first = await redirect('code-REUSE-1');
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('textdetect is installed in First');
    const again = await redirect('code-REUSE-2');
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('This install link was already used');
    expect(await stores.durable.findInstallation('slack:T0REUSE2')).toBeUndefined();
    expect(await stores.durable.findInstallation('slack:T0REUSE1')).toBeDefined();
  });

  it('answers a cancelled install or a stale link with a page that says so', async () => {
    const cancelled = await fetch(`${base()}/slack/oauth_redirect?error=access_denied&state=x`);
    expect(cancelled.status).toBe(400);
    expect(await cancelled.text()).toContain('The install was cancelled');
    const stale = await fetch(`${base()}/slack/oauth_redirect?code=code-T1&state=forged`, {
      headers: { cookie: 'slack-app-oauth-state=forged' },
    });
    expect(stale.status).toBe(400);
    expect(await stale.text()).toContain('This install link has expired or was opened in another browser');
  });

  it('serves each workspace with its own token, an organisation’s workspaces with the organisation’s', async () => {
    const cases = [
      { cmd: command('T0ONE', LONG_TEXT), token: h.slack.tokensOf('T0ONE')[0] },
      { cmd: command('T0TWO', LONG_TEXT), token: h.slack.tokensOf('T0TWO')[0] },
      { cmd: orgCommand('T0INGRID', 'E0GRID', LONG_TEXT), token: h.slack.tokensOf('E0GRID')[0] },
    ];
    for (const { cmd } of cases) expect((await postToApp(h, cmd.body)).status).toBe(200);
    for (const { cmd, token } of cases) {
      const reply = await h.slack.waitFor(responseFor(cmd.responseUrl));
      expect(JSON.stringify(reply.args.blocks)).toContain('Mode: *general*');
      // The audit line goes out with the installation's own bot token.
      const audit = await h.slack.waitFor(
        (c) => c.method === 'chat.postMessage' && c.args.channel === 'C0AUDIT' && c.token === token && c.at >= reply.at - 5_000,
      );
      expect(audit.token).toBe(token);
    }
  });
});

describe('token rotation', () => {
  it('two concurrent requests that both find an expired token refresh it once and store the working pair', async () => {
    expect((await install('code-SHORT')).status).toBe(200);
    const before = await storedInstallation('slack:T0SHORT');
    expect(before?.bot?.refreshToken).toMatch(/^xoxe-1-/);
    await new Promise((r) => setTimeout(r, 1_300)); // the 1-second token has expired
    expect(h.slack.isTokenValid(before?.bot?.token)).toBe(false);
    const refreshesBefore = h.slack.refreshes;

    const a = command('T0SHORT', LONG_TEXT);
    const b = command('T0SHORT', LONG_TEXT);
    const [ra, rb] = await Promise.all([postToApp(h, a.body), postToApp(h, b.body)]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(Math.max(ra.elapsedMs, rb.elapsedMs)).toBeLessThan(3_000);
    await h.slack.waitFor(responseFor(a.responseUrl));
    await h.slack.waitFor(responseFor(b.responseUrl));

    expect(h.slack.refreshes - refreshesBefore).toBe(1);
    const after = await storedInstallation('slack:T0SHORT');
    expect(after?.bot?.token).not.toBe(before?.bot?.token);
    expect(h.slack.isTokenValid(after?.bot?.token)).toBe(true);
    // Both requests' Web API calls used the fresh token; none met an expired or revoked one.
    const audits = h.slack.calls.filter(
      (c) => c.method === 'chat.postMessage' && c.args.channel === 'C0AUDIT' && c.token?.includes('-T0SHORT-'),
    );
    expect(audits.length).toBeGreaterThanOrEqual(2);
    expect(new Set(audits.map((c) => c.token))).toEqual(new Set([after?.bot?.token]));
  });
});

describe('uninstall', () => {
  const settingsOf = async (teamId: string, over: Record<string, string> = {}): Promise<string> => {
    const cmd = command(teamId, '', { command: '/detect-settings', user_id: 'U0ADMIN', ...over });
    expect((await postToApp(h, cmd.body)).status).toBe(200);
    return String((await h.slack.waitFor(responseFor(cmd.responseUrl))).args.text);
  };
  const checksOf = async (teamId: string): Promise<number> => {
    // Counting through the store's own prefix deletion would delete them: count the Redis keys instead.
    const { Redis } = await import('ioredis');
    const redis = new Redis(process.env.REDIS_URL!);
    const keys = await redis.keys(`textdetect:chat:check:slack:check:${teamId}:*`);
    redis.disconnect();
    return keys.length;
  };

  it('app_uninstalled deletes the installation, settings and stored results; later events are answered without error; a reinstall starts clean', async () => {
    expect(await settingsOf('T0ONE', { text: 'mode legal' })).toContain('*legal*');
    const cmd = command('T0ONE', LONG_TEXT);
    await postToApp(h, cmd.body);
    expect(JSON.stringify((await h.slack.waitFor(responseFor(cmd.responseUrl))).args.blocks)).toContain('Mode: *legal*');
    expect(await checksOf('T0ONE')).toBeGreaterThan(0);

    h.slack.revokeAll('T0ONE');
    expect(await sendEvent({ type: 'app_uninstalled' }, { teamId: 'T0ONE' })).toBe(200);
    await expect.poll(() => stores.durable.findInstallation('slack:T0ONE'), { timeout: 5_000 }).toBeUndefined();
    expect(await stores.getSettings('slack:T0ONE')).toEqual({});
    // The installation row goes first, then the check records of every scope it covered.
    await expect.poll(() => checksOf('T0ONE'), { timeout: 5_000 }).toBe(0);
    // The other installations are untouched.
    expect(await stores.durable.findInstallation('slack:T0TWO')).toBeDefined();

    const errorsBefore = logLines.filter((l) => Number(l.level) >= 50).length;
    expect(await sendEvent({ type: 'tokens_revoked', tokens: { oauth: [], bot: ['U0BOTT0ONE'] } }, { teamId: 'T0ONE' })).toBe(200);
    expect(await sendEvent({ type: 'app_home_opened', user: 'U0MOD', channel: 'D0DM', tab: 'home' }, { teamId: 'T0ONE' })).toBe(200);
    const late = command('T0ONE', LONG_TEXT);
    const lateRes = await postToApp(h, late.body);
    expect(lateRes.status).toBe(200);
    expect((await h.slack.waitFor(responseFor(late.responseUrl))).args.text).toBe(NOT_INSTALLED_REPLY);
    expect(logLines.filter((l) => Number(l.level) >= 50).length).toBe(errorsBefore);
    expect(logLines.some((l) => String(l.msg).includes('without an installation'))).toBe(true);

    expect((await install('code-T1')).status).toBe(200);
    expect(await settingsOf('T0ONE')).toMatch(/Mode of checks that name none: \*general\* \(bot default\)/);
  });

  it('tokens_revoked for the bot token deletes like an uninstall', async () => {
    await settingsOf('T0TWO', { text: 'mode academic' });
    expect(await sendEvent({ type: 'tokens_revoked', tokens: { oauth: ['U0ADMIN'], bot: ['U0BOTT0TWO'] } }, { teamId: 'T0TWO' })).toBe(200);
    await expect.poll(() => stores.durable.findInstallation('slack:T0TWO'), { timeout: 5_000 }).toBeUndefined();
    expect(await stores.getSettings('slack:T0TWO')).toEqual({});
  });

  it('uninstalling an organisation-wide installation deletes the data of each of its workspaces', async () => {
    expect(await settingsOf('T0INGRID', { text: 'mode financial', enterprise_id: 'E0GRID', is_enterprise_install: 'true' })).toContain(
      '*financial*',
    );
    expect(await stores.getSettings('slack:T0INGRID')).toEqual({ defaultMode: 'financial' });
    expect(await checksOf('T0INGRID')).toBeGreaterThan(0); // from the earlier test
    // Watch records of the organisation's workspace (PostgreSQL, the queue in Redis) and of a workspace outside it.
    const now = Date.now();
    for (const scope of ['slack:T0INGRID', 'slack:T0OUTSIDE']) {
      await watchStore.watchChannel(scope, 'C0GENERAL', now - 60_000);
      await watchStore.enqueue({
        scope,
        channelId: 'C0GENERAL',
        messageId: '1.000100',
        authorId: 'U0AUTHOR',
        postedAt: now,
        enqueuedAt: now + 3_600_000,
      });
      await watchStore.recordScore(
        {
          scope,
          channelId: 'C0GENERAL',
          messageId: '1.000200',
          authorId: 'U0AUTHOR',
          postedAt: now,
          probability: 0.99,
          verdict: 'likely_ai',
          confidence: 'high',
          presets: 7,
          requestId: 'req_1',
          flagId: `flag-${scope}`,
          card: 'shadow',
        },
        now + 86_400_000,
      );
    }
    expect(await sendEvent({ type: 'app_uninstalled' }, { enterpriseId: 'E0GRID', org: true })).toBe(200);
    await expect.poll(() => stores.durable.findInstallation('slack:E0GRID'), { timeout: 5_000 }).toBeUndefined();
    expect(await stores.getSettings('slack:T0INGRID')).toEqual({});
    // The installation row goes first, then the check records of every scope it covered.
    await expect.poll(() => checksOf('T0INGRID'), { timeout: 5_000 }).toBe(0);
    await expect.poll(async () => (await watchStore.getConfig('slack:T0INGRID')).channels, { timeout: 5_000 }).toEqual([]);
    expect(await watchStore.isPending('slack:T0INGRID', 'C0GENERAL', '1.000100')).toBe(false);
    expect(await watchStore.getFlag('slack:T0INGRID', 'flag-slack:T0INGRID')).toBeUndefined();
    expect(await watchStore.scopes()).not.toContain('slack:T0INGRID');
    // The uninstall went through one listener: one deletion logged, naming the organisation.
    expect(
      logLines.filter((l) => l.msg === 'deleted everything kept about the installation' && l.installation === 'slack:E0GRID'),
    ).toHaveLength(1);
    // Another workspace keeps its records.
    expect((await watchStore.getConfig('slack:T0OUTSIDE')).channels).toHaveLength(1);
    expect(await watchStore.isPending('slack:T0OUTSIDE', 'C0GENERAL', '1.000100')).toBe(true);
    expect(await watchStore.getFlag('slack:T0OUTSIDE', 'flag-slack:T0OUTSIDE')).toBeDefined();
    await watchStore.deleteScope('slack:T0OUTSIDE');
  });
});
