/**
 * Whole Slack messages as the shortcut reads them, and the promise that the plain `text` and the
 * rich-text blocks of one message give the same words.
 *
 * Rich-text payloads follow the examples of Slack's Block Kit reference (docs.slack.dev/reference/
 * block-kit/blocks/rich-text-block and the rich_text_list / rich_text_section element pages: "My
 * favorite Slack features (in no particular order): Huddles, Canvas, Developing with Block Kit",
 * the styled "Hello there, I am a basic rich text block!" section, the quote and preformatted
 * examples). Their `text` twins are what Slack's composer writes beside such blocks in a message
 * event (mrkdwn: `*bold*`, `_italic_`, `~strike~`, `• ` bullets, `<@U…>`, `:emoji:`).
 */
import { describe, expect, it } from 'vitest';
import { extractSlackMessageText, renderSlackMessage, type NameResolver } from '../../adapters/slack/message-text.ts';

const names: NameResolver = {
  user: async (id) => ({ U1: 'Ada', U2: 'Grace' })[id],
  channel: async (id) => ({ C1: 'general' })[id],
  usergroup: async (id) => ({ S1: 'mods' })[id],
};

const text = (t: string, style?: Record<string, boolean>) => ({ type: 'text', text: t, ...(style ? { style } : {}) });
const section = (...elements: unknown[]) => ({ type: 'rich_text_section', elements });

/** Messages as Slack delivers them: the same words as `text` (mrkdwn) and as rich-text `blocks`. */
const TWINS: { name: string; text: string; elements: unknown[] }[] = [
  {
    name: 'Slack docs: rich text list',
    text: 'My favorite Slack features (in no particular order):\n• Huddles\n• Canvas\n• Developing with Block Kit',
    elements: [
      section(text('My favorite Slack features (in no particular order):')),
      {
        type: 'rich_text_list',
        style: 'bullet',
        indent: 0,
        border: 0,
        elements: [section(text('Huddles')), section(text('Canvas')), section(text('Developing with Block Kit'))],
      },
    ],
  },
  {
    name: 'Slack docs: styled section',
    text: 'Hello there, *I am a basic rich text block!* _with italics_ ~and strike~ and `code`',
    elements: [
      section(
        text('Hello there, '),
        text('I am a basic rich text block!', { bold: true }),
        text(' '),
        text('with italics', { italic: true }),
        text(' '),
        text('and strike', { strike: true }),
        text(' and '),
        text('code', { code: true }),
      ),
    ],
  },
  {
    name: 'mentions, channel, group, emoji and a link',
    text: 'Thanks <@U1> for posting in <#C1> :tada: cc <!subteam^S1> — notes at <https://example.com/q3|the Q3 page>',
    elements: [
      section(
        text('Thanks '),
        { type: 'user', user_id: 'U1' },
        text(' for posting in '),
        { type: 'channel', channel_id: 'C1' },
        text(' '),
        { type: 'emoji', name: 'tada', unicode: '1f389' },
        text(' cc '),
        { type: 'usergroup', usergroup_id: 'S1' },
        text(' — notes at '),
        { type: 'link', url: 'https://example.com/q3', text: 'the Q3 page' },
      ),
    ],
  },
  {
    name: 'Slack docs: quote, preformatted and ordered list',
    text: '&gt; What we learned this quarter\n```npm run deploy```\n1. Write it down\n2. Share it',
    elements: [
      { type: 'rich_text_quote', elements: [text('What we learned this quarter')] },
      { type: 'rich_text_preformatted', border: 0, elements: [text('npm run deploy')] },
      { type: 'rich_text_list', style: 'ordered', indent: 0, elements: [section(text('Write it down')), section(text('Share it'))] },
    ],
  },
  {
    name: 'nested ordered list',
    text: '1. Plan\n    a. design\n    b. review\n2. Build',
    elements: [
      { type: 'rich_text_list', style: 'ordered', indent: 0, elements: [section(text('Plan'))] },
      { type: 'rich_text_list', style: 'ordered', indent: 1, elements: [section(text('design')), section(text('review'))] },
      { type: 'rich_text_list', style: 'ordered', indent: 0, elements: [section(text('Build'))] },
    ],
  },
];

