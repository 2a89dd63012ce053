/**
 * Reads one member's recent messages in a channel for a member check: `conversations.history`
 * (top-level messages and replies also sent to the channel, newest first) and `conversations.replies`
 * for the threads the member replied in, within the window. Needs the `channels:history` scope
 * (public channels) or `groups:history` (private ones), and the app in the channel; a refusal
 * becomes a sentence the moderator can act on, never an empty result.
 */
import type { webApi } from '@slack/bolt';
import { MAX_SCANNED_MESSAGES, emptyReason, looksLikeCommand, type HistoryWindow, type MemberMessage } from '../chat/author.ts';
import { ChatInputError } from '../chat/errors.ts';
import { renderSlackMessage, type SlackNameResolver } from '../chat/markup-slack.ts';
import { slackErrorCode } from './checks.ts';

type WebClient = webApi.WebClient;

/** Messages per page: Slack's recommended most for conversations.history and .replies. */
const PAGE_SIZE = 200;
/** Threads whose replies are read per check: each is one call, and the newest say the most. */
export const MAX_THREADS = 10;

/** Subtypes a person writes; every other one (joins, topic changes, bots, tombstones…) is not their prose. */
const PERSON_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share', 'me_message']);

export class HistoryUnavailableError extends ChatInputError {
  override name = 'HistoryUnavailableError';
}

/** The sentence for each way Slack refuses to hand over a channel's history. */
export function historyRefusal(code: string, needed: string | undefined): string {
  switch (code) {
    case 'missing_scope':
      if (needed === 'im:history' || needed === 'mpim:history') return DIRECT_MESSAGES;
      return `The app cannot read this channel’s messages: it lacks the Slack scope \`${needed ?? 'channels:history'}\`. Ask a workspace admin to add \`channels:history\` and \`groups:history\` (the app's manifest lists both) and reinstall the app, then run the check again.`;
    case 'not_in_channel':
    case 'channel_not_found':
      return 'The app is not a member of this channel, so it cannot read its messages. Invite it with `/invite @textdetect`, then run the check again.';
    case 'ratelimited':
    case 'slack_webapi_rate_limited_error':
      return 'Slack is limiting how fast the app may read channel history right now. Try again in a minute.';
    default:
      return `Slack refused to hand over this channel’s messages (${code.replace(/[^\w.-]/g, '').slice(0, 40)}). Try again; if it persists, tell the app admin.`;
  }
}

const DIRECT_MESSAGES =
  'Member checks read a channel’s messages: run the check in the channel where the member writes, not in a direct message.';

export interface HistoryRead {
  /** The member's messages within the window, newest first, at most `window.maxMessages`. */
  messages: MemberMessage[];
  /** Channel messages looked at (anyone's, thread replies included). */
  scanned: number;
  scanLimitHit: boolean;
  /**
   * True when Slack handed over less than a page with more to come: its limits for apps outside the
   * Slack Marketplace (one call a minute, 15 messages a page, since May 2025). The check then uses
   * that first page rather than wait a minute per page.
   */
  slackLimited: boolean;
}

export interface ReadOptions {
  channelId: string;
  memberId: string;
  window: HistoryWindow;
  names: SlackNameResolver;
  now?: number;
}

type SlackHistoryMessage = {
  type?: string;
  subtype?: string;
  ts?: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  text?: string;
  blocks?: unknown[];
  files?: unknown[];
  reply_count?: number;
  reply_users?: string[];
  reply_users_count?: number;
  latest_reply?: string;
};

function refuse(err: unknown): never {
  const code = slackErrorCode(err);
  if (code === 'unknown' || code === 'slack_webapi_request_error' || code === 'slack_webapi_http_error') throw err;
  const needed = (err as { data?: { needed?: unknown } }).data?.needed;
  throw new HistoryUnavailableError(`history_${code}`, historyRefusal(code, typeof needed === 'string' ? needed : undefined));
}

/** The member's side of one message: undefined when it is not theirs or not a person's post. */
export async function memberMessage(
  m: SlackHistoryMessage,
  memberId: string,
  names: SlackNameResolver,
): Promise<MemberMessage | undefined> {
  if (m.user !== memberId || !m.ts || !PERSON_SUBTYPES.has(m.subtype)) return undefined;
  const at = Math.round(Number(m.ts) * 1000);
  const base = { id: m.ts, at };
  // Workflows and apps may post with a member's user id; the words are the app's.
  if (m.bot_id) return { ...base, text: '', readable: m.text ?? '', leftOut: 'app_post' };
  if (looksLikeCommand(m.text ?? '')) return { ...base, text: '', readable: m.text ?? '', leftOut: 'command' };
  // Only what the member wrote: attachments are link previews and shared messages by others.
  const rendered = await renderSlackMessage({ text: m.text, blocks: m.blocks }, names);
  const empty = emptyReason(rendered, Array.isArray(m.files) ? m.files.length : 0);
  if (empty) return { ...base, text: '', readable: rendered.readable, leftOut: empty };
  return { ...base, text: rendered.text, readable: rendered.readable };
}

