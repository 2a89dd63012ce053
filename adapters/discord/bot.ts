/**
 * The discord.js client and the routing of interactions to their handlers.
 *
 * Gateway intents: `Guilds` only. Interactions arrive without any intent; `Guilds` keeps the server
 * and channel caches that turn a target message into a full `Message`. The privileged Message
 * Content intent is not needed on the gateway: a message command's interaction carries the message
 * it targets, and member checks read history over REST, where what counts is the intent's switch in
 * the Developer Portal, not the intents the bot identifies with (see history.ts).
 * Watching channels adds GuildMessages and MessageContent when the application has the latter
 * switched on (watch/runtime.ts).
 */
import {
  ApplicationFlags,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  HTTPError,
  RESTEvents,
  Routes,
  type Interaction,
} from 'discord.js';
import { once } from 'node:events';
import pino, { type Logger } from 'pino';
import { deferAnswer, interactionFields, type BotContext, type DetectionApi } from './check.ts';
import { openChatStore, type ChatStore } from '../chat/store/index.ts';
import { CHECK_AUTHOR_COMMAND, CHECK_MESSAGE_COMMAND, DETECT_COMMAND, SETTINGS_COMMAND } from './commands.ts';
import { DEFAULT_SETTINGS, type DiscordBotSettings } from './config.ts';
import { describeDiscordError, DiscordUnreachableError } from './discord-errors.ts';
import { guardGatewayDispatch, type GatewayGuard } from './gateway-guard.ts';
import { handleAuthorCheckButton, handleCheckAuthorMenu, isAuthorCheckButton } from './handlers/check-author.ts';
import { handleCheckMessage } from './handlers/check-message.ts';
import { handleDetectCommand } from './handlers/detect-command.ts';
import { handleRecheckButton, isRecheckButton } from './handlers/recheck-button.ts';
import { handleReviewButton, isReviewButton } from './handlers/review-button.ts';
import { handleSettingsCommand } from './handlers/settings-command.ts';
import { ModLog } from './modlog.ts';
import { RecheckStore } from './recheck-store.ts';
import { DiscordWatching, type DiscordWatchOptions } from './watch/runtime.ts';
import { sharedIdentifyThrottler } from './shards.ts';

export const GATEWAY_INTENTS = [GatewayIntentBits.Guilds] as const;

/** On stop, interactions already taken get this long to be answered. */
const DEFAULT_DRAIN_MS = 15_000;

export interface DiscordBotOptions {
  /** The bot token (Developer Portal → Bot). */
  token: string;
  /** Where texts are checked: a `DetectClient`. The bot does not close it. */
  detect: DetectionApi;
  /** Overrides of the defaults in `DEFAULT_SETTINGS`. */
  settings?: Partial<DiscordBotSettings> | undefined;
  /** Structured logger; silent when omitted. */
  logger?: Logger | undefined;
  /** State store to use instead of opening one from `settings.state`; the bot then does not close it. */
  store?: ChatStore | undefined;
  /** Watching chosen channels (adapters/discord/watch/); without it `/detect-settings watch` says it is not set up. */
  watch?: DiscordWatchOptions | undefined;
}

export interface DiscordBot {
  readonly client: Client;
  readonly context: BotContext;
  /** Skips gateway dispatches discord.js cannot read (see gateway-guard.ts); knows the last interaction id. */
  readonly gateway: GatewayGuard;
  /** Logs in and resolves once the gateway session is ready. */
  start(): Promise<void>;
  /** Cancels pending checks, closes the gateway connection and the state store it opened. */
  stop(): Promise<void>;
}

/**
 * The bot's application (`GET /applications/@me`), read with the token before anything else: Discord
 * answering 401 means it refused the token, and the start stops with that (main.ts: exit 3). Any other
 * failure leaves the flags unknown (watching stays off); the login then says what is wrong.
 */
