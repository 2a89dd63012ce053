/**
 * What "Check for AI text" reads from a message: its content and its embeds' descriptions (bots and
 * link previews put their prose there), plus the same from a forwarded message's snapshot.
 *
 * discord.js hands the target message over either as a `Message` (when the channel is cached) or as
 * the raw API object (when it is not, e.g. a server the bot only joined with `applications.commands`),
 * so this reads both shapes through one structural view.
 */
import { EmptyTextError } from '../chat/errors.ts';
import { nothingToCheckSentence } from '../chat/message-text.ts';
import { joinRendered, type RenderedText } from '../chat/markup.ts';
import { renderDiscordMarkdown, type DiscordNames } from '../chat/markup-discord.ts';

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
  /** API: an array of users (with `member.nick` in guilds); discord.js: a MessageMentions. */
  mentions?: unknown;
  /** A poll: its question and answers are the words the author wrote (API object, or discord.js's Poll). */
  poll?: {
    question?: { text?: string | null } | null;
    /** API: `[{ poll_media: { text } }]`; discord.js: a Collection of PollAnswer (`text`). */
    answers?: readonly { poll_media?: { text?: string | null } | null }[] | { values(): Iterable<{ text?: string | null }> } | null;
  } | null;
}

/** A poll's question, then each answer on its own line; empty when there is no poll. */
function pollText(poll: MessageLike['poll']): string {
  if (!poll) return '';
  const answers: unknown[] = !poll.answers
    ? []
    : Array.isArray(poll.answers)
      ? poll.answers
      : [...(poll.answers as { values(): Iterable<unknown> }).values()];
  const lines = [poll.question?.text];
  for (const answer of answers) {
    const a = answer as { text?: unknown; poll_media?: { text?: unknown } | null };
    lines.push(typeof a.text === 'string' ? a.text : typeof a.poll_media?.text === 'string' ? a.poll_media.text : undefined);
  }
  return lines.filter((l): l is string => typeof l === 'string' && l.trim() !== '').join('\n');
}

type Named = {
  id?: unknown;
  username?: unknown;
  global_name?: unknown;
  globalName?: unknown;
  displayName?: unknown;
  nickname?: unknown;
  name?: unknown;
  member?: { nick?: unknown } | null;
};

