/**
 * What reviews teach watching (issue 33), end to end on the Slack app: the real Bolt app on loopback
 * receiving signed `message` events, the fake Slack, the real detection service and engine, real
 * SQLite and PostgreSQL. A member a moderator cleared gets no card on the same evidence and a card
 * naming the clearing on clearly stronger evidence; the audit channel is told when a channel's
 * precision falls under the bound, with an Apply button only admins can use; the report shows the
 * precision; `clearings reset` and `delete-data` forget the clearings.
 *
 * Judged by message (WATCH_JUDGE=message) so each judgment's words are the message's own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { PRESET_BITS } from '../../adapters/chat/watch/presets.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import { createDetector } from '../../src/detector/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { signSlackRequest, type RecordedCall } from '../../demo/slack/fake-slack.ts';
import { buttonPayload, type Harness, interactionBody, postToApp, SIGNING_SECRET, slashCommandBody, startHarness } from './harness.ts';
import { AI_TEXTS } from './watch-texts.ts';

/** The cleared message: the AI text the engine is least sure of; the stronger one: the others together. */
const FIXTURES = await (async () => {
  const engine = await createDetector();
  const scored = AI_TEXTS.map((text) => ({ text, p: engine.detect(text, { mode: 'general' }).ai_probability })).sort((a, b) => a.p - b.p);
  const stronger = scored
    .slice(1)
    .map((s) => s.text)
    .join('\n\n');
  if (engine.detect(stronger, { mode: 'general' }).ai_probability < scored[0]!.p) {
    throw new Error('The joined AI texts score lower than the cleared one: the fixture no longer tests “stronger”.');
  }
  return { cleared: scored[0]!.text, same: scored[1]!.text, stronger };
})();

