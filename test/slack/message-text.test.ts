import { describe, expect, it } from 'vitest';
import {
  decodeSlackEntities,
  extractSlackMessageText,
  renderRichTextBlock,
  renderSlackMrkdwn,
  type NameResolver,
} from '../../adapters/slack/message-text.ts';

const names: NameResolver = {
  user: async (id) => ({ U1: 'Ada', U2: 'Grace' })[id],
  channel: async (id) => ({ C1: 'general' })[id],
  usergroup: async (id) => ({ S1: 'mods' })[id],
};

describe('Slack mrkdwn', () => {
  it('decodes the three entities Slack escapes, &amp; last', () => {
    expect(decodeSlackEntities('a &lt;b&gt; &amp; c &amp;lt;')).toBe('a <b> & c &lt;');
  });

  it('renders mentions, channels, links and special commands as words', async () => {
    const text =
      'Hi <@U1>, <@U9|bob> and <@U404>: see <#C1>, <#C2|random>, <https://example.com|the docs>, <https://x.org/a?b=1&amp;c=2> and <mailto:a@b.co|mail me>. <!here> <!subteam^S1> <!subteam^S2|@leads> <!date^1392734382^{date}|Feb 18, 2014>';
    expect(await renderSlackMrkdwn(text, names)).toBe(
      'Hi @Ada, @bob and @someone: see #general, #random, the docs, https://x.org/a?b=1&c=2 and mail me. @here @mods @leads Feb 18, 2014',
    );
  });

  it('works without a resolver and survives one that throws', async () => {
    expect(await renderSlackMrkdwn('<@U1> in <#C1>')).toBe('@someone in #a-channel');
    expect(await renderSlackMrkdwn('<@U1>', { user: async () => Promise.reject(new Error('missing_scope')) })).toBe('@someone');
  });

  it('leaves literal angle brackets that were escaped alone', async () => {
    expect(await renderSlackMrkdwn('if a &lt; b &amp;&amp; c &gt; d', names)).toBe('if a < b && c > d');
  });
});

describe('rich text', () => {
  it('walks sections, lists, quotes and preformatted blocks', async () => {
    const block = {
      type: 'rich_text',
      elements: [
        { type: 'rich_text_section', elements: [{ type: 'text', text: 'Intro with ' }, { type: 'emoji', name: 'wave', unicode: '1f44b' }, { type: 'text', text: ' and ' }, { type: 'usergroup', usergroup_id: 'S1' }, { type: 'broadcast', range: 'channel' }, { type: 'text', text: '\n' }] },
        { type: 'rich_text_list', style: 'ordered', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'first' }] }, { type: 'rich_text_section', elements: [{ type: 'text', text: 'second' }] }] },
        { type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://a.b' }] }] },
        { type: 'rich_text_quote', elements: [{ type: 'text', text: 'quoted words' }] },
        { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'const x = 1;' }] },
        { type: 'rich_text_section', elements: [{ type: 'emoji', name: 'custom_party' }, { type: 'date', timestamp: 1, format: '{date}', fallback: 'Jan 1' }] },
      ],
    };
    expect(await renderRichTextBlock(block, names)).toBe(
      'Intro with 👋 and @mods@channel\n1. first\n2. second\n• https://a.b\nquoted words\nconst x = 1;\n:custom_party:Jan 1',
    );
  });

  it('does not decode entities in rich text, which Slack does not escape', async () => {
    const block = { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'a &amp; b' }] }] };
    expect(await renderRichTextBlock(block)).toBe('a &amp; b');
  });
});

describe('whole messages', () => {
  it('prefers rich text over the duplicate plain text, and appends attachments', async () => {
    const text = await extractSlackMessageText(
      {
        text: 'Hello <@U1>',
        blocks: [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'Hello ' }, { type: 'user', user_id: 'U1' }] }] }],
        attachments: [
          { pretext: 'Forwarded:', title: 'Q3 report', text: 'Revenue &gt; plan', fields: [{ title: 'Owner', value: '<@U2>' }], fallback: 'ignored' },
          { fallback: 'Only a fallback here' },
        ],
      },
      names,
    );
    expect(text).toBe('Hello @Ada\n\nForwarded:\nQ3 report\nRevenue > plan\nOwner\n@Grace\n\nOnly a fallback here');
  });

  it('falls back to the text of messages without blocks, and to layout blocks of bot messages', async () => {
    expect(await extractSlackMessageText({ text: 'Plain &amp; simple' })).toBe('Plain & simple');
    expect(
      await extractSlackMessageText({
        text: 'fallback',
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: 'Weekly update' } },
          { type: 'section', text: { type: 'mrkdwn', text: 'Shipped &amp; tested' }, fields: [{ type: 'plain_text', text: 'On time' }] },
          { type: 'context', elements: [{ type: 'mrkdwn', text: 'by <@U1>' }] },
        ],
      }, names),
    ).toBe('Weekly update\n\nShipped & tested\nOn time\n\nby @Ada');
  });

  it('returns an empty string for a message with nothing to read', async () => {
    expect(await extractSlackMessageText({ text: '', blocks: [], attachments: [{ image_url: 'https://x/y.png' }] })).toBe('');
  });

  it('reads a shared message carried as an attachment with blocks', async () => {
    const text = await extractSlackMessageText({
      text: '',
      attachments: [{ blocks: [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'Shared words' }] }] }] }],
    });
    expect(text).toBe('Shared words');
  });
});
