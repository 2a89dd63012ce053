/**
 * Gateway dispatches and interactions of watched channels, shaped as Discord documents them (API
 * v10, "Gateway Events": Message Create/Update/Delete carry a message object plus `guild_id` and a
 * partial `member` without `user`; Thread Create a channel object with `parent_id` and
 * `newly_created`; Guild Delete an unavailable guild object).
 */
import { messageObject, snowflake } from './fake-discord.ts';
import { chatInputDetect, type GuildRole, guildObject, type Place, type user } from './payloads.ts';

export type Author = ReturnType<typeof user> & { bot?: boolean };

function member(roles: string[] = [], nick: string | null = null) {
  return {
    roles,
    premium_since: null,
    pending: false,
    nick,
    mute: false,
    joined_at: '2024-01-01T00:00:00.000000+00:00',
    flags: 0,
    deaf: false,
    communication_disabled_until: null,
    avatar: null,
  };
}

export interface MessageOptions {
  channelId?: string;
  roles?: string[];
  nick?: string | null;
  type?: number;
  id?: string;
  timestamp?: string;
  webhookId?: string;
  guildId?: string | null;
}

/** MESSAGE_CREATE's `d`. */
export function messageCreate(place: Place, author: Author, content: string, options: MessageOptions = {}): Record<string, unknown> {
  const guildId = options.guildId === undefined ? place.guildId : options.guildId;
  return messageObject({
    ...(options.id ? { id: options.id } : {}),
    type: options.type ?? 0,
    channel_id: options.channelId ?? place.channelId,
    author,
    content,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
    ...(options.webhookId ? { webhook_id: options.webhookId } : {}),
    ...(guildId ? { guild_id: guildId, member: member(options.roles, options.nick ?? null) } : {}),
    mentions: [],
    nonce: snowflake(),
    referenced_message: null,
  });
}

/** MESSAGE_UPDATE's `d`: the whole message again, edited. */
export function messageUpdate(created: Record<string, unknown>, content: string): Record<string, unknown> {
  return { ...created, content, edited_timestamp: new Date().toISOString() };
}

/** MESSAGE_DELETE's `d`. */
export function messageDelete(created: Record<string, unknown>): Record<string, unknown> {
  return { id: created.id, channel_id: created.channel_id, guild_id: created.guild_id };
}

/** THREAD_CREATE's `d`: a public thread of `parentId`. */
export function threadCreate(place: Place, parentId: string, ownerId: string, threadId = snowflake()): Record<string, unknown> {
  return {
    id: threadId,
    guild_id: place.guildId,
    parent_id: parentId,
    owner_id: ownerId,
    type: 11,
    name: 'a thread',
    last_message_id: null,
    rate_limit_per_user: 0,
    flags: 0,
    message_count: 0,
    member_count: 1,
    total_message_sent: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
      create_timestamp: new Date().toISOString(),
    },
    newly_created: true,
  };
}

/** GUILD_CREATE with text channels and roles, the bot among its members. */
export function guildWithChannels(
  place: Place,
  channels: { id: string; name: string; type?: number }[],
  roles: GuildRole[],
  botUserId: string,
) {
  return guildObject(place, {
    name: 'Watched server',
    channels,
    roles,
    memberCount: 3,
    members: [
      { ...member([]), user: { id: botUserId, username: 'textdetect', global_name: null, discriminator: '0', avatar: null, bot: true } },
    ],
  });
}

const MANAGE_GUILD = 1n << 5n;

/** `/detect-settings <subcommand>` from a member with Manage Server, with resolved channels and roles. */
export function settingsCommand(
  place: Place,
  who: ReturnType<typeof user>,
  subcommand: string,
  options: { name: string; type: number; value: string | boolean | number }[] = [],
  resolved?: Record<string, unknown>,
) {
  const base = chatInputDetect(place, who, { text: '', mode: 'general' });
  return {
    ...base,
    member: { ...base.member, permissions: (BigInt(base.member.permissions) | MANAGE_GUILD).toString() },
    data: {
      id: snowflake(),
      name: 'detect-settings',
      type: 1,
      options: [{ name: subcommand, type: 1, options }],
      ...(resolved ? { resolved } : {}),
    },
  };
}

/** A resolved channel as interaction data carries it. */
export function resolvedChannel(id: string, name: string, type = 0) {
  return { id, name, type, permissions: '1024', parent_id: null };
}

/** A press on a button of a card in the review channel (a normal message of the bot's, not ephemeral). */
export function cardButtonPress(
  place: Place,
  who: ReturnType<typeof user>,
  customId: string,
  card: { id: string; channelId: string; embeds: unknown[]; components: unknown[] },
  permissions?: string,
) {
  const base = chatInputDetect({ ...place, channelId: card.channelId }, who, { text: '', mode: 'general' });
  return {
    ...base,
    ...(permissions ? { member: { ...base.member, permissions } } : {}),
    type: 3,
    data: { custom_id: customId, component_type: 2 },
    message: messageObject({
      id: card.id,
      channel_id: card.channelId,
      author: { id: place.applicationId, username: 'textdetect', global_name: null, discriminator: '0', avatar: null, bot: true },
      embeds: card.embeds,
      components: card.components,
    }),
  };
}
