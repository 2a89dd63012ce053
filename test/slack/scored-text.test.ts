/**
 * What the real Bolt app sends for scoring, end to end: a mention cannot steer the language guess
 * (`@Ada test` used to come back as Indonesian, an error), code blocks are left out and the reply
 * says so, and the plain-text and rich-text forms of one message are scored alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { interactionBody, LONG_TEXT, messageShortcutPayload, postToApp, slashCommandBody, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

function replyTo(responseUrl: string): Promise<RecordedCall> {
  const id = responseUrl.split('/').pop();
  return h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
}

describe('scored text through the real app', () => {
  it('"@Ada test" is scored as "test": too short to judge, not a language error', async () => {
    const cmd = slashCommandBody(h, '<@U0AUTHOR|ada> test');
    await postToApp(h, cmd.body);
    const reply = JSON.stringify((await replyTo(cmd.responseUrl)).args.blocks);
    expect(h.proxy.detectBodies.at(-1)?.text).toBe('test');
    expect(reply).toMatch(/Request id: `req_/);
    // One word, under the evidence floor: too short to judge, without a percentage.
    expect(reply).toContain('Too short to judge');
    expect(reply).not.toMatch(/\d%/);
    expect(reply).not.toMatch(/does not support/);
  });

  it('a long text gets no guessed short-text warning', async () => {
    const cmd = slashCommandBody(h, `${LONG_TEXT} ${LONG_TEXT} ${LONG_TEXT}`);
    await postToApp(h, cmd.body);
    expect(JSON.stringify((await replyTo(cmd.responseUrl)).args.blocks)).not.toContain('The text is short');
  });

  it('the shortcut scores plain text and rich text of one message alike, code left out and noted', async () => {
    const text = `*Quarterly update* _draft_ :tada: ${LONG_TEXT}\n\`\`\`SELECT * FROM revenue;\`\`\``;
    const blocks = [
      {
        type: 'rich_text',
        block_id: 'q3',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'text', text: 'Quarterly update', style: { bold: true } },
              { type: 'text', text: ' ' },
              { type: 'text', text: 'draft', style: { italic: true } },
              { type: 'text', text: ' ' },
              { type: 'emoji', name: 'tada', unicode: '1f389' },
              { type: 'text', text: ` ${LONG_TEXT}\n` },
            ],
          },
          { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'SELECT * FROM revenue;' }] },
        ],
      },
    ];
    const scored: string[] = [];
    for (const [ts, message] of [
      ['1700000900.000100', { text }],
      ['1700000900.000200', { text, blocks }],
    ] as const) {
      const { payload } = messageShortcutPayload(h, { ts, ...message });
      expect((await postToApp(h, interactionBody(payload))).status).toBe(200);
      const reply = await h.slack.waitFor(
        (c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks).includes(ts.replace('.', '')),
      );
      expect(JSON.stringify(reply.args.blocks)).toContain('Not scored: 1 code block');
      scored.push(h.proxy.detectBodies.at(-1)?.text ?? '');
    }
    expect(scored[0]).toBe(`Quarterly update draft ${LONG_TEXT}`);
    expect(scored[1]).toBe(scored[0]);
  });

  it('leaves no markup stubs in the scored text (issue 32, item 10)', async () => {
    const cases: [string, string][] = [
      ['See the report, <@U0AUTHOR>, mail Ada about the budget', 'See the report, mail Ada about the budget'],
      ['Read <@U0AUTHOR>, <@U0MOD>, and the notes before Monday.', 'Read and the notes before Monday.'],
      ['&gt; &gt; Thanks for the notes on the budget', 'Thanks for the notes on the budget'],
      ['Ask `<@U0AUTHOR>` about the budget', 'Ask about the budget'],
      [
        'See <https://example.com/q3|https://example.com/q3> and <https://example.com/q4|example.com/q4> for the budget',
        'See for the budget',
      ],
    ];
    for (const [typed, scored] of cases) {
      const cmd = slashCommandBody(h, typed);
      await postToApp(h, cmd.body);
      await replyTo(cmd.responseUrl);
      expect(h.proxy.detectBodies.at(-1)?.text).toBe(scored);
    }
  });

  it('`/detect Academic <text>` checks the text in academic mode (issue 32, item 10)', async () => {
    const cmd = slashCommandBody(h, `Academic ${LONG_TEXT}`);
    await postToApp(h, cmd.body);
    await replyTo(cmd.responseUrl);
    expect(h.proxy.detectBodies.at(-1)).toMatchObject({ mode: 'academic', text: LONG_TEXT });
  });
});
