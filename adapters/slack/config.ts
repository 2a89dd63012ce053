/**
 * The Slack app's settings, read once from the environment at start so that a missing token or a
 * mistyped mode stops the app with a sentence naming the variable, not at the first /detect.
 */
import type { Mode } from '../../src/contract.ts';
import { fileLimitsFromEnv, SLACK_FILE_ORIGINS, type FileLimits } from '../chat/attachments.ts';
import { DEFAULT_MAX_TEXT_CHARS } from '../chat/message-text.ts';
import { parseModeSetting } from '../chat/modes.ts';
import { storeLocationFromEnv, type StoreLocation } from '../chat/store/index.ts';
import { DEFAULT_SCOPES, type SlackOAuthConfig } from './oauth.ts';

export interface SlackAppConfig {
  /** Bot token (`xoxb-…`) of the one workspace the app serves. Env `SLACK_BOT_TOKEN`; required unless `oauth` is set. */
  botToken: string | undefined;
  /** Install to many workspaces through OAuth (`SLACK_CLIENT_ID` and friends); undefined in single-workspace mode. */
  oauth: SlackOAuthConfig | undefined;
  /** Verifies every HTTP request's signature. Env `SLACK_SIGNING_SECRET`; required unless Socket Mode. */
  signingSecret: string | undefined;
  /** App-level token (`xapp-…`); when set the app connects over Socket Mode instead of serving HTTP. Env `SLACK_APP_TOKEN`. */
  appToken: string | undefined;
  /** HTTP port of the receiver (`/slack/events`). Env `SLACK_PORT`; default 3000; 0 picks a free port. */
  port: number;
  /** Interface the HTTP receiver listens on. Env `SLACK_HOST`; default all interfaces (`0.0.0.0`). */
  host: string | undefined;
  /** Base of Slack's Web API, ending in `/`. Env `SLACK_API_URL`; default `https://slack.com/api/`. */
  slackApiUrl: string;
  /** Slash command to answer. Env `SLACK_COMMAND`; default `/detect` (must match the manifest). */
  command: string;
  /** Mode used when a check names none. Env `SLACK_DEFAULT_MODE`; default `general`. */
  defaultMode: Mode;
  /** Per-workspace default modes from `SLACK_DEFAULT_MODE_<TEAM_ID>` (e.g. `SLACK_DEFAULT_MODE_T0123ABCD=legal`). */
  teamDefaultModes: Record<string, Mode>;
  /** Channel id where each check is logged (who, which message, verdict, request id; never the text). Env `SLACK_AUDIT_CHANNEL`; default none. */
  auditChannel: string | undefined;
  /** Per-workspace audit channels from `SLACK_AUDIT_CHANNEL_<TEAM_ID>`. */
  teamAuditChannels: Record<string, string>;
  /** How long (ms) a request id is remembered to drop Slack's retries of it. Env `SLACK_DEDUP_TTL_MS`; default 600000 (10 min). */
  dedupTtlMs: number;
  /** How long (ms) a result stays available to its "Re-check" and "Show details" buttons. Env `SLACK_RESULT_TTL_MS`; default 3600000. */
  resultTtlMs: number;
  /** Longest text sent for detection, counted as the service counts (`countChars`); should equal the service's MAX_TEXT_CHARS. Env `DETECT_MAX_TEXT_CHARS`; default 750000. */
  maxTextChars: number;
  /** Redis URL shared by replicas for the state store (results for buttons, settings, retry de-duplication). Env `REDIS_URL`; default unset (SQLite). */
  redisUrl: string | undefined;
  /** Folder of the SQLite state store when `REDIS_URL` is unset. Env `DATA_DIR`; default the user's data folder (`defaultDataDir`). */
  dataDir: string | undefined;
  /** PostgreSQL for installations and settings, shared by every replica. Env `DATABASE_URL`; default unset (SQLite under `DATA_DIR`). */
  databaseUrl: string | undefined;
  /** pino level. Env `LOG_LEVEL`; default `info`. */
  logLevel: string;
  /** Documents of a checked message: how many, how large (`DETECT_MAX_FILE_BYTES`), how long a download may take (`DETECT_FILE_DOWNLOAD_TIMEOUT_MS`). */
  files: FileLimits;
  /**
   * Where shared files may be downloaded from (with the bot token): Slack's file host. Not read from
   * the environment (no setting can send the token elsewhere); tests put their fake's loopback origin
   * here, next to `slackApiUrl`.
   */
  fileOrigins: readonly string[];
}

/** A setting the app cannot start with; `npm run slack` exits 2 with its sentence. */
export class SlackConfigError extends Error {
  override name = 'SlackConfigError';
}

