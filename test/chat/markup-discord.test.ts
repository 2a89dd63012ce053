/**
 * Discord's markdown and mentions as the words a reader sees, one row per construct. Constructs and
 * examples follow Discord's "Message Formatting" reference (docs/reference.md#message-formatting in
 * discord/discord-api-docs) and its markdown help article.
 */
import { describe, expect, it } from 'vitest';
import { renderDiscordMarkdown, renderDiscordTimestamp, type DiscordNames } from '../../adapters/chat/markup-discord.ts';

const USER = '80351110224678912';
const ROLE = '165511591545143296';
const CHANNEL = '103735883630395392';
const names: DiscordNames = {
  user: (id) => (id === USER ? 'Nelly' : undefined),
  role: (id) => (id === ROLE ? 'Moderators' : undefined),
  channel: (id) => (id === CHANNEL ? 'general' : undefined),
};

const ROWS: {
  name: string;
  input: string;
  text: string;
  readable: string;
  code?: number;
  mentions?: number;
  emoji?: number;
  links?: number;
}[] = [
  {
    name: 'bold, underline, italic, strike, spoiler',
    input: '**Bold** __under__ *it* _it2_ ~~gone~~ ||secret|| ***both***',
    text: 'Bold under it it2 gone secret both',
    readable: 'Bold under it it2 gone secret both',
  },
  {
    name: 'marks inside words stay',
    input: 'snake_case_name and 2 * 3 = 6',
    text: 'snake_case_name and 2 * 3 = 6',
    readable: 'snake_case_name and 2 * 3 = 6',
  },
  {
    name: 'escaped marks are literal',
    input: '\\*not italic\\* and \\_\\_not underlined\\_\\_',
    text: '*not italic* and __not underlined__',
    readable: '*not italic* and __not underlined__',
  },
  {
    name: 'user mention, both forms',
    input: `Thanks <@${USER}> and <@!${USER}>!`,
    text: 'Thanks!',
    readable: 'Thanks @Nelly and @Nelly!',
    mentions: 2,
  },
  {
    name: 'unknown user, role, channel',
    input: `<@111111111111111111> asks <@&${ROLE}> and <@&222222222222222222> in <#${CHANNEL}> and <#333333333333333333> to look`,
    text: 'asks in to look',
    readable: '@someone asks @Moderators and @role in #general and #channel to look',
    mentions: 5,
  },
  {
    name: '@everyone and @here',
    input: '@everyone the build is green, @here too',
    text: 'the build is green, too',
    readable: '@everyone the build is green, @here too',
    mentions: 2,
  },
  {
    name: 'custom and animated emoji',
    input: 'hello <:blobwave:1234567890123456789> party <a:party:1234567890123456780>',
    text: 'hello party',
    readable: 'hello :blobwave: party :party:',
    emoji: 2,
  },
  {
    name: 'slash command mention',
    input: 'use </detect:1234567890123456789> please',
    text: 'use /detect please',
    readable: 'use /detect please',
  },
  {
    name: 'timestamps (Discord docs example 1618953630)',
    input: 'on <t:1618953630:D> at <t:1618953630:t>, or <t:1618953630>',
    text: 'on April 20, 2021 at 9:20 PM, or April 20, 2021 9:20 PM',
    readable: 'on April 20, 2021 at 9:20 PM, or April 20, 2021 9:20 PM',
  },
  {
    name: 'masked links read as their label; addresses are shown, not scored',
    input: 'read [the guide](https://discord.com/developers/docs) or <https://example.com/x> or https://example.org/y.',
    text: 'read the guide.',
    readable: 'read the guide or https://example.com/x or https://example.org/y.',
    links: 2,
  },
  {
    name: 'headings, subtext, quotes, bullets',
    input: '# Title\n## Sub\n-# small print\n> quoted line\n- one\n* two\n1. three',
    text: 'Title\nSub\nsmall print\nquoted line\none\ntwo\n1. three',
    readable: 'Title\nSub\nsmall print\nquoted line\none\ntwo\n1. three',
  },
  { name: 'multi-line quote', input: '>>> all of\nthis is quoted', text: 'all of\nthis is quoted', readable: 'all of\nthis is quoted' },
  {
    name: 'fenced code left out, language tag dropped',
    input: 'Try:\n```js\nconst x = 1;\n```\nthen tell me',
    text: 'Try:\n\nthen tell me',
    readable: 'Try:\n\nconst x = 1;\n\nthen tell me',
    code: 1,
  },
  {
    name: 'inline code kept as written',
    input: 'run `npm test` and ``a ` b`` now',
    text: 'run npm test and a ` b now',
    readable: 'run npm test and a ` b now',
  },
  {
    name: 'markup inside code is not markup',
    input: '```\n**not bold** <@80351110224678912>\n```',
    text: '',
    readable: '**not bold** <@80351110224678912>',
    code: 1,
  },
];

describe('Discord markdown', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const r = renderDiscordMarkdown(row.input, names);
      expect(r.text).toBe(row.text);
      expect(r.readable).toBe(row.readable);
      expect(r.excluded).toEqual({ codeBlocks: row.code ?? 0, mentions: row.mentions ?? 0, emoji: row.emoji ?? 0, links: row.links ?? 0 });
    });
  }
});

describe('markup leftovers (issue 32, item 10)', () => {
  it('a mention between commas leaves one comma, a list of them ending in ", and" none', () => {
    expect(renderDiscordMarkdown(`See the report, <@${USER}>, mail Ada`, names).text).toBe('See the report, mail Ada');
    expect(renderDiscordMarkdown(`Read <@${USER}>, <#${CHANNEL}>, and the notes.`, names).text).toBe('Read and the notes.');
  });

  it('a quote of a quote loses every ">"; ">>" without a space is no quote', () => {
    const r = renderDiscordMarkdown('> > Thanks for the notes\n> > > and the slides', names);
    expect(r.text).toBe('Thanks for the notes\nand the slides');
    expect(renderDiscordMarkdown('>> 2', names).text).toBe('>> 2');
  });

  it('Unicode emoji are shown, counted and not scored; © and ™ stay', () => {
    const r = renderDiscordMarkdown('Great work 🎉 everyone 👍🏽, thanks 👩‍💻 🇫🇷 1️⃣ Acme™ ©2024', names);
    expect(r.text).toBe('Great work everyone, thanks Acme™ ©2024');
    expect(r.readable).toMatch(/^Great work 🎉 everyone 👍🏽, thanks .+ 🇫🇷 1️⃣ Acme™ ©2024$/u);
    expect(r.excluded.emoji).toBe(5);
  });

  it('a masked link whose label is its own address is an address', () => {
    const r = renderDiscordMarkdown('See [https://x.example/a](https://x.example/a) today', names);
    expect(r.text).toBe('See today');
    expect(r.excluded.links).toBe(1);
  });
});

describe('Discord timestamps', () => {
  // Discord's table for 1618953630 shows these styles in the reader's zone; the bot writes UTC.
  const rows: [string, string][] = [
    ['t', '9:20 PM'],
    ['T', '9:20:30 PM'],
    ['d', '04/20/2021'],
    ['D', 'April 20, 2021'],
    ['f', 'April 20, 2021 9:20 PM'],
    ['F', 'Tuesday, April 20, 2021 9:20 PM'],
  ];
  for (const [style, shown] of rows) it(`${style} → ${shown}`, () => expect(renderDiscordTimestamp('1618953630', style)).toBe(shown));
  it('R is relative to now', () => {
    expect(renderDiscordTimestamp(String(Math.floor(Date.now() / 1000) + 7230), 'R')).toBe('in 2 hours');
  });
});
