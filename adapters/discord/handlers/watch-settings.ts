/**
 * `/detect-settings watch|unwatch|cards|exempt-role|preset|retention|report|delete-data`. Reached
 * through handleSettingsCommand, which has already deferred (ephemerally) and checked Manage Server.
 */
import { type APIEmbed, type ChannelType, type ChatInputCommandInteraction, type GuildBasedChannel, PermissionFlagsBits } from 'discord.js';
import { DEFAULT_PRESET, isPreset, PRESET_DESCRIPTIONS } from '../../chat/watch/presets.ts';
import { reportLines } from '../../chat/watch/report.ts';
import { reviewsJsonl } from '../../chat/watch/export.ts';
import { clearingsForgotten, learningStatement, precisionBoundSet } from '../../chat/watch/learning.ts';
import { readPrecision } from '../../chat/watch/precision.ts';
import { DISCORD_PRECISION_MARKUP } from '../watch/suggestion.ts';
import { judgingSentence } from '../../chat/watch/report.ts';
import { editAnswer, guildScope, guildSettings, interactionFields, type BotContext } from '../check.ts';
import { NEUTRAL_COLOUR } from '../reply.ts';
import { WATCH_OPTIONS, WATCH_SUBCOMMANDS, WATCHABLE_CHANNEL_TYPES } from '../watch/commands.ts';
import { memberPermissions, missingPermissions } from '../watch/permissions.ts';
import { INTENT_MISSING_REPLY } from '../watch/runtime.ts';

const SUBCOMMANDS: ReadonlySet<string> = new Set(Object.values(WATCH_SUBCOMMANDS));

export function isWatchSubcommand(name: string | null): boolean {
  return name !== null && SUBCOMMANDS.has(name);
}

/** Lines for `/detect-settings show`: watched channels, exempt roles, preset and retention; empty without watching. */
export async function watchSummary(ctx: BotContext, guildId: string): Promise<string> {
  const watching = ctx.watch;
  if (!watching?.store) return '';
  try {
    const config = await watching.store.getConfig(guildScope(guildId));
    const channels = config.channels.map((c) => `<#${c.channelId}> (${c.cards ? 'cards on' : 'shadow mode'})`).join(', ');
    return [
      '',
      `• Watched channels: ${channels || 'none'}${watching.status === 'intent_missing' ? ' (⚠️ watching is off: the bot lacks the Message Content intent)' : ''}`,
      `• Exempt roles: ${config.exemptIds.map((id) => `<@&${id}>`).join(', ') || 'none'} (moderators always are)`,
      `• Flagging preset: ${config.preset ?? DEFAULT_PRESET}; records kept ${config.retentionDays ?? watching.settings.retentionDays} days`,
    ].join('\n');
  } catch (err) {
    ctx.logger.warn({ guildId, err: (err as Error).message }, 'could not read the watch settings');
    return '\n• Watched channels: unknown (the bot’s store did not answer)';
  }
}

const NOT_SET_UP = 'Watching is not set up in this bot. Ask the bot admin (it is started without watching).';

function dataStatement(days: number): string {
  return `**What is kept:** for each scored message its score, the message and author ids, and later the moderators’ answers: never the text, never names. Kept ${days} days (\`/detect-settings retention\`); everything is deleted when the bot is removed from the server, or with \`/detect-settings delete-data\`.`;
}

/** The bot's own permissions in a channel, when the server's roles are cached; undefined when they are not. */
function botPermissionsIn(interaction: ChatInputCommandInteraction, channelId: string): bigint | undefined {
  const guild = interaction.guild;
  const me = guild?.members.me;
  if (!guild || !me) return undefined;
  const channel = (guild.channels.cache.get(channelId) as GuildBasedChannel | undefined) ?? null;
  return memberPermissions(guild, me.id, [...me.roles.cache.keys()], channel);
}

function permissionWarning(
  interaction: ChatInputCommandInteraction,
  channelId: string,
  needed: Record<string, bigint>,
  what: string,
): string {
  const bits = botPermissionsIn(interaction, channelId);
  if (bits === undefined) return '';
  const missing = missingPermissions(bits, needed);
  return missing.length > 0 ? `\n⚠️ The bot lacks ${missing.join(', ')} in <#${channelId}>: ${what}` : '';
}

