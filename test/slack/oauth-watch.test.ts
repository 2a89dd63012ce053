/**
 * Watching in OAuth mode (installs to many workspaces), end to end: two workspaces and an Enterprise
 * Grid organisation installed through the install and redirect pages, watched channels in each,
 * messages as signed Events API callbacks, the real detection service, the fake Slack checking every
 * Web API call's token. The app's own client has no token in this mode, so every background call
 * (users.info, usergroups.users.list, chat.getPermalink, chat.postMessage, conversations.history)
 * must carry the installation's bot token, and each workspace's its own.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChatStore } from '../../adapters/chat/store/index.ts';
import { openWatchStore } from '../../adapters/chat/store/index.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import { InstallationCipher } from '../../adapters/slack/installation-store.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import { signSlackRequest, type RecordedCall } from '../../demo/slack/fake-slack.ts';
import { buttonPayload, interactionBody, postToApp, SIGNING_SECRET, slashCommandBody, startHarness, type Harness } from './harness.ts';
import { AI_TEXTS, ENGINE_MIN_MESSAGES } from './watch-texts.ts';
import { WAIT_MS } from '../helpers/load.ts';

const CLIENT_ID = '3333333333.4444444444';
const CLIENT_SECRET = 'fake-client-secret-watch';
const APP_ID = 'A0WATCHAPP';

let h: Harness;
let restarted: RunningSlackApp | undefined;
/** Messages the fake Slack keeps for conversations.history / replies (by ts). */
const kept = new Map<string, Record<string, unknown>>();

let lastMicros = 0;
function nextTs(): string {
  lastMicros = Math.max(lastMicros + 1, Date.now() * 1000);
  return `${Math.floor(lastMicros / 1_000_000)}.${String(lastMicros % 1_000_000).padStart(6, '0')}`;
}

interface Place {
  teamId: string;
  enterpriseId?: string;
  org?: boolean;
}
const ONE: Place = { teamId: 'T0ONE' };
const TWO: Place = { teamId: 'T0TWO' };
const GRID: Place = { teamId: 'T0INGRID', enterpriseId: 'E0GRID', org: true };

function base(eventsUrl = h.eventsUrl): string {
  return eventsUrl.replace(/\/slack\/events$/, '');
}

async function install(code: string): Promise<number> {
  const page = await fetch(`${base()}/slack/install`);
  const html = await page.text();
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  const href = /href="([^"]*oauth\/v2\/authorize[^"]*)"/.exec(html)?.[1]?.replaceAll('&amp;', '&');
  const state = href ? new URL(href).searchParams.get('state') : null;
  if (!cookie || !state) throw new Error('the install page carried no state');
  const done = await fetch(`${base()}/slack/oauth_redirect?code=${code}&state=${encodeURIComponent(state)}`, { headers: { cookie } });
  await done.text();
  return done.status;
}

/** A `message` event of a channel, as the Events API delivers it to the installation serving `place`. */
async function postMessage(place: Place, channel: string, user: string, text: string, eventsUrl = h.eventsUrl): Promise<void> {
  const ts = nextTs();
  const event = { type: 'message', channel, user, text, ts, event_ts: ts, channel_type: 'channel', team: place.teamId };
  kept.set(ts, event);
  const body = JSON.stringify({
    token: 'verification-token-unused',
    team_id: place.teamId,
    enterprise_id: place.enterpriseId,
    api_app_id: APP_ID,
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(8).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: place.enterpriseId ?? null,
        team_id: place.org ? null : place.teamId,
        user_id: 'U0BOT',
        is_bot: true,
        is_enterprise_install: place.org === true,
      },
    ],
  });
  const res = await fetch(eventsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
    body,
  });
  await res.text();
  expect(res.status).toBe(200);
}

async function settings(place: Place, text: string, user = 'U0ADMIN'): Promise<string> {
  const over: Record<string, string> = { team_id: place.teamId, command: '/detect-settings', user_id: user };
  if (place.enterpriseId) Object.assign(over, { enterprise_id: place.enterpriseId, is_enterprise_install: String(place.org === true) });
  const { body, responseUrl } = slashCommandBody(h, text, over);
  expect((await postToApp(h, body)).status).toBe(200);
  const id = responseUrl.split('/').at(-1);
  return String((await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id)).args.text);
}

