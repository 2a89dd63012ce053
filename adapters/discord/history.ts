/**
 * Reads one member's recent messages in a channel for a member check, over REST
 * (`GET /channels/{id}/messages`, newest first, 100 a page), and says why each one is or is not
 * scored.
 *
 * Two things Discord does silently are turned into sentences here:
 * - without **Read Message History** in the channel, Discord answers with no messages at all
 *   (not an error), so the bot checks its own permissions in the channel (`app_permissions` of the
 *   interaction) before reading;
 * - without the privileged **Message Content** intent (Developer Portal → Bot), Discord blanks
 *   `content`, `embeds`, `attachments`, `components` and `poll` of other people's messages (messages
 *   that mention the bot excepted). It is a setting of the application, not of the gateway
 *   connection, so the bot need not identify with that intent to read over REST; it recognises the
 *   blanked messages instead (a message of a person cannot be entirely empty otherwise).
 */
import { DiscordAPIError, MessageReferenceType, MessageType, PermissionFlagsBits, Routes, type APIMessage, type REST } from 'discord.js';
import { MAX_SCANNED_MESSAGES, emptyReason, looksLikeCommand, type HistoryWindow, type MemberMessage } from '../chat/author.ts';
import { ChatInputError } from '../chat/errors.ts';
import { renderDiscordMarkdown } from '../chat/markup-discord.ts';
import { mentionNames, messageLink, type MessageLike } from './message-text.ts';

/** Discord's page size limit for channel messages. */
const PAGE_SIZE = 100;
const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** Why a member check could not read the channel, as a sentence for the moderator. */
export class HistoryUnavailableError extends ChatInputError {
  override name = 'HistoryUnavailableError';
}

export const MISSING_HISTORY_PERMISSION =
  'The bot cannot read this channel’s message history: give the bot’s role **View Channel** and **Read Message History** in this channel (Server Settings → Roles, or the channel’s permissions), then run the check again.';

export const MISSING_MESSAGE_CONTENT =
  'Discord hides the text of members’ messages from this bot: its application lacks the **Message Content** intent. Ask the bot admin to switch on Developer Portal → (the application) → Bot → Privileged Gateway Intents → **Message Content Intent** (no restart needed), then run the check again.';

/** Missing Access also answers a bot that was added with commands only (no bot user in the server). */
const NOT_IN_SERVER_HINT =
  'If it has them, it may have been added to the server with commands only: ask an admin to invite it as a bot with the link `npm run discord:register` prints.';

/** The bot's permissions in the channel, from the interaction (`app_permissions`); null when Discord sent none. */
export interface ChannelPermissions {
  has(bits: bigint): boolean;
}

/** Throws the sentence for a missing View Channel / Read Message History, before any call. */
export function assertCanReadHistory(appPermissions: ChannelPermissions | null | undefined): void {
  if (!appPermissions) return;
  if (!appPermissions.has(PermissionFlagsBits.ViewChannel | PermissionFlagsBits.ReadMessageHistory)) {
    throw new HistoryUnavailableError('history_forbidden', MISSING_HISTORY_PERMISSION);
  }
}

export interface HistoryRead {
  /** The member's messages within the window, newest first, at most `window.maxMessages`. */
  messages: MemberMessage[];
  /** Channel messages looked at (anyone's). */
  scanned: number;
  /** True when the bot stopped at MAX_SCANNED_MESSAGES before reaching the window's start. */
  scanLimitHit: boolean;
}

export interface ReadOptions {
  guildId: string | null;
  channelId: string;
  memberId: string;
  window: HistoryWindow;
  now?: number;
}

function createdAt(id: string): number {
  try {
    return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
  } catch {
    return 0;
  }
}

