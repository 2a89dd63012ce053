/**
 * Slack's markup as the words a reader sees: mrkdwn (message `text`, slash-command text, section and
 * context blocks, attachments) and rich-text blocks (what Slack's composer sends). Both paths of one
 * message give the same text: Slack writes the `text` of a composed message from its rich text,
 * with `*bold*`, `• ` bullets, `1.`/`a.`/`i.` numbers and `:emoji:` codes, and both are read here to
 * that one form.
 */
import {
  dateFromEpochSeconds,
  dateStyles,
  finishRendering,
  joinRendered,
  markCodeBlock,
  markBareUrls,
  markEmoji,
  markLink,
  markMention,
  markPlainHandles,
  relativeTime,
  withoutReservedCharacters,
  type RenderedText,
} from './markup.ts';

/** Looks up names for ids; any lookup may fail or be absent, and the renderer then uses a neutral word. */
export interface SlackNameResolver {
  user?(id: string): Promise<string | undefined>;
  channel?(id: string): Promise<string | undefined>;
  usergroup?(id: string): Promise<string | undefined>;
}

/** Slack escapes exactly these three in message text; `&amp;` last so `&amp;lt;` stays `&lt;`. */
export function decodeSlackEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

async function lookup(fn: ((id: string) => Promise<string | undefined>) | undefined, id: string): Promise<string | undefined> {
  if (!fn) return undefined;
  try {
    const name = await fn(id);
    return name?.trim() || undefined;
  } catch {
    return undefined;
  }
}

const at = (name: string): string => (name.startsWith('@') ? name : `@${name}`);

async function userMention(id: string, names: SlackNameResolver): Promise<string> {
  const name = await lookup(names.user, id);
  return markMention(name ? at(name) : '@someone');
}

async function channelMention(id: string, names: SlackNameResolver): Promise<string> {
  const name = await lookup(names.channel, id);
  return markMention(name ? `#${name}` : '#channel');
}

/** A user group shows its handle (`@mods`) when the payload or a lookup has it, else `@group`. */
async function groupMention(id: string, handle: string | undefined, names: SlackNameResolver): Promise<string> {
  const name = handle?.trim() || (await lookup(names.usergroup, id));
  return markMention(name ? at(name) : '@group');
}

// Date tokens as Slack documents them for `<!date^…>` and rich-text `date` elements.
const DATE_TOKENS: Record<string, (d: Date) => string> = {
  date_num: dateStyles.numeric,
  date: dateStyles.long,
  date_short: dateStyles.short,
  date_long: dateStyles.withWeekday,
  // "today"/"yesterday" depend on when it is read; the bot writes the date itself.
  date_pretty: dateStyles.long,
  date_short_pretty: dateStyles.short,
  date_long_pretty: dateStyles.withWeekday,
  time: dateStyles.time,
  time_secs: dateStyles.timeWithSeconds,
  ago: (d) => relativeTime(d.getTime() / 1000),
};

/**
 * A Slack date as words. The fallback text is what the author's app wrote for readers whose app
 * cannot show the date (in the author's time zone and words), so it is used when present; without
 * it the date is written from the timestamp and the format's `{tokens}`, in UTC (the bot has no
 * reader's time zone); without a format, the date.
 */
export function renderSlackDate(timestamp: unknown, format: unknown, fallback: unknown): string {
  if (typeof fallback === 'string' && fallback.trim()) return fallback.trim();
  const d = dateFromEpochSeconds(timestamp);
  if (!d) return '';
  const pattern = typeof format === 'string' && format.trim() ? format : '{date_short}';
  return pattern.replace(/\{(\w+)\}/g, (token, name: string) => DATE_TOKENS[name]?.(d) ?? token);
}

// A date is a word of its own: where it would touch a word or another date ("2021" then "2024-07-11"
// read "20212024-07-11"), a space keeps them apart, as Slack's apps show them.
const DATE_OPEN = '\uE0F8';
const DATE_CLOSE = '\uE0F9';

function markDate(shown: string): string {
  return shown ? `${DATE_OPEN}${shown}${DATE_CLOSE}` : '';
}

function separateDates(text: string): string {
  return text
    .replace(new RegExp(`(?<=[\\p{L}\\p{N}.,;:!?)\\]])${DATE_OPEN}`, 'gu'), ` ${DATE_OPEN}`)
    .replace(new RegExp(`${DATE_CLOSE}(?=[\\p{L}\\p{N}(\\[])`, 'gu'), `${DATE_CLOSE} `)
    .replace(new RegExp(`${DATE_CLOSE}${DATE_OPEN}`, 'g'), `${DATE_CLOSE} ${DATE_OPEN}`)
    .replace(new RegExp(`[${DATE_OPEN}${DATE_CLOSE}]`, 'g'), '');
}