const tokenOf = (id: string): string => {
  const tokens = h.slack.tokensOf(id);
  expect(tokens).toHaveLength(1);
  return tokens[0]!;
};
const isCard = (c: RecordedCall): boolean =>
  c.method === 'chat.postMessage' && Array.isArray(c.args.blocks) && JSON.stringify(c.args.blocks).includes('watch_review');
/** Web API calls (not response_url posts, not the OAuth exchange) that carried no working token. */
const tokenless = (): RecordedCall[] =>
  h.slack.calls.filter((c) => c.method !== 'response_url' && c.method !== 'oauth.v2.access' && !h.slack.isTokenValid(c.token));

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  h = await startHarness({
    env: {
      SLACK_BOT_TOKEN: '',
      SLACK_CLIENT_ID: CLIENT_ID,
      SLACK_CLIENT_SECRET: CLIENT_SECRET,
      SLACK_STATE_SECRET: 'state-secret-for-watch-tests',
      SLACK_INSTALLATION_KEY: 'watch-installation-key-0123456789abcdef-0123',
      // Installations, settings and watch records in SQLite under the harness's own DATA_DIR.
      REDIS_URL: '',
      SLACK_AUDIT_CHANNEL: '',
    },
    slack: {
      users: { U0AUTHOR: 'Ada Lovelace', U0AUTHOR2: 'Bo', U0MOD: 'Grace', U0ADMIN: 'Admin', U0REGULAR: 'Reg', U0OTHER: 'Other' },
      admins: ['U0ADMIN'],
      usergroups: { S0MODS: ['U0MOD'], S0REGULARS: ['U0REGULAR'] },
      scopes: [...DEFAULT_SCOPES],
      methods: {
        'conversations.info': (args) => ({
          ok: true,
          channel: { id: args.channel, name: 'general', is_channel: true, is_private: false, is_member: true },
        }),
        'conversations.history': (args) => ({
          ok: true,
          messages: kept.has(String(args.latest)) ? [kept.get(String(args.latest))] : [],
          has_more: false,
        }),
      },
      oauth: {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        appId: APP_ID,
        codes: {
          'code-ONE': { teamId: 'T0ONE', teamName: 'One', userId: 'U0ADMIN' },
          'code-TWO': { teamId: 'T0TWO', teamName: 'Two', userId: 'U0ADMIN' },
          'code-GRID': { enterpriseId: 'E0GRID', enterpriseName: 'Grid', userId: 'U0ADMIN' },
        },
      },
    },
    watch: (backend) => ({ detector: watchDetectorFor(backend), idlePollMs: 50, configTtlMs: 0 }),
  });
  for (const code of ['code-ONE', 'code-TWO', 'code-GRID']) expect(await install(code)).toBe(200);
});

afterAll(async () => {
  await restarted?.stop();
  await h?.close();
});

