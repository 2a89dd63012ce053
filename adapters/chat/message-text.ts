/**
 * Platform-neutral clean-up of a text before it is sent for detection. Each platform first turns its
 * own markup into plain words (see adapters/slack/message-text.ts); this file then tidies what is
 * left and enforces the limits both bots share, so a moderator hears about an empty or oversized
 * text from the bot at once rather than as a rejected API call.
 */
import { EmptyTextError, TextTooLongError } from './errors.ts';

/** The service's own default MAX_TEXT_CHARS; a bot set up against a server with another limit passes its own. */
export const DEFAULT_MAX_TEXT_CHARS = 50_000;

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

/**
 * Normalises the text and checks it can be sent: throws `EmptyTextError` when nothing readable is
 * left, `TextTooLongError` when it exceeds `maxChars` (counted as the service counts: UTF-16 units).
 */
export function prepareTextForDetection(raw: string, maxChars = DEFAULT_MAX_TEXT_CHARS): string {
  const text = normalizeText(raw);
  if (text === '' || countWords(text) === 0) throw new EmptyTextError();
  if (text.length > maxChars) throw new TextTooLongError(text.length, maxChars);
  return text;
}
