/**
 * Channel histories for the fake Slack: `conversations.history` and `conversations.replies` as the
 * Web API documents them (newest first for history, parent then replies oldest first for replies;
 * `limit`, `cursor` → `response_metadata.next_cursor`, `has_more`, `oldest`/`latest`, messages'
 * `metadata` only with `include_all_metadata`), and their
 * refusals: `missing_scope` with `needed`/`provided` when the token lacks `channels:history`
 * (public) or `groups:history` (private), `not_in_channel` for a public channel the app is not in,
 * `channel_not_found` for a private one. Messages are built in the shapes Slack returns them
 * (edited, thread parents with reply metadata, broadcasts, file shares, bot and app posts, joins,
 * tombstones of deleted thread parents).
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';

export interface SlackChannel {
  id: string;
  private?: boolean;
  /** Whether the app was invited; default true. */
  member?: boolean;
}

type Message = Record<string, unknown> & { ts: string };

interface ChannelState {
  channel: SlackChannel;
  /** Top-level messages (and broadcasts), any order. */
  messages: Message[];
  /** Thread replies by parent ts. */
  replies: Map<string, Message[]>;
}

let tick = 0;

/** A Slack `ts` for a moment `agoMs` in the past; unique, as Slack's are within a channel. */
export function tsAgo(agoMs: number): string {
  tick = (tick + 1) % 1000;
  const ms = Date.now() - agoMs;
  return `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1000 + tick).padStart(6, '0')}`;
}

function richText(text: string): unknown[] {
  return [
    {
      type: 'rich_text',
      block_id: randomUUID().slice(0, 5),
      elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }],
    },
  ];
}

export class FakeSlackHistory {
  readonly #channels = new Map<string, ChannelState>();
  /** The bot token's scopes; `missing_scope` answers name what is missing. */
  scopes: Set<string>;
  /**
   * Most messages a page holds whatever `limit` asks: 15 plays Slack's limits for apps outside its
   * Marketplace (since May 2025); unset, `limit` is honoured up to 999.
   */
  pageCap: number | undefined;
  readonly teamId: string;

  constructor(options: { teamId: string; scopes?: string[] }) {
    this.teamId = options.teamId;
    this.scopes = new Set(options.scopes ?? DEFAULT_SCOPES);
  }

  /** The Web API methods to hand to FakeSlack's `methods` option. */
  get methods(): Record<string, (args: Record<string, unknown>) => Record<string, unknown>> {
    return {
      'conversations.history': (args) => this.#history(args),
      'conversations.replies': (args) => this.#replies(args),
    };
  }

  channel(channel: SlackChannel): void {
    this.#channels.set(channel.id, { channel, messages: [], replies: new Map() });
  }

