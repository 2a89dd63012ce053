/**
 * Watching chosen channels in the Slack app, end to end: the real Bolt app on loopback receiving
 * signed Events API callbacks (`message` events in the shapes of Slack's `message.channels` and
 * `message.groups` docs, `message_changed`, `message_deleted`, `app_uninstalled`, `tokens_revoked`),
 * the fake Slack answering the Web API, the real detection service behind the counting proxy, real
 * SQLite and Redis.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChatStore } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { openWatchStore, PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import { decodeButtonValue } from '../../adapters/slack/blocks.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { startRedisServer } from '../helpers/redis.ts';
import { FakeSlackHistory } from '../../demo/slack/fake-history.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { AI_TEXTS, ENGINE_MIN_MESSAGES, HUMAN_TEXT } from './watch-texts.ts';
import {
  buttonPayload,
  interactionBody,
  LONG_TEXT,
  postToApp,
  SIGNING_SECRET,
  slashCommandBody,
  startHarness,
  type Harness,
} from './harness.ts';
import { signSlackRequest } from '../../demo/slack/fake-slack.ts';
import { firstFlagId } from '../helpers/watch-db.ts';

const ALL_SCOPES: string[] = [...DEFAULT_SCOPES];

let dir: string;
const databases: TestDatabase[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slack-watch-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

let lastMicros = 0;
/** A message `ts` as Slack makes them: the time in seconds with six decimals (microseconds); increasing. */
function nextTs(): string {
  lastMicros = Math.max(lastMicros + 1, Date.now() * 1000);
  return `${Math.floor(lastMicros / 1_000_000)}.${String(lastMicros % 1_000_000).padStart(6, '0')}`;
}

/** Messages the fake Slack keeps for conversations.history / replies (by ts). */
const kept = new Map<string, Record<string, unknown>>();

/** A `message` event as Slack's `message.channels` doc shows it (plus `team` and `client_msg_id`, which current payloads carry). */
function messageEvent(channel: string, user: string, text: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const ts = nextTs();
  const event = {
    type: 'message',
    channel,
    user,
    text,
    ts,
    event_ts: ts,
    channel_type: 'channel',
    team: 'T0TEST',
    client_msg_id: randomBytes(16).toString('hex'),
    ...over,
  };
  kept.set(String(event.ts), event);
  return event;
}

