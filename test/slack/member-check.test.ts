/**
 * Member checks on Slack: the real Bolt app, the real detection service (behind the counting proxy,
 * `POST /v1/detect/author` through the bots' queue) and the fake Slack with channel histories in
 * the Web API's shapes. Covers `/detect @member`, the shortcut's "Check their recent messages"
 * button, threads, edits, deletions, files, bots and apps, commands, a member with no messages, the
 * window setting, and every refusal (missing scope, app not in the channel, direct messages).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import { UNESCAPED_MEMBER } from '../../adapters/slack/listeners/detect-author.ts';
import { parseSettingsCommand } from '../../adapters/slack/settings.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { FakeSlackHistory } from '../../demo/slack/fake-history.ts';
import {
  buttonPayload,
  interactionBody,
  messageShortcutPayload,
  postToApp,
  slashCommandBody,
  startHarness,
  type Harness,
} from './harness.ts';
import { WAIT_MS } from '../helpers/load.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;

// Written for this test: everyday chat messages of one member, 15–35 words each.
const ADA = [
  'Morning all, the train was late again so I missed the standup, can someone paste the notes here when they get a sec?',
  'I tried the new build on my laptop last night and the login screen froze twice, no idea why yet.',
  'Lunch today is the noodle place by the bridge if anyone wants to come, we leave at half twelve sharp.',
  'Honestly the old dashboard was easier to read, the new colours make the red and orange look the same to me.',
  'My cat knocked the router off the shelf so if I drop off the call that is the reason, sorry in advance.',
  'Finished the review of the billing changes, left a few comments about the rounding, nothing that blocks the merge though.',
  'Does anyone know whether the office is open on Friday? The calendar says closed but the email said otherwise.',
  'Quick one: the staging database is almost full again, I cleaned the old logs but we need a proper fix soon.',
  'Thanks for covering my shift yesterday, I owe you a coffee and probably a cake as well at this point.',
  'The client liked the demo but asked for the export to work with their old spreadsheet tool, which is fun.',
  'I will be out Monday for the dentist, back Tuesday morning, ping me by text if something catches fire.',
  'We should write down how the deploy works, I forgot the order of the steps again and had to ask twice.',
];

const history = new FakeSlackHistory({ teamId: 'T0TEST' });
let h: Harness;
/** Ada's scorable messages, newest first: exactly what the app must send. */
let expected: { ts: string; text: string }[] = [];

