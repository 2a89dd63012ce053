/**
 * The bot's settings, read from the environment once at start so a typo stops the bot with a clear
 * sentence instead of surfacing at the first interaction.
 */
import type { Mode } from '../../src/contract.ts';
import { DEFAULT_FILE_LIMITS, DISCORD_FILE_ORIGINS, fileLimitsFromEnv, type FileLimits } from '../chat/attachments.ts';
import { DEFAULT_MAX_TEXT_CHARS } from '../chat/message-text.ts';
import { parseModeSetting } from '../chat/modes.ts';
import { storeLocationFromEnv, type StoreLocation } from '../chat/store/index.ts';
import { DEFAULT_COMMAND_OPTIONS, parsePermissionSetting, type DefaultPermission } from './commands.ts';
import type { ShardAssignment } from './shards.ts';

export const DEFAULT_DISCORD_API_URL = 'https://discord.com/api';

export interface DiscordBotSettings {
  /** Base of Discord's REST API, without the `/v10` version suffix (discord.js adds it). */
  apiUrl: string;
  /** Channel that receives an audit line per message check, unless a server set its own with `/detect-settings modlog`; undefined disables the mod log. */
  modLogChannelId: string | undefined;
  /** Answer only the person who asked (Discord's ephemeral replies); default true. */
  ephemeral: boolean;
  /** Mode of a "Check for AI text" run (the menu has no options) unless a server set its own; default `general`. */
  messageMode: Mode;
  /** Ask for per-sentence scores on message checks, to quote the most AI-like sentences; default true. */
  messageSegments: boolean;
  /** How long the text behind re-check buttons is remembered, in ms; default 30 minutes. */
  recheckTtlMs: number;
  /** Where the bot keeps its state (re-check texts, per-server settings); see adapters/chat/store/. */
  state: StoreLocation;
  /** Longest text sent to the service, counted as the service counts (`countChars`); default 750,000, the service's own default. */
  maxTextChars: number;
  /**
   * Longest the detection service may take over one check, in ms, from when the check leaves the
   * bots' queue (retries included; time back in the queue after a 429 pause not counted); default
   * 60,000. Past it the reply says the service took too long. Time waiting in the queue is bounded
   * by `DETECT_QUEUE_MAX_WAIT_MS` and by `answerWithinMs`, not by this.
   */
  checkDeadlineMs: number;
  /**
   * Who may check a member's recent messages, as a permission bitfield (null: everyone), read from
   * `DISCORD_CHECK_PERMISSION` like the menu commands' default. Discord enforces it for the menus;
   * the bot enforces it for `/detect user:` and the button, which everyone can reach.
   */
  memberCheckPermission: DefaultPermission;
  /**
   * How long after an interaction the bot may still answer it, in ms: Discord accepts edits of the
   * deferred reply for 15 minutes after the interaction, and the bot keeps 30 s of that for its final
   * edit. A check still queued when only `checkDeadlineMs` of this is left is given up with a
   * sentence saying so. Fixed by Discord, so not read from the environment; tests shorten it.
   */
  answerWithinMs: number;
  /** The shards this process serves (adapters/discord/shards.ts); undefined: one shard, as an unsharded bot. */
  shards?: ShardAssignment | undefined;
  /** This process's share of Discord's global REST limit, requests per second; undefined: discord.js' 50. */
  restGlobalPerSecond?: number | undefined;
  /** On stop, interactions already taken get this long to be answered (ms); default 15,000. */
  drainMs?: number | undefined;
  /** Documents of a checked message and of `/detect file:`: how many, how large, how long a download may take. */
  files: FileLimits;
  /**
   * Where attachments may be downloaded from: Discord's CDN and media proxy. Not read from the
   * environment (no setting can send the bot's downloads elsewhere); tests pass their fake's
   * loopback origin here, as they pass `apiUrl`.
   */
  fileOrigins: readonly string[];
}

/** Discord's limit on answering an interaction (editing its deferred reply): 15 minutes. */
export const DISCORD_INTERACTION_WINDOW_MS = 15 * 60_000;
/** Kept back from that window so the final edit reaches Discord in time. */
const FINAL_EDIT_MARGIN_MS = 30_000;
/** A deadline that leaves a queued check some time to wait at all. */
const MAX_CHECK_DEADLINE_SECONDS = (DISCORD_INTERACTION_WINDOW_MS - FINAL_EDIT_MARGIN_MS) / 1000 - 60;