function sizeOf(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

/**
 * A message Discord blanked for want of the Message Content intent: no text, embeds, files,
 * components, poll or forwarded snapshot. Stickers are not blanked, so a sticker-only message
 * still shows as one.
 */
function isBlanked(m: APIMessage): boolean {
  const raw = m as APIMessage & { poll?: unknown; message_snapshots?: unknown[] };
  return (
    (m.content ?? '') === '' &&
    sizeOf(m.embeds) === 0 &&
    sizeOf(m.attachments) === 0 &&
    sizeOf(m.components) === 0 &&
    sizeOf(m.sticker_items) === 0 &&
    sizeOf(raw.message_snapshots) === 0 &&
    raw.poll === undefined
  );
}

/** Application-command messages: the channel's record of a member running someone's slash or context-menu command. */
function isCommandEcho(m: APIMessage): boolean {
  return m.type === MessageType.ChatInputCommand || m.type === MessageType.ContextMenuCommand;
}

/**
 * The member's side of one channel message: undefined when it is not theirs (or not a message a
 * person wrote: joins, pins, thread notices), else what is scored or why it is left out.
 */
export function memberMessage(m: APIMessage, memberId: string, guildId: string | null, channelId: string): MemberMessage | undefined {
  const at = Date.parse(m.timestamp) || createdAt(m.id);
  const base = { id: m.id, at, link: messageLink(guildId, channelId, m.id) };
  const echoUser = (m as APIMessage & { interaction_metadata?: { user?: { id?: string } } }).interaction_metadata?.user?.id;
  if (isCommandEcho(m)) return echoUser === memberId ? { ...base, text: '', readable: '', leftOut: 'command' } : undefined;
  if (m.author?.id !== memberId || m.webhook_id) return undefined;
  if (m.type !== MessageType.Default && m.type !== MessageType.Reply) return undefined;
  if (isBlanked(m)) return { ...base, text: '', readable: '', leftOut: 'unreadable' };
  const forwarded =
    sizeOf((m as APIMessage & { message_snapshots?: unknown[] }).message_snapshots) > 0 ||
    m.message_reference?.type === MessageReferenceType.Forward;
  if (forwarded) return { ...base, text: '', readable: '', leftOut: 'forwarded' };
  const content = m.content ?? '';
  if (looksLikeCommand(content)) return { ...base, text: '', readable: content, leftOut: 'command' };
  // Only what the member typed: embeds are link previews written by the linked site.
  const rendered = renderDiscordMarkdown(content, mentionNames(m as unknown as MessageLike));
  const empty = emptyReason(rendered, sizeOf(m.attachments) + sizeOf(m.sticker_items));
  if (empty) return { ...base, text: '', readable: rendered.readable, leftOut: empty };
  return { ...base, text: rendered.text, readable: rendered.readable };
}

/** Discord's refusals, as sentences; anything else is rethrown for the generic answer. */
function explain(err: unknown): never {
  if (err instanceof DiscordAPIError) {
    // 50001 Missing Access: no View Channel, or the bot user is not in the server at all.
    if (err.code === 50001) throw new HistoryUnavailableError('history_forbidden', `${MISSING_HISTORY_PERMISSION} ${NOT_IN_SERVER_HINT}`);
    if (err.code === 50013) throw new HistoryUnavailableError('history_forbidden', MISSING_HISTORY_PERMISSION);
    if (err.code === 10003)
      throw new HistoryUnavailableError(
        'unknown_channel',
        'Discord no longer knows this channel (deleted?), so its messages cannot be read.',
      );
    if (err.status === 403) throw new HistoryUnavailableError('history_forbidden', MISSING_HISTORY_PERMISSION);
  }
  throw err;
}

/**
 * The member's latest messages in the channel within the window. Reads pages of 100 from the newest
 * until it has `window.maxMessages` of theirs, reaches the window's start or the channel's
 * beginning, or has looked at MAX_SCANNED_MESSAGES. Throws HistoryUnavailableError with a sentence
 * when Discord refuses, or when it hid the messages' text (no Message Content intent).
 */
export async function readMemberHistory(rest: REST, options: ReadOptions): Promise<HistoryRead> {
  const since = (options.now ?? Date.now()) - options.window.days * 86_400_000;
  const messages: MemberMessage[] = [];
  let scanned = 0;
  let before: string | undefined;
  let scanLimitHit = false;
  for (;;) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (before) query.set('before', before);
    let page: APIMessage[];
    try {
      page = (await rest.get(Routes.channelMessages(options.channelId), { query })) as APIMessage[];
    } catch (err) {
      explain(err);
    }
    if (!Array.isArray(page) || page.length === 0) break;
    let reachedStart = false;
    for (const m of page) {
      scanned += 1;
      const at = Date.parse(m.timestamp) || createdAt(m.id);
      if (at < since) {
        reachedStart = true;
        break;
      }
      const mine = memberMessage(m, options.memberId, options.guildId, options.channelId);
      if (mine) messages.push(mine);
      if (messages.length >= options.window.maxMessages) break;
    }
    if (reachedStart || messages.length >= options.window.maxMessages || page.length < PAGE_SIZE) break;
    if (scanned >= MAX_SCANNED_MESSAGES) {
      scanLimitHit = true;
      break;
    }
    before = page.at(-1)?.id;
  }
  // With the intent, a person's message always has something (text, file, embed, sticker, poll…);
  // blanked ones mean Discord withheld the content, and a verdict on the rest would be skewed.
  if (messages.some((m) => m.leftOut === 'unreadable')) {
    throw new HistoryUnavailableError('message_content_intent_missing', MISSING_MESSAGE_CONTENT);
  }
  return { messages, scanned, scanLimitHit };
}