function seed(): void {
  history.channel({ id: 'C0GENERAL' });
  history.channel({ id: 'C0PRIVATE', private: true });
  history.channel({ id: 'C0NOTIN', member: false });
  history.channel({ id: 'C0FEW' });
  const scorable: { ts: string; text: string; ago: number }[] = [];
  ADA.forEach((text, i) => {
    const ago = (i + 1) * 18 * HOUR;
    scorable.push({ ts: history.post('C0GENERAL', ago, 'U0AUTHOR', text).ts, text, ago });
    history.post('C0GENERAL', ago - 60_000, 'U0BOB', `Sounds good, message ${i} from bob about something else entirely.`);
    if (i % 4 === 0)
      history.raw('C0GENERAL', ago - 120_000, {
        subtype: 'bot_message',
        bot_id: 'B0MUSIC',
        username: 'musicbot',
        text: 'Now playing: a song nobody asked for.',
      });
  });
  // Edited: scored with its new text.
  const edited = history.post('C0GENERAL', 2 * HOUR, 'U0AUTHOR', 'teh meeting is at 3');
  const editedText = 'The meeting moved to three in the afternoon, same room as last week, bring the printed agenda please.';
  history.edit('C0GENERAL', edited, editedText);
  scorable.push({ ts: edited.ts, text: editedText, ago: 2 * HOUR });
  // Deleted: gone.
  history.remove(
    'C0GENERAL',
    history.post('C0GENERAL', 3 * HOUR, 'U0AUTHOR', 'This message was posted and then deleted by its author a minute later.'),
  );
  // A thread by Bob with Ada's replies, one of them also sent to the channel.
  const parent = history.post('C0GENERAL', 20 * HOUR, 'U0BOB', 'Is the release still happening on Thursday or did it move?');
  const r1 = 'It moved to next week because the payment provider asked for one more round of testing on their side.';
  const r2 = 'Also the translations are not finished, so the extra week helps the team in Lisbon as well, I think.';
  const r3 = 'Sending this to the channel too: the release is next Thursday, please plan your holidays around it.';
  scorable.push({ ts: history.reply('C0GENERAL', parent, 19.6 * HOUR, 'U0AUTHOR', r1).ts, text: r1, ago: 19.6 * HOUR });
  history.reply('C0GENERAL', parent, 19.4 * HOUR, 'U0BOB', 'Thanks, that helps a lot with the planning.');
  scorable.push({ ts: history.reply('C0GENERAL', parent, 19.2 * HOUR, 'U0AUTHOR', r2).ts, text: r2, ago: 19.2 * HOUR });
  scorable.push({ ts: history.reply('C0GENERAL', parent, 17 * HOUR, 'U0AUTHOR', r3, { broadcast: true }).ts, text: r3, ago: 17 * HOUR });
  // Ada's own thread parent, deleted after Bob replied: a tombstone, not her prose.
  const gone = history.post('C0GENERAL', 30 * HOUR, 'U0AUTHOR', 'A question I deleted later.');
  history.reply('C0GENERAL', gone, 29 * HOUR, 'U0BOB', 'I had an answer to that one.');
  history.remove('C0GENERAL', gone);
  // A file with a comment (scored), a file alone, a bare link, a command, an app posting as her, a join.
  const comment = 'Here is the screenshot of the error I mentioned this morning, it happens right after the login step.';
  scorable.push({
    ts: history.post('C0GENERAL', 4 * HOUR, 'U0AUTHOR', comment, {
      files: [{ id: 'F1', name: 'error.png', mimetype: 'image/png' }],
      upload: true,
    }).ts,
    text: comment,
    ago: 4 * HOUR,
  });
  history.raw('C0GENERAL', 5 * HOUR, {
    user: 'U0AUTHOR',
    text: '',
    files: [{ id: 'F2', name: 'photo.jpg', mimetype: 'image/jpeg' }],
    upload: true,
    display_as_bot: false,
  });
  // A bare link, as clients send it: `<url>` in text, a link element in the rich text.
  history.post('C0GENERAL', 6 * HOUR, 'U0AUTHOR', '<https://example.com/some/article>', {
    blocks: [
      {
        type: 'rich_text',
        block_id: 'lnk1',
        elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://example.com/some/article' }] }],
      },
    ],
  });
  history.post('C0GENERAL', 7 * HOUR, 'U0AUTHOR', '/weather 94070');
  history.raw('C0GENERAL', 8 * HOUR, {
    user: 'U0AUTHOR',
    bot_id: 'B0WORKFLOW',
    app_id: 'A0WORKFLOW',
    text: 'Ada submitted the weekly status form: all projects on track, no blockers reported this week.',
  });
  history.raw('C0GENERAL', 9 * HOUR, { subtype: 'channel_join', user: 'U0AUTHOR', text: '<@U0AUTHOR> has joined the channel' });
  // Outside the 30-day window.
  history.post('C0GENERAL', 40 * DAY, 'U0AUTHOR', 'This is an old message from more than a month ago and must not be read.');
  expected = scorable.sort((a, b) => a.ago - b.ago).map(({ ts, text }) => ({ ts, text }));
  // A private channel, and a member with too little to judge.
  history.post('C0PRIVATE', HOUR, 'U0AUTHOR', ADA[0] as string);
  history.post('C0FEW', HOUR, 'U0NEW', 'Hello everyone, glad to be here.');
  history.post('C0FEW', 2 * HOUR, 'U0NEW', 'Where do I find the onboarding docs?');
}

beforeAll(async () => {
  seed();
  h = await startHarness({
    slack: {
      methods: history.methods,
      users: {
        U0AUTHOR: 'Ada Lovelace',
        U0MOD: 'Grace',
        U0BOB: 'Bob',
        U0QUIET: 'Quiet',
        U0NEW: 'Newcomer',
        U0MUSIC: 'musicbot',
        U0ADMIN: 'Admin',
      },
      bots: ['U0MUSIC'],
      admins: ['U0ADMIN'],
    },
  });
});

afterAll(async () => {
  await h?.close();
});

beforeEach(() => {
  history.pageCap = undefined;
  history.scopes = new Set(DEFAULT_SCOPES);
});

