/**
 * Discord's markdown and mentions as the words a reader sees: `**bold**`, `__underline__`, `*italic*`,
 * `~~strike~~`, `||spoiler||`, `> quotes`, `# headings`, `-# subtext`, lists, masked links, code
 * (fenced blocks are left out of the score, inline code kept as written), `<@id>` / `<@!id>` /
 * `<#id>` / `<@&id>` mentions, `</command:id>`, custom emoji `<:name:id>` / `<a:name:id>`, and
 * timestamps `<t:seconds:style>`.
 */
import {
  dateFromEpochSeconds,
  dateStyles,
  finishRendering,
  markCodeBlock,
  markBareUrls,
  markEmoji,
  markLink,
  markMention,
  markPlainHandles,
  markUnicodeEmoji,
  relativeTime,
  withoutReservedCharacters,
  type RenderedText,
} from './markup.ts';

/** Names for ids, from the message's own mention data or the bot's caches; undefined when unknown. */
export interface DiscordNames {
  user?(id: string): string | undefined;
  channel?(id: string): string | undefined;
  role?(id: string): string | undefined;
}

// Timestamp styles as Discord documents them (t, T, d, D, f, F, R); `f` when none is given.
const TIMESTAMP_STYLES: Record<string, (d: Date) => string> = {
  t: dateStyles.time,
  T: dateStyles.timeWithSeconds,
  d: dateStyles.slashes,
  D: dateStyles.plain,
  f: (d) => `${dateStyles.plain(d)} ${dateStyles.time(d)}`,
  F: (d) => `${dateStyles.plainWithWeekday(d)} ${dateStyles.time(d)}`,
  R: (d) => relativeTime(d.getTime() / 1000),
};

/** `<t:1618953630:R>` as words (UTC, English); the token itself when the number is unusable. */
export function renderDiscordTimestamp(seconds: string, style: string | undefined): string {
  const d = dateFromEpochSeconds(seconds);
  if (!d) return '';
  return (TIMESTAMP_STYLES[style ?? 'f'] ?? TIMESTAMP_STYLES.f!)(d);
}

// Backslash escapes (`\*not italic\*`) hide a mark from the parser; they are swapped for private-use
// placeholders while parsing and back to the plain character at the end.
const ESCAPABLE = '\\*_~|`>#-[]()<:@.';
const ESCAPE_BASE = 0xe010;

function hideEscapes(text: string): string {
  return text.replace(/\\([\\*_~|`>#\-[\]()<:@.])/g, (_m, ch: string) => String.fromCharCode(ESCAPE_BASE + ESCAPABLE.indexOf(ch)));
}

function restoreEscapes(text: string): string {
  return text.replace(/[\uE010-\uE02F]/g, (ch) => ESCAPABLE[ch.charCodeAt(0) - ESCAPE_BASE] ?? '');
}

function renderMentions(text: string, names: DiscordNames): string {
  return (
    text
      .replace(/<a?:(\w{2,32}):\d{15,21}>/g, (_m, name: string) => markEmoji(`:${name}:`))
      .replace(/<t:(-?\d{1,13})(?::([tTdDfFR]))?>/g, (_m, seconds: string, style: string | undefined) =>
        renderDiscordTimestamp(seconds, style),
      )
      .replace(/<@!?(\d{15,21})>/g, (_m, id: string) => markMention(`@${names.user?.(id) ?? 'someone'}`))
      .replace(/<@&(\d{15,21})>/g, (_m, id: string) => markMention(`@${names.role?.(id) ?? 'role'}`))
      .replace(/<#(\d{15,21})>/g, (_m, id: string) => markMention(`#${names.channel?.(id) ?? 'channel'}`))
      .replace(/<\/([\w -]{1,100}):\d{15,21}>/g, (_m, command: string) => `/${command}`)
      .replace(/<id:(?:browse|customize|guide|linked-roles)(?::\d+)?>/g, (m) => markMention(m.slice(4, -1)))
      // Masked links show their label; `<https://…>` (a link without preview) shows the address.
      .replace(/\[([^\]\n]+)\]\(<?(?:https?:\/\/|mailto:)[^)\s]+>?(?:\s+"[^"]*")?\)/g, '$1')
      .replace(/<((?:https?:\/\/|mailto:)[^>\s]+)>/g, (_m, url: string) => markLink(url.replace(/^mailto:/, '')))
  );
}

/** Line-level markup: headings, subtext, quotes, list bullets. Numbers of ordered lists stay. */
function renderLines(text: string): string {
  let quotedRest = false;
  return text
    .split('\n')
    .map((line) => {
      let l = line;
      if (quotedRest) return l;
      if (/^>>> ?/.test(l)) {
        quotedRest = true;
        return l.replace(/^>>> ?/, '');
      }
      // A quote of a quote (`> > Thanks`, pasted mail) is still quoted prose: every level goes, not only the first.
      l = l.replace(/^(?:> )+/, '').replace(/^(?:> )*>$/, '');
      l = l.replace(/^-# +/, '').replace(/^#{1,3} +/, '');
      l = l.replace(/^([ \t]*)[-*] +/, '$1');
      return l;
    })
    .join('\n');
}

const INLINE_RULES: [RegExp, string][] = [
  [/\|\|([\s\S]+?)\|\|/g, '$1'],
  [/~~([\s\S]+?)~~/g, '$1'],
  [/\*\*\*([\s\S]+?)\*\*\*/g, '$1'],
  [/\*\*([\s\S]+?)\*\*/g, '$1'],
  [/__([\s\S]+?)__/g, '$1'],
  // Single `*` and `_` need a non-space inside; `_` must not be inside a word (snake_case stays).
  [/\*(?=\S)([^*\n]*?\S)\*/g, '$1'],
  [/(^|[^\p{L}\p{N}_])_(?=\S)([^_\n]*?\S)_(?![\p{L}\p{N}_])/gu, '$1$2'],
];

function withoutInlineMarks(text: string): string {
  let out = text;
  for (let pass = 0; pass < 3; pass++) {
    const before = out;
    for (const [rule, replacement] of INLINE_RULES) out = out.replace(rule, replacement);
    if (out === before) break;
  }
  return out;
}

function renderProse(text: string, names: DiscordNames): string {
  return markBareUrls(markPlainHandles(markUnicodeEmoji(withoutInlineMarks(renderLines(renderMentions(text, names))))));
}

/** Discord markdown as words; `names` supplies display names for mentions. */
export function renderDiscordMarkdown(raw: string, names: DiscordNames = {}): RenderedText {
  const text = hideEscapes(withoutReservedCharacters(raw));
  const out: string[] = [];
  let last = 0;
  // Fenced blocks (an optional language tag on the first line), then ``double`` and `single` inline code.
  for (const match of text.matchAll(/```(?:[\w+#.-]*\n)?([\s\S]*?)```|``([^\n]+?)``|`([^`\n]+)`/g)) {
    const index = match.index ?? 0;
    out.push(renderProse(text.slice(last, index), names));
    out.push(match[1] !== undefined ? markCodeBlock(match[1]) : (match[2] ?? match[3] ?? '').trim());
    last = index + match[0].length;
  }
  out.push(renderProse(text.slice(last), names));
  return finishRendering(restoreEscapes(out.join('')));
}
