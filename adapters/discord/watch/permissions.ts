/**
 * A member's permissions from the server's cached roles and the channel's overwrites, computed the
 * way Discord documents it (base permissions from @everyone and the member's roles, Administrator
 * and the owner have everything, then the channel's @everyone, role and member overwrites). A
 * gateway message carries the author's role ids but not their permissions.
 */
import { PermissionFlagsBits, type Guild, type GuildBasedChannel } from 'discord.js';

const ALL = (1n << 64n) - 1n;

/** Who counts as a moderator, and is never scored: any of these, server-wide or in the channel. */
export const MODERATOR_PERMISSIONS =
  PermissionFlagsBits.Administrator |
  PermissionFlagsBits.ManageGuild |
  PermissionFlagsBits.ManageMessages |
  PermissionFlagsBits.ModerateMembers;

export function memberPermissions(guild: Guild, memberId: string, roleIds: readonly string[], channel?: GuildBasedChannel | null): bigint {
  if (guild.ownerId === memberId) return ALL;
  let bits = guild.roles.cache.get(guild.id)?.permissions.bitfield ?? 0n;
  for (const id of roleIds) bits |= guild.roles.cache.get(id)?.permissions.bitfield ?? 0n;
  if (bits & PermissionFlagsBits.Administrator) return ALL;
  const overwrites = channel && 'permissionOverwrites' in channel ? channel.permissionOverwrites.cache : undefined;
  if (!overwrites) return bits;
  const everyone = overwrites.get(guild.id);
  if (everyone) bits = (bits & ~everyone.deny.bitfield) | everyone.allow.bitfield;
  let allow = 0n;
  let deny = 0n;
  for (const id of roleIds) {
    const overwrite = overwrites.get(id);
    if (!overwrite) continue;
    allow |= overwrite.allow.bitfield;
    deny |= overwrite.deny.bitfield;
  }
  bits = (bits & ~deny) | allow;
  const member = overwrites.get(memberId);
  if (member) bits = (bits & ~member.deny.bitfield) | member.allow.bitfield;
  return bits;
}

export function isModerator(bits: bigint): boolean {
  return (bits & MODERATOR_PERMISSIONS) !== 0n;
}

/** Names of the permissions in `needed` that `bits` lacks, for a sentence a moderator can act on. */
export function missingPermissions(bits: bigint, needed: Record<string, bigint>): string[] {
  return Object.entries(needed)
    .filter(([, bit]) => (bits & bit) === 0n)
    .map(([name]) => name);
}
