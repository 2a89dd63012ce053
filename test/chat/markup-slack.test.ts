/**
 * Slack's markup as the words a reader sees, one row per construct. `text` is what is scored,
 * `readable` what a reader sees with the marks gone.
 */
import { describe, expect, it } from 'vitest';
import { renderRichTextBlock, renderSlackDate, renderSlackMrkdwn, type SlackNameResolver } from '../../adapters/chat/markup-slack.ts';

const names: SlackNameResolver = {
  user: async (id) => ({ U1: 'Ada', U2: 'Grace' })[id],
  channel: async (id) => ({ C1: 'general' })[id],
  usergroup: async (id) => ({ S1: 'mods' })[id],
};

// 1392734382 is 2014-02-18 14:39:42 UTC, the timestamp of Slack's own date-formatting examples.
const TS = 1392734382;

const MRKDWN: { name: string; input: string; text: string; readable: string; code?: number; mentions?: number }[] = [
  {
    name: 'bold, italic, strike, inline code',
    input: '*Quarterly update* _draft_ ~old~ `npm test` ready',
    text: 'Quarterly update draft old npm test ready',
    readable: 'Quarterly update draft old npm test ready',
  },
  { name: 'nested marks', input: '*_really_ important*', text: 'really important', readable: 'really important' },
  {
    name: 'marks inside words stay (snake_case, 2*3*4)',
    input: 'set max_retry_count to 2*3*4',
    text: 'set max_retry_count to 2*3*4',
    readable: 'set max_retry_count to 2*3*4',
  },
  {
    name: 'emoji shortcodes and skin tones',
    input: 'Shipped :tada: thanks :wave::skin-tone-2: at 10:30:45',
    text: 'Shipped thanks at 10:30:45',
    readable: 'Shipped :tada: thanks :wave::skin-tone-2: at 10:30:45',
  },
  {
    // What Slack's emoji picker inserts when two are chosen in a row.
    name: 'emoji codes typed back to back',
    input: ':tada::tada: Great launch everyone :rocket::wave::skin-tone-3::fire:',
    text: 'Great launch everyone',
    readable: ':tada::tada: Great launch everyone :rocket::wave::skin-tone-3::fire:',
  },
  { name: 'a message of emoji codes only', input: ':tada::rocket:', text: '', readable: ':tada::rocket:' },
  {
    name: 'colons in code-like words are no emoji',
    input: 'call std::vector::push_back at 10:30:45 on a:b:c',
    text: 'call std::vector::push_back at 10:30:45 on a:b:c',
    readable: 'call std::vector::push_back at 10:30:45 on a:b:c',
  },
  {
    name: 'user mention resolved, left out of the score',
    input: 'Thanks <@U1>, see you',
    text: 'Thanks, see you',
    readable: 'Thanks @Ada, see you',
    mentions: 1,
  },
  {
    name: 'user mention with label, unknown user',
    input: '<@U9|bob> and <@U404> agree',
    text: 'agree',
    readable: '@bob and @someone agree',
    mentions: 2,
  },
  {
    name: 'channel with and without name',
    input: 'see <#C1> and <#C2|random> today',
    text: 'see today',
    readable: 'see #general and #random today',
    mentions: 2,
  },
  {
    name: 'usergroup with handle, lookup and neither',
    input: '<!subteam^S2|@leads> <!subteam^S1> <!subteam^S3> please review',
    text: 'please review',
    readable: '@leads @mods @group please review',
    mentions: 3,
  },
  {
    name: 'broadcasts',
    input: '<!here> <!channel> lunch is ready',
    text: 'lunch is ready',
    readable: '@here @channel lunch is ready',
    mentions: 2,
  },
  {
    name: 'links: label scored, bare address shown only, mailto',
    input: 'read <https://example.com|the docs>, <https://x.org/a?b=1&amp;c=2> or <mailto:a@b.co|mail me>',
    text: 'read the docs, or mail me',
    readable: 'read the docs, https://x.org/a?b=1&c=2 or mail me',
  },
  {
    name: 'entities decoded once, &amp; last',
    input: 'if a &lt; b &amp;&amp; c &gt; d &amp;lt;',
    text: 'if a < b && c > d &lt;',
    readable: 'if a < b && c > d &lt;',
  },
  {
    name: 'code block left out and counted',
    input: 'Run this:\n```\nrm -rf /tmp/x\n```\nthen report back',
    text: 'Run this:\n\nthen report back',
    readable: 'Run this:\n\nrm -rf /tmp/x\n\nthen report back',
    code: 1,
  },
  {
    name: 'block quotes',
    input: '&gt; quoted *words*\n&gt;&gt;&gt; all the rest',
    text: 'quoted words\nall the rest',
    readable: 'quoted words\nall the rest',
  },
  {
    name: 'date with fallback reads as the fallback, the author’s own words and time zone',
    input: 'due <!date^1392734382^{date_short}|Feb 18, 2014 PST>',
    text: 'due Feb 18, 2014 PST',
    readable: 'due Feb 18, 2014 PST',
  },
  {
    name: 'dates side by side stay apart',
    input: 'from <!date^1609459200^{date_num}|2021><!date^1720656000^{date_num}|2024-07-11>, then<!date^1392734382^{date_num}>',
    text: 'from 2021 2024-07-11, then 2014-02-18',
    readable: 'from 2021 2024-07-11, then 2014-02-18',
  },
  {
    name: 'a word that only pointed at left-out names goes with them; before an emoji it stays',
    input: 'Attached note from <@U1>. Sent to <@U1> <@U2>! What is this for :thinking:?',
    text: 'Attached note. Sent! What is this for?',
    readable: 'Attached note from @Ada. Sent to @Ada @Grace! What is this for :thinking:?',
    mentions: 3,
  },
  {
    name: 'a connector left with nothing to connect goes with the links and mentions',
    input:
      'See the Q3 sheet <https://x.example/q3> and <@U1>. Read the guide <https://a.example> or <https://b.example> or <https://c.example>.',
    text: 'See the Q3 sheet. Read the guide.',
    readable: 'See the Q3 sheet https://x.example/q3 and @Ada. Read the guide https://a.example or https://b.example or https://c.example.',
    mentions: 1,
  },
  {
    name: 'date without fallback does not vanish',
    input: 'due <!date^1392734382^{date_num} {time}>',
    text: 'due 2014-02-18 2:39 PM',
    readable: 'due 2014-02-18 2:39 PM',
  },
  {
    name: 'plain @handle typed as text is a name too (not addresses)',
    input: '@Ada test it, mail ada@example.com',
    text: 'test it, mail ada@example.com',
    readable: '@Ada test it, mail ada@example.com',
    mentions: 1,
  },
];