/** Slack refused SLACK_BOT_TOKEN at start (`auth.test`); `npm run slack` exits 3. */
export class SlackTokenRefusedError extends Error {
  override name = 'SlackTokenRefusedError';
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new SlackConfigError(`${name}="${raw}" must be a whole number ≥ ${min}.`);
  return value;
}

function perTeam<T>(env: NodeJS.ProcessEnv, prefix: string, parse: (value: string, name: string) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(prefix) || value === undefined || value.trim() === '') continue;
    const team = name.slice(prefix.length);
    if (!/^[TE][A-Z0-9]+$/.test(team)) {
      throw new SlackConfigError(`${name}: "${team}" is not a Slack workspace id (expected e.g. ${prefix}T0123ABCD).`);
    }
    out[team] = parse(value, name);
  }
  return out;
}

function channelSetting(value: string, name: string): string {
  const id = value.trim();
  if (!/^[CGD][A-Z0-9]+$/.test(id)) {
    throw new SlackConfigError(
      `${name}="${value}" must be a channel id such as C0123ABCD (channel details → bottom of the About tab), not a name.`,
    );
  }
  return id;
}

/** The OAuth settings when `SLACK_CLIENT_ID` is set (installs to many workspaces); undefined otherwise. */
function oauthSettings(env: NodeJS.ProcessEnv): SlackOAuthConfig | undefined {
  const clientId = env.SLACK_CLIENT_ID?.trim();
  if (!clientId) return undefined;
  const required = (name: string, where: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new SlackConfigError(`${name} is not set: ${where} (needed with SLACK_CLIENT_ID, for installs to many workspaces).`);
    return value;
  };
  const clientSecret = required('SLACK_CLIENT_SECRET', 'copy the Client Secret from the app’s “Basic Information” page');
  const stateSecret = required('SLACK_STATE_SECRET', 'set any long random string, the same on every replica (e.g. openssl rand -hex 32)');
  const installationKey = required(
    'SLACK_INSTALLATION_KEY',
    'set a long random string that encrypts the stored workspace tokens, and keep it (e.g. openssl rand -hex 32)',
  );
  if (installationKey.length < 32) {
    throw new SlackConfigError('SLACK_INSTALLATION_KEY must be at least 32 characters of random text (e.g. openssl rand -hex 32).');
  }
  const scopes = (env.SLACK_SCOPES?.trim() ? env.SLACK_SCOPES.split(',') : [...DEFAULT_SCOPES]).map((s) => s.trim()).filter(Boolean);
  const bad = scopes.find((s) => !/^[a-z]+(?::[a-z.]+)*$/.test(s));
  if (bad !== undefined || scopes.length === 0) {
    throw new SlackConfigError(`SLACK_SCOPES="${env.SLACK_SCOPES}" must list bot scopes separated by commas, e.g. commands,chat:write.`);
  }
  const url = (name: string): string | undefined => {
    const value = env[name]?.trim();
    if (!value) return undefined;
    try {
      new URL(value);
    } catch {
      throw new SlackConfigError(`${name}="${value}" is not a valid URL.`);
    }
    return value;
  };
  return {
    clientId,
    clientSecret,
    stateSecret,
    scopes,
    redirectUri: url('SLACK_REDIRECT_URI'),
    installationKey,
    authorizationUrl: url('SLACK_AUTHORIZE_URL'),
  };
}

