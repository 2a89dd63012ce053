/**
 * What "Check for AI text" reads from a message: its content and its embeds' descriptions (bots and
 * link previews put their prose there), plus the same from a forwarded message's snapshot.
 *
 * discord.js hands the target message over either as a `Message` (when the channel is cached) or as
 * the raw API object (when it is not, e.g. a server the bot only joined with `applications.commands`),
 * so this reads both shapes through one structural view.
 */
import { EmptyTextError } from '../chat/errors.ts';

/** The fields read here; both discord.js's `Message` and the API's message object fit it. */
export interface MessageLike {
  id: string;
  content?: string | null;
  embeds?: readonly { description?: string | null }[] | null;
  /** An array (API object) or a discord.js Collection (which has `size`). */
  attachments?: readonly unknown[] | { size: number } | null;
  /** discord.js: `stickers` (Collection); API: `sticker_items` (array). */
  stickers?: { size: number } | null;
  sticker_items?: readonly unknown[] | null;
  /** discord.js: `messageSnapshots` (Collection of snapshots); API: `message_snapshots` (array of `{ message }`). */
  messageSnapshots?: { values(): Iterable<unknown>; size: number } | null;
  message_snapshots?: readonly { message?: unknown }[] | null;
}

function countOf(value: readonly unknown[] | { size: number } | null | undefined): number {
  if (!value) return 0;
  return Array.isArray(value) ? value.length : (value as { size: number }).size;
}

interface Parts {
  texts: string[];
  attachments: number;
  embeds: number;
}

function collect(message: MessageLike, parts: Parts): void {
  if (message.content?.trim()) parts.texts.push(message.content);
  for (const embed of message.embeds ?? []) {
    parts.embeds += 1;
    if (embed.description?.trim()) parts.texts.push(embed.description);
  }
  parts.attachments += countOf(message.attachments) + countOf(message.stickers) + countOf(message.sticker_items);
}

/**
 * The text to check, paragraphs separated by blank lines. Throws `EmptyTextError` with a sentence
 * that says *why* there is nothing to check (attachments only, embeds without text, or nothing).
 */
export function textOfMessage(message: MessageLike): string {
  const parts: Parts = { texts: [], attachments: 0, embeds: 0 };
  collect(message, parts);
  const snapshots: unknown[] = message.messageSnapshots
    ? [...message.messageSnapshots.values()]
    : (message.message_snapshots ?? []).map((s) => s.message);
  for (const snapshot of snapshots) {
    if (snapshot && typeof snapshot === 'object') collect(snapshot as MessageLike, parts);
  }

  const text = parts.texts.join('\n\n').trim();
  if (text) return text;
  if (parts.attachments > 0) {
    throw new EmptyTextError(
      'That message has only attachments (files, images or stickers) and no text. The bot checks text only: paste any text from the file into /detect.',
    );
  }
  if (parts.embeds > 0) {
    throw new EmptyTextError('That message has only embeds without any description text, so there is nothing to check.');
  }
  throw new EmptyTextError('That message has no text to check.');
}

/** `https://discord.com/channels/<guild or @me>/<channel>/<message>`: the link Discord's "Copy Message Link" gives. */
export function messageLink(guildId: string | null | undefined, channelId: string, messageId: string): string {
  return `https://discord.com/channels/${guildId ?? '@me'}/${channelId}/${messageId}`;
}
