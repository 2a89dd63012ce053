/**
 * Watching in the Discord bot: the gateway intents it needs, the watcher, and the removal of a
 * server's data when the bot leaves it.
 *
 * Intents: watching needs GUILD_MESSAGES (message events) and the privileged MESSAGE_CONTENT (their
 * text). Asking for a privileged intent the application has not switched on makes Discord close the
 * gateway (4014) and the whole bot would stop, so the bot first reads its application's flags: with
 * "Message Content Intent" on in the Developer Portal it asks for both; without it, it keeps to
 * `Guilds`, every command works, and `/detect-settings watch` says what to switch on.
 */
import { ApplicationFlags, Events, GatewayIntentBits, IntentsBitField, type Client } from 'discord.js';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { clearEverySetting } from '../../chat/store/types.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../../chat/watch/config.ts';
import type { WatchDetector } from '../../chat/watch/detector.ts';
import { defaultDataDir, openWatchStore, type WatchStore } from '../../chat/store/index.ts';
import { WatchSpool } from '../../chat/watch/spool.ts';
import { Watcher } from '../../chat/watch/watcher.ts';
import { guildScope, type BotContext } from '../check.ts';
import { handleWatchDispatch, type WatchDispatchContext } from '../handlers/watch-messages.ts';
import type { DiscordWatchingApi, WatchStatus } from './api.ts';
import { discordWatchPlatform } from './platform.ts';

export const WATCH_INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent] as const;

const MESSAGE_CONTENT_FLAGS = ApplicationFlags.GatewayMessageContent | ApplicationFlags.GatewayMessageContentLimited;

export interface DiscordWatchOptions {
  /** Background detection through the bots' queue (adapters/chat/watch/detector.ts). */
  detector: WatchDetector;
  settings?: WatchSettings | undefined;
  /**
   * A store to use instead of opening one at the bot's state location (`DATABASE_URL`, `REDIS_URL`,
   * `DATA_DIR`, chosen as for the settings); the bot then does not close it.
   */
  store?: WatchStore | undefined;
  /** `off` never asks for the message intents; `auto` (default) asks when the application has Message Content on. */
  enabled?: 'auto' | 'off' | undefined;
  leaseMs?: number | undefined;
  idlePollMs?: number | undefined;
  configTtlMs?: number | undefined;
}

export type { WatchStatus } from './api.ts';

/** What `/detect-settings watch` tells a moderator when the bot cannot read messages. */
export const INTENT_MISSING_REPLY =
  'Watching needs Discord’s **Message Content** intent, which this bot does not have. The bot admin must switch on **Message Content Intent** (Developer Portal → the application → Bot → Privileged Gateway Intents) and restart the bot. Nothing is being watched; every other command works.';

export class DiscordWatching implements DiscordWatchingApi {
  status: WatchStatus = 'off';
  readonly store: WatchStore | undefined;
  readonly watcher: Watcher | undefined;
  readonly settings: WatchSettings;
  readonly #client: Client;
  readonly #ctx: BotContext;
  readonly #options: DiscordWatchOptions | undefined;
  readonly #logger: Logger;
  readonly #ownsStore: boolean;
  /** Deletions waiting for their next try (the database was unreachable). */
  readonly #deletionRetries = new Set<NodeJS.Timeout>();
  #stopped = false;

  constructor(client: Client, ctx: BotContext, options: DiscordWatchOptions | undefined, logger: Logger) {
    this.#client = client;
    this.#ctx = ctx;
    this.#options = options;
    this.#logger = logger;
    this.settings = options?.settings ?? DEFAULT_WATCH_SETTINGS;
    this.#ownsStore = options !== undefined && options.store === undefined;
    this.store = options ? (options.store ?? openWatchStore(ctx.settings.state, logger)) : undefined;
    if (options && this.store) {
      this.watcher = new Watcher({
        store: this.store,
        detector: options.detector,
        platform: discordWatchPlatform(client, ctx),
        settings: this.settings,
        logger,
        leaseMs: options.leaseMs,
        idlePollMs: options.idlePollMs,
        configTtlMs: options.configTtlMs,
        // Next to the SQLite files: what a database outage kept from the queue outlives a stop or a crash.
        spool: new WatchSpool(resolve(ctx.settings.state.dataDir ?? defaultDataDir())),
      });
    }
    const dispatch: WatchDispatchContext | undefined = this.watcher
      ? { client, ctx, watcher: this.watcher, logger, parents: new Map() }
      : undefined;
    // Events.Raw carries every dispatch before discord.js builds objects from it; the handler never throws.
    client.on(Events.Raw, (packet: { t?: unknown; d?: unknown }) => {
      if (packet?.t === 'GUILD_DELETE') {
        const d = packet.d as { id?: unknown; unavailable?: unknown } | undefined;
        // `unavailable` marks an outage; without it the bot was removed (kicked, or the server deleted).
        if (d && typeof d.id === 'string' && d.unavailable !== true) void this.removeGuild(d.id, 'bot removed from the server');
        return;
      }
      if (dispatch && this.status === 'on') handleWatchDispatch(dispatch, packet);
    });
  }

  /** The watch store's migrations (PostgreSQL), before the gateway: a database problem stops the start with its reason. */
  async ready(): Promise<void> {
    await this.store?.ready?.();
  }

  /**
   * Chooses the gateway intents before logging in (see the file comment), from the application the
   * bot read with its token (bot.ts, `readApplication`); undefined when Discord did not answer.
   */
  chooseIntents(application: { flags?: number | undefined } | undefined): void {
    if (!this.#options || this.#options.enabled === 'off') {
      this.status = 'off';
      return;
    }
    if (application === undefined) {
      this.status = 'intent_missing';
      this.#logger.warn('could not read the application’s intents; watching stays off');
      return;
    }
    if (((application.flags ?? 0) & MESSAGE_CONTENT_FLAGS) === 0) {
      this.status = 'intent_missing';
      this.#logger.warn(
        'watching is off: the application does not have the Message Content intent (Developer Portal → Bot → Privileged Gateway Intents)',
      );
      return;
    }
    this.#client.options.intents = new IntentsBitField([...WATCH_INTENTS]).freeze();
    this.status = 'on';
  }

  /** Starts scoring after the gateway is ready. */
  start(): void {
    if (this.status === 'on') this.watcher?.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#deletionRetries) clearTimeout(timer);
    await this.watcher?.stop();
    if (this.#ownsStore) await this.store?.close();
  }

  /**
   * Deletes everything the bot keeps about a server: watch records and settings. Discord sends
   * GUILD_DELETE once, so a deletion the database refused (unreachable) is tried again, after 1 s
   * doubling to 1 min, until it is done or the bot stops.
   */
  async removeGuild(guildId: string, reason: string, attempt = 0): Promise<void> {
    const scope = guildScope(guildId);
    try {
      if (this.watcher) await this.watcher.deleteScope(scope);
      else await this.store?.deleteScope(scope);
      await this.#ctx.state.updateSettings(scope, clearEverySetting());
      this.#logger.info({ guildId, reason }, 'deleted everything kept about the server');
    } catch (err) {
      const retryInMs = Math.min(60_000, 1_000 * 2 ** Math.min(attempt, 6));
      this.#logger.error({ guildId, err: (err as Error).message, retryInMs }, 'could not delete the server’s data yet; trying again');
      if (this.#stopped) return;
      const timer = setTimeout(() => {
        this.#deletionRetries.delete(timer);
        void this.removeGuild(guildId, reason, attempt + 1);
      }, retryInMs);
      timer.unref();
      this.#deletionRetries.add(timer);
    }
  }
}