  #state(id: string): ChannelState {
    const state = this.#channels.get(id);
    if (!state) throw new Error(`fake history: unknown channel ${id}`);
    return state;
  }

  /** A member's message written `agoMs` ago, with both `text` and rich-text blocks, as clients send it. */
  post(channelId: string, agoMs: number, user: string, text: string, extra: Record<string, unknown> = {}): Message {
    const message: Message = { ...this.#written(agoMs, user, text), ...extra };
    this.#state(channelId).messages.push(message);
    return message;
  }

  /** What a member's client sends: `text` and its rich-text blocks, the team and a client message id. */
  #written(agoMs: number, user: string, text: string): Message {
    return { type: 'message', user, text, blocks: richText(text), team: this.teamId, client_msg_id: randomUUID(), ts: tsAgo(agoMs) };
  }

  /** Any message object as given (bot posts, joins, tombstones…), `ts` filled in. */
  raw(channelId: string, agoMs: number, fields: Record<string, unknown>): Message {
    const message: Message = { type: 'message', ts: tsAgo(agoMs), ...fields };
    this.#state(channelId).messages.push(message);
    return message;
  }

  /** A message the app itself posted (FakeSlack's chat.postMessage), kept as given in a channel known here. */
  appPost(channelId: string, message: Record<string, unknown>): void {
    this.#channels.get(channelId)?.messages.push(message as Message);
  }

  /** A reply in `parent`'s thread; the parent's reply metadata is updated as Slack does. */
  reply(channelId: string, parent: Message, agoMs: number, user: string, text: string, options: { broadcast?: boolean } = {}): Message {
    const state = this.#state(channelId);
    const reply: Message = {
      ...this.#written(agoMs, user, text),
      thread_ts: parent.ts,
      parent_user_id: parent.user,
      ...(options.broadcast ? { subtype: 'thread_broadcast', root: { ...parent } } : {}),
    };
    const replies = state.replies.get(parent.ts) ?? [];
    replies.push(reply);
    state.replies.set(parent.ts, replies);
    const users = [...new Set(replies.map((r) => r.user as string))];
    Object.assign(parent, {
      thread_ts: parent.ts,
      reply_count: replies.length,
      reply_users_count: users.length,
      // Slack lists a few repliers only.
      reply_users: users.slice(0, 5),
      latest_reply: replies
        .map((r) => r.ts)
        .sort()
        .at(-1),
      is_locked: false,
      subscribed: false,
    });
    if (options.broadcast) state.messages.push(reply);
    return reply;
  }

  /** An edit: new text and blocks, `edited` set, same ts. */
  edit(channelId: string, message: Message, text: string): void {
    Object.assign(message, { text, blocks: richText(text), edited: { user: message.user, ts: tsAgo(0) } });
    void channelId;
  }

  /**
   * A deletion: the message disappears, except a thread parent with replies, which stays as a
   * tombstone ("This message was deleted.") so its thread can still be opened.
   */
  remove(channelId: string, message: Message): void {
    const state = this.#state(channelId);
    const replies = state.replies.get(message.ts);
    if (replies && replies.length > 0) {
      for (const key of Object.keys(message))
        if (!['ts', 'thread_ts', 'reply_count', 'reply_users', 'reply_users_count', 'latest_reply'].includes(key)) delete message[key];
      Object.assign(message, { type: 'message', subtype: 'tombstone', text: 'This message was deleted.', user: 'USLACKBOT', hidden: true });
      return;
    }
    state.messages = state.messages.filter((m) => m !== message);
  }

  #refusal(state: ChannelState | undefined): Record<string, unknown> | undefined {
    if (!state) return { ok: false, error: 'channel_not_found' };
    const needed = state.channel.private ? 'groups:history' : 'channels:history';
    if (!this.scopes.has(needed)) return { ok: false, error: 'missing_scope', needed, provided: [...this.scopes].join(',') };
    if (state.channel.member === false) return { ok: false, error: state.channel.private ? 'channel_not_found' : 'not_in_channel' };
    return undefined;
  }

  #window(messages: Message[], args: Record<string, unknown>): Message[] {
    const oldest = args.oldest === undefined ? 0 : Number(args.oldest);
    const latest = args.latest === undefined ? Number.POSITIVE_INFINITY : Number(args.latest);
    const inclusive = args.inclusive === true || args.inclusive === 'true' || args.inclusive === '1';
    return messages.filter((m) => {
      const ts = Number(m.ts);
      return inclusive ? ts >= oldest && ts <= latest : ts > oldest && ts < latest;
    });
  }

  #paged(all: Message[], args: Record<string, unknown>): { messages: Message[]; has_more: boolean; next: string } {
    const limit = Math.min(this.pageCap ?? 999, Math.max(1, Number(args.limit ?? 100) || 100));
    const start =
      typeof args.cursor === 'string' && args.cursor
        ? Number(
            Buffer.from(args.cursor, 'base64')
              .toString('utf8')
              .replace(/^offset:/, ''),
          )
        : 0;
    const messages = all.slice(start, start + limit);
    const hasMore = start + limit < all.length;
    return { messages, has_more: hasMore, next: hasMore ? Buffer.from(`offset:${start + limit}`).toString('base64') : '' };
  }

  /** Messages as an answer shows them: their `metadata` only when `include_all_metadata` is true. */
  #shown(messages: Message[], args: Record<string, unknown>): Message[] {
    if (String(args.include_all_metadata) === 'true') return messages;
    return messages.map((m) => {
      if (!('metadata' in m)) return m;
      const { metadata: _metadata, ...rest } = m;
      return rest;
    });
  }

  #history(args: Record<string, unknown>): Record<string, unknown> {
    const state = this.#channels.get(String(args.channel));
    const refused = this.#refusal(state);
    if (refused || !state) return refused ?? { ok: false, error: 'channel_not_found' };
    const newestFirst = this.#window(state.messages, args).sort((a, b) => Number(b.ts) - Number(a.ts));
    const page = this.#paged(newestFirst, args);
    return {
      ok: true,
      messages: this.#shown(page.messages, args),
      has_more: page.has_more,
      pin_count: 0,
      channel_actions_ts: null,
      channel_actions_count: 0,
      response_metadata: { next_cursor: page.next },
    };
  }

  #replies(args: Record<string, unknown>): Record<string, unknown> {
    const state = this.#channels.get(String(args.channel));
    const refused = this.#refusal(state);
    if (refused || !state) return refused ?? { ok: false, error: 'channel_not_found' };
    const parent = state.messages.find((m) => m.ts === args.ts);
    if (!parent) return { ok: false, error: 'thread_not_found' };
    const replies = this.#window(state.replies.get(parent.ts) ?? [], args).sort((a, b) => Number(a.ts) - Number(b.ts));
    const page = this.#paged(replies, args);
    // Every page starts with the parent, as Slack's do.
    return {
      ok: true,
      messages: this.#shown([parent, ...page.messages], args),
      has_more: page.has_more,
      response_metadata: { next_cursor: page.next },
    };
  }
}
