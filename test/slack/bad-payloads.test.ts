/**
 * The real Bolt app on loopback, fed payload examples from Slack's own documentation and payloads
 * broken on purpose: every one is answered 200 (within Slack's 3 s), logged, and the app keeps
 * serving. Sources of the documented payloads (docs.slack.dev):
 * - slash command: "Implementing slash commands", the example request body (`/weather 94070`);
 * - message shortcut: "Shortcuts interaction payloads", the `message_action` example (`chirp_message`);
 * - block_actions: "block_actions payload", the example (button `WaXA`, value `click_me_123`).
 * Their `response_url`s are pointed at the fake Slack and each replay gets a fresh `trigger_id` (the
 * app drops a trigger it has seen as a Slack retry, and the de-duplication store outlives a run);
 * the first two are also re-sent as `/detect` and `detect_message`, since this app answers only its
 * own command and shortcut.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNREADABLE_REQUEST_REPLY } from '../../adapters/slack/error-handling.ts';
import { triggerId, type RecordedCall } from '../../demo/slack/fake-slack.ts';
import { interactionBody, LONG_TEXT, postToApp, slashCommandBody, slashCommandFields, startHarness, type Harness } from './harness.ts';

let h: Harness;
const logs: Record<string, any>[] = [];
/** Under the receiver's 2.5 s fallback, with room for a loaded machine. */
const ACK_AT_ONCE_MS = 2_000;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  h = await startHarness({ appLogger: pino({ level: 'info' }, sink) });
});

afterAll(async () => {
  await h?.close();
});

function replyTo(responseUrl: string): Promise<RecordedCall> {
  const id = responseUrl.split('/').pop();
  return h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
}