export async function handleWatchSettings(ctx: BotContext, interaction: ChatInputCommandInteraction, subcommand: string): Promise<void> {
  const guildId = interaction.guildId as string;
  const scope = guildScope(guildId);
  const watching = ctx.watch;
  const store = watching?.store;
  const reply = (content: string) => editAnswer(ctx, interaction, { content, allowedMentions: { parse: [] } });
  if (!watching || !store) {
    await reply(NOT_SET_UP);
    return;
  }
  const invalidate = (): void => watching.watcher?.invalidate(scope);
  const config = await store.getConfig(scope);
  const retentionDays = config.retentionDays ?? watching.settings.retentionDays;
  const fields = { ...interactionFields(interaction), subcommand };

  switch (subcommand) {
    case WATCH_SUBCOMMANDS.watch: {
      if (watching.status === 'intent_missing') {
        await reply(INTENT_MISSING_REPLY);
        return;
      }
      if (watching.status !== 'on') {
        await reply(NOT_SET_UP);
        return;
      }
      const channel = interaction.options.getChannel(WATCH_OPTIONS.channel, true);
      if (!(WATCHABLE_CHANNEL_TYPES as readonly ChannelType[]).includes(channel.type)) {
        await reply(`<#${channel.id}> cannot be watched: choose a text, announcement or forum channel.`);
        return;
      }
      const { channel: watched, added } = await store.watchChannel(scope, channel.id, Date.now());
      invalidate();
      ctx.logger.info({ ...fields, channelId: channel.id, added }, 'watching a channel');
      if (!added) {
        await reply(
          `<#${channel.id}> is already watched (since <t:${Math.floor(watched.since / 1000)}:f>, ${watched.cards ? 'review cards on' : 'shadow mode'}).`,
        );
        return;
      }
      const warning = permissionWarning(
        interaction,
        channel.id,
        { 'View Channel': PermissionFlagsBits.ViewChannel, 'Read Message History': PermissionFlagsBits.ReadMessageHistory },
        'it receives nothing from there until it has them.',
      );
      await reply(
        [
          `👀 Watching <#${channel.id}> (and its threads) in **shadow mode**: ${judgingSentence(watching.settings)} Flags are recorded and counted, but no card is posted yet: check \`/detect-settings report\` after a few days, then turn cards on with \`/detect-settings cards\`.${warning}`,
          'Left out: bots and webhooks, system messages, command-like messages, edits of messages already scored, moderators (Manage Messages, Manage Server, Timeout Members, Administrator, the checker role) and exempt roles (`/detect-settings exempt-role`).',
          'The bot never deletes, mutes or replies to anything in the channel; flags are shown only in the review (mod-log) channel.',
          dataStatement(retentionDays),
        ].join('\n\n'),
      );
      return;
    }
    case WATCH_SUBCOMMANDS.unwatch: {
      const channel = interaction.options.getChannel(WATCH_OPTIONS.channel, true);
      const removed = await store.unwatchChannel(scope, channel.id);
      invalidate();
      ctx.logger.info({ ...fields, channelId: channel.id, removed }, 'unwatching a channel');
      await reply(
        removed
          ? `Stopped watching <#${channel.id}>; messages of it still waiting are not scored. Its records stay until they expire (${retentionDays} days) or \`/detect-settings delete-data\`.`
          : `<#${channel.id}> was not watched.`,
      );
      return;
    }
    case WATCH_SUBCOMMANDS.cards: {
      const channel = interaction.options.getChannel(WATCH_OPTIONS.channel, true);
      const on = interaction.options.getString(WATCH_OPTIONS.state, true) === 'on';
      if (!config.channels.some((c) => c.channelId === channel.id)) {
        await reply(`<#${channel.id}> is not watched. Start with \`/detect-settings watch\`; it begins in shadow mode.`);
        return;
      }
      const reviewChannel = (await guildSettings(ctx, guildId)).auditChannelId ?? ctx.settings.modLogChannelId;
      if (on && !reviewChannel) {
        await reply('Review cards go to the mod-log channel, and none is set: choose one with `/detect-settings modlog` first.');
        return;
      }
      await store.setCards(scope, channel.id, on);
      invalidate();
      ctx.logger.info({ ...fields, channelId: channel.id, cards: on }, 'review cards changed');
      if (!on) {
        await reply(`<#${channel.id}> is in shadow mode again: flags are recorded and counted, no card is posted.`);
        return;
      }
      const warning = permissionWarning(
        interaction,
        reviewChannel as string,
        {
          'View Channel': PermissionFlagsBits.ViewChannel,
          'Send Messages': PermissionFlagsBits.SendMessages,
          'Embed Links': PermissionFlagsBits.EmbedLinks,
        },
        'cards cannot be posted there until it has them.',
      );
      await reply(
        `🗂️ Review cards are on for <#${channel.id}>: each flag is posted in <#${reviewChannel}> with **Confirm**, **False positive** and **Dismiss**. At most ${watching.settings.cardsPerChannelHour} cards per hour from this channel, and one per member per ${Math.round(watching.settings.cardWindowMs / 60_000)} minutes; the others are counted in the report. Nothing is ever done in the channel itself.${warning}`,
      );
      return;
    }
    case WATCH_SUBCOMMANDS.exemptRole: {
      const role = interaction.options.getRole(WATCH_OPTIONS.role, true);
      const add = interaction.options.getString(WATCH_OPTIONS.action, true) === 'add';
      if (role.id === guildId) {
        await reply('@everyone cannot be exempt: that would leave nobody to watch. Use `/detect-settings unwatch` instead.');
        return;
      }
      const exempt = await store.setExempt(scope, role.id, add);
      invalidate();
      ctx.logger.info({ ...fields, roleId: role.id, add }, 'exempt roles changed');
      const list = exempt.length > 0 ? exempt.map((id) => `<@&${id}>`).join(', ') : 'none';
      await reply(
        `${add ? `Members with <@&${role.id}> are not scored in watched channels.` : `<@&${role.id}> is no longer exempt.`} Exempt roles: ${list} (moderators always are).`,
      );
      return;
    }
    case WATCH_SUBCOMMANDS.preset: {
      const preset = interaction.options.getString(WATCH_OPTIONS.preset, true);
      if (!isPreset(preset)) {
        await reply(`“${preset}” is not a preset. Choose strict, standard or loose.`);
        return;
      }
      await store.setPreset(scope, preset === DEFAULT_PRESET ? null : preset);
      invalidate();
      ctx.logger.info({ ...fields, preset }, 'watch preset changed');
      await reply(
        `Watched messages are now flagged with the **${preset}** preset: ${PRESET_DESCRIPTIONS[preset]}. \`/detect-settings report\` shows what each preset would have flagged.`,
      );
      return;
    }
    case WATCH_SUBCOMMANDS.retention: {
      const days = interaction.options.getInteger(WATCH_OPTIONS.days);
      await store.setRetention(scope, days, watching.settings.retentionDays, Date.now());
      invalidate();
      ctx.logger.info({ ...fields, days }, 'watch retention changed');
      await reply(
        `Scores, ids and review outcomes are now kept ${days ?? watching.settings.retentionDays} days${days === null ? ' (the bot default)' : ''}; records already kept follow the new period.`,
      );
      return;
    }
    case WATCH_SUBCOMMANDS.report: {
      const now = Date.now();
      const data = await store.report(scope, now);
      const lines = reportLines(data, config, {
        preset: config.preset ?? DEFAULT_PRESET,
        retentionDays,
        precision: await readPrecision(store, scope, config, now),
        markup: { ...DISCORD_PRECISION_MARKUP, date: (ms) => `<t:${Math.floor(ms / 1000)}:d>` },
      });
      if (watching.status === 'intent_missing') lines.push('', `⚠️ ${INTENT_MISSING_REPLY}`);
      const embed: APIEmbed = { color: NEUTRAL_COLOUR, description: truncateLines(lines, 4096) };
      await editAnswer(ctx, interaction, { embeds: [embed], allowedMentions: { parse: [] } });
      return;
    }
    case WATCH_SUBCOMMANDS.precision: {
      const bound = interaction.options.getNumber(WATCH_OPTIONS.bound);
      await store.setPrecisionBound(scope, bound);
      invalidate();
      ctx.logger.info({ ...fields, bound }, 'precision bound changed');
      await reply(precisionBoundSet(bound));
      return;
    }
    case WATCH_SUBCOMMANDS.clearings: {
      if (interaction.options.getBoolean(WATCH_OPTIONS.reset) !== true) {
        await reply(`${learningStatement(watching.settings.clearDays)}\n\n\`/detect-settings clearings reset:True\` forgets them.`);
        return;
      }
      const forgotten = await store.deleteClearings(scope);
      ctx.logger.info({ ...fields, forgotten }, 'clearings reset');
      await reply(clearingsForgotten(forgotten));
      return;
    }
    case WATCH_SUBCOMMANDS.exportReviews: {
      const flags = await store.reviewedFlags(scope, 0);
      ctx.logger.info({ ...fields, flags: flags.length }, 'reviewed flags exported');
      await editAnswer(ctx, interaction, {
        content: `${flags.length} reviewed flag${flags.length === 1 ? '' : 's'} kept (ids, scores, verdicts, outcomes, presets and dates; never a text).`,
        files: flags.length > 0 ? [{ attachment: Buffer.from(reviewsJsonl(flags)), name: 'reviewed-flags.jsonl' }] : [],
        allowedMentions: { parse: [] },
      });
      return;
    }
    case WATCH_SUBCOMMANDS.deleteData: {
      if (!interaction.options.getBoolean(WATCH_OPTIONS.confirm, true)) {
        await reply(
          'Nothing was deleted. `/detect-settings delete-data confirm:True` deletes everything the bot keeps about this server: watched channels, exempt roles, preset, retention, messages waiting for a score, scores, ids and review outcomes, the members moderators cleared, and the server’s other settings (mode, mod-log channel, checker role). Cards already posted stay in the mod-log channel.',
        );
        return;
      }
      await watching.removeGuild(guildId, '/detect-settings delete-data');
      ctx.logger.info(fields, 'server data deleted on request');
      await reply(
        'Deleted everything the bot kept about this server: watched channels, exempt roles, preset, retention, waiting messages, scores, ids, review outcomes, clearings and the server’s settings. Nothing is watched now; the commands keep working with the bot’s defaults. Cards already posted stay in the mod-log channel (their buttons no longer record anything).',
      );
      return;
    }
    default:
      return;
  }
}

/** Whole lines up to `max` characters, with a note when some were left out. */
function truncateLines(lines: string[], max: number): string {
  const out: string[] = [];
  let length = 0;
  for (const line of lines) {
    if (length + line.length + 1 > max - 60) {
      out.push('… (more channels than fit here)');
      break;
    }
    out.push(line);
    length += line.length + 1;
  }
  return out.join('\n');
}
