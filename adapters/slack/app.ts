/**
 * Builds the Bolt app: receiver (HTTP with signature checks, or Socket Mode), retry de-duplication,
 * and the listeners. main.ts wires it to the environment; tests build it with their own config.
 */
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  App,
  HTTPReceiver,
  LogLevel,
  SocketModeReceiver,
  type Logger as BoltLogger,
  type Middleware,
  type AnyMiddlewareArgs,
} from '@slack/bolt';
import type { Logger } from 'pino';
import { ResultCache, type Detector, type SlackAppContext } from './checks.ts';
import { SlackTokenRefusedError, type SlackAppConfig } from './config.ts';
import { openChatStore, SplitChatStore, type ChatStore } from '../chat/store/index.ts';
import { dedupKey, type DedupStore } from './dedup.ts';
import { acknowledgeUnhandled, listenerErrorHandler, receiverErrorOptions, socketModeErrorOptions } from './error-handling.ts';
import { registerAuthorCheckAction } from './listeners/detect-author.ts';
import { registerDetectCommand } from './listeners/detect-command.ts';
import { registerDetailsAction } from './listeners/details-action.ts';
import { registerMessageShortcut } from './listeners/detect-message-shortcut.ts';
import { registerRecheckAction } from './listeners/recheck-action.ts';
import { registerSettingsCommand } from './listeners/settings-command.ts';
import { registerMessageEvents } from './listeners/message-event.ts';
import { registerReviewAction } from './listeners/review-action.ts';
import { registerUninstallEvents } from './listeners/uninstall-event.ts';
import { SlackWatching, type SlackWatchOptions } from './watch/runtime.ts';
import { checkInstallationKey, DurableInstallationStore } from './installation-store.ts';
import { logMissingScopes } from './scopes.ts';
import { DEFAULT_SCOPES, notInstalledErrorHandler, oauthReceiverOptions, orgLinkMiddleware } from './oauth.ts';
import type { WorkspaceClients } from './watch/api.ts';
import { InstalledWorkspaceClients, singleWorkspaceClients } from './workspace-clients.ts';

/** On stop, checks already acknowledged get this long to post their replies. */
const DRAIN_TIMEOUT_MS = 15_000;

export interface SlackAppDeps {
  /** Where texts are checked: a DetectClient (see adapters/chat/backend.ts). */
  detector: Detector;
  logger: Logger;
  /** Replaces the state store opened from `config.redisUrl`/`config.dataDir`; the app then does not close it. */
  store?: ChatStore | undefined;
  /** Watching chosen channels (adapters/slack/watch/); without it `/detect-settings watch` says it is not set up. */
  watch?: SlackWatchOptions | undefined;
}

export interface RunningSlackApp {
  app: App;
  /** `http://host:port/slack/events` in HTTP mode; undefined in Socket Mode. */
  eventsUrl: string | undefined;
  /** Stops taking requests, lets acknowledged checks post their replies (up to 15 s), then closes. Idempotent. */
  stop(): Promise<void>;
}

export const EVENTS_PATH = '/slack/events';

/**
 * Bolt's logs go through pino. Bolt's debug output can contain whole request bodies (and so the
 * texts moderators submit), so debug is never forwarded.
 */
function boltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: 'bolt' });
  let level = LogLevel.INFO;
  const join = (msg: unknown[]): string =>
    msg.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
  return {
    debug: () => undefined,
    info: (...msg: unknown[]) => child.info(join(msg)),
    warn: (...msg: unknown[]) => child.warn(join(msg)),
    error: (...msg: unknown[]) => child.error(join(msg)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

/**
 * Drops repeats of a request already taken (Slack retries, duplicate deliveries), acking them so
 * Slack stops; and tracks the work of every request taken, which continues after its ack, so a
 * shutdown can let it finish.
 */
function dedupMiddleware(store: DedupStore, ttlMs: number, logger: Logger, inflight: Set<Promise<void>>): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    const { body, next, context } = args;
    const key = dedupKey(body as unknown as Record<string, unknown>);
    let first = true;
    if (key) {
      try {
        first = await store.claim(`slack:${key}`, ttlMs);
      } catch (err) {
        // Running a check twice is better than dropping a moderator's request.
        logger.warn({ err: (err as Error).message }, 'retry de-duplication unavailable; request taken');
      }
    }
    if (!first) {
      logger.info({ retry_num: context.retryNum, retry_reason: context.retryReason }, 'duplicate Slack request dropped');
      const ack = (args as { ack?: (response?: unknown) => Promise<void> }).ack;
      if (ack) await ack();
      return;
    }
    const work = next();
    inflight.add(work);
    try {
      await work;
    } finally {
      inflight.delete(work);
    }
  };
}

