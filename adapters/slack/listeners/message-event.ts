/**
 * Events API `message` events (`message.channels`, `message.groups`) of watched channels: a new
 * message is queued for a score, `message_changed` is an edit (ignored once scored),
 * `message_deleted` drops a waiting message. Bolt acknowledges events itself; this listener only
 * queues ids, so it returns at once.
 *
 * Left out before anything is queued: direct messages, bots and apps (`bot_id`, `bot_message`),
 * system messages (joins, topic changes, pins: every subtype but `thread_broadcast`, `file_share`
 * and `me_message`), command-like messages, moderators and exempt user groups.
 */
import type { App } from '@slack/bolt';
import { looksLikeCommand } from '../../chat/author.ts';
import type { IncomingMessage } from '../../chat/watch/watcher.ts';
import { teamScope, type SlackAppContext } from '../checks.ts';
import type { SlackWatchingApi } from '../watch/api.ts';
import { watchedSlackText } from '../watch/watched-text.ts';
import { watchSlackFiles } from '../watched-files.ts';

/** Subtypes a member writes; all others are system or bot messages. */
const MEMBER_SUBTYPES: ReadonlySet<string> = new Set(['thread_broadcast', 'file_share', 'me_message']);
const WATCHED_CHANNEL_TYPES: ReadonlySet<string> = new Set(['channel', 'group']);

interface SlackMessageEvent {
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  blocks?: unknown[];
  ts?: string;
  thread_ts?: string;
  message?: SlackMessageEvent;
  deleted_ts?: string;
  previous_message?: SlackMessageEvent;
  files?: unknown[];
}

function isMemberMessage(m: SlackMessageEvent | undefined): m is SlackMessageEvent & { user: string; ts: string } {
  if (!m || typeof m.user !== 'string' || typeof m.ts !== 'string') return false;
  if (m.bot_id) return false;
  return m.subtype === undefined || MEMBER_SUBTYPES.has(m.subtype);
}

async function incoming(
  teamId: string,
  channel: string,
  m: SlackMessageEvent & { user: string; ts: string },
): Promise<IncomingMessage | undefined> {
  if (looksLikeCommand(m.text ?? '')) return undefined;
  const text = (await watchedSlackText(m)).text;
  if (!text) return undefined;
  const threadId = m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : undefined;
  return {
    scope: teamScope(teamId),
    channelId: channel,
    messageId: m.ts,
    threadId,
    authorId: m.user,
    postedAt: Math.round(Number(m.ts) * 1000),
    text,
  };
}

export async function handleMessageEvent(watching: SlackWatchingApi, teamId: string, event: SlackMessageEvent): Promise<string> {
  const channel = event.channel;
  if (!channel || !WATCHED_CHANNEL_TYPES.has(event.channel_type ?? 'channel')) return 'not_a_channel';
  const watcher = watching.watcher;
  const scope = teamScope(teamId);
  // Cheap first: most channels of most workspaces are not watched.
  if (!(await watcher.watching(scope, channel))) return 'not_watched';
  const exempt = (userId: string) => (ids: string[]) => watching.isExempt(teamId, userId, ids);
  if (event.subtype === 'message_deleted') {
    const ts = event.deleted_ts ?? event.previous_message?.ts;
    if (ts) await watcher.deleted(scope, channel, ts);
    return 'deleted';
  }
  if (event.subtype === 'message_changed') {
    if (!isMemberMessage(event.message)) return 'skipped';
    const message = await incoming(teamId, channel, event.message);
    return message ? watcher.edited(message, exempt(message.authorId)) : 'skipped';
  }
  if (!isMemberMessage(event)) return 'skipped';
  const message = await incoming(teamId, channel, event);
  return message ? watcher.offer(message, exempt(message.authorId)) : 'skipped';
}

export function registerMessageEvents(app: App, ctx: SlackAppContext): void {
  app.event('message', async ({ event, body, client, context }) => {
    const watching = ctx.watch;
    const teamId = (body as { team_id?: string }).team_id;
    if (!watching || !teamId) return;
    const message = event as unknown as SlackMessageEvent;
    // Its shared documents, when the workspace turned that on (watched-files.ts); they never hold up the text.
    if (isMemberMessage(message) && message.channel && WATCHED_CHANNEL_TYPES.has(message.channel_type ?? 'channel')) {
      watchSlackFiles(ctx, watching, client, context.botToken ?? client.token, { ...message, teamId, channel: message.channel });
    }
    const memberId = message.user ?? message.message?.user ?? message.previous_message?.user;
    const handle = () => handleMessageEvent(watching, teamId, message);
    try {
      // A member's events in the order Bolt hands them over (Watcher.inArrivalOrder).
      const result = await (memberId ? watching.watcher.inArrivalOrder(teamScope(teamId), memberId, handle) : handle());
      ctx.logger.debug({ team: teamId, result }, 'message event');
    } catch (err) {
      ctx.logger.warn({ team: teamId, err: (err as Error).message }, 'could not handle a message event of a watched channel');
    }
  });
}
