/**
 * Gateway dispatches of watched channels: MESSAGE_CREATE (queued for a score), MESSAGE_UPDATE (an
 * edit: ignored once scored), MESSAGE_DELETE / MESSAGE_DELETE_BULK (dropped from the queue), and
 * GUILD_DELETE without `unavailable` (the bot was removed: everything of the server is deleted).
 *
 * Read from the raw dispatch rather than discord.js's Message: it needs no message or member cache,
 * and a thread reply arrives even when its thread is not cached. Left out before anything is queued:
 * DMs, bots and webhooks, system messages (joins, pins, boosts, thread notices), command-like
 * messages, moderators and exempt roles, and messages too short to score.
 */
import { ChannelType, MessageType, Routes, type APIChannel, type APIMessage, type Client, type GuildBasedChannel } from 'discord.js';
import type { Logger } from 'pino';
import { EmptyTextError } from '../../chat/errors.ts';
import { looksLikeCommand } from '../../chat/author.ts';
import type { IncomingMessage, Watcher } from '../../chat/watch/watcher.ts';
import { guildScope, guildSettings, type BotContext } from '../check.ts';
import { describeDiscordError } from '../discord-errors.ts';
import { isModerator, memberPermissions } from '../watch/permissions.ts';
import { authorDisplayName } from '../watch/platform.ts';
import { watchedText } from '../watch/watched-text.ts';
import { watchFiles } from './watch-files.ts';

/** Message types a member writes; every other type is a system message. */
const MEMBER_MESSAGE_TYPES: ReadonlySet<number> = new Set([MessageType.Default, MessageType.Reply]);

const DISCORD_EPOCH = 1_420_070_400_000n;

function snowflakeTime(id: string): number {
  try {
    return Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
  } catch {
    return Date.now();
  }
}

interface Dispatch {
  t?: unknown;
  d?: unknown;
}

export interface WatchDispatchContext {
  client: Client;
  ctx: BotContext;
  watcher: Watcher;
  logger: Logger;
  /** Thread id → the channel it belongs to (null: not a thread), so a busy thread costs one lookup. */
  parents: Map<string, string | null>;
}

/** Where a message's channel is watched: itself, or the channel its thread belongs to. */
async function watchedPlace(
  w: WatchDispatchContext,
  scope: string,
  channelId: string,
): Promise<{ channelId: string; threadId?: string | undefined } | undefined> {
  const config = await w.watcher.config(scope);
  if (config.channels.length === 0) return undefined;
  if (config.channels.some((c) => c.channelId === channelId)) return { channelId };
  const parent = await parentOf(w, channelId);
  if (parent && config.channels.some((c) => c.channelId === parent)) return { channelId: parent, threadId: channelId };
  return undefined;
}

async function parentOf(w: WatchDispatchContext, channelId: string): Promise<string | null> {
  const known = w.parents.get(channelId);
  if (known !== undefined) return known;
  const cached = w.client.channels.cache.get(channelId);
  let parent: string | null = null;
  if (cached) {
    parent = cached.isThread() ? cached.parentId : null;
  } else {
    try {
      const channel = (await w.client.rest.get(Routes.channel(channelId))) as APIChannel;
      const threadTypes: number[] = [ChannelType.PublicThread, ChannelType.PrivateThread, ChannelType.AnnouncementThread];
      parent = threadTypes.includes(channel.type) && 'parent_id' in channel ? (channel.parent_id ?? null) : null;
    } catch (err) {
      w.logger.info({ channelId, err: describeDiscordError(err) }, 'could not look up a channel of a watched server');
      return null;
    }
  }
  if (w.parents.size > 50_000) w.parents.clear();
  w.parents.set(channelId, parent);
  return parent;
}

function incoming(
  message: APIMessage & { guild_id?: string; member?: { nick?: string | null; roles?: string[] } },
  scope: string,
  place: { channelId: string; threadId?: string | undefined },
  text: string,
): IncomingMessage {
  const postedAt = Date.parse(message.timestamp);
  return {
    scope,
    channelId: place.channelId,
    messageId: message.id,
    threadId: place.threadId,
    authorId: message.author.id,
    authorName: authorDisplayName(message),
    postedAt: Number.isFinite(postedAt) ? postedAt : snowflakeTime(message.id),
    text,
  };
}

