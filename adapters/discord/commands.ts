/**
 * The bot's application commands, defined once: `register.ts` sends these definitions to Discord and
 * the bot routes interactions by the same names, so the two cannot drift apart.
 */
import {
  ApplicationCommandType,
  ChannelType,
  ApplicationIntegrationType,
  ContextMenuCommandBuilder,
  InteractionContextType,
  PermissionFlagsBits,
  SlashCommandBuilder,
  type RESTPutAPIApplicationCommandsJSONBody,
} from 'discord.js';
import { EVIDENCE_FLOOR_WORDS, type Mode } from '../../src/contract.ts';
import { DEFAULT_HISTORY_WINDOW, HISTORY_LIMITS } from '../chat/author.ts';
import { CHAT_MODES } from '../chat/format.ts';
import { addWatchSubcommands } from './watch/commands.ts';
import { modeName } from '../../src/words.ts';

export const DETECT_COMMAND = 'detect';
/** Server settings, for members with Manage Server. */
export const SETTINGS_COMMAND = 'detect-settings';
export const SETTINGS_SUBCOMMANDS = {
  show: 'show',
  mode: 'mode',
  modlog: 'modlog',
  checkerRole: 'checker-role',
  history: 'history',
  watchFiles: 'watch-files',
} as const;
export const SETTINGS_OPTIONS = {
  mode: 'mode',
  channel: 'channel',
  role: 'role',
  messages: 'messages',
  days: 'days',
  enabled: 'enabled',
} as const;
/** The `mode` choice that removes the server's own default. */
export const BOT_DEFAULT_CHOICE = 'bot-default';
/** Channels a mod log can be posted in (text-like, where the bot can send plain messages). */
export const MODLOG_CHANNEL_TYPES = [ChannelType.GuildText, ChannelType.GuildAnnouncement] as const;

/** Shown in the message's "Apps" menu; context-menu names may contain spaces and capitals. */
export const CHECK_MESSAGE_COMMAND = 'Check for AI text';

/**
 * Shown in a member's "Apps" menu: checks their recent messages in the channel together. Discord
 * caps command names at 32 characters, one short of "Check recent messages for AI text".
 */
export const CHECK_AUTHOR_COMMAND = 'Check recent messages for AI';

export const DETECT_OPTIONS = {
  text: 'text',
  mode: 'mode',
  language: 'language',
  segments: 'segments',
  /** `/detect user:@member`: check the member's recent messages in the channel instead of a text. */
  user: 'user',
  /** `/detect file:<document>`: a PDF, DOCX, text or Markdown file, checked like a message's documents. */
  file: 'file',
} as const;

/** Discord caps a string option at 6,000 characters; longer texts have to be checked as a message. */
export const DISCORD_MAX_STRING_OPTION = 6000;

export const LANGUAGE_CHOICES = [
  { name: 'English', value: 'en' },
  { name: 'Turkish', value: 'tr' },
] as const;

/**
 * Who may use a command by default, as Discord's `default_member_permissions`: a permission
 * bitfield string, or null for everyone. Server admins can still override it per role or channel in
 * Server Settings → Integrations; this is only the starting point.
 */
export type DefaultPermission = string | null;

export interface CommandOptions {
  /** Default permission for "Check for AI text"; `ManageMessages` unless configured. */
  checkMessagePermission: DefaultPermission;
  /** Default permission for `/detect`; everyone unless configured. */
  detectPermission: DefaultPermission;
}

export const DEFAULT_COMMAND_OPTIONS: CommandOptions = {
  checkMessagePermission: PermissionFlagsBits.ManageMessages.toString(),
  detectPermission: null,
};

/**
 * Reads a permission setting such as `DISCORD_CHECK_PERMISSION`: `everyone` (or `none`) for no
 * restriction, one or more permission names joined by `,` or `|` (`ManageMessages`, `ModerateMembers`;
 * members need all of them), or a decimal bitfield (`0` leaves the command to administrators only).
 * Throws on an unknown name, so a typo stops registration instead of opening a command to everyone.
 */
