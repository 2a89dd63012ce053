/**
 * What the bot's handlers see of watching (`BotContext.watch`). An interface of its own so that the
 * check context (check.ts) does not import the watching runtime that imports the check context:
 * runtime.ts implements it, bot.ts wires it.
 */
import type { WatchSettings } from '../../chat/watch/config.ts';
import type { WatchStore } from '../../chat/store/types.ts';
import type { Watcher } from '../../chat/watch/watcher.ts';

/** `on`: watching works; `intent_missing`: Message Content is off in the Developer Portal; `off`: not set up. */
export type WatchStatus = 'on' | 'off' | 'intent_missing';

export interface DiscordWatchingApi {
  readonly status: WatchStatus;
  readonly store: WatchStore | undefined;
  readonly watcher: Watcher | undefined;
  readonly settings: WatchSettings;
  /** Deletes everything the bot keeps about a server: watch records and settings. */
  removeGuild(guildId: string, reason: string): Promise<void>;
}
