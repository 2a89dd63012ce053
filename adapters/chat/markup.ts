/**
 * What both bots share when they turn a platform's markup into the words a reader sees
 * (markup-slack.ts, markup-discord.ts do the platform parts).
 *
 * A renderer writes one string in which the spans a reader sees but the detector must not score are
 * wrapped in private-use marks: mentions (a name is not the author's prose, and "@Ada" alone made
 * the language look Indonesian), emoji, bare web addresses, and code blocks (code is not prose; its score would mean
 * nothing). `finishRendering` then yields both views from that one string, so they cannot drift:
 * `readable` keeps those spans, `text` (what is scored) leaves them out, and `excluded` counts them
 * for the reply.
 */
import { normalizeText } from './message-text.ts';

const MENTION_OPEN = '\uE000';
const MENTION_CLOSE = '\uE001';
const CODE_OPEN = '\uE002';
const CODE_CLOSE = '\uE003';
const EMOJI_OPEN = '\uE004';
const EMOJI_CLOSE = '\uE005';
const LINK_OPEN = '\uE006';
const LINK_CLOSE = '\uE007';
/** Every private-use character the renderers use as a mark or placeholder. */
const RESERVED = /[\uE000-\uE0FF]/g;

export interface ExcludedParts {
  /** Fenced or preformatted code blocks. */
  codeBlocks: number;
  /** User, channel, role and group mentions, and @here/@everyone. */
  mentions: number;
  /** Emoji written as shortcodes or custom emoji. */
  emoji: number;
  /** Bare web addresses (a link with a label is scored as its label). */
  links: number;
}

export interface RenderedText {
  /** What is sent for scoring: the prose, without mentions, emoji and code blocks. */
  text: string;
  /** What a reader sees, formatting marks removed: mentions as `@name`, code blocks kept. */
  readable: string;
  excluded: ExcludedParts;
}

/** Input text never carries our marks: a pasted private-use character would otherwise hide prose. */
export function withoutReservedCharacters(text: string): string {
  return text.replace(RESERVED, '');
}

/** A mention as shown (`@Ada`, `#general`); scored as nothing. */
export function markMention(shown: string): string {
  return `${MENTION_OPEN}${shown.replace(RESERVED, '')}${MENTION_CLOSE}`;
}

/** A code block: shown on its own lines, never scored. */
export function markCodeBlock(code: string): string {
  return `\n${CODE_OPEN}${code.replace(RESERVED, '')}${CODE_CLOSE}\n`;
}

/** A bare address (`https://…`): shown, never scored; an address is not prose and sways the language guess. */
export function markLink(url: string): string {
  return `${LINK_OPEN}${url.replace(RESERVED, '')}${LINK_CLOSE}`;
}