function responseFor(url: string) {
  const id = url.split('/').pop();
  return (c: RecordedCall) => c.method === 'response_url' && c.responseId === id && Array.isArray(c.args.blocks);
}

/** `/detect <text>` as a member of `channel`; resolves with the ephemeral answer. */
async function detect(text: string, over: Record<string, string> = {}): Promise<RecordedCall> {
  const cmd = slashCommandBody(h, text, over);
  const res = await postToApp(h, cmd.body);
  expect(res.status).toBe(200);
  return h.slack.waitFor(responseFor(cmd.responseUrl), WAIT_MS);
}

function authorBodies(): { messages: string[]; mode?: string }[] {
  return (h.proxy.detectBodies as unknown as { messages?: string[]; mode?: string }[]).filter((b) => Array.isArray(b.messages)) as {
    messages: string[];
    mode?: string;
  }[];
}

function blocksOf(call: RecordedCall): { block_id?: string; text?: { text: string }; elements?: { text?: string }[] }[] {
  return call.args.blocks as { block_id?: string; text?: { text: string }; elements?: { text?: string }[] }[];
}

function textOf(call: RecordedCall, blockId: string): string | undefined {
  const block = blocksOf(call).find((b) => b.block_id === blockId);
  return block?.text?.text ?? block?.elements?.map((e) => e.text).join(' ');
}

describe('/detect @member', () => {
  it('reads the member’s messages (threads included), sends the scorable ones newest first and answers with the verdict, permalinks and what was left out', async () => {
    const before = authorBodies().length;
    const reply = await detect('<@U0AUTHOR|ada>');
    const bodies = authorBodies();
    expect(bodies).toHaveLength(before + 1);
    const body = bodies.at(-1)!;
    expect(body.messages).toEqual(expected.map((m) => m.text));
    expect(body.mode).toBe('general');

    // The service's own answer for the same messages (the engine is deterministic).
    const answer: DetectAuthorResponse = await h.backend.client.detectAuthor({ messages: body.messages, mode: 'general' });
    expect(validateBlockKit(reply.args.blocks as unknown[])).toEqual([]);
    expect(textOf(reply, 'author_verdict')).toContain('recent messages of <@U0AUTHOR>');
    expect(textOf(reply, 'author_verdict')).toContain(`over ${answer.messages_used} messages and ${answer.words_used} words`);
    expect(textOf(reply, 'author_scope')).toBe(`Read all ${expected.length + 4} messages of theirs in this channel from the past 30 days.`);
    expect(textOf(reply, 'author_left_out')).toBe(
      'Left out: 1 command, 1 message with only files, images or stickers, 1 message with only a link and 1 message posted through an app.',
    );
    const top = textOf(reply, 'author_top')!.split('\n').slice(1);
    expect(top).toHaveLength(3);
    const ranked = answer.messages
      .filter((m) => m.ai_probability !== null)
      .sort((a, b) => (b.ai_probability ?? 0) - (a.ai_probability ?? 0) || a.index - b.index)
      .slice(0, 3);
    ranked.forEach((m, i) => {
      const ts = expected[m.index]!.ts;
      expect(top[i]).toContain(`<https://test.slack.com/archives/C0GENERAL/p${ts.replace('.', '')}|view>`);
    });
    // The audit line: who checked whom, never the texts.
    const audit = await h.slack.waitFor(
      (c) => c.method === 'chat.postMessage' && String(c.args.text).includes('checked the recent messages of'),
    );
    expect(audit.args.channel).toBe('C0AUDIT');
    expect(audit.args.text).toMatch(
      /^:mag: Grace \(U0MOD\) checked the recent messages of Ada Lovelace \(U0AUTHOR\) in <#C0GENERAL>: .+ over \d+ messages · request id req_\w+ \(general mode\)$/,
    );
    expect(audit.args.text).not.toContain('meeting');
  });

  it('takes a mode before the member', async () => {
    await detect('legal <@U0AUTHOR>');
    expect(authorBodies().at(-1)!.mode).toBe('legal');
  });

  it('holds the verdict back with what more it needs when the member wrote too little', async () => {
    const reply = await detect('<@U0NEW|newcomer>', { channel_id: 'C0FEW' });
    expect(textOf(reply, 'author_verdict')).toMatch(/^\*🟡 Too little to judge yet\*/);
    // What the engine answers for the same two short lines: under its least evidence in both.
    const sent = authorBodies().at(-1)!.messages;
    expect(sent).toEqual(['Hello everyone, glad to be here.', 'Where do I find the onboarding docs?']);
    const answer: DetectAuthorResponse = await h.backend.client.detectAuthor({ messages: sent, mode: 'general' });
    expect(answer.warnings).toContain('too_little_evidence');
    const needed = answer.evidence_needed!;
    // Under the evidence floor (40 words together): only words are missing.
    expect(needed.messages).toBe(0);
    expect(needed.words).toBeGreaterThan(0);
    expect(textOf(reply, 'author_evidence')).toMatch(
      new RegExp(`^:double_vertical_bar: Held back: a verdict needs ${needed.words} more words of their own writing\\.`),
    );
    // No percentage for a verdict held back.
    expect(textOf(reply, 'author_verdict')).not.toMatch(/\d%/);
  });

  it('answers a member with no messages without calling the service', async () => {
    const before = authorBodies().length;
    const reply = await detect('<@U0QUIET>');
    expect(reply.args.text).toBe(
      'This member has written no messages in this channel in the past 30 days, so there is nothing to check. Run the check in a channel where they write, or widen the window in the settings.',
    );
    expect(authorBodies()).toHaveLength(before);
  });

  it('refuses a bot account', async () => {
    const reply = await detect('<@U0MUSIC|musicbot>');
    expect(reply.args.text).toBe('That account is a bot: its messages are not a person’s writing, so there is nothing to judge.');
  });

  it('is named in /detect help', async () => {
    const res = await postToApp(h, slashCommandBody(h, 'help').body);
    expect((JSON.parse(res.body) as { text: string }).text).toContain(
      '`/detect @member` checks a member’s recent messages in this channel together: far more reliable than one short message.',
    );
  });

  it('explains a plain @name (an app installed from an older manifest sends no id)', async () => {
    const cmd = slashCommandBody(h, '@ada');
    await postToApp(h, cmd.body);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === cmd.responseUrl.split('/').pop());
    expect(reply.args.text).toBe(UNESCAPED_MEMBER);
  });
});