describe('Slack mrkdwn', () => {
  for (const row of MRKDWN) {
    it(row.name, async () => {
      const r = await renderSlackMrkdwn(row.input, names);
      expect(r.text).toBe(row.text);
      expect(r.readable).toBe(row.readable);
      expect(r.excluded.codeBlocks).toBe(row.code ?? 0);
      expect(r.excluded.mentions).toBe(row.mentions ?? 0);
    });
  }

  it('counts each of several emoji typed back to back', async () => {
    expect((await renderSlackMrkdwn(':tada::rocket: launch day :wave::skin-tone-2:')).excluded.emoji).toBe(3);
  });

  it('survives a resolver that throws, and no resolver at all', async () => {
    expect((await renderSlackMrkdwn('<@U1> in <#C1>', { user: () => Promise.reject(new Error('missing_scope')) })).readable).toBe(
      '@someone in #channel',
    );
    expect((await renderSlackMrkdwn('<@U1> hi')).text).toBe('hi');
  });

  it('drops private-use characters from input, which the renderer uses as marks', async () => {
    expect((await renderSlackMrkdwn('a\uE000b\uE001c words')).text).toBe('abc words');
  });
});

describe('Slack dates', () => {
  const rows: [string, string][] = [
    ['{date_num}', '2014-02-18'],
    ['{date}', 'February 18th, 2014'],
    ['{date_short}', 'Feb 18, 2014'],
    ['{date_long}', 'Tuesday, February 18th, 2014'],
    ['{date_pretty}', 'February 18th, 2014'],
    ['{time}', '2:39 PM'],
    ['{time_secs}', '2:39:42 PM'],
    ['Posted {date_short} at {time}', 'Posted Feb 18, 2014 at 2:39 PM'],
    ['{unknown}', '{unknown}'],
  ];
  for (const [format, shown] of rows) {
    it(`${format} → ${shown}`, () => expect(renderSlackDate(TS, format, undefined)).toBe(shown));
  }
  it('{ago} is relative to now', () => {
    expect(renderSlackDate(Math.floor(Date.now() / 1000) - 180, '{ago}', undefined)).toBe('3 minutes ago');
  });
  it('uses the fallback whenever there is one, and the timestamp only without it', () => {
    expect(renderSlackDate('soon', '{date}', 'next week')).toBe('next week');
    expect(renderSlackDate(TS, '{date}', 'Feb 18, 2014 PST')).toBe('Feb 18, 2014 PST');
    expect(renderSlackDate(TS, '{date}', '  ')).toBe('February 18th, 2014');
    expect(renderSlackDate(undefined, '{date}', undefined)).toBe('');
  });
});