/** True when a link's label only repeats its address (scheme, `www.` and a trailing slash aside). */
export function isOwnAddress(label: string, url: string): boolean {
  const bare = (s: string): string =>
    s
      .trim()
      .toLowerCase()
      .replace(/^(?:https?:\/\/|mailto:)/, '')
      .replace(/^www\./, '')
      .replace(/\/+$/, '');
  return bare(label) !== '' && bare(label) === bare(url);
}

/** One `<…>` token of mrkdwn as the words a reader sees (mentions and emoji marked). */
async function renderToken(inner: string, names: SlackNameResolver): Promise<string> {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) return label ? markMention(at(label)) : userMention(target.slice(1), names);
  if (target.startsWith('#')) return label ? markMention(`#${label}`) : channelMention(target.slice(1), names);
  if (target.startsWith('!')) {
    const command = target.slice(1);
    if (command === 'here' || command === 'channel' || command === 'everyone') return markMention(`@${command}`);
    if (command.startsWith('subteam^')) return groupMention(command.slice('subteam^'.length), label, names);
    if (command.startsWith('date^')) {
      const [, timestamp, format] = command.split('^');
      return markDate(renderSlackDate(timestamp, format, label));
    }
    return label ?? '';
  }
  // A link: its label when it has one, else the address, shown but not scored (mailto: dropped).
  // A label that is the address itself (`<https://x.y|x.y>`) is an address, not words.
  if (label && !isOwnAddress(label, target)) return label;
  return markLink(label || target.replace(/^mailto:/, ''));
}

