/**
 * Platform-neutral clean-up of a text before it is sent for detection. Each platform first turns its
 * own markup into plain words (see adapters/slack/message-text.ts); this file then tidies what is
 * left and enforces the limits both bots share, so a moderator hears about an empty or oversized
 * text from the bot at once rather than as a rejected API call.
 */
import { countChars, DEFAULT_MAX_TEXT_CHARS } from '../../src/contract.ts';
import { EmptyTextError, TextTooLongError } from './errors.ts';

/** The service's own default MAX_TEXT_CHARS (its document limit); a bot set up against a server with another limit passes its own. */
export { DEFAULT_MAX_TEXT_CHARS };

// Zero-width and BOM characters are invisible in chat but change tokenisation, and copy-paste from
// other tools often carries them.
const INVISIBLES = /[\u200B-\u200D\u2060\uFEFF]/g;

/**
 * Tidies whitespace without merging paragraphs: sentence splitting and the detector's features look
 * at line structure, so blank lines between paragraphs are kept (at most one).
 */
export function normalizeText(text: string): string {
  return text
    .replace(INVISIBLES, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v\u00A0]+/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function countWords(text: string): number {
  const words = text.trim().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu);
  return words ? words.length : 0;
}

/** What the markup renderer left out of a text (adapters/chat/markup.ts counts them). */
export interface LeftOutParts {
  codeBlocks?: number | undefined;
  mentions?: number | undefined;
  emoji?: number | undefined;
  links?: number | undefined;
}

export interface PrepareContext {
  /** What the moderator checked, for the wording: a pasted text or a message. Default `text`. */
  subject?: 'text' | 'message' | undefined;
  /** Parts the renderer left out of `raw`, so an empty result can say what the text held instead. */
  leftOut?: LeftOutParts | undefined;
}

// Pictographs and flags; a text that reaches the check below has no letters or digits left.
const EMOJI = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;

function listOf(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * Why a text with no words cannot be checked, naming what it holds instead (emoji, mentions, code
 * blocks, web addresses, or only symbols), so "There is no text" is kept for texts that are empty.
 */
export function nothingToCheckSentence(text: string, context: PrepareContext = {}): string | undefined {
  const subject = context.subject === 'message' ? 'That message' : 'This text';
  const left = context.leftOut ?? {};
  const kinds: string[] = [];
  if ((left.emoji ?? 0) > 0 || EMOJI.test(text)) kinds.push('emoji');
  if ((left.mentions ?? 0) > 0) kinds.push('mentions');
  if ((left.codeBlocks ?? 0) > 0) kinds.push('code blocks');
  if ((left.links ?? 0) > 0) kinds.push('web addresses');
  if (kinds.length > 0) {
    return `${subject} has only ${listOf(kinds)}, so there is nothing to check: the detector scores the words a person wrote.`;
  }
  if (text !== '') return `${subject} has no words, only symbols or punctuation, so there is nothing to check.`;
  return undefined;
}

/**
 * Normalises the text and checks it can be sent: throws `EmptyTextError` when no words are left
 * (saying what the text held instead, see `nothingToCheckSentence`), `TextTooLongError` when it
 * exceeds `maxChars` (counted as the service counts: `countChars`, a whitespace run as one).
 */
export function prepareTextForDetection(raw: string, maxChars = DEFAULT_MAX_TEXT_CHARS, context: PrepareContext = {}): string {
  const text = normalizeText(raw);
  if (text === '' || countWords(text) === 0) throw new EmptyTextError(nothingToCheckSentence(text, context));
  const chars = countChars(text);
  if (chars > maxChars) throw new TextTooLongError(chars, maxChars);
  return text;
}