let dir: string;
const databases: TestDatabase[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slack-learning-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

let lastMicros = 0;
function nextTs(): string {
  lastMicros = Math.max(lastMicros + 1, Date.now() * 1000);
  return `${Math.floor(lastMicros / 1_000_000)}.${String(lastMicros % 1_000_000).padStart(6, '0')}`;
}

async function postMessage(h: Harness, user: string, text: string): Promise<void> {
  const ts = nextTs();
  const event = { type: 'message', channel: 'C0GENERAL', user, text, ts, event_ts: ts, channel_type: 'channel', team: 'T0TEST' };
  const body = JSON.stringify({
    token: 'verification-token-unused',
    team_id: 'T0TEST',
    api_app_id: 'A0TEST',
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(8).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: 'T0TEST', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
  });
  const res = await fetch(h.eventsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
    body,
  });
  await res.text();
  expect(res.status).toBe(200);
}

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(['SQLite', 'PostgreSQL'] as const)('Slack: reviews teach watching (%s)', (kind) => {
  const scope = 'slack:T0TEST';
  let h: Harness;
  let store: WatchStore;

  beforeAll(async () => {
    if (kind === 'PostgreSQL') {
      const db = await createTestDatabase();
      databases.push(db);
      store = new PostgresStore(db.url);
    } else {
      store = new SqliteStore(join(dir, 'sqlite'));
    }
    h = await startHarness({
      appLogger: pino({ level: 'silent' }),
      env: { REDIS_URL: '' },
      slack: {
        admins: ['U0ADMIN'],
        users: { U0AUTHOR: 'Ada Lovelace', U0MOD: 'Grace', U0ADMIN: 'Admin' },
        scopes: [...DEFAULT_SCOPES],
        usergroups: { S0MODS: ['U0MOD'] },
        methods: {
          'conversations.info': (args) => ({
            ok: true,
            channel: { id: args.channel, name: 'general', is_channel: true, is_private: false, is_member: true },
          }),
        },
      },
      watch: (backend) => ({
        detector: watchDetectorFor(backend),
        store,
        settings: { ...DEFAULT_WATCH_SETTINGS, judge: 'message', cardWindowMs: 1 },
        idlePollMs: 20,
        configTtlMs: 0,
      }),
    });
  });
  afterAll(async () => {
    await h?.close();
    await store?.close();
  });

  async function settings(text: string, user = 'U0ADMIN'): Promise<string> {
    const { body, responseUrl } = slashCommandBody(h, text, { command: '/detect-settings', user_id: user });
    const id = responseUrl.split('/').at(-1);
    await postToApp(h, body);
    const call = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
    return String(call.args.text);
  }

  const cards = (): RecordedCall[] =>
    h.slack.callsOf('chat.postMessage').filter((c) => JSON.stringify(c.args.blocks ?? []).includes('watch_review'));

  async function scored(): Promise<number> {
    return (await store.report(scope, Date.now())).channels.get('C0GENERAL')?.week.scored ?? 0;
  }

  async function post(text: string): Promise<void> {
    const before = await scored();
    await postMessage(h, 'U0AUTHOR', text);
    await waitUntil(async () => (await scored()) > before, 'a score');
  }

  /** Presses a button of a message the app posted; returns the response_url id its answers go to. */
  async function press(message: Record<string, unknown>, actionId: string, user: string): Promise<string> {
    const blocks = message.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
    const button = blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId)!;
    const { payload, responseUrl } = buttonPayload(h, { action_id: button.action_id, value: button.value }, { channel: 'C0AUDIT' });
    (payload.user as Record<string, unknown>).id = user;
    payload.container = { type: 'message', message_ts: '1700000000.000200', channel_id: 'C0AUDIT', is_ephemeral: false };
    payload.message = { type: 'message', ts: '1700000000.000200', text: message.text, blocks: message.blocks };
    await postToApp(h, interactionBody(payload));
    return responseUrl.split('/').at(-1)!;
  }

  it('a member marked false positive gets no card on the same evidence, and one naming the clearing on clearly stronger evidence', async () => {
    await store.deleteScope(scope);
    expect(await settings('watch <#C0GENERAL|general>')).toContain('Watching <#C0GENERAL>');
    expect(await settings('cards <#C0GENERAL|general> on')).toContain('Review cards are on');
    expect(await settings('clearings')).toContain('that member gets no new card here for 30 days');

    await post(FIXTURES.cleared);
    await waitUntil(() => cards().length === 1, 'the first card');
    const answered = await press(cards()[0]!.args, 'watch_review:false_positive', 'U0MOD');
    await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === answered && c.args.replace_original === true);
    expect(await store.clearingsOf(scope, 'U0AUTHOR', Date.now())).toMatchObject([{ reviewerId: 'U0MOD' }]);

    await post(FIXTURES.same);
    await new Promise((r) => setTimeout(r, 200));
    expect(cards()).toHaveLength(1);
    const report = await settings('report');
    expect(report).toContain('1 held back (member cleared by a moderator, evidence not clearly stronger)');
    expect(report).toContain('Marked false positive: member (U0AUTHOR)');

    await post(FIXTURES.stronger);
    await waitUntil(() => cards().length === 2, 'the card on stronger evidence');
    const json = JSON.stringify(cards()[1]!.args.blocks);
    expect(json).toMatch(/⚠️ \*Cleared before:\* This member’s earlier flag was marked false positive by Grace \(U0MOD\) on <!date\^\d+\^/);
    expect(json).toContain('This judgment is clearly stronger');
    expect(json).not.toContain('<@U0MOD>');
  });

  it('tells the audit channel when the channel’s precision falls under the bound; Apply is for admins', async () => {
    // With the false positive above, nine reviews under standard: 5 confirmed (strict flags them), 3 false positives (it does not).
    const now = Date.now();
    for (let i = 0; i < 8; i++) {
      const confirmed = i < 5;
      await store.recordScore(
        {
          scope,
          channelId: 'C0GENERAL',
          messageId: `seed${i}`,
          authorId: `U0SEED${i}`,
          postedAt: now - 1000,
          probability: confirmed ? 0.99 : 0.93,
          verdict: 'likely_ai',
          confidence: 'high',
          presets: PRESET_BITS.standard | PRESET_BITS.loose | (confirmed ? PRESET_BITS.strict : 0),
          requestId: `req_seed${i}`,
          flagId: `seed${i}`,
          card: 'posted',
          preset: 'standard',
          words: 80,
        },
        now + 86_400_000,
      );
      await store.review(scope, `seed${i}`, confirmed ? 'confirmed' : 'false_positive', 'U0MOD', now - 1000);
    }
    expect(await settings('report')).not.toContain('⚠️');
    const answered = await press(cards()[1]!.args, 'watch_review:confirmed', 'U0MOD');
    const note = await h.slack.waitFor(
      (c) => c.method === 'response_url' && c.responseId === answered && c.args.response_type === 'in_channel',
    );
    const text = String(note.args.text);
    expect(text).toContain('<#C0GENERAL>: moderators confirmed 60% of 10 reviewed flags under *standard*, under the bound of 80%.');
    const reviewed = await store.reviewedFlags(scope, 0);
    const strict = (f: { presets: number }) => (f.presets & PRESET_BITS.strict) !== 0;
    const kept = reviewed.filter((f) => f.outcome === 'confirmed' && strict(f)).length;
    const dropped = reviewed.filter((f) => f.outcome === 'false_positive' && !strict(f)).length;
    expect(text).toContain(`*strict* would have kept ${kept} of 6 confirmed flags`);
    expect(text).toContain(`dropped ${dropped} of 4 false positives`);
    expect(text).toContain('`/detect-settings preset strict`');

    const refusedId = await press(note.args, 'watch_apply_preset', 'U0MOD');
    const refused = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === refusedId);
    expect(String(refused.args.text)).toContain('Only workspace admins and owners');
    expect((await store.getConfig(scope)).preset).toBeUndefined();
    const appliedId = await press(note.args, 'watch_apply_preset', 'U0ADMIN');
    const applied = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === appliedId);
    expect(String(applied.args.text)).toContain('now flagged with the *strict* preset');
    expect((await store.getConfig(scope)).preset).toBe('strict');
    const report = await settings('report');
    expect(report).toMatch(/Precision \(reviews of the last 30 days\): standard: 60% confirmed of 10 \(90% interval \d+%–\d+%\)/);
  });

  it('sets the precision bound; clearings reset and delete-data forget the clearings', async () => {
    expect(await settings('precision 90%')).toContain('confirm less than 90% of its reviewed flags');
    expect((await store.getConfig(scope)).precisionBound).toBe(0.9);
    expect(await settings('precision lots')).toContain('with a share from 0.01 to 1');
    expect(await settings('clearings reset')).toContain('Forgot 1 clearing:');
    expect(await store.clearingsOf(scope, 'U0AUTHOR', Date.now())).toEqual([]);
    // A new clearing, then delete-data.
    await store.review(scope, 'seed7', 'false_positive', 'U0MOD', Date.now(), { clearForMs: 86_400_000 });
    await store.recordScore(
      {
        scope,
        channelId: 'C0GENERAL',
        messageId: 'late',
        authorId: 'U0AUTHOR',
        postedAt: Date.now(),
        probability: 0.95,
        verdict: 'likely_ai',
        confidence: 'high',
        presets: 6,
        requestId: 'req_late',
        flagId: 'late',
        card: 'posted',
        preset: 'strict',
        words: 70,
      },
      Date.now() + 86_400_000,
    );
    await store.review(scope, 'late', 'false_positive', 'U0MOD', Date.now(), { clearForMs: 86_400_000 });
    expect(await store.clearingsOf(scope, 'U0AUTHOR', Date.now())).toHaveLength(1);
    expect(await settings('delete-data confirm')).toContain('clearings');
    expect(await store.clearingsOf(scope, 'U0AUTHOR', Date.now())).toEqual([]);
  });
});