const section = (...elements: unknown[]) => ({ type: 'rich_text_section', elements });
const t = (text: string, style?: Record<string, boolean>) => ({ type: 'text', text, ...(style ? { style } : {}) });
const list = (style: 'ordered' | 'bullet', indent: number, items: string[], offset?: number) => ({
  type: 'rich_text_list',
  style,
  indent,
  ...(offset !== undefined ? { offset } : {}),
  elements: items.map((i) => section(t(i))),
});

describe('Slack rich text', () => {
  it('keeps numbering across nested ordered lists, with and without offset', async () => {
    const block = {
      type: 'rich_text',
      elements: [
        list('ordered', 0, ['Plan', 'Build']),
        list('ordered', 1, ['design', 'review']),
        list('bullet', 2, ['notes']),
        list('ordered', 0, ['Ship']),
        list('ordered', 1, ['announce']),
        list('ordered', 0, ['Measure'], 3),
      ],
    };
    const r = await renderRichTextBlock(block);
    expect(r.readable).toBe('1. Plan\n2. Build\na. design\nb. review\n▪ notes\n3. Ship\na. announce\n4. Measure');
    expect(r.text).toBe('1. Plan\n2. Build\na. design\nb. review\nnotes\n3. Ship\na. announce\n4. Measure');
  });

  it('a list after a paragraph starts again at 1', async () => {
    const block = { type: 'rich_text', elements: [list('ordered', 0, ['a']), section(t('Then:\n')), list('ordered', 0, ['b'])] };
    expect((await renderRichTextBlock(block)).readable).toBe('1. a\nThen:\n1. b');
  });

  it('renders date elements without fallback, usergroup handles, and leaves preformatted text out', async () => {
    const block = {
      type: 'rich_text',
      elements: [
        section(
          t('Meeting '),
          { type: 'date', timestamp: TS, format: '{date_long} at {time}' },
          t(' for '),
          { type: 'usergroup', usergroup_id: 'S9' },
          t(' and '),
          { type: 'usergroup', usergroup_id: 'S8', handle: 'design-team' },
          t(' '),
          { type: 'emoji', name: 'wave', unicode: '1f44b', skin_tone: 3 },
          t('\n'),
        ),
        { type: 'rich_text_preformatted', elements: [t('const x = 1;')] },
        { type: 'rich_text_quote', elements: [t('quoted', { italic: true })] },
      ],
    };
    const r = await renderRichTextBlock(block);
    expect(r.readable).toBe(
      'Meeting Tuesday, February 18th, 2014 at 2:39 PM for @group and @design-team :wave::skin-tone-3:\n\nconst x = 1;\nquoted',
    );
    expect(r.text).toBe('Meeting Tuesday, February 18th, 2014 at 2:39 PM for\n\nquoted');
    expect(r.excluded).toEqual({ codeBlocks: 1, mentions: 2, emoji: 1, links: 0 });
  });

  it('does not decode entities in rich text, which Slack does not escape', async () => {
    const block = { type: 'rich_text', elements: [section(t('a &amp; b'))] };
    expect((await renderRichTextBlock(block)).text).toBe('a &amp; b');
  });
});