/** Moderators (any moderation permission, the server's checker role) and exempt roles are never scored. */
function exemptionCheck(
  w: WatchDispatchContext,
  guildId: string,
  authorId: string,
  roles: readonly string[],
  channelId: string,
): (exemptIds: string[]) => Promise<boolean> {
  return async (exemptIds) => {
    if (roles.some((r) => exemptIds.includes(r))) return true;
    const checker = (await guildSettings(w.ctx, guildId)).checkerId;
    if (checker && roles.includes(checker)) return true;
    const guild = w.client.guilds.cache.get(guildId);
    if (!guild) return false;
    const channel = (guild.channels.cache.get(channelId) as GuildBasedChannel | undefined) ?? null;
    return isModerator(memberPermissions(guild, authorId, roles, channel));
  };
}

async function onMessage(w: WatchDispatchContext, raw: unknown, edit: boolean): Promise<void> {
  const message = raw as APIMessage & { guild_id?: string; member?: { nick?: string | null; roles?: string[] } };
  if (!message?.guild_id || typeof message.id !== 'string' || typeof message.channel_id !== 'string') return;
  // An update may carry only what changed (an unfurled preview); without the author it is not an edit of theirs.
  if (!message.author || typeof message.author.id !== 'string') return;
  if (message.author.bot || message.author.system || message.webhook_id) return;
  if (typeof message.type === 'number' && !MEMBER_MESSAGE_TYPES.has(message.type)) return;
  const scope = guildScope(message.guild_id);
  const place = await watchedPlace(w, scope, message.channel_id);
  if (!place) return;
  if (typeof message.content !== 'string' || looksLikeCommand(message.content)) return;
  const exempt = exemptionCheck(w, message.guild_id, message.author.id, message.member?.roles ?? [], place.channelId);
  // Its documents, when the server turned that on (watch-files.ts); they never hold up the text.
  if (!edit) watchFiles(w, { ...message, guild_id: message.guild_id }, scope, place, async (ids) => exempt(ids));
  let text: string;
  try {
    text = watchedText(message).text;
  } catch (err) {
    if (err instanceof EmptyTextError) return;
    throw err;
  }
  const item = incoming(message, scope, place, text);
  const result = edit ? await w.watcher.edited(item, exempt) : await w.watcher.offer(item, exempt);
  w.logger.debug({ scope, channelId: place.channelId, messageId: message.id, edit, result }, 'watched channel message');
}

async function onDelete(w: WatchDispatchContext, guildId: string | undefined, channelId: string, ids: string[]): Promise<void> {
  if (!guildId) return;
  const scope = guildScope(guildId);
  const place = await watchedPlace(w, scope, channelId);
  if (!place) return;
  for (const id of ids) await w.watcher.deleted(scope, place.channelId, id);
}

/** A member's messages are handled in the order the gateway delivered them (Watcher.inArrivalOrder). */
function inMemberOrder(w: WatchDispatchContext, d: Record<string, unknown>, work: () => Promise<void>): Promise<void> {
  const guildId = d.guild_id;
  const authorId = (d.author as { id?: unknown } | undefined)?.id;
  if (typeof guildId !== 'string' || typeof authorId !== 'string') return work();
  return w.watcher.inArrivalOrder(guildScope(guildId), authorId, work);
}

/** Handles one dispatch; never throws (it runs inside the gateway's message handler). */
export function handleWatchDispatch(w: WatchDispatchContext, packet: Dispatch): void {
  const work = async (): Promise<void> => {
    const d = packet.d as Record<string, unknown> | null | undefined;
    if (!d || typeof d !== 'object') return;
    switch (packet.t) {
      case 'MESSAGE_CREATE':
      case 'MESSAGE_UPDATE':
        return inMemberOrder(w, d, () => onMessage(w, d, packet.t === 'MESSAGE_UPDATE'));
      case 'MESSAGE_DELETE':
        return onDelete(w, d.guild_id as string | undefined, String(d.channel_id), [String(d.id)]);
      case 'MESSAGE_DELETE_BULK':
        return onDelete(w, d.guild_id as string | undefined, String(d.channel_id), Array.isArray(d.ids) ? d.ids.map(String) : []);
      default:
        return;
    }
  };
  work().catch((err: unknown) => {
    w.logger.warn({ event: packet.t, err: describeDiscordError(err) }, 'could not handle a watched channel event');
  });
}