async function postEvent(h: { eventsUrl: string }, event: Record<string, unknown>, teamId = 'T0TEST'): Promise<number> {
  const body = JSON.stringify({
    token: 'verification-token-unused',
    team_id: teamId,
    api_app_id: 'A0TEST',
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(8).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(12).toString('base64url')}`,
  });
  const res = await fetch(h.eventsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
    body,
  });
  await res.text();
  return res.status;
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type Kind = 'sqlite' | 'redis' | 'postgres';

async function openStore(kind: Kind, name: string): Promise<WatchStore> {
  if (kind === 'postgres') {
    const db = await createTestDatabase();
    databases.push(db);
    return new PostgresStore(db.url);
  }
  // Watching's records are in the database whether REDIS_URL is set or not.
  return new SqliteStore(join(dir, name));
}

interface Options {
  kind?: Kind;
  name: string;
  scopes?: string[];
  settings?: Partial<WatchSettings>;
  store?: WatchStore;
  env?: Record<string, string>;
}

/**
 * Once armed, the store loses the next card's record and its message's leaving the queue: the two
 * writes a process killed right after posting the card never made.
 */
const killed: { armed: boolean; flagId?: string | undefined; itemKey?: string | undefined } = { armed: false };

function killable(store: WatchStore): WatchStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'setCard') {
        return async (...args: Parameters<WatchStore['setCard']>): Promise<void> => {
          if (killed.armed && killed.flagId === undefined && args[2] === 'posted') {
            killed.flagId = args[1];
            return;
          }
          return target.setCard(...args);
        };
      }
      if (property === 'complete') {
        return async (key: string): Promise<void> => {
          if (killed.armed && killed.flagId !== undefined && killed.itemKey === undefined) {
            killed.itemKey = key;
            killed.armed = false;
            return;
          }
          return target.complete(key);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function start(options: Options): Promise<{ h: Harness; store: WatchStore }> {
  const store = options.store ?? (await openStore(options.kind ?? 'sqlite', options.name));
  const audit = new FakeSlackHistory({ teamId: 'T0TEST', scopes: options.scopes ?? ALL_SCOPES });
  audit.channel({ id: 'C0AUDIT' });
  const h = await startHarness({
    appLogger: pino({ level: process.env.WATCH_DEBUG ? 'debug' : 'silent' }),
    env: options.env ?? (options.kind === 'redis' ? {} : { REDIS_URL: '' }),
    slack: {
      admins: ['U0ADMIN'],
      users: { U0AUTHOR: 'Ada Lovelace', U0MOD: 'Grace', U0ADMIN: 'Admin', U0OTHER: 'Other Person' },
      scopes: options.scopes ?? ALL_SCOPES,
      usergroups: { S0MODS: ['U0MOD'], S0REGULARS: ['U0REGULAR'] },
      history: audit,
      methods: {
        'conversations.info': (args) => ({
          ok: true,
          channel: { id: args.channel, name: 'general', is_channel: true, is_private: false, is_member: args.channel !== 'C0NOTIN' },
        }),
        // The audit channel holds what the app posted there (its cards); the others, the members' messages.
        'conversations.history': (args) =>
          args.channel === 'C0AUDIT'
            ? audit.methods['conversations.history']!(args)
            : { ok: true, messages: kept.has(String(args.latest)) ? [kept.get(String(args.latest))] : [], has_more: false },
        'conversations.replies': (args) => ({
          ok: true,
          messages: kept.has(String(args.latest)) ? [kept.get(String(args.latest))] : [],
          has_more: false,
        }),
      },
    },
    watch: (backend) => ({
      detector: watchDetectorFor(backend),
      store: killable(store),
      settings: { ...DEFAULT_WATCH_SETTINGS, ...options.settings },
      idlePollMs: 50,
      configTtlMs: 0,
    }),
  });
  return { h, store };
}

async function settings(h: { eventsUrl: string; slack: Harness['slack'] }, text: string, user = 'U0ADMIN'): Promise<string> {
  const { body, responseUrl } = slashCommandBody(h as Harness, text, { command: '/detect-settings', user_id: user });
  const id = responseUrl.split('/').at(-1);
  await postToApp(h, body);
  const call = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
  return String(call.args.text);
}

function cards(h: Harness): RecordedCall[] {
  return h.slack
    .callsOf('chat.postMessage')
    .filter((c) => Array.isArray(c.args.blocks) && JSON.stringify(c.args.blocks).includes('watch_review'));
}

/** Everything the app did in a watched channel: posting, updating, deleting, reacting. */
function publicActions(h: Harness, channel: string): RecordedCall[] {
  return h.slack.calls.filter(
    (c) =>
      ['chat.postMessage', 'chat.update', 'chat.delete', 'chat.postEphemeral', 'reactions.add', 'conversations.kick'].includes(c.method) &&
      c.args.channel === channel,
  );
}

async function scoredCount(store: WatchStore, channel = 'C0GENERAL'): Promise<number> {
  return (await store.report('slack:T0TEST', Date.now())).channels.get(channel)?.week.scored ?? 0;
}

describe('a Redis restart without persistence (the compose default)', () => {
  it('loses no watched channel, flag or outcome: they are in the database, whatever REDIS_URL says', async () => {
    const redis = await startRedisServer();
    const dataDir = join(dir, 'redis-restart');
    // The store the app opens itself from its location (REDIS_URL set, DATABASE_URL not).
    const store = openWatchStore({ redisUrl: redis.url, dataDir });
    const { h } = await start({ name: 'redis-restart', store, env: { REDIS_URL: redis.url, DATA_DIR: dataDir } });
    try {
      await settings(h, 'watch <#C0GENERAL|general>');
      for (const text of AI_TEXTS) expect(await postEvent(h, messageEvent('C0GENERAL', 'U0AUTHOR', text))).toBe(200);
      await waitUntil(async () => (await scoredCount(store)) === AI_TEXTS.length, 15_000, 'the scores');
      const flagId = firstFlagId(dataDir, 'slack:T0TEST');
      expect((await store.review('slack:T0TEST', flagId, 'confirmed', 'U0MOD', Date.now()))?.applied).toBe(true);

      await redis.stop();
      await redis.start(); // empty: no RDB, no AOF
      const report = await settings(h, 'report');
      expect(report).not.toContain('No channel is watched');
      expect(report).toContain('<#C0GENERAL>: shadow mode');
      expect(report).toContain(`Last 7 days: ${AI_TEXTS.length} messages scored`);
      expect(await store.getFlag('slack:T0TEST', flagId)).toMatchObject({ outcome: 'confirmed', reviewerId: 'U0MOD' });
    } finally {
      await h.close();
      await store.close();
      await redis.stop();
    }
  });
});

describe('a Redis outage', () => {
  it('drops no watched message: those posted while Redis is down are all scored once it is back', { timeout: 60_000 }, async () => {
    const redis = await startRedisServer();
    const dataDir = join(dir, 'redis-outage');
    const store = openWatchStore({ redisUrl: redis.url, dataDir });
    const { h } = await start({ name: 'redis-outage', store, env: { REDIS_URL: redis.url, DATA_DIR: dataDir } });
    try {
      await settings(h, 'watch <#C0GENERAL|general>');
      await redis.stop();
      const members = ['U0AUTHOR', 'U0OTHER', 'U0MOD'];
      const posted = 12;
      for (let i = 0; i < posted; i++) {
        const text = `${AI_TEXTS[i % AI_TEXTS.length]} Message ${i} of the outage.`;
        expect(await postEvent(h, messageEvent('C0GENERAL', members[i % members.length]!, text))).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 1_000));
      await redis.start();
      await waitUntil(async () => (await scoredCount(store)) === posted, 30_000, `all ${posted} messages scored`);
      expect(await store.pendingCount()).toBe(0);
    } finally {
      await h.close();
      await store.close();
      await redis.stop();
    }
  });
});

describe.each([
  ['SQLite', 'sqlite'],
  ['SQLite with Redis', 'redis'],
  ['PostgreSQL', 'postgres'],
] as const)('watching a Slack channel (%s)', (name, kind) => {
  let h: Harness;
  let store: WatchStore;
  let restarted: RunningSlackApp | undefined;
  let baseline = 0;
  beforeAll(async () => {
    ({ h, store } = await start({ kind, name: `main-${name}` }));
    // Scopes are per workspace; this run's is fresh.
    await store.deleteScope('slack:T0TEST');
    baseline = 0;
  });
  afterAll(async () => {
    await restarted?.stop();
    await h?.close();
    await store?.close();
  });

  it('watch is for admins; it starts in shadow mode, says what is kept, and records a flag without a card', async () => {
    expect(await settings(h, 'watch <#C0GENERAL|general>', 'U0AUTHOR')).toContain('Only workspace admins and owners');
    const reply = await settings(h, 'watch <#C0GENERAL|general>');
    expect(reply).toContain('Watching <#C0GENERAL> (and its threads) in *shadow mode*');
    expect(reply).toContain('never the text');
    expect(reply).toContain('Kept 30 days');
    expect(reply).toContain('never deletes, hides or replies');

    for (const text of AI_TEXTS) expect(await postEvent(h, messageEvent('C0GENERAL', 'U0AUTHOR', text))).toBe(200);
    await postEvent(h, messageEvent('C0GENERAL', 'U0OTHER', HUMAN_TEXT));
    await waitUntil(async () => (await scoredCount(store)) === baseline + 6, 15_000, 'six scores');
    // Each message is judged with the member's earlier ones: below the engine's least evidence the
    // verdict is held back, so the judgments from that message on flag, under every preset.
    const flags = AI_TEXTS.length - ENGINE_MIN_MESSAGES + 1;
    expect(flags).toBeGreaterThan(1);
    const report = await settings(h, 'report');
    expect(report).toContain('<#C0GENERAL>: shadow mode');
    expect(report).toContain(`Last 7 days: 6 messages scored · would flag: strict ${flags} · *standard ${flags}* · loose ${flags}`);
    expect(report).toContain(`Flags: ${flags}: ${flags} in shadow mode (no card)`);
    expect(cards(h)).toHaveLength(0);
  });

  it('with cards on, posts one card in the audit channel, naming the author in plain text, and nothing in the channel', async () => {
    expect(await settings(h, 'cards <#C0GENERAL|general> on')).toContain('Review cards are on for <#C0GENERAL>');
    // Just enough for a verdict: only the last message flags, judged on all of them.
    for (const text of AI_TEXTS.slice(0, ENGINE_MIN_MESSAGES)) await postEvent(h, messageEvent('C0GENERAL', 'U0REGULAR2', text));
    const card = await h.slack.waitFor(
      (c) => c.method === 'chat.postMessage' && JSON.stringify(c.args.blocks ?? []).includes('watch_review'),
    );
    expect(card.args.channel).toBe('C0AUDIT');
    const json = JSON.stringify(card.args.blocks);
    expect(json).toContain('this member’s recent messages look AI-written');
    expect(json).toContain('(U0REGULAR2)');
    expect(json).not.toContain('<@U0REGULAR2>');
    expect(json).toMatch(
      new RegExp(`\\*Evidence:\\* ${ENGINE_MIN_MESSAGES} messages?, \\d+ words \\(this member’s recent messages in the channel\\)`),
    );
    expect(json).toContain('Most AI-like messages');
    expect(json).toContain('https://test.slack.com/archives/C0GENERAL/p');
    const actions = (card.args.blocks as { type: string; elements?: { action_id: string; text: { text: string } }[] }[]).find(
      (b) => b.type === 'actions',
    )!;
    expect(actions.elements!.map((e) => e.text.text)).toEqual(['Confirm', 'False positive', 'Dismiss']);
    expect(publicActions(h, 'C0GENERAL')).toEqual([]);
  });

  it('Dismiss is recorded on the card, replaced in place; a second press is told who answered', async () => {
    const card = cards(h).at(-1)!;
    const blocks = card.args.blocks as { type: string; block_id?: string; elements?: { action_id: string; value: string }[] }[];
    const dismiss = blocks.find((b) => b.type === 'actions')!.elements!.find((e) => e.action_id === 'watch_review:dismissed')!;
    const press = (user: string) => {
      const { payload, responseUrl } = buttonPayload(h, { action_id: dismiss.action_id, value: dismiss.value }, { channel: 'C0AUDIT' });
      (payload.user as Record<string, unknown>).id = user;
      payload.container = { type: 'message', message_ts: '1700000000.000200', channel_id: 'C0AUDIT', is_ephemeral: false };
      payload.message = { type: 'message', ts: '1700000000.000200', text: card.args.text, blocks: card.args.blocks };
      return { body: interactionBody(payload), id: responseUrl.split('/').at(-1) };
    };
    const first = press('U0MOD');
    await postToApp(h, first.body);
    const replaced = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === first.id);
    expect(replaced.args.replace_original).toBe(true);
    const after = JSON.stringify(replaced.args.blocks);
    expect(after).not.toContain('watch_review:');
    expect(after).toMatch(/➖ Dismissed\* by Grace \(U0MOD\) · <!date\^\d+\^/);
    const second = press('U0ADMIN');
    await postToApp(h, second.body);
    const told = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === second.id);
    expect(told.args).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(told.args.text)).toContain('already answered: ➖ Dismissed by Grace (U0MOD)');
    expect(await settings(h, 'report')).toContain('Reviewed 1 of 1 cards: confirmed 0 (0%), false positive 0, dismissed 1');
  });

  it('finds the card a process posted and did not record (killed in between) by its metadata, and posts no second one', async () => {
    const scope = 'slack:T0TEST';
    killed.flagId = undefined;
    killed.itemKey = undefined;
    const texts = AI_TEXTS.slice(0, ENGINE_MIN_MESSAGES);
    const before = await scoredCount(store);
    for (const text of texts.slice(0, -1)) await postEvent(h, messageEvent('C0GENERAL', 'U0REGULAR3', text));
    await waitUntil(
      async () => (await scoredCount(store)) === before + texts.length - 1 && (await store.pendingCount()) === 0,
      15_000,
      'the earlier messages scored',
    );
    const shown = cards(h).length;
    const lookups = (): RecordedCall[] => h.slack.callsOf('conversations.history').filter((c) => c.args.channel === 'C0AUDIT');
    const looked = lookups().length;
    killed.armed = true;
    await postEvent(h, messageEvent('C0GENERAL', 'U0REGULAR3', texts.at(-1)!));
    await waitUntil(() => killed.flagId !== undefined && killed.itemKey !== undefined, 15_000, 'the card posted and its record lost');
    const card = cards(h).at(-1)!;
    expect(cards(h)).toHaveLength(shown + 1);
    expect(card.args.metadata).toEqual({ event_type: 'textdetect_review_card', event_payload: { flag_id: killed.flagId } });
    // What the killed process left: the flag without a card, its message still queued.
    expect(await store.getFlag(scope, killed.flagId!)).toMatchObject({ card: 'failed', cardId: undefined });
    expect(await store.pendingCount()).toBe(1);

    // Its lease runs out, and this process takes the message up again.
    await store.release(killed.itemKey!, Date.now());
    await waitUntil(async () => (await store.getFlag(scope, killed.flagId!))?.card === 'posted', 15_000, 'the card recorded');
    expect(await store.getFlag(scope, killed.flagId!)).toMatchObject({
      cardId: (card.response as { ts: string }).ts,
      cardChannelId: 'C0AUDIT',
    });
    expect(cards(h)).toHaveLength(shown + 1);
    expect(lookups()).toHaveLength(looked + 1);
    expect(lookups().at(-1)!.args).toMatchObject({ include_all_metadata: 'true' });
    await waitUntil(async () => (await store.pendingCount()) === 0, 5_000, 'an empty queue');
  });

  it('restarted mid-queue, scores the waiting messages once each, reading them again by ts', async () => {
    const before = await scoredCount(store);
    h.proxy.delayMs = 1_500;
    const calls = h.proxy.detectCalls;
    const events = AI_TEXTS.slice(0, 3).map((text, i) => messageEvent('C0GENERAL', `U0LATE${i}`, `${text} Number ${i}.`));
    for (const e of events) await postEvent(h, e);
    await waitUntil(async () => (await store.pendingCount()) === 3, 5_000, 'three queued');
    await waitUntil(() => h.proxy.detectCalls > calls, 5_000, 'a call on the wire');
    await h.app.stop();
    expect(await scoredCount(store)).toBe(before);
    expect(await store.pendingCount()).toBe(3);
    h.proxy.delayMs = 0;
    const reads = h.slack.callsOf('conversations.history').length;
    restarted = await startSlackApp(h.config, {
      detector: h.backend.detector,
      logger: pino({ level: 'silent' }),
      watch: { detector: watchDetectorFor(h.backend), store, idlePollMs: 50, configTtlMs: 0 },
    });
    await waitUntil(async () => (await scoredCount(store)) === before + 3, 15_000, 'the three after the restart');
    // A score is recorded just before its message leaves the queue: wait for the last one to leave.
    await waitUntil(async () => (await store.pendingCount()) === 0, 5_000, 'an empty queue');
    expect(h.slack.callsOf('conversations.history').length - reads).toBe(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(await scoredCount(store)).toBe(before + 3);
  });

  it('deletes everything of the workspace on app_uninstalled', async () => {
    const url = { eventsUrl: restarted!.eventsUrl! };
    expect((await store.getConfig('slack:T0TEST')).channels).toHaveLength(1);
    // A user's token revoked leaves the app installed.
    await postEvent(url, { type: 'tokens_revoked', tokens: { oauth: ['U0AUTHOR'] } });
    await new Promise((r) => setTimeout(r, 200));
    expect((await store.getConfig('slack:T0TEST')).channels).toHaveLength(1);
    await postEvent(url, { type: 'app_uninstalled' });
    await waitUntil(async () => (await store.getConfig('slack:T0TEST')).channels.length === 0, 5_000, 'deletion');
    expect((await store.report('slack:T0TEST', Date.now())).channels.size).toBe(0);
    expect(await store.scopes()).not.toContain('slack:T0TEST');
  });
});

describe('what watching leaves out, edits, deletes and threads (SQLite)', () => {
  let h: Harness;
  let store: WatchStore;
  beforeAll(async () => {
    ({ h, store } = await start({ name: 'filters', settings: { concurrency: 1 } }));
    await settings(h, 'watch <#C0GENERAL|general>');
    await settings(h, 'exempt <!subteam^S0REGULARS|@regulars>');
  });
  afterAll(async () => {
    await h?.close();
    await store?.close();
  });

  it('bots, system messages, commands, admins, the checkers group, exempt groups, DMs and other channels', async () => {
    await settings(h, 'checkers <!subteam^S0MODS|@mods>');
    const text = AI_TEXTS[2]!;
    const calls = h.proxy.detectCalls;
    const events = [
      messageEvent('C0GENERAL', 'U0AUTHOR', text, { bot_id: 'B0OTHER', subtype: 'bot_message' }),
      messageEvent('C0GENERAL', 'U0AUTHOR', text, { bot_id: 'B0APP', app_id: 'A0APP' }),
      messageEvent('C0GENERAL', 'U0AUTHOR', 'has joined the channel', { subtype: 'channel_join' }),
      messageEvent('C0GENERAL', 'U0AUTHOR', text, { subtype: 'channel_topic' }),
      messageEvent('C0GENERAL', 'U0AUTHOR', `!remind me ${text}`),
      messageEvent('C0GENERAL', 'U0ADMIN', text),
      messageEvent('C0GENERAL', 'U0MOD', text),
      messageEvent('C0GENERAL', 'U0REGULAR', text),
      messageEvent('D0DIRECT', 'U0AUTHOR', text, { channel_type: 'im' }),
      messageEvent('C0OTHER', 'U0AUTHOR', text),
      messageEvent('C0GENERAL', 'U0AUTHOR', 'too short to start a judgment'),
    ];
    for (const e of events) expect(await postEvent(h, e)).toBe(200);
    await postEvent(h, messageEvent('C0GENERAL', 'U0OTHER', HUMAN_TEXT));
    await waitUntil(async () => (await scoredCount(store)) === 1, 15_000, 'the one that counts');
    expect(h.proxy.detectCalls).toBe(calls + 1);
  });

  it('thread replies count for the channel; an edit of a waiting message is scored as edited, a deleted one not at all, an edit of a scored one never', async () => {
    const base = await scoredCount(store);
    const parent = messageEvent('C0GENERAL', 'U0THREAD', HUMAN_TEXT);
    await postEvent(h, parent);
    await postEvent(h, messageEvent('C0GENERAL', 'U0THREAD', AI_TEXTS[0]!, { thread_ts: parent.ts, parent_user_id: 'U0THREAD' }));
    await waitUntil(async () => (await scoredCount(store)) === base + 2, 15_000, 'parent and reply');

    h.proxy.delayMs = 800;
    try {
      const sent = h.proxy.detectBodies.length;
      const calls = h.proxy.detectCalls;
      await postEvent(h, messageEvent('C0GENERAL', 'U0EDIT', HUMAN_TEXT));
      await waitUntil(() => h.proxy.detectCalls > calls, 5_000, 'a call on the wire');
      const toEdit = messageEvent('C0GENERAL', 'U0EDIT', AI_TEXTS[1]!);
      const toDelete = messageEvent('C0GENERAL', 'U0EDIT', AI_TEXTS[2]!);
      await postEvent(h, toEdit);
      await postEvent(h, toDelete);
      // Slack's message_changed and message_deleted events, as documented.
      await postEvent(h, {
        type: 'message',
        subtype: 'message_changed',
        hidden: true,
        channel: 'C0GENERAL',
        channel_type: 'channel',
        ts: nextTs(),
        event_ts: nextTs(),
        message: {
          type: 'message',
          user: 'U0EDIT',
          text: `${HUMAN_TEXT} edited later`,
          ts: toEdit.ts,
          edited: { user: 'U0EDIT', ts: nextTs() },
        },
        previous_message: { type: 'message', user: 'U0EDIT', text: AI_TEXTS[1], ts: toEdit.ts },
      });
      await postEvent(h, {
        type: 'message',
        subtype: 'message_deleted',
        hidden: true,
        channel: 'C0GENERAL',
        channel_type: 'channel',
        ts: nextTs(),
        deleted_ts: toDelete.ts,
        event_ts: nextTs(),
        previous_message: { type: 'message', user: 'U0EDIT', text: AI_TEXTS[2], ts: toDelete.ts },
      });
      await waitUntil(async () => (await store.pendingCount()) === 0 && h.proxy.detectBodies.length >= sent + 2, 15_000, 'drained');
      const texts = (h.proxy.detectBodies.slice(sent) as unknown as { messages: string[] }[]).flatMap((b) => b.messages);
      expect(texts).toContain(`${HUMAN_TEXT} edited later`);
      expect(texts).not.toContain(AI_TEXTS[1]);
      expect(texts).not.toContain(AI_TEXTS[2]);
      expect(await store.isScored('slack:T0TEST', 'C0GENERAL', String(toDelete.ts), Date.now())).toBe(false);

      const calls2 = h.proxy.detectCalls;
      await postEvent(h, {
        type: 'message',
        subtype: 'message_changed',
        hidden: true,
        channel: 'C0GENERAL',
        channel_type: 'channel',
        ts: nextTs(),
        event_ts: nextTs(),
        message: { type: 'message', user: 'U0EDIT', text: AI_TEXTS[3], ts: toEdit.ts, edited: { user: 'U0EDIT', ts: nextTs() } },
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(h.proxy.detectCalls).toBe(calls2);
    } finally {
      h.proxy.delayMs = 0;
    }
  });

  it('delete-data needs confirm, then leaves nothing', async () => {
    const shown = await settings(h, '');
    expect(shown).toContain('• Watched channels: <#C0GENERAL> (shadow mode)');
    expect(shown).toContain('• Exempt user groups: <!subteam^S0REGULARS>');
    expect(shown).toContain('/detect-settings watch #channel');
    expect(await settings(h, 'delete-data')).toMatch(/^Nothing was deleted\./);
    expect((await store.getConfig('slack:T0TEST')).channels).toHaveLength(1);
    // A check whose text is kept behind its result's buttons.
    const check = slashCommandBody(h, LONG_TEXT);
    await postToApp(h, check.body);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === check.responseUrl.split('/').at(-1));
    const buttons = (reply.args.blocks as { elements?: { value?: string }[] }[]).flatMap((b) => b.elements ?? []);
    const checkId = buttons.map((e) => decodeButtonValue(e.value)?.c).find(Boolean);
    expect(checkId).toBeDefined();
    const chat = openChatStore({ dataDir: h.config.dataDir });
    try {
      const key = `slack:check:T0TEST:${checkId}`;
      expect(await chat.loadCheck(key, 60_000)).toMatchObject({ text: expect.stringContaining('committee') });
      const done = await settings(h, 'delete-data confirm');
      expect(done).toMatch(/^Deleted everything the app kept about this workspace/);
      expect(done).toContain('the texts kept behind the result buttons of its checks');
      expect(await store.getConfig('slack:T0TEST')).toEqual({ channels: [], exemptIds: [], preset: undefined, retentionDays: undefined });
      expect(await chat.loadCheck(key, 60_000)).toBeUndefined();
    } finally {
      await chat.close();
    }
  });
});

describe('without the history scopes', () => {
  let h: Harness;
  let store: WatchStore;
  afterAll(async () => {
    await h?.close();
    await store?.close();
  });

  it('refuses to watch with a sentence naming the scope, and warns when the app is not in the channel', async () => {
    ({ h, store } = await start({ name: 'scopes', scopes: ALL_SCOPES.filter((s) => !s.endsWith(':history')) }));
    const refused = await settings(h, 'watch <#C0GENERAL|general>');
    expect(refused).toContain('The app lacks the `channels:history` scope');
    expect(refused).toContain('Nothing is being watched.');
    expect((await store.getConfig('slack:T0TEST')).channels).toEqual([]);
  });
});

describe('a channel the app is not a member of', () => {
  let h: Harness;
  let store: WatchStore;
  afterAll(async () => {
    await h?.close();
    await store?.close();
  });

  it('is watched, with a warning to invite the app', async () => {
    ({ h, store } = await start({ name: 'not-member' }));
    const reply = await settings(h, 'watch <#C0NOTIN|secret>');
    expect(reply).toContain('Watching <#C0NOTIN>');
    expect(reply).toContain('The app is not a member of <#C0NOTIN>');
    expect(reply).toContain('/invite @textdetect');
  });
});
