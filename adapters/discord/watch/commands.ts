/**
 * The `/detect-settings` subcommands of watching, added to the settings command by commands.ts.
 */
import { ChannelType, type SlashCommandSubcommandsOnlyBuilder } from 'discord.js';
import { MAX_RETENTION_DAYS } from '../../chat/watch/config.ts';
import { PRESETS } from '../../chat/watch/types.ts';

export const WATCH_SUBCOMMANDS = {
  watch: 'watch',
  unwatch: 'unwatch',
  cards: 'cards',
  exemptRole: 'exempt-role',
  preset: 'preset',
  retention: 'retention',
  report: 'report',
  deleteData: 'delete-data',
  precision: 'precision',
  clearings: 'clearings',
  exportReviews: 'export-reviews',
} as const;

export const WATCH_OPTIONS = {
  channel: 'channel',
  state: 'state',
  role: 'role',
  action: 'action',
  preset: 'preset',
  days: 'days',
  confirm: 'confirm',
  bound: 'bound',
  reset: 'reset',
} as const;

/** Channels whose messages (and whose threads' messages) can be watched. */
export const WATCHABLE_CHANNEL_TYPES = [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildForum] as const;

export function addWatchSubcommands(builder: SlashCommandSubcommandsOnlyBuilder): SlashCommandSubcommandsOnlyBuilder {
  return builder
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.watch)
        .setDescription('Watch a channel for AI-written messages (starts in shadow mode: no cards)')
        .addChannelOption((o) =>
          o
            .setName(WATCH_OPTIONS.channel)
            .setDescription('Channel to watch (its threads too)')
            .setRequired(true)
            .addChannelTypes(...WATCHABLE_CHANNEL_TYPES),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.unwatch)
        .setDescription('Stop watching a channel')
        .addChannelOption((o) => o.setName(WATCH_OPTIONS.channel).setDescription('Watched channel').setRequired(true)),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.cards)
        .setDescription('Post review cards for a watched channel, or go back to shadow mode')
        .addChannelOption((o) => o.setName(WATCH_OPTIONS.channel).setDescription('Watched channel').setRequired(true))
        .addStringOption((o) =>
          o
            .setName(WATCH_OPTIONS.state)
            .setDescription('On: cards in the mod-log channel; Shadow: flags only counted')
            .setRequired(true)
            .addChoices({ name: 'On', value: 'on' }, { name: 'Shadow mode', value: 'shadow' }),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.exemptRole)
        .setDescription('Members with this role are never scored in watched channels')
        .addRoleOption((o) => o.setName(WATCH_OPTIONS.role).setDescription('Role').setRequired(true))
        .addStringOption((o) =>
          o
            .setName(WATCH_OPTIONS.action)
            .setDescription('Add or remove the exemption')
            .setRequired(true)
            .addChoices({ name: 'Exempt', value: 'add' }, { name: 'Remove exemption', value: 'remove' }),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.preset)
        .setDescription('How eagerly watched messages are flagged')
        .addStringOption((o) =>
          o
            .setName(WATCH_OPTIONS.preset)
            .setDescription('Strict: clearest cases only; Loose: also borderline ones')
            .setRequired(true)
            .addChoices(...PRESETS.map((p) => ({ name: p.charAt(0).toUpperCase() + p.slice(1), value: p }))),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.retention)
        .setDescription('How many days scores and review outcomes are kept; empty for the bot default')
        .addIntegerOption((o) =>
          o.setName(WATCH_OPTIONS.days).setDescription('Days (1–365)').setMinValue(1).setMaxValue(MAX_RETENTION_DAYS),
        ),
    )
    .addSubcommand((c) =>
      c.setName(WATCH_SUBCOMMANDS.report).setDescription('What watching flagged and what moderators answered (7 and 30 days)'),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.precision)
        .setDescription('Confirmed share of reviewed flags under which a stricter preset is suggested; empty for 0.8')
        .addNumberOption((o) => o.setName(WATCH_OPTIONS.bound).setDescription('Share, 0.01–1').setMinValue(0.01).setMaxValue(1)),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.clearings)
        .setDescription('What “False positive” teaches the bot; reset forgets the members moderators cleared')
        .addBooleanOption((o) => o.setName(WATCH_OPTIONS.reset).setDescription('True to forget every clearing of this server')),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.exportReviews)
        .setDescription('Reviewed flags as a JSON Lines file: ids, scores and outcomes, never text'),
    )
    .addSubcommand((c) =>
      c
        .setName(WATCH_SUBCOMMANDS.deleteData)
        .setDescription('Delete everything the bot keeps about this server')
        .addBooleanOption((o) =>
          o.setName(WATCH_OPTIONS.confirm).setDescription('True to delete now; it cannot be undone').setRequired(true),
        ),
    );
}