describe('watching with installs to many workspaces', () => {
  it('scores, leaves out admins and exempt groups, and posts each workspace’s card with its own token', async () => {
    expect(await settings(ONE, 'audit <#C0AUDITONE|mods>')).toContain('<#C0AUDITONE>');
    expect(await settings(ONE, 'watch <#C0GENERAL|general>')).toContain('Watching <#C0GENERAL>');
    expect(await settings(ONE, 'cards <#C0GENERAL|general> on')).toContain('Review cards are on');
    expect(await settings(TWO, 'audit <#C0AUDITTWO|mods>')).toContain('<#C0AUDITTWO>');
    expect(await settings(TWO, 'watch <#C0TWOGEN|general>')).toContain('Watching <#C0TWOGEN>');
    expect(await settings(TWO, 'exempt <!subteam^S0REGULARS|@regulars>')).toContain('are not scored');
    expect(await settings(TWO, 'cards <#C0TWOGEN|general> on')).toContain('Review cards are on');

    const texts = AI_TEXTS.slice(0, ENGINE_MIN_MESSAGES);
    // The admin (one), and a member of an exempt group (two): never scored.
    for (const text of texts) await postMessage(ONE, 'C0GENERAL', 'U0ADMIN', text);
    for (const text of texts) await postMessage(TWO, 'C0TWOGEN', 'U0REGULAR', text);
    // One member in each workspace, posting enough for a verdict.
    for (const text of texts) await postMessage(ONE, 'C0GENERAL', 'U0AUTHOR', text);
    for (const text of texts) await postMessage(TWO, 'C0TWOGEN', 'U0AUTHOR2', text);

    const cardOne = await h.slack.waitFor((c) => isCard(c) && c.args.channel === 'C0AUDITONE', WAIT_MS);
    const cardTwo = await h.slack.waitFor((c) => isCard(c) && c.args.channel === 'C0AUDITTWO', WAIT_MS);
    expect(cardOne.token).toBe(tokenOf('T0ONE'));
    expect(cardTwo.token).toBe(tokenOf('T0TWO'));
    expect(JSON.stringify(cardOne.args.blocks)).toContain('(U0AUTHOR)');
    expect(JSON.stringify(cardTwo.args.blocks)).toContain('(U0AUTHOR2)');
    // The permalinks on each card were asked for with the card's workspace token.
    const permalinks = h.slack.callsOf('chat.getPermalink');
    expect(permalinks.filter((c) => c.args.channel === 'C0GENERAL').map((c) => c.token)).not.toContain(tokenOf('T0TWO'));
    expect(new Set(permalinks.filter((c) => c.args.channel === 'C0GENERAL').map((c) => c.token))).toEqual(new Set([tokenOf('T0ONE')]));
    expect(JSON.stringify(cardOne.args.blocks)).toContain('https://test.slack.com/archives/C0GENERAL/p');
    // Admins and exempt groups were asked about with the right workspace's token.
    expect(h.slack.callsOf('users.info').some((c) => c.args.user === 'U0ADMIN' && c.token === tokenOf('T0ONE'))).toBe(true);
    expect(h.slack.callsOf('usergroups.users.list').some((c) => c.args.usergroup === 'S0REGULARS' && c.token === tokenOf('T0TWO'))).toBe(
      true,
    );

    // Only the members' messages were scored; the admin can read the report.
    const reportOne = await settings(ONE, 'report');
    expect(reportOne).not.toContain('Only workspace admins');
    expect(reportOne).toContain(`Last 7 days: ${ENGINE_MIN_MESSAGES} messages scored`);
    expect(await settings(TWO, 'report')).toContain(`Last 7 days: ${ENGINE_MIN_MESSAGES} messages scored`);
    expect(tokenless()).toEqual([]);
  });

  it('a card’s buttons: a member of the checkers group answers it, another member is refused', async () => {
    expect(await settings(ONE, 'checkers <!subteam^S0MODS|@mods>')).toContain('S0MODS');
    const card = h.slack.calls.find((c) => isCard(c) && c.args.channel === 'C0AUDITONE')!;
    const blocks = card.args.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
    const dismiss = blocks.find((b) => b.type === 'actions')!.elements!.find((e) => e.action_id === 'watch_review:dismissed')!;
    const press = async (user: string) => {
      const { payload, responseUrl } = buttonPayload(h, { action_id: dismiss.action_id, value: dismiss.value }, { channel: 'C0AUDITONE' });
      payload.user = { id: user, username: user, name: user, team_id: 'T0ONE' };
      payload.team = { id: 'T0ONE', domain: 'one' };
      payload.container = { type: 'message', message_ts: '1700000000.000200', channel_id: 'C0AUDITONE', is_ephemeral: false };
      payload.message = { type: 'message', ts: '1700000000.000200', text: card.args.text, blocks: card.args.blocks };
      expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
      const id = responseUrl.split('/').at(-1);
      return (await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id)).args;
    };
    expect(String((await press('U0OTHER')).text)).toContain('Only workspace admins and members of <!subteam^S0MODS>');
    const answered = await press('U0MOD');
    expect(answered.replace_original).toBe(true);
    expect(JSON.stringify(answered.blocks)).toContain('Dismissed* by Grace (U0MOD)');
    expect(tokenless()).toEqual([]);
  });

  it('after a restart, a waiting message of an organisation’s workspace is read again with the organisation’s token', async () => {
    // A request from the workspace links it to its organisation's installation (oauth.ts).
    expect(await settings(GRID, 'watch <#C0GRID|grid>')).toContain('Watching <#C0GRID>');
    await h.app.stop();
    // A message that waited across the restart: the new process knows the workspace only from the store.
    const ts = nextTs();
    kept.set(ts, { type: 'message', channel: 'C0GRID', user: 'U0AUTHOR', text: AI_TEXTS[0], ts, team: 'T0INGRID' });
    const store = openWatchStore({ dataDir: h.config.dataDir });
    await store.enqueue({
      scope: 'slack:T0INGRID',
      channelId: 'C0GRID',
      messageId: ts,
      authorId: 'U0AUTHOR',
      postedAt: Date.now(),
      enqueuedAt: Date.now(),
    });
    await store.close();
    const reads = h.slack.callsOf('conversations.history').length;
    restarted = await startSlackApp(h.config, {
      detector: h.backend.detector,
      logger: pino({ level: 'silent' }),
      watch: { detector: watchDetectorFor(h.backend), idlePollMs: 50, configTtlMs: 0 },
    });
    const read = await h.slack.waitFor((c) => c.method === 'conversations.history' && c.args.latest === ts, WAIT_MS);
    expect(h.slack.callsOf('conversations.history').length).toBeGreaterThan(reads);
    expect(read.token).toBe(tokenOf('E0GRID'));
    await waitUntil(
      async () => {
        const s = openWatchStore({ dataDir: h.config.dataDir });
        try {
          return await s.isScored('slack:T0INGRID', 'C0GRID', ts, Date.now());
        } finally {
          await s.close();
        }
      },
      15_000,
      'the waiting message scored',
    );
    expect(tokenless()).toEqual([]);
  });

  it('a SLACK_INSTALLATION_KEY that does not open the stored installations stops the start with a sentence naming it', async () => {
    const wrongKey = { ...h.config, oauth: { ...h.config.oauth!, installationKey: 'a-different-installation-key-0123456789abcdef' } };
    await expect(startSlackApp(wrongKey, { detector: h.backend.detector, logger: pino({ level: 'silent' }) })).rejects.toThrow(
      /^SLACK_INSTALLATION_KEY does not decrypt the stored Slack installations \(none of the latest 3 opens with it\)/,
    );
  });

  it('a stored installation the key does not open: logged at start, and a request from its workspace names the key in the log', async () => {
    const stores = openChatStore({ dataDir: h.config.dataDir });
    await stores.ready();
    await stores.durable.saveInstallation({
      key: 'slack:T0OTHERKEY',
      enterpriseId: undefined,
      teamId: 'T0OTHERKEY',
      isEnterpriseInstall: false,
      data: new InstallationCipher('an-older-installation-key-0123456789abcdef').seal(
        JSON.stringify({ team: { id: 'T0OTHERKEY' }, bot: { token: 'xoxb-unused', userId: 'U0BOT' } }),
      ),
      tokenExpiresAt: undefined,
    });
    await stores.close();
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = await startSlackApp(h.config, { detector: h.backend.detector, logger: pino({ level: 'info' }, sink) });
    try {
      expect(lines.find((l) => String(l.msg).startsWith('some stored Slack installations cannot be decrypted'))).toMatchObject({
        level: 50,
        unreadable: 1,
      });
      const { body } = slashCommandBody(h, 'help', { team_id: 'T0OTHERKEY', command: '/detect-settings' });
      expect((await postToApp({ eventsUrl: app.eventsUrl! }, body)).status).toBe(200);
      await waitUntil(() => lines.some((l) => typeof l.reason === 'string'), 5_000, 'the error line');
      expect(String(lines.find((l) => typeof l.reason === 'string')!.reason)).toContain(
        'cannot be decrypted with SLACK_INSTALLATION_KEY (was the key changed?)',
      );
      expect(JSON.stringify(lines)).not.toContain('xoxb-unused');
    } finally {
      await app.stop();
    }
  });
});
