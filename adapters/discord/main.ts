/**
 * `npm run discord`: starts the bot. With DETECT_API_URL unset, the detection service runs inside
 * this process (see adapters/chat/backend.ts), so a bot token is all a first try needs.
 */
import '../../src/node-version.ts';
import pino from 'pino';
import { DiscordjsError, DiscordjsErrorCodes } from 'discord.js';
import { BackendConfigError, botUserAgent, connectDetectionBackend, type DetectionBackend } from '../chat/backend.ts';
import { installProcessGuards } from '../chat/process-guard.ts';
import { readWatchSettings } from '../chat/watch/config.ts';
import { watchDetectorFor } from '../chat/watch/detector.ts';
import { createDiscordBot, type DiscordBot } from './bot.ts';
import { inviteUrl } from './commands.ts';
import { readBotSettings, readToken } from './config.ts';
import { readShardSettings, resolveShards, restGlobalShare, ShardSettingsError, type ShardSettings } from './shards.ts';

const logger = pino({ level: process.env.LOG_LEVEL?.trim() || 'info' });

/** Exit codes as the CLI's: 2 bad configuration, 3 credentials refused, 5 unreachable or failing. */
function exitCodeFor(err: unknown): number {
  if (err instanceof ShardSettingsError || err instanceof BackendConfigError) return 2;
  if ((err as { status?: unknown }).status === 401) return 3;
  if (
    err instanceof DiscordjsError &&
    (err.code === DiscordjsErrorCodes.TokenInvalid || err.code === DiscordjsErrorCodes.DisallowedIntents)
  )
    return 3;
  return 5;
}

function explainStartFailure(err: unknown): string {
  if ((err instanceof DiscordjsError && err.code === DiscordjsErrorCodes.TokenInvalid) || (err as { status?: unknown }).status === 401) {
    return 'Discord refused DISCORD_TOKEN. Copy a fresh token from the Developer Portal (your application → Bot → Reset Token).';
  }
  if (err instanceof DiscordjsError && err.code === DiscordjsErrorCodes.DisallowedIntents) {
    return 'Discord refused the gateway intents. The bot asks for Guilds, and for Message Content only when the application has it switched on: check that the token belongs to this bot, or set DISCORD_WATCH=off.';
  }
  return err instanceof Error ? err.message : String(err);
}

/** `DISCORD_WATCH`: `auto` (default: watching when the application has Message Content on) or `off`. */
function readWatchSwitch(env: NodeJS.ProcessEnv = process.env): 'auto' | 'off' {
  const value = env.DISCORD_WATCH?.trim().toLowerCase() || 'auto';
  if (value === 'auto' || value === 'on') return 'auto';
  if (value === 'off') return 'off';
  throw new Error(`DISCORD_WATCH="${env.DISCORD_WATCH}" must be auto or off.`);
}

async function main(): Promise<number> {
  let token: string;
  let settings: ReturnType<typeof readBotSettings>;
  let watchSettings: ReturnType<typeof readWatchSettings>;
  let watchEnabled: 'auto' | 'off';
  let sharding: ShardSettings | undefined;
  try {
    token = readToken();
    settings = readBotSettings();
    watchSettings = readWatchSettings();
    watchEnabled = readWatchSwitch();
    sharding = readShardSettings();
  } catch (err) {
    process.stderr.write(`${explainStartFailure(err)}\n`);
    return 2;
  }

  let backend: DetectionBackend | undefined;
  let bot: DiscordBot | undefined;
  // One bad payload or handler must not end every check in flight: log it with the interaction at hand.
  installProcessGuards(logger, () => ({ lastInteractionId: bot?.gateway.lastInteractionId() }));
  const stop = async (signal: string): Promise<void> => {
    logger.info({ signal }, 'shutting down');
    await bot?.stop().catch((err: unknown) => logger.warn({ err }, 'error while closing the Discord connection'));
    await backend?.close().catch((err: unknown) => logger.warn({ err }, 'error while closing the detection backend'));
    process.exit(0);
  };
  process.once('SIGINT', (s) => void stop(s));
  process.once('SIGTERM', (s) => void stop(s));

  try {
    if (sharding) {
      // Every process of a sharded bot must agree on the total: `auto` with DISCORD_SHARD_IDS asks Discord first.
      settings.shards = await resolveShards(sharding, token, settings.apiUrl);
      settings.restGlobalPerSecond = restGlobalShare(settings.shards, sharding.restGlobalPerSecond);
    }
    backend = await connectDetectionBackend(process.env, { logger, userAgent: botUserAgent('discord') });
    bot = createDiscordBot({
      token,
      detect: backend.detector,
      settings,
      logger,
      watch: { detector: watchDetectorFor(backend), settings: watchSettings, enabled: watchEnabled },
    });
    await bot.start();
  } catch (err) {
    process.stderr.write(`Could not start the Discord bot: ${explainStartFailure(err)}\n`);
    await bot?.stop().catch(() => undefined);
    await backend?.close().catch(() => undefined);
    return exitCodeFor(err);
  }
  const appId = bot.client.application?.id;
  logger.info(
    { detectApi: backend.embedded ? 'in-process' : backend.apiUrl, ...(appId ? { invite: inviteUrl(appId) } : {}) },
    'ready: right-click a message → Apps → "Check for AI text", or type /detect',
  );
  return -1;
}

const code = await main();
if (code >= 0) process.exit(code);
