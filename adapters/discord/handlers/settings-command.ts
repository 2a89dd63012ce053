/**
 * `/detect-settings show|mode|modlog|checker-role`: a server's own settings, kept in the bots' state
 * store so every instance and every restart sees them. Only members with Manage Server may change
 * them; the answer is always ephemeral (settings are nobody else's business).
 */
import { type ChannelType, MessageFlags, PermissionFlagsBits, type ChatInputCommandInteraction } from 'discord.js';
import { checkHistoryDays, checkHistoryMessages, describeHistoryWindow, historyWindowOf } from '../../chat/author.ts';
import { isMode } from '../../chat/modes.ts';
import type { ScopeSettings, SettingsPatch } from '../../chat/store/index.ts';
import { editAnswer, guildScope, guildSettings, interactionFields, type BotContext } from '../check.ts';
import { BOT_DEFAULT_CHOICE, MODLOG_CHANNEL_TYPES, SETTINGS_OPTIONS, SETTINGS_SUBCOMMANDS } from '../commands.ts';
import { describeDiscordError } from '../discord-errors.ts';
import { handleWatchSettings, isWatchSubcommand, watchSummary } from './watch-settings.ts';
import { modeName } from '../../../src/words.ts';

/** What `watch-files enabled:true` does, said to the moderator who turns it on. */
export const WATCH_FILES_ON =
  'Watching now also checks the documents (PDF, Word .docx, text and Markdown files; up to 3 per message) members share in watched channels: a document that reads as likely AI-written gets a line in the mod-log channel, with a link to the message. Nothing is done in the channel, and no review card is made for a document.';

type Outcome = { ok: true; patch: SettingsPatch; done: string } | { ok: false; problem: string; code: string };

export async function handleSettingsCommand(ctx: BotContext, interaction: ChatInputCommandInteraction): Promise<void> {
  try {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  } catch (err) {
    ctx.logger.warn({ ...interactionFields(interaction), err: describeDiscordError(err) }, 'could not acknowledge /detect-settings');
    return;
  }
  const reply = (content: string) => editAnswer(ctx, interaction, { content, allowedMentions: { parse: [] } });
  const guildId = interaction.guildId;
  if (!guildId) {
    await reply('Settings belong to a server: run /detect-settings in the server you want to change.');
    return;
  }
  if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) {
    ctx.logger.info({ ...interactionFields(interaction), code: 'settings_forbidden' }, 'settings change refused');
    await reply('Only members with the Manage Server permission can see or change these settings.');
    return;
  }

  const subcommand = interaction.options.getSubcommand(false);
  const scope = guildScope(guildId);
  if (isWatchSubcommand(subcommand)) {
    try {
      await handleWatchSettings(ctx, interaction, subcommand as string);
    } catch (err) {
      ctx.logger.error({ ...interactionFields(interaction), subcommand, err: (err as Error).message }, 'watch settings failed');
      await reply(
        'The watch settings could not be read or saved (the bot’s store is unavailable). Nothing was changed; try again in a minute.',
      );
    }
    return;
  }
  if (subcommand === SETTINGS_SUBCOMMANDS.show) {
    await reply(`${describeSettings(ctx, await guildSettings(ctx, guildId))}${await watchSummary(ctx, guildId)}`);
    return;
  }
  const outcome = readChange(interaction, subcommand, guildId);
  if (!outcome.ok) {
    ctx.logger.info({ ...interactionFields(interaction), code: outcome.code }, 'settings change refused');
    await reply(outcome.problem);
    return;
  }
  let updated: ScopeSettings;
  try {
    updated = await ctx.state.updateSettings(scope, outcome.patch);
  } catch (err) {
    ctx.logger.error({ ...interactionFields(interaction), err: (err as Error).message }, 'could not save server settings');
    await reply('The settings could not be saved (the bot’s state store is unavailable). Nothing was changed; try again in a minute.');
    return;
  }
  ctx.logger.info({ ...interactionFields(interaction), subcommand }, 'server settings changed');
  await reply(`${outcome.done}\n\n${describeSettings(ctx, updated)}`);
}