/** `*bold*`, `_italic_`, `~strike~`: marks open after a boundary and close before one, as Slack parses them. */
const FORMATTING = /(^|[\s(["'“‘>/-])([*_~])(?=\S)([^\n]*?[^\s\\])\2(?=$|[\s.,;:!?)\]"'”’</-])/gm;

function withoutFormatting(text: string): string {
  let out = text;
  // Nested marks (`*_both_*`) take one pass per level.
  for (let i = 0; i < 3; i++) {
    const next = out.replace(FORMATTING, '$1$3');
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * A run of emoji codes: `:tada:`, `:wave::skin-tone-2:`, and codes typed back to back as Slack's
 * picker inserts them (`:tada::rocket:`). The run is matched whole because inside it each code starts
 * right after the previous one's colon; a lone code after a colon (`std::vector::push`) or inside
 * words (`10:30:45`, `a:b:c`) is no emoji.
 */
const EMOJI_RUN = /(?<![\p{L}\p{N}:])(?::[a-z0-9_+'-]+:(?::skin-tone-[2-6]:)?)+(?![\p{L}\p{N}])/giu;
const EMOJI_CODE = /:[a-z0-9_+'-]+:(?::skin-tone-[2-6]:)?/giu;

function markEmojiRuns(text: string): string {
  return text.replace(EMOJI_RUN, (run) => run.replace(EMOJI_CODE, (code) => markEmoji(code)));
}

/** Prose of mrkdwn (no code): tokens, quotes, formatting, emoji, entities. */
async function renderProse(text: string, names: SlackNameResolver): Promise<string> {
  // Block quotes arrive escaped: `&gt; line`, `&gt;&gt;&gt; rest`.
  // A quote of a quote (`&gt; &gt; Thanks`, pasted mail) loses every level, not only the first.
  const unquoted = text.replace(/^(?:(?:&gt;&gt;&gt;|&gt;)[ \t]?)+/gm, '');
  const parts: string[] = [];
  let last = 0;
  const styled = (s: string): string => markBareUrls(markPlainHandles(decodeSlackEntities(markEmojiRuns(withoutFormatting(s)))));
  for (const match of unquoted.matchAll(/<([^<>\n]+)>/g)) {
    const index = match.index ?? 0;
    parts.push(styled(unquoted.slice(last, index)));
    parts.push(decodeSlackEntities(await renderToken(match[1] ?? '', names)));
    last = index + match[0].length;
  }
  parts.push(styled(unquoted.slice(last)));
  // Formatting may span a token (`*see <#C1>*`): a second pass over the joined text removes those marks.
  return withoutFormatting(separateDates(parts.join('')));
}

/**
 * Inline code keeps its words as written, but Slack still sends mentions and channels in it as
 * `<@U1>` / `<#C1>` / `<!here>`, which a reader sees as names: they are marked like any mention.
 */
async function markInlineCode(code: string, names: SlackNameResolver): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const match of code.matchAll(/<([@#!][^<>\n]+)>/g)) {
    const index = match.index ?? 0;
    parts.push(decodeSlackEntities(code.slice(last, index)));
    parts.push(decodeSlackEntities(await renderToken(match[1] ?? '', names)));
    last = index + match[0].length;
  }
  parts.push(decodeSlackEntities(code.slice(last)));
  return parts.join('');
}

/** Mrkdwn as marked text: code blocks marked, inline code kept as written, the rest rendered. */
async function markMrkdwn(text: string, names: SlackNameResolver): Promise<string> {
  const clean = withoutReservedCharacters(text);
  const out: string[] = [];
  let last = 0;
  for (const match of clean.matchAll(/```([\s\S]*?)```|`([^`\n]+)`/g)) {
    const index = match.index ?? 0;
    out.push(await renderProse(clean.slice(last, index), names));
    out.push(match[1] !== undefined ? markCodeBlock(decodeSlackEntities(match[1])) : await markInlineCode(match[2] ?? '', names));
    last = index + match[0].length;
  }
  out.push(await renderProse(clean.slice(last), names));
  return out.join('');
}

/** Slack mrkdwn (message `text`, slash-command text, mrkdwn text objects) as words. */
export async function renderSlackMrkdwn(text: string, names: SlackNameResolver = {}): Promise<RenderedText> {
  return finishRendering(await markMrkdwn(text, names));
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Rich-text inline elements as marked text. Rich text is not entity-escaped, and styles carry no marks. */
async function markInline(elements: unknown[], names: SlackNameResolver): Promise<string> {
  let out = '';
  for (const el of elements) {
    if (!isObject(el)) continue;
    switch (el.type) {
      case 'text':
        out += withoutReservedCharacters(str(el.text));
        break;
      case 'link':
        out +=
          str(el.text) && !isOwnAddress(str(el.text), str(el.url))
            ? withoutReservedCharacters(str(el.text))
            : markLink(withoutReservedCharacters(str(el.text)) || str(el.url).replace(/^mailto:/, ''));
        break;
      case 'user':
        out += await userMention(str(el.user_id), names);
        break;
      case 'channel':
        out += await channelMention(str(el.channel_id), names);
        break;
      case 'usergroup':
        out += await groupMention(str(el.usergroup_id), str(el.handle) || undefined, names);
        break;
      case 'broadcast':
        out += markMention(`@${str(el.range) || 'here'}`);
        break;
      case 'team':
        out += markMention('@workspace');
        break;
      case 'emoji':
        out += markEmoji(`:${str(el.name)}:${typeof el.skin_tone === 'number' ? `:skin-tone-${el.skin_tone}:` : ''}`);
        break;
      case 'date':
        out += markDate(renderSlackDate(el.timestamp, el.format, el.fallback));
        break;
      case 'color':
        out += str(el.value);
        break;
      default:
        out += withoutReservedCharacters(str(el.text));
    }
  }
  return separateDates(out);
}

const BULLETS = ['•', '◦', '▪'];

function toLetters(n: number): string {
  let s = '';
  for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) s = String.fromCharCode(97 + ((k - 1) % 26)) + s;
  return s;
}

function toRoman(n: number): string {
  const table: [number, string][] = [
    [1000, 'm'],
    [900, 'cm'],
    [500, 'd'],
    [400, 'cd'],
    [100, 'c'],
    [90, 'xc'],
    [50, 'l'],
    [40, 'xl'],
    [10, 'x'],
    [9, 'ix'],
    [5, 'v'],
    [4, 'iv'],
    [1, 'i'],
  ];
  let s = '';
  let k = n;
  for (const [value, letters] of table) {
    while (k >= value) {
      s += letters;
      k -= value;
    }
  }
  return s;
}

/** The marker of item `n` (1-based) at `indent`, as Slack's clients draw it: 1. → a. → i. and • → ◦ → ▪. */
function listMarker(ordered: boolean, indent: number, n: number): string {
  if (!ordered) return BULLETS[indent % 3]!;
  const style = indent % 3;
  return `${style === 0 ? n : style === 1 ? toLetters(n) : toRoman(n)}.`;
}

/**
 * A `rich_text` block. Consecutive lists are one list to a reader: a nested list is a separate
 * `rich_text_list` with a larger `indent`, and the outer list then continues in another element, so
 * numbering is counted per indent level across them (Slack sends `offset` only sometimes).
 */
async function markRichText(block: Json, names: SlackNameResolver): Promise<string> {
  const pieces: string[] = [];
  let counters: number[] = [];
  for (const child of asArray(block.elements)) {
    if (!isObject(child)) continue;
    if (child.type !== 'rich_text_list') counters = [];
    switch (child.type) {
      case 'rich_text_list': {
        const ordered = child.style === 'ordered';
        const indent = typeof child.indent === 'number' && child.indent > 0 ? Math.floor(child.indent) : 0;
        counters = counters.slice(0, indent + 1);
        let n = typeof child.offset === 'number' && child.offset > 0 ? child.offset : (counters[indent] ?? 0);
        const items: string[] = [];
        for (const item of asArray(child.elements)) {
          if (!isObject(item)) continue;
          n++;
          items.push(
            `${'    '.repeat(indent)}${listMarker(ordered, indent, n)} ${(await markInline(asArray(item.elements), names)).trim()}`,
          );
        }
        counters[indent] = n;
        pieces.push(items.join('\n'));
        break;
      }
      case 'rich_text_preformatted':
        pieces.push(markCodeBlock(await markInline(asArray(child.elements), names)));
        break;
      case 'rich_text_section':
      case 'rich_text_quote':
        pieces.push(await markInline(asArray(child.elements), names));
        break;
      default:
        break;
    }
  }
  // Sections carry their own line breaks inside text elements; other elements start on a new line.
  return pieces.map((p) => p.replace(/\n+$/, '')).join('\n');
}

/** A rich_text block as words. */
export async function renderRichTextBlock(block: Json, names: SlackNameResolver = {}): Promise<RenderedText> {
  return finishRendering(await markRichText(block, names));
}

/** A text object (`mrkdwn` or `plain_text`) as marked text. */
async function markTextObject(obj: unknown, names: SlackNameResolver): Promise<string> {
  if (!isObject(obj) || typeof obj.text !== 'string') return '';
  return obj.type === 'mrkdwn' ? markMrkdwn(obj.text, names) : withoutReservedCharacters(obj.text);
}

/**
 * `*Type:*` and `Type:` labels of section fields are layout, not prose: a field `*Priority:*\nHigh`
 * reads as "Priority: High" on one line, the way a form is read.
 */
async function markField(obj: unknown, names: SlackNameResolver): Promise<string> {
  const text = await markTextObject(obj, names);
  return text.replace(/^([^\n]{1,60}:)[ \t]*\n+/, '$1 ');
}

/** Text of the layout blocks bots post (section, header, context). */
async function markLayoutBlock(block: Json, names: SlackNameResolver): Promise<string> {
  switch (block.type) {
    case 'section': {
      const parts = [await markTextObject(block.text, names)];
      for (const f of asArray(block.fields)) parts.push(await markField(f, names));
      return parts.filter(Boolean).join('\n');
    }
    case 'header':
      return markTextObject(block.text, names);
    case 'context': {
      const parts: string[] = [];
      for (const e of asArray(block.elements)) parts.push(await markTextObject(e, names));
      return parts.filter(Boolean).join(' ');
    }
    case 'rich_text':
      return markRichText(block, names);
    default:
      return '';
  }
}

async function renderBlocks(blocks: unknown[], names: SlackNameResolver): Promise<RenderedText> {
  const parts: RenderedText[] = [];
  for (const b of blocks) if (isObject(b)) parts.push(finishRendering(await markLayoutBlock(b, names)));
  return joinRendered(parts);
}

async function renderAttachment(att: Json, names: SlackNameResolver): Promise<RenderedText> {
  const parts: RenderedText[] = [];
  const field = async (v: unknown): Promise<void> => {
    if (typeof v === 'string' && v.trim()) parts.push(await renderSlackMrkdwn(v, names));
  };
  await field(att.pretext);
  await field(att.title);
  await field(att.text);
  for (const f of asArray(att.fields)) {
    if (!isObject(f)) continue;
    await field(f.title);
    await field(f.value);
  }
  // Attachments that carry blocks (e.g. a shared message) hold their text there.
  if (parts.length === 0 && asArray(att.blocks).length > 0) parts.push(await renderBlocks(asArray(att.blocks), names));
  if (parts.every((p) => !p.readable)) await field(att.fallback);
  const joined = joinRendered(parts);
  return { ...joined, text: joined.text.replace(/\n\n/g, '\n'), readable: joined.readable.replace(/\n\n/g, '\n') };
}

/** The subset of a Slack message object that carries text. */
export interface SlackMessageLike {
  text?: string | undefined;
  blocks?: unknown[] | undefined;
  attachments?: unknown[] | undefined;
}

/**
 * The words of a message as its readers see them. Blocks are preferred over `text` because both
 * hold the same words and only the blocks carry mention ids and dates reliably; messages without
 * blocks (older clients, some bots) fall back to `text`. Attachment text is appended, since clients
 * show it as part of the message.
 */
export async function renderSlackMessage(message: SlackMessageLike, names: SlackNameResolver = {}): Promise<RenderedText> {
  const parts: RenderedText[] = [];
  const fromBlocks = await renderBlocks(asArray(message.blocks), names);
  if (fromBlocks.readable) parts.push(fromBlocks);
  else if (typeof message.text === 'string' && message.text.trim()) parts.push(await renderSlackMrkdwn(message.text, names));
  for (const att of asArray(message.attachments)) {
    if (isObject(att)) parts.push(await renderAttachment(att, names));
  }
  return joinRendered(parts);
}