async function readApplication(client: Client, token: string, apiUrl: string, logger: Logger): Promise<{ flags?: number } | undefined> {
  client.rest.setToken(token);
  try {
    return (await client.rest.get(Routes.currentApplication())) as { flags?: number };
  } catch (err) {
    if (err instanceof DiscordAPIError && err.status === 401) throw err;
    // No HTTP answer at all: the login would fail the same way, so stop here with that, before anything about intents.
    if (!(err instanceof DiscordAPIError) && !(err instanceof HTTPError)) throw new DiscordUnreachableError(apiUrl, err);
    logger.warn({ err: describeDiscordError(err) }, 'could not read the application from Discord');
    return undefined;
  }
}

/**
 * What to say about an interaction this build does not handle: a button, a menu and a form are not
 * commands (they come from a message or window the bot drew, perhaps by an older version of it).
 */
export function unknownInteractionSentence(interaction: Interaction): string {
  if (interaction.isButton()) {
    return 'This button is not known to the running bot, or the message it belongs to has expired. Run the check again.';
  }
  if (interaction.isAnySelectMenu()) {
    return 'This menu is not known to the running bot, or the message it belongs to has expired. Run the command again.';
  }
  if (interaction.isModalSubmit()) {
    return 'This form is not known to the running bot, or it has expired. Open it again from the command.';
  }
  return 'This command is not known to the running bot. Ask the bot admin to run `npm run discord:register` again.';
}

async function routeInteraction(ctx: BotContext, interaction: Interaction): Promise<void> {
  if (interaction.isChatInputCommand()) {
    if (interaction.commandName === DETECT_COMMAND) return handleDetectCommand(ctx, interaction);
    if (interaction.commandName === SETTINGS_COMMAND) return handleSettingsCommand(ctx, interaction);
  } else if (interaction.isMessageContextMenuCommand()) {
    if (interaction.commandName === CHECK_MESSAGE_COMMAND) return handleCheckMessage(ctx, interaction);
  } else if (interaction.isUserContextMenuCommand()) {
    if (interaction.commandName === CHECK_AUTHOR_COMMAND) return handleCheckAuthorMenu(ctx, interaction);
  } else if (interaction.isButton()) {
    if (isRecheckButton(interaction)) return handleRecheckButton(ctx, interaction);
    if (isAuthorCheckButton(interaction)) return handleAuthorCheckButton(ctx, interaction);
    if (isReviewButton(interaction)) return handleReviewButton(ctx, interaction);
  }
  if (interaction.isRepliable()) {
    // A command this build does not know: registered by a newer or older version of the bot.
    ctx.logger.warn({ ...interactionFields(interaction), type: interaction.type }, 'unknown interaction');
    if (await deferAnswer(ctx, interaction)) {
      await interaction
        .editReply({ content: unknownInteractionSentence(interaction) })
        .catch((err: unknown) => ctx.logger.warn({ err: describeDiscordError(err) }, 'could not answer an unknown interaction'));
    }
  }
}

