/**
 * Channel histories for the fake Discord: `GET /channels/{channel.id}/messages` as Discord documents
 * it (newest first; `limit` 1–100, default 50; `before`/`after`/`around`, one at a time), with the
 * two ways Discord withholds messages from a bot:
 * - no View Channel (or the bot not in the server): 403 `{ code: 50001, message: 'Missing Access' }`;
 * - no Read Message History: 200 with an empty array ("no messages will be returned");
 * - the application without the Message Content intent: `content`, `embeds`, `attachments`,
 *   `components` (and `poll`) of others' messages come back empty, except messages that mention the
 *   app and the app's own.
 * Messages are built in the shapes Discord sends (default, reply, forwarded, application-command
 * echo, thread-created and join notices, edited, with attachments or stickers).
 */
import { type FakeDiscord, messageObject } from './fake-discord.ts';

const DISCORD_EPOCH = 1_420_070_400_000n;
let sequence = 0n;

/** A snowflake for a moment in the past: messages must carry their age in their id, as Discord's do. */
export function snowflakeAt(ms: number): string {
  sequence = (sequence + 1n) & 0xfffn;
  return (((BigInt(Math.floor(ms)) - DISCORD_EPOCH) << 22n) | sequence).toString();
}

export interface HistoryUser {
  id: string;
  username: string;
  global_name: string;
  discriminator: string;
  avatar: null;
  bot?: boolean;
  public_flags: number;
}

export function person(id: string, username: string): HistoryUser {
  return { id, username, global_name: username, discriminator: '0', avatar: null, public_flags: 0 };
}

interface ChannelState {
  guildId: string;
  canView: boolean;
  canReadHistory: boolean;
  messages: Record<string, unknown>[];
}

export class FakeDiscordHistory {
  readonly #channels = new Map<string, ChannelState>();
  /** Whether the application has the Message Content intent switched on in the Developer Portal. */
  messageContentIntent: boolean;
  readonly #botId: string;

  constructor(fake: FakeDiscord, options: { messageContentIntent?: boolean } = {}) {
    this.messageContentIntent = options.messageContentIntent ?? true;
    this.#botId = fake.botUser.id;
    fake.addRoute((request, answer, botAuth) => {
      const m = /^\/channels\/(\d+)\/messages$/.exec(request.path);
      if (request.method !== 'GET' || !m) return false;
      if (!botAuth) {
        answer(401, { message: '401: Unauthorized', code: 0 });
        return true;
      }
      const channel = this.#channels.get(m[1] as string);
      if (!channel) answer(404, { message: 'Unknown Channel', code: 10003 });
      else if (!channel.canView) answer(403, { message: 'Missing Access', code: 50001 });
      else if (!channel.canReadHistory) answer(200, []);
      else answer(200, this.#page(channel, request.query));
      return true;
    });
  }

  /** A text channel (or thread) with its permissions for the bot. */
  channel(id: string, options: { guildId: string; canView?: boolean; canReadHistory?: boolean }): void {
    this.#channels.set(id, {
      guildId: options.guildId,
      canView: options.canView ?? true,
      canReadHistory: options.canReadHistory ?? true,
      messages: this.#channels.get(id)?.messages ?? [],
    });
  }

  /** Adds a message posted `agoMs` ago; returns it as Discord stores it. */
  post(channelId: string, agoMs: number, fields: Record<string, unknown> & { author: HistoryUser }): Record<string, unknown> {
    const channel = this.#channels.get(channelId);
    if (!channel) throw new Error(`fake history: unknown channel ${channelId}`);
    const at = Date.now() - agoMs;
    const message = messageObject({
      id: snowflakeAt(at),
      channel_id: channelId,
      timestamp: new Date(at).toISOString(),
      ...fields,
    });
    channel.messages.push(message);
    return message;
  }

  /** An edit: new content, `edited_timestamp` set, same id and timestamp. */
  edit(channelId: string, messageId: string, content: string): void {
    const message = this.#channels.get(channelId)?.messages.find((m) => m.id === messageId);
    if (!message) throw new Error(`fake history: unknown message ${messageId}`);
    message.content = content;
    message.edited_timestamp = new Date().toISOString();
  }

  /** A deletion: the message is gone from the history. */
  remove(channelId: string, messageId: string): void {
    const channel = this.#channels.get(channelId);
    if (channel) channel.messages = channel.messages.filter((m) => m.id !== messageId);
  }

  #visible(message: Record<string, unknown>): Record<string, unknown> {
    if (this.messageContentIntent) return message;
    const author = message.author as { id?: string } | undefined;
    const mentions = (message.mentions as { id?: string }[] | undefined) ?? [];
    if (author?.id === this.#botId || mentions.some((u) => u.id === this.#botId)) return message;
    const { poll: _poll, ...rest } = message;
    const snapshots = (message.message_snapshots as { message: Record<string, unknown> }[] | undefined)?.map((s) => ({
      message: { ...s.message, content: '', embeds: [], attachments: [], components: [] },
    }));
    return { ...rest, content: '', embeds: [], attachments: [], components: [], ...(snapshots ? { message_snapshots: snapshots } : {}) };
  }

  #page(channel: ChannelState, query: URLSearchParams): Record<string, unknown>[] {
    const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 50) || 50));
    const newestFirst = [...channel.messages].sort((a, b) => (BigInt(b.id as string) > BigInt(a.id as string) ? 1 : -1));
    const before = query.get('before');
    const after = query.get('after');
    let selected = newestFirst;
    if (before) selected = newestFirst.filter((m) => BigInt(m.id as string) < BigInt(before));
    else if (after) selected = newestFirst.filter((m) => BigInt(m.id as string) > BigInt(after)).slice(-limit);
    return selected.slice(0, limit).map((m) => this.#visible(m));
  }
}

/** What a member's plain message looks like, with the guild member data Discord adds to mentions. */
export function textMessage(
  author: HistoryUser,
  content: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> & { author: HistoryUser } {
  return { type: 0, author, content, ...extra };
}

/** A reply (type 19) to `to`, carrying the reference and the referenced message as Discord does. */
export function replyMessage(
  author: HistoryUser,
  content: string,
  to: Record<string, unknown>,
  guildId: string,
): Record<string, unknown> & { author: HistoryUser } {
  return {
    type: 19,
    author,
    content,
    message_reference: { type: 0, message_id: to.id, channel_id: to.channel_id, guild_id: guildId },
    referenced_message: to,
  };
}

/** The channel's record of a member running another app's slash command (type 20, authored by that app). */
export function commandEcho(
  app: HistoryUser,
  member: HistoryUser,
  commandName: string,
  guildId: string,
): Record<string, unknown> & { author: HistoryUser } {
  return {
    type: 20,
    author: app,
    content: '',
    application_id: app.id,
    interaction_metadata: {
      id: snowflakeAt(Date.now()),
      type: 2,
      user: member,
      authorizing_integration_owners: { '0': guildId },
      name: commandName,
    },
    interaction: { id: snowflakeAt(Date.now()), type: 2, name: commandName, user: member },
  };
}
