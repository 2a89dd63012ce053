/**
 * What a moderator is told on Slack (issue 32): a text too short to judge shows no warning about its
 * score and no button that would show one, and a shortcut on a message with a slow document says at
 * once that it is working (item 7); button values Slack would never send get a sentence (item 12).
 * Real Bolt app, real service, the fake Slack on loopback, payloads in Slack's published shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOO_SHORT, WARNING_SENTENCES } from '../../src/words.ts';

const TOO_SHORT_HEADLINE = `${TOO_SHORT.emoji} ${TOO_SHORT.label}`;
import { ACTION_RECHECK_PREFIX, ACTION_SHOW_DETAILS } from '../../adapters/slack/blocks.ts';
import {
  buttonPayload,
  interactionBody,
  LONG_TEXT,
  messageShortcutPayload,
  postToApp,
  slashCommandBody,
  startHarness,
  type Harness,
} from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('button values Slack would never send', () => {
  it('a garbled re-check value is answered with a sentence, without replacing the result', async () => {
    const { payload, responseUrl } = buttonPayload(h, { action_id: `${ACTION_RECHECK_PREFIX}academic`, value: '{"c":' });
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === responseUrl.split('/').pop());
    expect(reply.args.replace_original).toBe(false);
    expect(reply.args.text).toMatch(/^This button could not be read: it does not carry a check the bot made/);
    expect(h.proxy.detectBodies).toHaveLength(0);
  });

  it('`{}` as the details value opens a modal with the sentence', async () => {
    const before = h.slack.callsOf('views.open').length;
    const { payload, triggerId } = buttonPayload(h, { action_id: ACTION_SHOW_DETAILS, value: '{}' });
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const open = await h.slack.waitFor((c) => c.method === 'views.open' && c.args.trigger_id === triggerId);
    expect(h.slack.callsOf('views.open').length - before).toBe(1);
    expect(JSON.stringify(open.args.view)).toContain('This button could not be read');
    expect(h.proxy.detectBodies).toHaveLength(0);
  });
});

describe('too short to judge', () => {
  it('shows no warning about the score and no Re-check or Show details button', async () => {
    const cmd = slashCommandBody(h, 'Thanks, see you at noon tomorrow');
    await postToApp(h, cmd.body);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === cmd.responseUrl.split('/').pop());
    const blocks = reply.args.blocks as { block_id?: string; text?: { text: string } }[];
    expect(blocks.find((b) => b.block_id === 'verdict')?.text?.text).toContain(TOO_SHORT_HEADLINE);
    const shown = JSON.stringify(blocks);
    for (const sentence of Object.values(WARNING_SENTENCES)) expect(shown).not.toContain(sentence.slice(0, 40));
    expect(blocks.find((b) => b.block_id === 'warning')).toBeUndefined();
    expect(shown).not.toContain(ACTION_RECHECK_PREFIX);
    expect(shown).not.toContain(ACTION_SHOW_DETAILS);
  });
});

describe('the shortcut on a message with a slow document', () => {
  it('says at once that it is checking, and takes the notice away once the answer is posted', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const file = h.slack.shareFile('slow-notes.txt', Buffer.from(LONG_TEXT), { mimetype: 'text/plain', filetype: 'text', hold });
    const { payload, responseUrl } = messageShortcutPayload(h, {
      ts: '1700009000.000100',
      text: LONG_TEXT,
      files: [file],
      subtype: 'file_share',
    });
    const id = responseUrl.split('/').pop();
    expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
    const notice = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
    expect(notice.args).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(notice.args.text)).toContain('Checking this message and its document…');
    // Nothing else was posted while the file host held the document.
    expect(
      h.slack.calls.filter((c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args).includes('slow-notes.txt')),
    ).toHaveLength(0);
    release();
    const answer = await h.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks ?? []).includes('slow-notes.txt'),
      30_000,
    );
    const withdrawn = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id && c.args.delete_original === true);
    expect(withdrawn.at).toBeGreaterThanOrEqual(answer.at);
  });
});