/** True when the member may have replied in this thread (Slack lists only some repliers). */
function threadHasMember(m: SlackHistoryMessage, memberId: string, since: number): boolean {
  if (!m.reply_count || !m.ts) return false;
  if (m.latest_reply && Number(m.latest_reply) * 1000 < since) return false;
  const listed = m.reply_users ?? [];
  return listed.includes(memberId) || (m.reply_users_count ?? 0) > listed.length;
}

/**
 * The member's latest messages in the channel within the window, thread replies included (from the
 * MAX_THREADS newest threads they may have replied in). Throws HistoryUnavailableError with a
 * sentence when Slack refuses (missing scope, app not in the channel, rate limit).
 */
export async function readMemberHistory(client: WebClient, options: ReadOptions): Promise<HistoryRead> {
  if (options.channelId.startsWith('D')) throw new HistoryUnavailableError('history_direct_message', DIRECT_MESSAGES);
  const since = (options.now ?? Date.now()) - options.window.days * 86_400_000;
  const oldest = (since / 1000).toFixed(6);
  const found = new Map<string, MemberMessage>();
  const threads: string[] = [];
  let scanned = 0;
  let scanLimitHit = false;
  let slackLimited = false;
  let cursor: string | undefined;
  let mine = 0;
  for (;;) {
    let page: { messages?: SlackHistoryMessage[]; has_more?: boolean; response_metadata?: { next_cursor?: string } };
    try {
      page = (await client.conversations.history({
        channel: options.channelId,
        oldest,
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      })) as typeof page;
    } catch (err) {
      refuse(err);
    }
    for (const m of page.messages ?? []) {
      scanned += 1;
      const message = await memberMessage(m, options.memberId, options.names);
      if (message && !found.has(message.id)) {
        found.set(message.id, message);
        mine += 1;
      }
      if (threads.length < MAX_THREADS && threadHasMember(m, options.memberId, since)) threads.push(m.ts as string);
    }
    cursor = page.response_metadata?.next_cursor || undefined;
    if (!page.has_more || !cursor || mine >= options.window.maxMessages) break;
    if ((page.messages?.length ?? 0) < PAGE_SIZE) {
      slackLimited = true;
      break;
    }
    if (scanned >= MAX_SCANNED_MESSAGES) {
      scanLimitHit = true;
      break;
    }
  }
  // Under Slack's tightest limits every further call would wait a minute: the threads are left unread.
  for (const ts of slackLimited ? [] : threads) {
    let replyCursor: string | undefined;
    do {
      let page: { messages?: SlackHistoryMessage[]; has_more?: boolean; response_metadata?: { next_cursor?: string } };
      try {
        page = (await client.conversations.replies({
          channel: options.channelId,
          ts,
          oldest,
          limit: PAGE_SIZE,
          ...(replyCursor ? { cursor: replyCursor } : {}),
        })) as typeof page;
      } catch (err) {
        refuse(err);
      }
      for (const m of page.messages ?? []) {
        // The thread's parent comes first in every page; it was read with the channel.
        if (m.ts === ts) continue;
        scanned += 1;
        if (m.ts && Number(m.ts) * 1000 < since) continue;
        const message = await memberMessage(m, options.memberId, options.names);
        if (message && !found.has(message.id)) found.set(message.id, message);
      }
      replyCursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
    } while (replyCursor && scanned < MAX_SCANNED_MESSAGES * 2);
  }
  const messages = [...found.values()].sort((a, b) => b.at - a.at || (b.id < a.id ? -1 : 1)).slice(0, options.window.maxMessages);
  return { messages, scanned, scanLimitHit, slackLimited };
}

/** A permalink without a call, when chat.getPermalink is unavailable. */
export function fallbackPermalink(domain: string | undefined, channel: string, ts: string): string | undefined {
  if (!domain) return undefined;
  return `https://${domain}.slack.com/archives/${channel}/p${ts.replace('.', '')}`;
}