function nameOf(entry: Named | undefined): string | undefined {
  if (!entry) return undefined;
  for (const v of [
    entry.member?.nick,
    entry.nickname,
    entry.displayName,
    entry.global_name,
    entry.globalName,
    entry.username,
    entry.name,
  ]) {
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return undefined;
}

/** Entries of an array or of a discord.js Collection (a Map), keyed by id. */
function byId(source: unknown): Map<string, Named> {
  const out = new Map<string, Named>();
  if (Array.isArray(source)) {
    for (const e of source)
      if (e && typeof e === 'object' && typeof (e as Named).id === 'string') out.set((e as Named).id as string, e as Named);
  } else if (source instanceof Map) {
    for (const [id, e] of source) if (typeof id === 'string' && e && typeof e === 'object') out.set(id, e as Named);
  }
  return out;
}

/**
 * Display names for the mentions in a message, from the message itself: the API object lists the
 * mentioned users (with their server nickname), discord.js's `Message` has `mentions.members`,
 * `.users`, `.roles` and `.channels`. Anything else renders as a neutral placeholder.
 */
export function mentionNames(message: MessageLike): DiscordNames {
  const m = message.mentions as { users?: unknown; members?: unknown; roles?: unknown; channels?: unknown } | unknown[] | null | undefined;
  const users = Array.isArray(m) ? byId(m) : byId(m?.users);
  const members = Array.isArray(m) ? new Map<string, Named>() : byId(m?.members);
  const roles = Array.isArray(m) ? new Map<string, Named>() : byId(m?.roles);
  const channels = Array.isArray(m) ? new Map<string, Named>() : byId(m?.channels);
  return {
    user: (id) => nameOf(members.get(id)) ?? nameOf(users.get(id)),
    role: (id) => nameOf(roles.get(id)),
    channel: (id) => nameOf(channels.get(id)),
  };
}

function countOf(value: readonly unknown[] | { size: number } | null | undefined): number {
  if (!value) return 0;
  return Array.isArray(value) ? value.length : (value as { size: number }).size;
}

interface Parts {
  texts: RenderedText[];
  attachments: number;
  embeds: number;
  /** What the attachments are, for the sentence when they are all a message has. */
  kinds: Map<AttachmentKind, number>;
}

type AttachmentKind = 'voice message' | 'video' | 'sound file' | 'picture' | 'sticker' | 'file';

/** A voice message, video, sound, picture or other file, from the API object or discord.js's Attachment. */
function attachmentKind(attachment: unknown): AttachmentKind {
  const a = (attachment ?? {}) as {
    content_type?: unknown;
    contentType?: unknown;
    duration_secs?: unknown;
    duration?: unknown;
    waveform?: unknown;
  };
  // Voice messages carry a waveform and a duration (Discord's IS_VOICE_MESSAGE message flag goes with them).
  if (typeof a.waveform === 'string' || (a.waveform !== undefined && a.waveform !== null)) return 'voice message';
  const type = String(a.content_type ?? a.contentType ?? '').toLowerCase();
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/'))
    return typeof a.duration_secs === 'number' || typeof a.duration === 'number' ? 'voice message' : 'sound file';
  if (type.startsWith('image/')) return 'picture';
  return 'file';
}

function valuesOf(source: readonly unknown[] | { size: number } | null | undefined): unknown[] {
  if (!source) return [];
  if (Array.isArray(source)) return source;
  const values = (source as { values?: () => Iterable<unknown> }).values;
  return typeof values === 'function' ? [...values.call(source)] : [];
}

/** `a voice message and a video`, `2 pictures and a sticker`, in the order first met. */
function kindsList(kinds: Map<AttachmentKind, number>): string {
  const items = [...kinds].map(([kind, n]) => (n === 1 ? `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}` : `${n} ${kind}s`));
  return items.length <= 1 ? (items[0] ?? 'attachments') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function collect(message: MessageLike, parts: Parts): void {
  const names = mentionNames(message);
  if (message.content?.trim()) parts.texts.push(renderDiscordMarkdown(message.content, names));
  const poll = pollText(message.poll);
  if (poll) parts.texts.push(renderDiscordMarkdown(poll, names));
  for (const embed of message.embeds ?? []) {
    parts.embeds += 1;
    if (embed.description?.trim()) parts.texts.push(renderDiscordMarkdown(embed.description, names));
  }
  parts.attachments += countOf(message.attachments) + countOf(message.stickers) + countOf(message.sticker_items);
  const attachments = valuesOf(message.attachments);
  for (const attachment of attachments) {
    const kind = attachmentKind(attachment);
    parts.kinds.set(kind, (parts.kinds.get(kind) ?? 0) + 1);
  }
  // A discord.js Collection without values (tests pass `{ size }`) still counts its items as files.
  const unseen = countOf(message.attachments) - attachments.length;
  if (unseen > 0) parts.kinds.set('file', (parts.kinds.get('file') ?? 0) + unseen);
  const stickers = countOf(message.stickers) + countOf(message.sticker_items);
  if (stickers > 0) parts.kinds.set('sticker', (parts.kinds.get('sticker') ?? 0) + stickers);
}

/**
 * The words of a message as its readers see them (markup rendered, see adapters/chat/markup-discord.ts),
 * with what was left out of the score. Throws `EmptyTextError` with a sentence that says *why* there
 * is nothing to check (attachments only, embeds without text, only code, mentions or emoji, or nothing).
 */
export function readMessage(message: MessageLike): RenderedText {
  const parts: Parts = { texts: [], attachments: 0, embeds: 0, kinds: new Map() };
  collect(message, parts);
  const snapshots: unknown[] = message.messageSnapshots
    ? [...message.messageSnapshots.values()]
    : (message.message_snapshots ?? []).map((s) => s.message);
  for (const snapshot of snapshots) {
    if (snapshot && typeof snapshot === 'object') collect(snapshot as MessageLike, parts);
  }

  const rendered = joinRendered(parts.texts);
  if (rendered.text) return rendered;
  if (rendered.readable) {
    throw new EmptyTextError(nothingToCheckSentence('', { subject: 'message', leftOut: rendered.excluded }));
  }
  if (parts.attachments > 0) {
    throw new EmptyTextError(
      `That message has only attachments (${kindsList(parts.kinds)}) and no text. The bot checks text and documents (PDF, Word .docx, plain text or Markdown files), not pictures, sound or video.`,
    );
  }
  if (parts.embeds > 0) {
    throw new EmptyTextError('That message has only embeds without any description text, so there is nothing to check.');
  }
  throw new EmptyTextError('That message has no text to check.');
}

/** The text that is scored for a message; see `readMessage`. */
export function textOfMessage(message: MessageLike): string {
  return readMessage(message).text;
}

/** `https://discord.com/channels/<guild or @me>/<channel>/<message>`: the link Discord's "Copy Message Link" gives. */
export function messageLink(guildId: string | null | undefined, channelId: string, messageId: string): string {
  return `https://discord.com/channels/${guildId ?? '@me'}/${channelId}/${messageId}`;
}