/** Addresses written out in prose (`see https://x.y/z.`), trailing punctuation left outside. */
export function markBareUrls(text: string): string {
  return text.replace(/(^|[\s(<[])((?:https?:\/\/|www\.)[^\s<>\uE000-\uE0FF]+)/g, (_m, before: string, url: string) => {
    const trailing = /[.,;:!?)\]'"]+$/.exec(url)?.[0] ?? '';
    return `${before}${markLink(url.slice(0, url.length - trailing.length))}${trailing}`;
  });
}

/**
 * Emoji typed as characters (Discord keeps them so; `🎉`, `👍🏽`, `👩‍💻`, flags, keycaps): marked like
 * shortcodes. Only characters drawn as emoji by default, or asked to be with U+FE0F, count: `©` and
 * `™` in prose stay words' company.
 */
const UNICODE_EMOJI =
  /(?:[#*0-9]\uFE0F?\u20E3|\p{Regional_Indicator}{2}|(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F)\p{Emoji_Modifier}?(?:\u200D\p{Extended_Pictographic}\uFE0F?\p{Emoji_Modifier}?)*)+/gu;

export function markUnicodeEmoji(text: string): string {
  return text.replace(UNICODE_EMOJI, (run) => markEmoji(run));
}

/** An emoji (`:tada:`); shown, never scored. */
export function markEmoji(shown: string): string {
  return `${EMOJI_OPEN}${shown.replace(RESERVED, '')}${EMOJI_CLOSE}`;
}

/**
 * `@handle` typed as plain text (Slack without mention escaping, pasted chat logs) is a name too, and
 * is marked like a mention. Addresses (`a@b.co`) and paths (`/@x`) are left alone.
 */
export function markPlainHandles(text: string): string {
  return text.replace(/(^|[\s(["'“‘])@([\p{L}\p{N}][\p{L}\p{N}._-]{0,79})/gu, (_m, before: string, handle: string) => {
    const trailing = /[._-]+$/.exec(handle)?.[0] ?? '';
    return `${before}${markMention(`@${handle.slice(0, handle.length - trailing.length)}`)}${trailing}`;
  });
}

function count(marked: string, open: string): number {
  return marked.split(open).length - 1;
}

/** Where a left-out mention or address was. */
const REMOVED = '\uE0F0';
/** Where a left-out emoji was: a gap like the others, but a word before it is no stub (`go for it :rocket:`). */
const REMOVED_EMOJI = '\uE0F1';
/** Either kind of gap. */
const GAP = `[${REMOVED}${REMOVED_EMOJI}]`;

/** Words and marks that only join what they stand between (`@Ada and @Bo`, `<url> or <url>`). */
const CONNECTOR_WORD = String.raw`(?:and\/or|and|or|nor|plus|und|oder|et|ou|y|o|&|\+|\/)`;
const CONNECTOR = `(?:${CONNECTOR_WORD}|,)`;
/** Words that point at what follows: with only left-out names or addresses after them, they are stubs too. */
const POINTER_WORD = `(?:to|from|with|by|for|at|in|on|via|per|cc|an|von|mit|für|à|de|pour|avec|para|con)`;

/**
 * Closes the gap a left-out span leaves, only where it was: `Thanks @Ada, see` → `Thanks, see`,
 * `cc @Ada @Bo` → `cc`; a list item that held only a mention becomes an empty line. A connector
 * left with nothing to connect goes with the spans: `See the sheet <url> and <@U1>.` → `See the
 * sheet.` (not `See the sheet and.`), `the guide <a> or <b> or <c>.` → `the guide.`; so does a word
 * that only pointed at them: `a note from <@U1>.` → `a note.`.
 */
function closeGaps(text: string): string {
  return (
    text
      .replace(new RegExp(`${REMOVED}(?:[ \\t]*${CONNECTOR}[ \\t]*${REMOVED})+`, 'giu'), REMOVED)
      // Between two commas a left-out span leaves one: `the report, <@U1>, mail Ada` → `the report, mail Ada`.
      .replace(new RegExp(`,[ \\t]*${GAP}(?:[ \\t]*${GAP})*[ \\t]*(?=,)`, 'g'), '')
      // A list of left-out spans that ended in `, and …` leaves no comma after the word before it:
      // `Read <@U1>, <@U2>, and the notes.` → `Read and the notes.`
      .replace(new RegExp(`(?<=[\\p{L}\\p{N}][ \\t]*)${REMOVED}[ \\t]*,(?=[ \\t]+${CONNECTOR_WORD}[ \\t])`, 'giu'), REMOVED)
      .replace(
        new RegExp(`(?:[ \\t]+(?:${CONNECTOR_WORD}|${POINTER_WORD})|[ \\t]*,)(?:[ \\t]*${REMOVED})+(?=[ \\t]*(?:[.;:!?)\\]}]|$))`, 'gimu'),
        REMOVED,
      )
      .replace(new RegExp(`[ \\t]*${GAP}(?:[ \\t]*${GAP})*[ \\t]*(?=[,.;:!?)\\]}]|$)`, 'gm'), '')
      .replace(new RegExp(`(^|[(\\[{])[ \\t]*${GAP}(?:[ \\t]*${GAP})*[ \\t]*`, 'gm'), '$1')
      .replace(new RegExp(`[ \\t]*${GAP}(?:[ \\t]*${GAP})*[ \\t]*`, 'g'), ' ')
      .replace(/^[ \t]*[•◦▪][ \t]*$/gm, '')
  );
}

/** Bullets are layout, not words: `• item` is scored as `item`. Numbers stay, readers say them. */
function withoutBullets(text: string): string {
  return text.replace(/^[ \t]*[•◦▪][ \t]+/gm, '');
}

export function finishRendering(marked: string): RenderedText {
  const excluded: ExcludedParts = {
    codeBlocks: count(marked, CODE_OPEN),
    mentions: count(marked, MENTION_OPEN),
    emoji: count(marked, EMOJI_OPEN),
    links: count(marked, LINK_OPEN),
  };
  const readable = normalizeText(marked.replace(RESERVED, ''));
  const scored = marked
    .replace(new RegExp(`${CODE_OPEN}[^${CODE_CLOSE}]*${CODE_CLOSE}`, 'g'), '')
    .replace(new RegExp(`${MENTION_OPEN}[^${MENTION_CLOSE}]*${MENTION_CLOSE}`, 'g'), REMOVED)
    .replace(new RegExp(`${EMOJI_OPEN}[^${EMOJI_CLOSE}]*${EMOJI_CLOSE}`, 'g'), REMOVED_EMOJI)
    .replace(new RegExp(`${LINK_OPEN}[^${LINK_CLOSE}]*${LINK_CLOSE}`, 'g'), REMOVED);
  const text = normalizeText(withoutBullets(closeGaps(scored).replace(RESERVED, '')));
  return { text, readable, excluded };
}

/** Joins rendered parts (message text, attachments, embeds) as paragraphs. */
export function joinRendered(parts: readonly RenderedText[]): RenderedText {
  const kept = parts.filter((p) => p.readable !== '' || p.text !== '');
  return {
    text: kept
      .map((p) => p.text)
      .filter(Boolean)
      .join('\n\n'),
    readable: kept
      .map((p) => p.readable)
      .filter(Boolean)
      .join('\n\n'),
    excluded: {
      codeBlocks: kept.reduce((n, p) => n + p.excluded.codeBlocks, 0),
      mentions: kept.reduce((n, p) => n + p.excluded.mentions, 0),
      emoji: kept.reduce((n, p) => n + p.excluded.emoji, 0),
      links: kept.reduce((n, p) => n + p.excluded.links, 0),
    },
  };
}

// Dates and times. Both platforms let a message carry a timestamp that each reader's app shows in
// the reader's own time zone; the bot has no reader, so it writes them in UTC, in English.

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th'}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function clock(d: Date, seconds: boolean): string {
  const h = d.getUTCHours();
  const time = `${h % 12 === 0 ? 12 : h % 12}:${pad(d.getUTCMinutes())}${seconds ? `:${pad(d.getUTCSeconds())}` : ''}`;
  return `${time} ${h < 12 ? 'AM' : 'PM'}`;
}

/** `3 minutes ago`, `in 2 days`: the largest whole unit, as both apps word relative times. */
export function relativeTime(epochSeconds: number, nowMs = Date.now()): string {
  const diff = Math.round(nowMs / 1000 - epochSeconds);
  const units: [string, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
    ['second', 1],
  ];
  const abs = Math.abs(diff);
  for (const [unit, size] of units) {
    const n = Math.floor(abs / size);
    if (n >= 1 || unit === 'second') {
      const words = `${n} ${unit}${n === 1 ? '' : 's'}`;
      return diff >= 0 ? `${words} ago` : `in ${words}`;
    }
  }
  return 'now';
}

/** Named date and time styles both renderers use; `d` is a UTC instant. */
export const dateStyles = {
  numeric: (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`,
  long: (d: Date) => `${MONTHS[d.getUTCMonth()]} ${ordinal(d.getUTCDate())}, ${d.getUTCFullYear()}`,
  short: (d: Date) => `${MONTHS[d.getUTCMonth()]!.slice(0, 3)} ${d.getUTCDate()}, ${d.getUTCFullYear()}`,
  withWeekday: (d: Date) => `${WEEKDAYS[d.getUTCDay()]}, ${MONTHS[d.getUTCMonth()]} ${ordinal(d.getUTCDate())}, ${d.getUTCFullYear()}`,
  plain: (d: Date) => `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`,
  plainWithWeekday: (d: Date) => `${WEEKDAYS[d.getUTCDay()]}, ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`,
  slashes: (d: Date) => `${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${d.getUTCFullYear()}`,
  time: (d: Date) => clock(d, false),
  timeWithSeconds: (d: Date) => clock(d, true),
};

/** A Unix timestamp in seconds as a Date, or undefined when it is not a usable number. */
export function dateFromEpochSeconds(value: unknown): Date | undefined {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  const d = new Date(n * 1000);
  return Number.isNaN(d.getTime()) ? undefined : d;
}