export function parsePermissionSetting(value: string | undefined, variable: string, fallback: DefaultPermission): DefaultPermission {
  const trimmed = value?.trim();
  if (!trimmed) return fallback;
  if (/^(everyone|none|all)$/i.test(trimmed)) return null;
  if (/^\d+$/.test(trimmed)) return BigInt(trimmed).toString();
  const byLowerName = new Map(Object.entries(PermissionFlagsBits).map(([name, bit]) => [name.toLowerCase(), bit]));
  let bits = 0n;
  for (const part of trimmed.split(/[,|]/)) {
    const name = part.trim().replace(/[\s_]/g, '').toLowerCase();
    if (!name) continue;
    const bit = byLowerName.get(name);
    if (bit === undefined) {
      throw new Error(
        `${variable}="${value}": "${part.trim()}" is not a Discord permission name. Use names such as ManageMessages or ModerateMembers, a decimal bitfield, or "everyone".`,
      );
    }
    bits |= bit;
  }
  return bits.toString();
}

/** The JSON array that `PUT /applications/{app}/commands` expects, in a stable order. */
export function buildCommands(options: CommandOptions = DEFAULT_COMMAND_OPTIONS): RESTPutAPIApplicationCommandsJSONBody {
  const detect = new SlashCommandBuilder()
    .setName(DETECT_COMMAND)
    .setDescription('Check how likely a text was written by an AI')
    .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    .setDefaultMemberPermissions(options.detectPermission)
    .addStringOption((o) =>
      o
        .setName(DETECT_OPTIONS.text)
        .setDescription(`The text to check (English or Turkish; under ${EVIDENCE_FLOOR_WORDS} words it is too short to judge)`)
        // Optional only because `user` replaces it; the handler asks for one of the two.
        .setRequired(false)
        .setMaxLength(DISCORD_MAX_STRING_OPTION),
    )
    .addStringOption((o) =>
      o
        .setName(DETECT_OPTIONS.mode)
        .setDescription('Kind of text (general: everyday writing); each mode has its own calibration')
        .setRequired(false)
        .addChoices(...CHAT_MODES.map((m) => ({ name: modeName(m), value: m }))),
    )
    .addStringOption((o) =>
      o
        .setName(DETECT_OPTIONS.language)
        .setDescription('Language of the text; detected automatically when left out')
        .addChoices(...LANGUAGE_CHOICES),
    )
    .addBooleanOption((o) => o.setName(DETECT_OPTIONS.segments).setDescription('Also show the most AI-like sentences'))
    .addUserOption((o) =>
      o.setName(DETECT_OPTIONS.user).setDescription("Instead of a text: check this member's recent messages in this channel together"),
    )
    // Last, so the options registered before keep their places.
    .addAttachmentOption((o) =>
      o.setName(DETECT_OPTIONS.file).setDescription('A document to check: PDF (with a text layer), Word .docx, plain text or Markdown'),
    );

  const checkMessage = new ContextMenuCommandBuilder()
    .setName(CHECK_MESSAGE_COMMAND)
    .setType(ApplicationCommandType.Message)
    // Moderation happens in servers; in DMs the permission default would not apply anyway.
    .setContexts(InteractionContextType.Guild)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    .setDefaultMemberPermissions(options.checkMessagePermission);

  const settings = new SlashCommandBuilder()
    .setName(SETTINGS_COMMAND)
    .setDescription('Server settings of the AI-text checks (Manage Server only)')
    .setContexts(InteractionContextType.Guild)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    // The handler checks Manage Server again: admins can widen a command's audience in Integrations.
    .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild.toString())
    .addSubcommand((c) => c.setName(SETTINGS_SUBCOMMANDS.show).setDescription('Show this server’s settings'))
    .addSubcommand((c) =>
      c
        .setName(SETTINGS_SUBCOMMANDS.mode)
        .setDescription('Mode of "Check for AI text" in this server')
        .addStringOption((o) =>
          o
            .setName(SETTINGS_OPTIONS.mode)
            .setDescription('Kind of text most checked messages are')
            .setRequired(true)
            .addChoices(...CHAT_MODES.map((m) => ({ name: modeName(m), value: m })), { name: 'Bot default', value: BOT_DEFAULT_CHOICE }),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(SETTINGS_SUBCOMMANDS.modlog)
        .setDescription('Channel that gets a line per message check; leave empty for the bot default')
        .addChannelOption((o) =>
          o
            .setName(SETTINGS_OPTIONS.channel)
            .setDescription('Text channel the bot can post in')
            .addChannelTypes(...MODLOG_CHANNEL_TYPES),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(SETTINGS_SUBCOMMANDS.checkerRole)
        .setDescription('Role allowed to run "Check for AI text"; leave empty to allow everyone who has the command')
        .addRoleOption((o) => o.setName(SETTINGS_OPTIONS.role).setDescription('Members with this role may check messages')),
    )
    .addSubcommand((c) =>
      c
        .setName(SETTINGS_SUBCOMMANDS.history)
        .setDescription("How much of a member's history member checks read; leave both empty for the defaults")
        .addIntegerOption((o) =>
          o
            .setName(SETTINGS_OPTIONS.messages)
            .setDescription(
              `The member's latest messages to read (${HISTORY_LIMITS.minMessages}–${HISTORY_LIMITS.maxMessages}; default ${DEFAULT_HISTORY_WINDOW.maxMessages})`,
            )
            .setMinValue(HISTORY_LIMITS.minMessages)
            .setMaxValue(HISTORY_LIMITS.maxMessages),
        )
        .addIntegerOption((o) =>
          o
            .setName(SETTINGS_OPTIONS.days)
            .setDescription(
              `How many days back (${HISTORY_LIMITS.minDays}–${HISTORY_LIMITS.maxDays}; default ${DEFAULT_HISTORY_WINDOW.days})`,
            )
            .setMinValue(HISTORY_LIMITS.minDays)
            .setMaxValue(HISTORY_LIMITS.maxDays),
        ),
    )
    .addSubcommand((c) =>
      c
        .setName(SETTINGS_SUBCOMMANDS.watchFiles)
        .setDescription('Also check documents (PDF, Word, text) shared in watched channels; off by default')
        .addBooleanOption((o) =>
          o.setName(SETTINGS_OPTIONS.enabled).setDescription('True to check them, false to leave them alone').setRequired(true),
        ),
    );

  // Who may check a member is who may check a message: reading someone's history is no less sensitive.
  const checkAuthor = new ContextMenuCommandBuilder()
    .setName(CHECK_AUTHOR_COMMAND)
    .setType(ApplicationCommandType.User)
    .setContexts(InteractionContextType.Guild)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    .setDefaultMemberPermissions(options.checkMessagePermission);

  // Appended last, so the order of the commands registered before stays the same.
  return [detect.toJSON(), checkMessage.toJSON(), addWatchSubcommands(settings).toJSON(), checkAuthor.toJSON()];
}

/**
 * Permissions the bot user needs, for the invite link: View Channel and Send Messages for the
 * optional mod-log channel (its lines are plain text), and Read Message History for member checks
 * (without it Discord returns no messages at all). Interaction replies need no channel permission.
 */
export const BOT_PERMISSIONS = PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages | PermissionFlagsBits.ReadMessageHistory;

/** The OAuth2 link that adds the bot (and its commands) to a server. */
export function inviteUrl(applicationId: string): string {
  const params = new URLSearchParams({
    client_id: applicationId,
    scope: 'bot applications.commands',
    permissions: BOT_PERMISSIONS.toString(),
  });
  return `https://discord.com/oauth2/authorize?${params.toString()}`;
}

/** Button ids carry the mode to re-check in and the key of the remembered text: `recheck:<mode>:<key>`. */
const RECHECK_PREFIX = 'recheck';

export function recheckCustomId(mode: Mode, key: string): string {
  return `${RECHECK_PREFIX}:${mode}:${key}`;
}

export function parseRecheckCustomId(customId: string): { mode: Mode; key: string } | undefined {
  const [prefix, mode, key, ...rest] = customId.split(':');
  if (prefix !== RECHECK_PREFIX || !mode || !key || rest.length > 0) return undefined;
  if (!(CHAT_MODES as readonly string[]).includes(mode)) return undefined;
  return { mode: mode as Mode, key };
}

/** The "check their recent messages" button under a message check: `author:<user id>` (the channel is the button's). */
const AUTHOR_PREFIX = 'author';

export function authorCheckCustomId(userId: string): string {
  return `${AUTHOR_PREFIX}:${userId}`;
}

export function parseAuthorCheckCustomId(customId: string): { userId: string } | undefined {
  const [prefix, userId, ...rest] = customId.split(':');
  if (prefix !== AUTHOR_PREFIX || !userId || !/^\d{15,25}$/.test(userId) || rest.length > 0) return undefined;
  return { userId };
}
