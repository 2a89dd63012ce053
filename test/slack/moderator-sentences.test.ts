/**
 * What a moderator is told on Slack (issue 32): a text too short to judge shows no warning about its
 * score and no button that would show one, and a shortcut on a message with a slow document says at
 * once that it is working (item 7); button values Slack would never send get a sentence (item 12).
 * Real Bolt app, real service, the fake Slack on loopback, payloads in Slack's published shapes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOO_SHORT, WARNING_SENTENCES } from '../../src/words.ts';

const TOO_SHORT_HEADLINE = `${TOO_SHORT.emoji} ${TOO_SHORT.label}`;
import { ACTION_RECHECK_PREFIX, ACTION_SHOW_DETAILS } from '../../adapters/slack/blocks.ts';
import { EVIDENCE_FLOOR_WORDS } from '../../src/contract.ts';
import { countWords } from '../../src/detector/engine.ts';
import { DETAILS_NOT_OPENED_MESSAGE, EXPIRED_MESSAGE, UNREADABLE_BUTTON_MESSAGE } from '../../adapters/slack/listeners/button-context.ts';
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

  it('`{}` as the details value is answered with an ephemeral sentence, without a window or a detection (issue 40, item 7)', async () => {
    const before = h.slack.callsOf('views.open').length;
    const { payload, responseUrl } = buttonPayload(h, { action_id: ACTION_SHOW_DETAILS, value: '{}' });
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === responseUrl.split('/').pop());
    expect(reply.args).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(reply.args.text).toBe(UNREADABLE_BUTTON_MESSAGE);
    expect(h.slack.callsOf('views.open').length).toBe(before);
    expect(h.proxy.detectBodies).toHaveLength(0);
  });

  it('a details button whose check is gone says so in an ephemeral line', async () => {
    const { payload, responseUrl } = buttonPayload(h, {
      action_id: ACTION_SHOW_DETAILS,
      value: JSON.stringify({ c: 'gone', m: 'general' }),
    });
    expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === responseUrl.split('/').pop());
    expect(reply.args).toMatchObject({ response_type: 'ephemeral', replace_original: false, text: EXPIRED_MESSAGE });
    expect(h.proxy.detectBodies).toHaveLength(0);
  });

  it('a details click whose window Slack will not open (invalid_trigger_id) is told to press again', async () => {
    const click = buttonPayload(h, {
      action_id: ACTION_SHOW_DETAILS,
      value: JSON.stringify({ c: 'unknown', m: 'general', t: 'Two words.' }),
    });
    // Unique per run: the app drops a trigger it has already seen, and a Redis that outlives the run remembers it.
    const badTrigger = `not-a-trigger-slack-issued-${randomUUID()}`;
    const payload = { ...click.payload, trigger_id: badTrigger };
    expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === click.responseUrl.split('/').pop());
    expect(reply.args).toMatchObject({ response_type: 'ephemeral', replace_original: false, text: DETAILS_NOT_OPENED_MESSAGE });
    const open = h.slack.callsOf('views.open').at(-1)!;
    expect(open.args.trigger_id).toBe(badTrigger);
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

describe('/detect help says what the bot does (issue 40, item 8)', () => {
  /** The first `words` words of LONG_TEXT, as the engine counts them. */
  function textOf(words: number): string {
    const all = LONG_TEXT.split(/\s+/);
    const text = all.slice(0, words).join(' ');
    expect(countWords(text, 'en')).toBe(words);
    return text;
  }
  const scoreShown = (blocks: unknown): boolean => /\b\d{1,3}%/.test(JSON.stringify(blocks));

  it(`the help's floor is the engine's: ${EVIDENCE_FLOOR_WORDS - 1} words are too short to judge with no score, ${EVIDENCE_FLOOR_WORDS} get one`, async () => {
    const help = slashCommandBody(h, 'help');
    const ack = JSON.parse((await postToApp(h, help.body)).body) as { text: string };
    expect(ack.text).toContain(`Under ${EVIDENCE_FLOOR_WORDS} words a text is too short to judge: no verdict and no score are shown.`);
    expect(ack.text).not.toMatch(/weak|low-confidence/);

    const short = slashCommandBody(h, textOf(EVIDENCE_FLOOR_WORDS - 1));
    await postToApp(h, short.body);
    const shortReply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === short.responseUrl.split('/').pop());
    expect(JSON.stringify(shortReply.args.blocks)).toContain(TOO_SHORT_HEADLINE);
    expect(scoreShown(shortReply.args.blocks)).toBe(false);

    const enough = slashCommandBody(h, textOf(EVIDENCE_FLOOR_WORDS));
    await postToApp(h, enough.body);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === enough.responseUrl.split('/').pop());
    expect(JSON.stringify(reply.args.blocks)).not.toContain(TOO_SHORT_HEADLINE);
    expect(scoreShown(reply.args.blocks)).toBe(true);
  });
});

/** The message shortcut on a message of LONG_TEXT that shares it as the text file `name` (held by the file host until `hold`), and its response_url id. */
function shortcutOnTextFile(harness: Harness, name: string, ts: string, hold?: Promise<void>) {
  const file = harness.slack.shareFile(name, Buffer.from(LONG_TEXT), {
    mimetype: 'text/plain',
    filetype: 'text',
    ...(hold ? { hold } : {}),
  });
  const { payload, responseUrl } = messageShortcutPayload(harness, { ts, text: LONG_TEXT, files: [file], subtype: 'file_share' });
  return { payload, id: responseUrl.split('/').pop() };
}

describe('the shortcut on a message with a slow document', () => {
  it('says at once that it is checking, and takes the notice away once the answer is posted', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { payload, id } = shortcutOnTextFile(h, 'slow-notes.txt', '1700009000.000100', hold);
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

describe('the shortcut on a message with a document, while the check waits its turn', () => {
  it('the queued notice takes the place of the checking notice, and the result takes its place: nothing is left behind', async () => {
    const q = await startHarness({ backendEnv: { DETECT_QUEUE_CONCURRENCY: '1' } });
    try {
      // One check on the wire, held by the slow service, so the shortcut's checks wait behind it.
      q.proxy.delayMs = 2500;
      const first = slashCommandBody(q, LONG_TEXT);
      await postToApp(q, first.body);
      while (q.proxy.detectCalls === 0) await new Promise((r) => setTimeout(r, 20));
      q.proxy.delayMs = 0;
      const { payload, id } = shortcutOnTextFile(q, 'queued-notes.txt', '1700009100.000100');
      expect((await postToApp(q, interactionBody(payload))).status).toBe(200);
      const queued = await q.slack.waitFor(
        (c) => c.method === 'response_url' && c.responseId === id && String(c.args.text).startsWith('⏳ Queued'),
      );
      expect(queued.args.replace_original).toBe(true);
      await q.slack.waitFor(
        (c) => c.method === 'response_url' && c.responseId === id && JSON.stringify(c.args.blocks ?? []).includes('queued-notes.txt'),
        30_000,
      );
      // What the moderator sees through this response_url, replayed as Slack applies it.
      const shown: string[] = [];
      for (const c of q.slack.calls.filter((call) => call.method === 'response_url' && call.responseId === id)) {
        const text = JSON.stringify(c.args.blocks ?? c.args.text ?? '');
        if (c.args.delete_original === true) shown.pop();
        else if (c.args.replace_original === true && shown.length > 0) shown[shown.length - 1] = text;
        else shown.push(text);
      }
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain('queued-notes.txt');
      expect(shown[0]).not.toContain('Checking this message');
    } finally {
      await q.close();
    }
  });
});