describe('plain text and rich text of one message', () => {
  for (const twin of TWINS) {
    it(`give the same words: ${twin.name}`, async () => {
      const fromText = await renderSlackMessage({ text: twin.text }, names);
      const fromBlocks = await renderSlackMessage(
        { text: twin.text, blocks: [{ type: 'rich_text', block_id: 'b1', elements: twin.elements }] },
        names,
      );
      expect(fromBlocks.text).toBe(fromText.text);
      expect(fromBlocks.excluded).toEqual(fromText.excluded);
      expect(fromBlocks.text).not.toMatch(/[*_~`<>]|:tada:/);
    });
  }

  it('scores the words only: the styled section', async () => {
    const r = await renderSlackMessage({ text: TWINS[1]!.text }, names);
    expect(r.text).toBe('Hello there, I am a basic rich text block! with italics and strike and code');
  });

  it('leaves names out of the score but shows them to readers', async () => {
    const r = await renderSlackMessage({ blocks: [{ type: 'rich_text', elements: TWINS[2]!.elements }] }, names);
    expect(r.readable).toBe('Thanks @Ada for posting in #general :tada: cc @mods — notes at the Q3 page');
    expect(r.text).toBe('Thanks for posting in cc — notes at the Q3 page');
    expect(r.excluded).toEqual({ codeBlocks: 0, mentions: 3, emoji: 1, links: 0 });
  });
});

describe('whole messages', () => {
  it('appends attachments after the message text', async () => {
    const scored = await extractSlackMessageText(
      {
        text: 'Hello <@U1>, the summary',
        attachments: [
          {
            pretext: 'Forwarded:',
            title: 'Q3 report',
            text: 'Revenue &gt; plan',
            fields: [{ title: 'Owner', value: 'Finance team' }],
            fallback: 'ignored',
          },
          { fallback: 'Only a fallback here' },
        ],
      },
      names,
    );
    expect(scored).toBe('Hello, the summary\n\nForwarded:\nQ3 report\nRevenue > plan\nOwner\nFinance team\n\nOnly a fallback here');
  });

  // Block Kit Builder's "Approval" template (Slack's docs), as a bot would post it.
  it('reads Block Kit layout messages, with *Type:* field labels as form labels', async () => {
    const r = await renderSlackMessage({
      text: 'fallback',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'New request' } },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: 'You have a new request:\n*<https://example.com|Fred Enriquez - Time Off request>*' },
        },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*Type:*\nPaid time off' },
            { type: 'mrkdwn', text: '*When:*\nAug 10-Aug 13' },
          ],
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'by <@U1>' }] },
      ],
    });
    expect(r.text).toBe(
      'New request\n\nYou have a new request:\nFred Enriquez - Time Off request\n\nType: Paid time off\nWhen: Aug 10-Aug 13\n\nby',
    );
  });

  it('returns an empty text for a message with nothing to read, or only code', async () => {
    expect(await extractSlackMessageText({ text: '', blocks: [], attachments: [{ image_url: 'https://x/y.png' }] })).toBe('');
    const onlyCode = await renderSlackMessage({ text: '```SELECT 1;```' });
    expect(onlyCode.text).toBe('');
    expect(onlyCode.excluded.codeBlocks).toBe(1);
  });

  it('reads a shared message carried as an attachment with blocks', async () => {
    const scored = await extractSlackMessageText({
      text: '',
      attachments: [{ blocks: [{ type: 'rich_text', elements: [section(text('Shared words'))] }] }],
    });
    expect(scored).toBe('Shared words');
  });
});