export async function startSlackApp(config: SlackAppConfig, deps: SlackAppDeps): Promise<RunningSlackApp> {
  const logger = deps.logger.child({ component: 'slack' });
  const state =
    deps.store ?? openChatStore({ redisUrl: config.redisUrl, dataDir: config.dataDir, databaseUrl: config.databaseUrl }, logger);
  const ownsState = deps.store === undefined;
  // Installs to many workspaces keep their installations in the durable store.
  if (config.oauth && !(state instanceof SplitChatStore)) {
    throw new Error('Installs to many workspaces (SLACK_CLIENT_ID) need the bots’ durable store; pass one opened by openChatStore.');
  }
  const stores = state instanceof SplitChatStore ? state : undefined;
  const installationStore =
    config.oauth && stores
      ? new DurableInstallationStore({ durable: stores.durable, secret: config.oauth.installationKey, logger, scopes: config.oauth.scopes })
      : undefined;
  const clientOptions = {
    slackApiUrl: config.slackApiUrl,
    // Web API calls happen after the ack, but a moderator is still waiting: a few quick retries, not the default 10 over 30 min.
    retryConfig: { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 2_000 },
    timeout: 10_000,
  };
  const socketMode = config.appToken !== undefined;
  const receiver = socketMode
    ? // A receiver of our own (not `socketMode: true`) to pass its error handler.
      new SocketModeReceiver({
        appToken: config.appToken ?? '',
        logger: boltLogger(deps.logger),
        // What Bolt passes when it builds this receiver itself: the Web API address for apps.connections.open.
        installerOptions: { clientOptions },
        ...socketModeErrorOptions(logger),
      })
    : new HTTPReceiver({
        signingSecret: config.signingSecret ?? '',
        endpoints: EVENTS_PATH,
        processBeforeResponse: false,
        logger: boltLogger(deps.logger),
        // Bad payloads: logged and answered 200, not 404/500 (error-handling.ts).
        ...receiverErrorOptions(logger),
        // /slack/install and /slack/oauth_redirect, served by Bolt's installer (oauth.ts).
        ...(config.oauth && installationStore && stores
          ? oauthReceiverOptions(config.oauth, installationStore, { slackApiUrl: config.slackApiUrl }, logger, stores.shortLived)
          : {}),
        // For load balancers and uptime checks; it reveals nothing but liveness.
        customRoutes: [
          {
            path: '/healthz',
            method: ['GET'],
            handler: (_req: IncomingMessage, res: ServerResponse) => {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end('{"ok":true}');
            },
          },
        ],
      });
  const app = new App({
    // One workspace: its bot token. Many: no token; Bolt authorizes each request from the installation store.
    ...(config.oauth ? {} : { token: config.botToken }),
    logger: boltLogger(deps.logger),
    clientOptions,
    // auth.test once at start (below) rather than inside the first request's 3 s ack budget.
    deferInitialization: true,
    // The error handler gets the request body, to log which request failed and tell its user.
    extendedErrorHandler: true,
    receiver,
  });
  // Watching works in the background, without a request's token: each workspace's client comes from here.
  const installer = receiver instanceof HTTPReceiver ? receiver.installer : undefined;
  const installed =
    config.oauth && installer && stores
      ? new InstalledWorkspaceClients(installer, stores.durable, { ...clientOptions, logger: boltLogger(deps.logger) })
      : undefined;
  const clients: WorkspaceClients = installed ?? singleWorkspaceClients(app.client);

  const ctx: SlackAppContext = {
    config,
    detector: deps.detector,
    logger,
    results: new ResultCache(state, config.resultTtlMs),
    state,
    names: new Map(),
  };
  const inflight = new Set<Promise<void>>();
  app.use(dedupMiddleware(state, config.dedupTtlMs, logger, inflight));
  if (config.oauth && stores) {
    app.use(orgLinkMiddleware(stores, logger));
  }
  if (installed) app.use(installed.middleware());
  registerDetectCommand(app, ctx);
  registerMessageShortcut(app, ctx);
  registerRecheckAction(app, ctx);
  registerDetailsAction(app, ctx);
  registerSettingsCommand(app, ctx);
  registerAuthorCheckAction(app, ctx);
  if (deps.watch) ctx.watch = new SlackWatching(clients, ctx, deps.watch, logger);
  registerMessageEvents(app, ctx);
  registerReviewAction(app, ctx);
  const uninstall = registerUninstallEvents(app, ctx);
  // Through the watcher, which also forgets what it holds in memory about the workspace.
  const watching = ctx.watch;
  const unhookWatch = watching ? uninstall.onScopeDeleted((scope) => watching.watcher.deleteScope(scope)) : undefined;
  app.error(notInstalledErrorHandler(logger, config.slackApiUrl, listenerErrorHandler(logger, config.slackApiUrl)));
  acknowledgeUnhandled(app, logger);

  try {
    // The database's migrations: a store problem stops the start with its reason.
    await state.ready?.();
    // A wrong SLACK_INSTALLATION_KEY would otherwise fail every request of every workspace, quietly.
    if (config.oauth && stores) await checkInstallationKey(stores.durable, config.oauth.installationKey, logger, config.oauth.scopes);
    await ctx.watch?.ready();
  } catch (err) {
    unhookWatch?.();
    await ctx.watch?.stop();
    if (ownsState) await state.close();
    throw err;
  }
  try {
    await app.init();
  } catch (err) {
    unhookWatch?.();
    await ctx.watch?.stop();
    if (ownsState) await state.close();
    const slackError = (err as { data?: { error?: unknown } }).data?.error;
    if (typeof slackError === 'string') {
      throw new SlackTokenRefusedError(
        `Slack refused SLACK_BOT_TOKEN (auth.test answered ${slackError}); copy the Bot User OAuth Token again from “OAuth & Permissions”.`,
      );
    }
    throw new Error(
      `Could not reach Slack's Web API at ${config.slackApiUrl} (${(err as Error).message}); check the network or SLACK_API_URL.`,
    );
  }

  if (!config.oauth) {
    // The token's scopes, from the `x-oauth-scopes` header Slack sends with every answer: a missing one
    // is logged now, and named in the reply of whatever needs it (scopes.ts).
    const granted = await app.client.auth.test().then(
      (res) => res.response_metadata?.scopes,
      () => undefined,
    );
    logMissingScopes(logger, granted, { workspace: 'SLACK_BOT_TOKEN' }, DEFAULT_SCOPES);
  }

  let eventsUrl: string | undefined;
  if (socketMode) {
    await app.start();
    logger.info('connected to Slack over Socket Mode');
  } else {
    let server: Server;
    try {
      server = (await app.start(config.host ? { port: config.port, host: config.host } : config.port)) as Server;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      // Most often a second `npm run slack`: name the setting that avoids it, as the service names PORT.
      throw new Error(
        `${config.host ?? '0.0.0.0'}:${config.port} is already in use (another Slack app, or another program, listens there). ` +
          `Stop that one, or start this one on another port with SLACK_PORT, e.g. SLACK_PORT=${config.port + 1} npm run slack.`,
      );
    }
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    eventsUrl = `http://${host}:${address.port}${EVENTS_PATH}`;
    logger.info(
      {
        port: address.port,
        path: EVENTS_PATH,
        workspaces: config.oauth ? 'many (OAuth install)' : 'one (SLACK_BOT_TOKEN)',
        state: state.kind,
        durable_state: stores?.durableKind ?? state.kind,
        watch_state: ctx.watch?.store.kind ?? null,
      },
      'listening for Slack requests over HTTP',
    );
  }
  ctx.watch?.start();

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    try {
      await app.stop();
      if (inflight.size > 0) {
        logger.info({ pending: inflight.size }, 'waiting for acknowledged checks to reply');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...inflight]),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
    } finally {
      unhookWatch?.();
      await ctx.watch?.stop();
      if (ownsState) await state.close();
    }
  };
  return {
    app,
    eventsUrl,
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}
