/**
 * INTERACTION_CREATE payloads for member checks, shaped as Discord sends them (API v10): the user
 * command (type 2 with `data.type` 2, the target in `resolved.users`/`resolved.members`), `/detect`
 * with a `user` option (type 6, resolved alongside), and `/detect-settings history`.
 */
import { snowflake } from './fake-discord.ts';
import { chatInputDetect, messageCommand, type user, type Place } from './payloads.ts';

type Who = ReturnType<typeof user>;

/** Read Message History (1 << 16) and View Channel (1 << 10) among the bot's channel permissions. */
export const READ_HISTORY = 1n << 16n;
export const VIEW_CHANNEL = 1n << 10n;

function resolvedMember() {
  return {
    roles: [],
    premium_since: null,
    permissions: '0',
    pending: false,
    nick: null,
    joined_at: '2024-01-01T00:00:00.000000+00:00',
    flags: 0,
    avatar: null,
    communication_disabled_until: null,
  };
}

/** Right-click a member → Apps → the user command. `appPermissions` replaces the bot's permissions in the channel. */
export function userCommand(
  place: Place,
  who: Who,
  target: Who & { bot?: boolean },
  options: { name?: string; appPermissions?: bigint } = {},
) {
  const base = messageCommand(place, who, { content: '' });
  return {
    ...base,
    ...(options.appPermissions !== undefined ? { app_permissions: options.appPermissions.toString() } : {}),
    data: {
      id: snowflake(),
      name: options.name ?? 'Check recent messages for AI',
      type: 2,
      target_id: target.id,
      guild_id: place.guildId,
      resolved: { users: { [target.id]: target }, members: { [target.id]: resolvedMember() } },
    },
  };
}

/** `/detect user:@member [mode:…] [text:…]`; `memberPermissions` replaces the invoking member's permissions. */
export function detectUser(
  place: Place,
  who: Who,
  target: (Who & { bot?: boolean }) | undefined,
  options: { mode?: string; text?: string; memberPermissions?: bigint } = {},
) {
  const base = chatInputDetect(place, who, { text: '', mode: 'general' });
  const opts: { name: string; type: number; value: string }[] = [];
  if (options.text !== undefined) opts.push({ name: 'text', type: 3, value: options.text });
  if (options.mode !== undefined) opts.push({ name: 'mode', type: 3, value: options.mode });
  if (target) opts.push({ name: 'user', type: 6, value: target.id });
  return {
    ...base,
    member: { ...base.member, ...(options.memberPermissions !== undefined ? { permissions: options.memberPermissions.toString() } : {}) },
    data: {
      id: snowflake(),
      name: 'detect',
      type: 1,
      options: opts,
      ...(target ? { resolved: { users: { [target.id]: target }, members: { [target.id]: resolvedMember() } } } : {}),
    },
  };
}

/** `/detect-settings history [messages:…] [days:…]` by a member with Manage Server. */
export function historySettings(place: Place, who: Who, values: { messages?: number; days?: number }) {
  const base = chatInputDetect(place, who, { text: '', mode: 'general' });
  const options: { name: string; type: number; value: number }[] = [];
  if (values.messages !== undefined) options.push({ name: 'messages', type: 4, value: values.messages });
  if (values.days !== undefined) options.push({ name: 'days', type: 4, value: values.days });
  return {
    ...base,
    member: { ...base.member, permissions: (BigInt(base.member.permissions) | (1n << 5n)).toString() },
    data: { id: snowflake(), name: 'detect-settings', type: 1, options: [{ name: 'history', type: 1, options }] },
  };
}