export function createDiscordBot(options: DiscordBotOptions): DiscordBot {
  const settings: DiscordBotSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const logger = options.logger ?? pino({ level: 'silent' });
  // Sharded across processes: identifies paced together through Redis (shards.ts).
  const identify =
    settings.shards && settings.state.redisUrl ? sharedIdentifyThrottler(settings.state.redisUrl, options.token, logger) : undefined;
  const client = new Client({
    intents: [...GATEWAY_INTENTS],
    // discord.js's REST queue handles Discord's 429s (per route and global); the bot adds no retries on top.
    // A sharded process paces its calls to its share of the bot's global limit (shards.ts).
    rest: { api: settings.apiUrl, ...(settings.restGlobalPerSecond ? { globalRequestsPerSecond: settings.restGlobalPerSecond } : {}) },
    ...(settings.shards === 'auto' ? { shards: 'auto' as const } : {}),
    ...(settings.shards && settings.shards !== 'auto' ? { shards: settings.shards.ids, shardCount: settings.shards.count } : {}),
    ...(identify ? { ws: { buildIdentifyThrottler: identify.build } } : {}),
    // Replies quote user text; they must never ping anyone.
    allowedMentions: { parse: [] },
  });
  const shutdown = new AbortController();
  const state = options.store ?? openChatStore(settings.state, logger);
  const context: BotContext = {
    detect: options.detect,
    settings,
    store: new RecheckStore(state, { ttlMs: settings.recheckTtlMs }),
    state,
    logger,
    modLog: new ModLog(client.rest, logger),
    signal: shutdown.signal,
  };
  const watching = new DiscordWatching(client, context, options.watch, logger);
  context.watch = watching;

  const gateway = guardGatewayDispatch(client, logger);
  // Interactions taken and not yet answered: a stop lets them finish (see stop()).
  const inflight = new Set<Promise<void>>();
  client.on(Events.InteractionCreate, (interaction) => {
    const work = routeInteraction(context, interaction).catch((err: unknown) => {
      logger.error({ interactionId: interaction.id, err: describeDiscordError(err) }, 'interaction handler failed');
    });
    inflight.add(work);
    void work.finally(() => inflight.delete(work));
  });
  client.rest.on(RESTEvents.RateLimited, (info) => {
    logger.warn(
      { route: info.route, method: info.method, retryAfterMs: info.retryAfter, global: info.global, scope: info.scope },
      'Discord rate limit: discord.js holds the request and sends it after the wait',
    );
  });
  client.on(Events.Error, (err) => logger.error({ err: describeDiscordError(err) }, 'discord client error'));
  client.on(Events.ShardReconnecting, (shardId) => {
    if (!shutdown.signal.aborted) logger.warn({ shardId }, 'gateway connection lost; reconnecting');
  });
  client.on(Events.ShardResume, (shardId) => logger.info({ shardId }, 'gateway session resumed'));

  return {
    client,
    context,
    gateway,
    async start() {
      const ready = once(client, Events.ClientReady);
      // If login throws, `ready` is never awaited; a later 'error' event must not become an unhandled rejection.
      ready.catch(() => undefined);
      // The database's migrations, before the gateway: a store problem stops the start with its reason.
      await state.ready?.();
      await watching.ready();
      // The token first: a refused token is reported as such, before anything about intents.
      watching.chooseIntents(await readApplication(client, options.token, settings.apiUrl, logger));
      await client.login(options.token);
      await ready;
      watching.start();
      logger.info(
        {
          user: client.user?.tag,
          applicationId: client.application?.id,
          guilds: client.guilds.cache.size,
          modLog: settings.modLogChannelId ?? null,
          shards: client.options.shards,
          shardCount: client.options.shardCount,
          state: state.kind,
          durableState: 'durableKind' in state ? state.durableKind : state.kind,
          ephemeral: settings.ephemeral,
          // From READY; member checks need it switched on in the Developer Portal (history.ts).
          messageContentIntent:
            client.application?.flags?.any(ApplicationFlags.GatewayMessageContent | ApplicationFlags.GatewayMessageContentLimited) ?? null,
          watching: watching.status,
          watchStore: watching.store?.kind ?? null,
        },
        'discord bot ready',
      );
    },
    async stop() {
      // The gateway stays open meanwhile: an interaction arriving now is still answered, and no other
      // process serves this process's shards until it is gone.
      const deadline = Date.now() + (settings.drainMs ?? DEFAULT_DRAIN_MS);
      while (inflight.size > 0 && Date.now() < deadline) {
        logger.info({ pending: inflight.size }, 'stopping: waiting for interactions already taken to be answered');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...inflight]),
          new Promise((resolve) => {
            timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          }),
        ]);
        clearTimeout(timer);
      }
      if (inflight.size > 0) logger.warn({ pending: inflight.size }, 'stopping with interactions still unanswered');
      shutdown.abort();
      await watching.stop();
      await client.destroy();
      identify?.close();
      if (!options.store) await state.close();
    },
  };
}