/** The app still answers a well-formed /detect with a verdict. */
async function expectStillServing(): Promise<void> {
  const cmd = slashCommandBody(h, LONG_TEXT);
  expect((await postToApp(h, cmd.body)).status).toBe(200);
  expect(JSON.stringify((await replyTo(cmd.responseUrl)).args.blocks)).toMatch(/Request id: `req_/);
}

function slashCommandExample(over: Record<string, string>): string {
  return new URLSearchParams({
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    team_id: 'T0001',
    team_domain: 'example',
    enterprise_id: 'E0001',
    enterprise_name: 'Globular Construct Inc',
    channel_id: 'C2147483705',
    channel_name: 'test',
    user_id: 'U2147483697',
    user_name: 'Steve',
    command: '/weather',
    text: '94070',
    response_url: 'https://hooks.slack.com/commands/1234/5678',
    api_app_id: 'A123456',
    trigger_id: triggerId(),
    ...over,
  }).toString();
}

function messageShortcutExample(responseUrl: string): Record<string, any> {
  return {
    callback_id: 'chirp_message',
    type: 'message_action',
    trigger_id: triggerId(),
    response_url: responseUrl,
    team: { id: 'T0MJRM1A7', domain: 'pandamonium' },
    channel: { id: 'D0LFFBKLZ', name: 'cats' },
    user: { id: 'U0D15K92L', name: 'dr_maomao' },
    message: {
      type: 'message',
      user: 'U0MJRG1AL',
      ts: '1516229207.000133',
      text: "World's smallest big cat! <https://youtube.com/watch?v=W86cTIoMv2U>",
    },
  };
}

function blockActionsExample(responseUrl: string): Record<string, any> {
  return {
    type: 'block_actions',
    team: { id: 'T9TK3CUKW', domain: 'example' },
    user: { id: 'UA8RXUSPL', username: 'jtorrance', team_id: 'T9TK3CUKW' },
    api_app_id: 'AABA1ABCD',
    token: '9s8d9as89d8as9d8as989',
    container: {
      type: 'message_attachment',
      message_ts: '1548261231.000200',
      attachment_id: 1,
      channel_id: 'CBR2V3XEX',
      is_ephemeral: false,
      is_app_unfurl: false,
    },
    trigger_id: triggerId(),
    channel: { id: 'CBR2V3XEX', name: 'review-updates' },
    message: { bot_id: 'BAH5CA16Z', type: 'message', text: "This content can't be displayed.", user: 'UAJ2RU415', ts: '1548261231.000200' },
    response_url: responseUrl,
    actions: [
      {
        action_id: 'WaXA',
        block_id: '=qXel',
        text: { type: 'plain_text', text: 'View', emoji: true },
        value: 'click_me_123',
        type: 'button',
        action_ts: '1548426417.840180',
      },
    ],
  };
}

describe("Slack's documented payloads", () => {
  it('the slash command example: another command is acknowledged (200) at once and logged, /detect is answered', async () => {
    const other = await postToApp(h, slashCommandExample({}));
    expect(other.status).toBe(200);
    // At once, not after the receiver's 2.5 s fallback: nothing is left to wait for once no listener took it.
    expect(other.elapsedMs).toBeLessThan(ACK_AT_ONCE_MS);
    expect(logs.some((l) => l.msg?.startsWith('no listener acknowledged a Slack request'))).toBe(true);

    const responseUrl = h.slack.responseUrl();
    const mine = await postToApp(h, slashCommandExample({ command: '/detect', response_url: responseUrl }));
    expect(mine.status).toBe(200);
    const reply = await replyTo(responseUrl);
    expect(reply.args.response_type).toBe('ephemeral');
    expect(String(reply.args.text)).not.toBe('');
  });

  it('the message shortcut example, as this app’s shortcut, is checked (the link is not scored as words)', async () => {
    const responseUrl = h.slack.responseUrl();
    const payload = { ...messageShortcutExample(responseUrl), callback_id: 'detect_message' };
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const reply = await h.slack.waitFor(
      (c) =>
        (c.method === 'chat.postEphemeral' && c.args.channel === 'D0LFFBKLZ') ||
        (c.method === 'response_url' && c.responseId === responseUrl.split('/').pop()),
    );
    // Scored without the address, which alone made the text look like another language.
    expect(h.proxy.detectBodies.at(-1)?.text).toBe("World's smallest big cat!");
    expect(JSON.stringify(reply.args)).toMatch(/Too short to judge/);
    expect(JSON.stringify(reply.args)).toContain('Not scored: 1 web address');
  });

  it('the block_actions example (a button this app does not have) is acknowledged at once', async () => {
    const res = await postToApp(h, interactionBody(blockActionsExample(h.slack.responseUrl())));
    expect(res.status).toBe(200);
    expect(res.elapsedMs).toBeLessThan(ACK_AT_ONCE_MS);
  });
});

describe('broken payloads', () => {
  const cases: [string, () => string][] = [
    ['an empty body', () => ''],
    ['a payload that is a JSON array', () => interactionBody([] as unknown as Record<string, unknown>)],
    [
      'a shortcut without message or channel',
      () =>
        interactionBody({
          type: 'message_action',
          callback_id: 'detect_message',
          team: { id: 'T1' },
          user: { id: 'U1' },
          trigger_id: triggerId(),
        }),
    ],
    ['block_actions without actions', () => interactionBody({ type: 'block_actions', team: { id: 'T1' }, user: { id: 'U1' } })],
    [
      'our re-check button with a value that is not ours',
      () =>
        interactionBody({
          ...blockActionsExample(h.slack.responseUrl()),
          actions: [{ action_id: 'recheck:legal', type: 'button', value: '{{{' }],
        }),
    ],
    [
      'an unknown view submission',
      () => interactionBody({ type: 'view_submission', team: { id: 'T1' }, user: { id: 'U1' }, view: { callback_id: 'nope' } }),
    ],
    [
      'a slash command without user or channel',
      () => new URLSearchParams({ command: '/detect', text: 'hello there', team_id: 'T1' }).toString(),
    ],
  ];
  for (const [name, body] of cases) {
    it(`answers ${name} with 200 at once`, async () => {
      const res = await postToApp(h, body());
      expect(res.status).toBe(200);
      expect(res.elapsedMs).toBeLessThan(ACK_AT_ONCE_MS);
    });
  }

  it('a slash command without response_url is answered in its ack and spends no detection', async () => {
    const calls = h.proxy.detectCalls;
    const errorsBefore = logs.filter((l) => l.level >= 50).length;
    const { response_url: _none, ...rest } = slashCommandFields(h, '').fields;
    for (const command of ['/detect', '/detect-settings']) {
      const body = new URLSearchParams({
        ...rest,
        command,
        text: command === '/detect' ? LONG_TEXT : 'mode legal',
        trigger_id: triggerId(),
      });
      const res = await postToApp(h, body.toString());
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('nothing was done') });
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(h.proxy.detectCalls).toBe(calls);
    expect(logs.filter((l) => l.level >= 50).length).toBe(errorsBefore);
  });

  it('a listener that fails after its ack is logged with the request, and the user is told', async () => {
    const responseUrl = h.slack.responseUrl();
    // A shortcut whose `message` is missing: the listener acks, then cannot read the message.
    const payload = { ...messageShortcutExample(responseUrl), callback_id: 'detect_message', message: undefined };
    expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
    const told = await replyTo(responseUrl);
    expect(told.args.text).toBe(UNREADABLE_REQUEST_REPLY);
    const line = logs.find((l) => l.msg === 'unhandled error in a Slack listener' && l.team === 'T0MJRM1A7');
    expect(line).toMatchObject({ level: 50, type: 'message_action', callback_id: 'detect_message', user: 'U0D15K92L' });
    expect(JSON.stringify(logs)).not.toContain('smallest big cat');
  });

  it('a request with a bad signature is still refused (401): it is not from Slack', async () => {
    const res = await postToApp(h, slashCommandExample({ command: '/detect' }), { secret: 'not-the-secret' });
    expect(res.status).toBe(401);
  });

  it('keeps serving after all of that', async () => {
    await expectStillServing();
  });
});