export function loadSlackConfig(env: NodeJS.ProcessEnv = process.env): SlackAppConfig {
  const botToken = env.SLACK_BOT_TOKEN?.trim() || undefined;
  // Before the OAuth secrets are asked for: with a bot token beside SLACK_CLIENT_ID the mistake is the mix, not a missing secret.
  if (botToken && env.SLACK_CLIENT_ID?.trim()) {
    throw new SlackConfigError(
      'SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: set SLACK_BOT_TOKEN alone to serve one workspace, or SLACK_CLIENT_ID (with its secrets) alone to install the app in many workspaces.',
    );
  }
  const oauth = oauthSettings(env);
  if (!botToken && !oauth)
    throw new SlackConfigError(
      'SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-…) from the app’s “OAuth & Permissions” page (or set SLACK_CLIENT_ID and its secrets to install the app in many workspaces).',
    );
  if (botToken?.startsWith('xoxe.xoxb-')) {
    throw new SlackConfigError(
      'SLACK_BOT_TOKEN is a rotating token (xoxe.xoxb-…), which Slack expires after 12 hours: turn token rotation off in “OAuth & Permissions” and copy the Bot User OAuth Token (xoxb-…) again, or install through OAuth (SLACK_CLIENT_ID), where the app refreshes tokens itself.',
    );
  }
  if (botToken && !botToken.startsWith('xoxb-')) {
    // Named by kind, never echoed: the value may be some other secret pasted by mistake.
    const kind = botToken.startsWith('xoxp-')
      ? 'a user token (xoxp-)'
      : botToken.startsWith('xapp-')
        ? 'an app-level token (xapp-)'
        : 'not a Slack bot token';
    throw new SlackConfigError(
      `SLACK_BOT_TOKEN is ${kind}: the app needs the bot token, which starts with xoxb-. Copy the Bot User OAuth Token from the app’s “OAuth & Permissions” page.`,
    );
  }
  const appToken = env.SLACK_APP_TOKEN?.trim() || undefined;
  if (oauth && appToken) {
    throw new SlackConfigError(
      'SLACK_APP_TOKEN (Socket Mode) cannot be combined with SLACK_CLIENT_ID: installs to many workspaces need the HTTP receiver, which serves the install pages (Slack does not list Socket Mode apps in its Marketplace).',
    );
  }
  const signingSecret = env.SLACK_SIGNING_SECRET?.trim() || undefined;
  if (!appToken && !signingSecret) {
    throw new SlackConfigError(
      'SLACK_SIGNING_SECRET is not set: copy the Signing Secret from the app’s “Basic Information” page (or set SLACK_APP_TOKEN to use Socket Mode).',
    );
  }
  if (appToken && !appToken.startsWith('xapp-'))
    throw new SlackConfigError('SLACK_APP_TOKEN must be an app-level token starting with xapp-.');

  let slackApiUrl = env.SLACK_API_URL?.trim() || 'https://slack.com/api/';
  try {
    new URL(slackApiUrl);
  } catch {
    throw new SlackConfigError(`SLACK_API_URL="${slackApiUrl}" is not a valid URL (expected e.g. https://slack.com/api/).`);
  }
  if (!slackApiUrl.endsWith('/')) slackApiUrl += '/';

  const command = env.SLACK_COMMAND?.trim() || '/detect';
  if (!/^\/[a-z0-9_-]{1,31}$/i.test(command)) throw new SlackConfigError(`SLACK_COMMAND="${command}" must look like /detect.`);

  const modeSetting = (value: string | undefined, name: string): Mode => {
    try {
      return parseModeSetting(value, name);
    } catch (err) {
      throw new SlackConfigError((err as Error).message);
    }
  };
  const defaultMode = modeSetting(env.SLACK_DEFAULT_MODE, 'SLACK_DEFAULT_MODE');
  const teamDefaultModes = perTeam(env, 'SLACK_DEFAULT_MODE_', modeSetting);
  const auditChannel = env.SLACK_AUDIT_CHANNEL?.trim() ? channelSetting(env.SLACK_AUDIT_CHANNEL, 'SLACK_AUDIT_CHANNEL') : undefined;
  const teamAuditChannels = perTeam(env, 'SLACK_AUDIT_CHANNEL_', channelSetting);

  // The same reading of REDIS_URL, DATABASE_URL and DATA_DIR (and of the file limits) as the Discord bot's.
  let location: StoreLocation;
  let fileLimits: FileLimits;
  try {
    location = storeLocationFromEnv(env);
    fileLimits = fileLimitsFromEnv(env);
  } catch (err) {
    throw new SlackConfigError((err as Error).message);
  }

  return {
    botToken,
    oauth,
    signingSecret,
    appToken,
    port: intSetting(env, 'SLACK_PORT', 3000),
    host: env.SLACK_HOST?.trim() || undefined,
    slackApiUrl,
    command,
    defaultMode,
    teamDefaultModes,
    auditChannel,
    teamAuditChannels,
    dedupTtlMs: intSetting(env, 'SLACK_DEDUP_TTL_MS', 600_000, 1),
    resultTtlMs: intSetting(env, 'SLACK_RESULT_TTL_MS', 3_600_000, 1),
    maxTextChars: intSetting(env, 'DETECT_MAX_TEXT_CHARS', DEFAULT_MAX_TEXT_CHARS, 1),
    redisUrl: location.redisUrl,
    dataDir: location.dataDir,
    databaseUrl: location.databaseUrl,
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    files: fileLimits,
    fileOrigins: SLACK_FILE_ORIGINS,
  };
}

/** The default mode of a workspace: its own setting, else the app-wide one. */
export function defaultModeFor(config: SlackAppConfig, teamId: string | undefined): Mode {
  return (teamId && config.teamDefaultModes[teamId]) || config.defaultMode;
}

/** The audit channel of a workspace: its own setting, else the app-wide one, else none. */
export function auditChannelFor(config: SlackAppConfig, teamId: string | undefined): string | undefined {
  return (teamId && config.teamAuditChannels[teamId]) || config.auditChannel;
}