function readChange(interaction: ChatInputCommandInteraction, subcommand: string | null, guildId: string): Outcome {
  if (subcommand === SETTINGS_SUBCOMMANDS.mode) {
    const mode = interaction.options.getString(SETTINGS_OPTIONS.mode);
    if (mode === BOT_DEFAULT_CHOICE)
      return { ok: true, patch: { defaultMode: null }, done: 'This server now uses the bot’s default mode.' };
    if (!mode || !isMode(mode)) {
      return { ok: false, code: 'invalid_mode', problem: `"${mode ?? ''}" is not a mode. Choose academic, financial, legal or general.` };
    }
    return { ok: true, patch: { defaultMode: mode }, done: `"Check for AI text" now checks in ${modeName(mode)} mode.` };
  }
  if (subcommand === SETTINGS_SUBCOMMANDS.modlog) {
    const channel = interaction.options.getChannel(SETTINGS_OPTIONS.channel);
    if (!channel)
      return { ok: true, patch: { auditChannelId: null }, done: 'This server’s mod-log channel was removed; the bot default applies.' };
    if (!(MODLOG_CHANNEL_TYPES as readonly ChannelType[]).includes(channel.type)) {
      return {
        ok: false,
        code: 'invalid_channel',
        problem: `<#${channel.id}> is not a text channel; choose a text or announcement channel for the mod log.`,
      };
    }
    return {
      ok: true,
      patch: { auditChannelId: channel.id },
      done: `Message checks are now logged in <#${channel.id}> (the bot needs View Channel and Send Messages there).`,
    };
  }
  if (subcommand === SETTINGS_SUBCOMMANDS.checkerRole) {
    const role = interaction.options.getRole(SETTINGS_OPTIONS.role);
    if (!role) return { ok: true, patch: { checkerId: null }, done: 'Everyone who can use "Check for AI text" may run it again.' };
    if (role.id === guildId) {
      return {
        ok: false,
        code: 'invalid_role',
        problem: '@everyone would let every member check messages; run checker-role without a role to remove the restriction instead.',
      };
    }
    if (role.managed) {
      return {
        ok: false,
        code: 'invalid_role',
        problem: `<@&${role.id}> belongs to an integration (a bot's own role); choose a role members are given.`,
      };
    }
    return {
      ok: true,
      patch: { checkerId: role.id },
      done: `Only members with <@&${role.id}> (or Manage Server) may run "Check for AI text" now.`,
    };
  }
  if (subcommand === SETTINGS_SUBCOMMANDS.watchFiles) {
    const on = interaction.options.getBoolean(SETTINGS_OPTIONS.enabled) === true;
    return {
      ok: true,
      patch: { watchFiles: on ? 'on' : null },
      done: on ? WATCH_FILES_ON : 'Watching leaves documents alone again: only what members type in watched channels is judged.',
    };
  }
  if (subcommand === SETTINGS_SUBCOMMANDS.history) {
    const messages = interaction.options.getInteger(SETTINGS_OPTIONS.messages);
    const days = interaction.options.getInteger(SETTINGS_OPTIONS.days);
    if (messages === null && days === null) {
      return {
        ok: true,
        patch: { historyMessages: null, historyDays: null },
        done: `Member checks read the defaults again: ${describeHistoryWindow(historyWindowOf({}))}.`,
      };
    }
    const patch: SettingsPatch = {};
    for (const checked of [
      messages === null ? undefined : (['historyMessages', checkHistoryMessages(messages)] as const),
      days === null ? undefined : (['historyDays', checkHistoryDays(days)] as const),
    ]) {
      if (!checked) continue;
      const [name, value] = checked;
      if (!value.ok) return { ok: false, code: 'invalid_history', problem: value.problem };
      patch[name] = String(value.value);
    }
    return { ok: true, patch, done: 'Member checks now read the window below.' };
  }
  return {
    ok: false,
    code: 'unknown_subcommand',
    problem: 'This settings command is not known to the running bot. Ask the bot admin to run `npm run discord:register` again.',
  };
}

function describeSettings(ctx: BotContext, settings: ScopeSettings): string {
  const mode = settings.defaultMode ?? ctx.settings.messageMode;
  const modLog = settings.auditChannelId ?? ctx.settings.modLogChannelId;
  return [
    '**Settings of this server**',
    `• Mode of "Check for AI text": ${modeName(mode)}${settings.defaultMode ? '' : ' (bot default)'}`,
    `• Mod-log channel: ${modLog ? `<#${modLog}>` : 'none'}${settings.auditChannelId || !modLog ? '' : ' (bot default)'}`,
    `• Who may run "Check for AI text": ${settings.checkerId ? `members with <@&${settings.checkerId}> or Manage Server` : 'everyone who has the command'}`,
    `• Member checks read ${describeHistoryWindow(historyWindowOf(settings))}${settings.historyMessages || settings.historyDays ? '' : ' (bot default)'}`,
    `• Documents shared in watched channels: ${settings.watchFiles ? 'checked too (`watch-files`)' : 'left alone (default)'}`,
  ].join('\n');
}

/** True when the member may run the message check under the server's `checker-role` setting. */
export function mayCheckMessages(
  interaction: { memberPermissions: { has(bit: bigint): boolean } | null; member: unknown },
  checkerRoleId: string | undefined,
): boolean {
  if (!checkerRoleId) return true;
  if (interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) return true;
  const roles = (interaction.member as { roles?: unknown } | null)?.roles;
  // A cached GuildMember has a role manager; an uncached member arrives as the API's id list.
  if (Array.isArray(roles)) return roles.includes(checkerRoleId);
  const cache = (roles as { cache?: Map<string, unknown> } | undefined)?.cache;
  return cache?.has(checkerRoleId) ?? false;
}