describe('when Slack withholds the history', () => {
  it('names the missing scope for a public channel', async () => {
    history.scopes.delete('channels:history');
    const reply = await detect('<@U0AUTHOR>');
    expect(reply.args.text).toBe(
      "The app cannot read this channel’s messages: it lacks the Slack scope `channels:history`. Ask a workspace admin to add `channels:history` and `groups:history` (the app's manifest lists both) and reinstall the app, then run the check again.",
    );
  });

  it('names the missing scope for a private channel', async () => {
    history.scopes.delete('groups:history');
    const reply = await detect('<@U0AUTHOR>', { channel_id: 'C0PRIVATE' });
    expect(reply.args.text).toContain('it lacks the Slack scope `groups:history`');
  });

  it('asks to invite the app where it is not a member', async () => {
    const reply = await detect('<@U0AUTHOR>', { channel_id: 'C0NOTIN' });
    expect(reply.args.text).toBe(
      'The app is not a member of this channel, so it cannot read its messages. Invite it with `/invite @textdetect`, then run the check again.',
    );
  });

  it('uses the first page, and says so, when Slack hands over 15 messages a page (apps outside the Marketplace)', async () => {
    history.pageCap = 15;
    const historyCalls = h.slack.callsOf('conversations.history').length;
    const replyCalls = h.slack.callsOf('conversations.replies').length;
    const reply = await detect('<@U0AUTHOR>');
    expect(h.slack.callsOf('conversations.history')).toHaveLength(historyCalls + 1);
    expect(h.slack.callsOf('conversations.replies')).toHaveLength(replyCalls);
    expect(textOf(reply, 'author_scope')).toContain(
      'Slack let the app read only the newest 15 messages of the channel (its limits for apps outside the Slack Marketplace: one history call a minute), so older messages and thread replies were not read.',
    );
  });

  it('refuses direct messages without asking Slack', async () => {
    const before = h.slack.callsOf('conversations.history').length;
    const reply = await detect('<@U0AUTHOR>', { channel_id: 'D0DIRECT' });
    expect(reply.args.text).toBe(
      'Member checks read a channel’s messages: run the check in the channel where the member writes, not in a direct message.',
    );
    expect(h.slack.callsOf('conversations.history')).toHaveLength(before);
  });
});