export const DEFAULT_SETTINGS: DiscordBotSettings = {
  apiUrl: DEFAULT_DISCORD_API_URL,
  modLogChannelId: undefined,
  ephemeral: true,
  messageMode: 'general',
  messageSegments: true,
  recheckTtlMs: 30 * 60_000,
  state: {},
  maxTextChars: DEFAULT_MAX_TEXT_CHARS,
  checkDeadlineMs: 60_000,
  memberCheckPermission: DEFAULT_COMMAND_OPTIONS.checkMessagePermission,
  answerWithinMs: DISCORD_INTERACTION_WINDOW_MS - FINAL_EDIT_MARGIN_MS,
  files: DEFAULT_FILE_LIMITS,
  fileOrigins: DISCORD_FILE_ORIGINS,
};

export function parseBoolean(value: string | undefined, variable: string, fallback: boolean): boolean {
  const v = value?.trim().toLowerCase();
  if (!v) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`${variable}="${value}" is not a yes/no value; use true or false.`);
}

function positiveNumber(value: string | undefined, variable: string, fallback: number): number {
  const v = value?.trim();
  if (!v) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${variable}="${value}" must be a number greater than 0.`);
  return n;
}

/** Snowflakes are decimal ids; anything else is a copy-paste mistake (a channel name, a link). */
export function parseSnowflake(value: string | undefined, variable: string): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (!/^\d{15,25}$/.test(v)) {
    throw new Error(
      `${variable}="${value}" is not a Discord id. Enable Developer Mode (User Settings → Advanced), right-click the channel or server and choose "Copy ID".`,
    );
  }
  return v;
}

export function parseApiUrl(value: string | undefined): string {
  const v = value?.trim();
  if (!v) return DEFAULT_DISCORD_API_URL;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`DISCORD_API_URL="${value}" is not a URL (expected e.g. ${DEFAULT_DISCORD_API_URL}).`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`DISCORD_API_URL="${value}" must be an http(s) URL.`);
  }
  // discord.js appends `/v10`; a trailing slash would make it `//v10`.
  return v.replace(/\/+$/, '');
}

function checkDeadlineSeconds(value: string | undefined): number {
  const seconds = positiveNumber(value, 'DISCORD_CHECK_DEADLINE_SECONDS', DEFAULT_SETTINGS.checkDeadlineMs / 1000);
  if (seconds > MAX_CHECK_DEADLINE_SECONDS) {
    throw new Error(
      `DISCORD_CHECK_DEADLINE_SECONDS="${value}" is too long: Discord accepts an answer for 15 minutes, so at most ${MAX_CHECK_DEADLINE_SECONDS} s.`,
    );
  }
  return seconds;
}

/** Reads every DISCORD_* setting of the running bot (the token is read by main.ts, not kept here). */
export function readBotSettings(env: NodeJS.ProcessEnv = process.env): DiscordBotSettings {
  return {
    apiUrl: parseApiUrl(env.DISCORD_API_URL),
    modLogChannelId: parseSnowflake(env.DISCORD_MODLOG_CHANNEL_ID, 'DISCORD_MODLOG_CHANNEL_ID'),
    ephemeral: parseBoolean(env.DISCORD_EPHEMERAL, 'DISCORD_EPHEMERAL', DEFAULT_SETTINGS.ephemeral),
    messageMode: parseModeSetting(env.DISCORD_MESSAGE_MODE, 'DISCORD_MESSAGE_MODE', DEFAULT_SETTINGS.messageMode),
    messageSegments: parseBoolean(env.DISCORD_MESSAGE_SEGMENTS, 'DISCORD_MESSAGE_SEGMENTS', DEFAULT_SETTINGS.messageSegments),
    recheckTtlMs:
      positiveNumber(env.DISCORD_RECHECK_TTL_MINUTES, 'DISCORD_RECHECK_TTL_MINUTES', DEFAULT_SETTINGS.recheckTtlMs / 60_000) * 60_000,
    state: storeLocationFromEnv(env),
    maxTextChars: Math.floor(positiveNumber(env.DETECT_MAX_TEXT_CHARS, 'DETECT_MAX_TEXT_CHARS', DEFAULT_SETTINGS.maxTextChars)),
    checkDeadlineMs: checkDeadlineSeconds(env.DISCORD_CHECK_DEADLINE_SECONDS) * 1000,
    answerWithinMs: DEFAULT_SETTINGS.answerWithinMs,
    files: fileLimitsFromEnv(env),
    fileOrigins: DEFAULT_SETTINGS.fileOrigins,
    memberCheckPermission: parsePermissionSetting(
      env.DISCORD_CHECK_PERMISSION,
      'DISCORD_CHECK_PERMISSION',
      DEFAULT_SETTINGS.memberCheckPermission,
    ),
  };
}

/** The bot token, from `DISCORD_TOKEN`; a sentence that says where to find it when missing. */
export function readToken(env: NodeJS.ProcessEnv = process.env): string {
  const token = env.DISCORD_TOKEN?.trim();
  if (!token) {
    throw new Error(
      'DISCORD_TOKEN is not set: copy the bot token from the Discord Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN.',
    );
  }
  return token;
}
