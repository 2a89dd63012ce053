/**
 * INTERACTION_CREATE payloads shaped as Discord sends them (API v10): a guild member's chat-input
 * command, message command (with `resolved.messages`), and button press.
 */
import { randomBytes } from 'node:crypto';
import { type AttachmentObject, messageObject, snowflake } from './fake-discord.ts';

export interface Place {
  applicationId: string;
  guildId: string;
  channelId: string;
}

export function user(id = snowflake(), username = 'mod') {
  return { id, username, global_name: username, discriminator: '0', avatar: null, public_flags: 0 };
}

/** Manage Messages (1 << 13) plus the usual member basics, as a string bitfield like Discord sends. */
const MODERATOR_PERMISSIONS = ((1n << 13n) | (1n << 10n) | (1n << 11n) | (1n << 16n)).toString();

function base(place: Place, who: ReturnType<typeof user>) {
  return {
    id: snowflake(),
    application_id: place.applicationId,
    token: `aW50ZXJhY3Rpb246${randomBytes(48).toString('base64url')}`,
    version: 1,
    guild_id: place.guildId,
    guild: { id: place.guildId, locale: 'en-US', features: [] },
    channel_id: place.channelId,
    channel: {
      id: place.channelId,
      type: 0,
      guild_id: place.guildId,
      name: 'general',
      position: 0,
      flags: 0,
      parent_id: null,
      nsfw: false,
      topic: null,
      rate_limit_per_user: 0,
      last_message_id: null,
      permissions: MODERATOR_PERMISSIONS,
    },
    member: {
      user: who,
      roles: [],
      premium_since: null,
      permissions: MODERATOR_PERMISSIONS,
      pending: false,
      nick: null,
      mute: false,
      joined_at: '2024-01-01T00:00:00.000000+00:00',
      flags: 0,
      deaf: false,
      communication_disabled_until: null,
      unusual_dm_activity_until: null,
      avatar: null,
    },
    app_permissions: MODERATOR_PERMISSIONS,
    locale: 'en-US',
    guild_locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { '0': place.guildId },
    context: 0,
    attachment_size_limit: 10_485_760,
  };
}

export type DetectOptions = { text?: string; mode: string; language?: string; segments?: boolean; file?: AttachmentObject };

export function chatInputDetect(place: Place, who: ReturnType<typeof user>, options: DetectOptions, commandId = snowflake()) {
  const opts: { name: string; type: number; value: string | boolean }[] = [];
  if (options.text !== undefined) opts.push({ name: 'text', type: 3, value: options.text });
  opts.push({ name: 'mode', type: 3, value: options.mode });
  if (options.language !== undefined) opts.push({ name: 'language', type: 3, value: options.language });
  if (options.segments !== undefined) opts.push({ name: 'segments', type: 5, value: options.segments });
  // An attachment option (type 11) carries the attachment's id; the object itself is in `resolved.attachments`.
  if (options.file) opts.push({ name: 'file', type: 11, value: options.file.id });
  return {
    ...base(place, who),
    type: 2,
    data: {
      id: commandId,
      name: 'detect',
      type: 1,
      options: opts,
      ...(options.file ? { resolved: { attachments: { [options.file.id]: options.file } } } : {}),
    },
  };
}

export interface TargetMessage {
  content: string;
  embeds?: { description?: string; title?: string; type?: string }[];
  attachments?: AttachmentObject[];
  author?: ReturnType<typeof user>;
}

export function messageCommand(place: Place, who: ReturnType<typeof user>, target: TargetMessage, commandId = snowflake()) {
  const messageId = snowflake();
  const message = messageObject({
    id: messageId,
    channel_id: place.channelId,
    author: target.author ?? user(snowflake(), 'poster'),
    content: target.content,
    embeds: (target.embeds ?? []).map((e) => ({ type: 'rich', ...e })),
    attachments: target.attachments ?? [],
  });
  return {
    ...base(place, who),
    type: 2,
    data: {
      id: commandId,
      name: 'Check for AI text',
      type: 3,
      target_id: messageId,
      guild_id: place.guildId,
      resolved: { messages: { [messageId]: message } },
    },
  };
}

/** A press on a button of the bot's (ephemeral) reply; `message` is that reply as Discord echoes it. */
export function buttonPress(
  place: Place,
  who: ReturnType<typeof user>,
  customId: string,
  replyMessage: { embeds: unknown[]; components: unknown[] },
) {
  return {
    ...base(place, who),
    type: 3,
    data: { custom_id: customId, component_type: 2 },
    message: messageObject({
      type: 20,
      channel_id: place.channelId,
      author: { id: place.applicationId, username: 'textdetect', global_name: null, discriminator: '0', avatar: null, bot: true },
      embeds: replyMessage.embeds,
      components: replyMessage.components,
      edited_timestamp: new Date().toISOString(),
      flags: 64,
      application_id: place.applicationId,
      webhook_id: place.applicationId,
    }),
  };
}

/** A role as GUILD_CREATE lists it (permissions as a decimal string, as Discord sends them). */
export interface GuildRole {
  id: string;
  name: string;
  permissions: string;
}

/**
 * A GUILD_CREATE guild object (API v10, "Guild Create"): its text channels in order, and its roles
 * after `@everyone`, each role and channel with the fields Discord sends.
 */
export function guildObject(
  place: Place,
  guild: {
    name: string;
    channels: { id: string; name: string; type?: number }[];
    roles?: GuildRole[];
    members?: unknown[];
    memberCount: number;
  },
) {
  return {
    id: place.guildId,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: snowflake(),
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 1,
    default_message_notifications: 1,
    explicit_content_filter: 2,
    roles: [{ id: place.guildId, name: '@everyone', permissions: '1071698660929' }, ...(guild.roles ?? [])].map((r, position) => ({
      color: 0,
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position,
      managed: false,
      mentionable: false,
      flags: 0,
      ...r,
    })),
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: place.channelId,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: 'en-US',
    public_updates_channel_id: null,
    max_video_channel_users: 25,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    safety_alerts_channel_id: null,
    joined_at: new Date().toISOString(),
    large: false,
    unavailable: false,
    member_count: guild.memberCount,
    voice_states: [],
    members: guild.members ?? [],
    channels: guild.channels.map((c, position) => ({
      id: c.id,
      type: c.type ?? 0,
      name: c.name,
      position,
      permission_overwrites: [],
      parent_id: null,
      nsfw: false,
      topic: null,
      rate_limit_per_user: 0,
      last_message_id: null,
      flags: 0,
    })),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** GUILD_CREATE for a server with one text channel, as sent after READY to a bot with the Guilds intent. */
export function guildCreate(place: Place, channelName = 'general') {
  return guildObject(place, { name: 'Test server', channels: [{ id: place.channelId, name: channelName }], memberCount: 2 });
}