describe('the message shortcut', () => {
  it('says a short message is too short alone and offers the author’s recent messages, which the button checks', async () => {
    const { payload } = messageShortcutPayload(h, { ts: '1700000300.000100', text: 'lol same, see you at lunch' });
    await postToApp(h, interactionBody(payload));
    const result = await h.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks).includes('short_message'),
    );
    expect(validateBlockKit(result.args.blocks as unknown[])).toEqual([]);
    expect(textOf(result, 'short_message')).toBe(
      ':speech_balloon: This message is too short to judge on its own. Checking the author’s recent messages together gives a far more reliable answer. Use *Check their recent messages* below.',
    );
    const actions = (
      result.args.blocks as { type: string; elements?: { action_id: string; value: string; text: { text: string } }[] }[]
    ).find((b) => b.type === 'actions')!.elements!;
    const button = actions.find((e) => e.action_id === 'check_author')!;
    expect(button).toMatchObject({ text: { text: 'Check their recent messages' }, value: '{"u":"U0AUTHOR"}' });

    const before = authorBodies().length;
    const press = buttonPayload(h, { action_id: button.action_id, value: button.value });
    await postToApp(h, interactionBody(press.payload));
    const reply = await h.slack.waitFor(responseFor(press.responseUrl), WAIT_MS);
    expect(reply.args.replace_original).toBe(false);
    expect(textOf(reply, 'author_verdict')).toContain('recent messages of <@U0AUTHOR>');
    expect(authorBodies()).toHaveLength(before + 1);
    expect(authorBodies().at(-1)!.messages).toEqual(expected.map((m) => m.text));
  });

  it('offers no member check for an app’s message', async () => {
    const since = Date.now();
    const { payload } = messageShortcutPayload(h, {
      ts: '1700000400.000100',
      text: 'Now playing: a song nobody asked for.',
      user: 'U0MUSIC',
      bot_id: 'B0MUSIC',
    });
    await postToApp(h, interactionBody(payload));
    const result = await h.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && c.at >= since && JSON.stringify(c.args.blocks).includes('"verdict"'),
    );
    expect(JSON.stringify(result.args.blocks)).not.toContain('check_author');
    expect(JSON.stringify(result.args.blocks)).not.toContain('short_message');
  });
});

describe('/detect-settings history', () => {
  it('parses the window, refuses bad values and resets', () => {
    expect(parseSettingsCommand('history 50 30')).toEqual({
      kind: 'change',
      patch: { historyMessages: '50', historyDays: '30' },
      done: 'Member checks now read their last 50 messages within 30 days.',
    });
    expect(parseSettingsCommand('history 20 messages 7 days')).toMatchObject({ patch: { historyMessages: '20', historyDays: '7' } });
    expect(parseSettingsCommand('history 14d')).toMatchObject({ patch: { historyDays: '14' } });
    expect(parseSettingsCommand('history 120')).toMatchObject({ patch: { historyMessages: '120' } });
    expect(parseSettingsCommand('history default')).toMatchObject({ patch: { historyMessages: null, historyDays: null } });
    expect(parseSettingsCommand('history 500')).toEqual({ kind: 'invalid', problem: expect.stringMatching(/from 5 to 200/) });
    expect(parseSettingsCommand('history lots')).toEqual({ kind: 'invalid', problem: expect.stringMatching(/is not a history window/) });
  });

  it('is applied to the next member check of the workspace', async () => {
    const set = slashCommandBody(h, 'history 5 2', { command: '/detect-settings', user_id: 'U0ADMIN' });
    await postToApp(h, set.body);
    const done = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === set.responseUrl.split('/').pop());
    expect(done.args.text).toContain("Member checks (`/detect @member`) read the member's last 5 messages within 2 days");

    const reply = await detect('<@U0AUTHOR>');
    expect(authorBodies().at(-1)!.messages.length).toBeLessThanOrEqual(5);
    expect(textOf(reply, 'author_scope')).toContain('from the past 2 days');

    const reset = slashCommandBody(h, 'history default', { command: '/detect-settings', user_id: 'U0ADMIN' });
    await postToApp(h, reset.body);
    const back = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === reset.responseUrl.split('/').pop());
    expect(back.args.text).toContain("read the member's last 50 messages within 30 days (bot default)");
  });
});
