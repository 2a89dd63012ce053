/**
 * Watching in the Slack app: the watcher with Slack's side of it (reading a queued message again by
 * id, posting a card in the workspace's audit channel), who counts as a moderator, and the deletion
 * of a workspace's data on `/detect-settings delete-data`.
 *
 * Slack has no moderator permission: workspace admins and owners, and members of the
 * `/detect-settings checkers` user group, count as moderators (never scored, may answer cards).
 * An uninstall deletes the workspace's watch records through listeners/uninstall-event.ts.
 */
import type { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import { clearEverySetting } from '../../chat/store/types.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../../chat/watch/config.ts';
import type { WatchDetector } from '../../chat/watch/detector.ts';
import { openWatchStore, type WatchStore } from '../../chat/store/index.ts';
import type { PendingItem } from '../../chat/watch/types.ts';
import { RetryLaterError, Watcher, type ReviewCard, type WatchPlatform } from '../../chat/watch/watcher.ts';
import { createNameResolver, slackErrorCode, teamDefaultMode, teamScope, teamSettings, type SlackAppContext } from '../checks.ts';
import { auditChannelFor } from '../config.ts';
import { buildCard } from './card.ts';
import { watchedSlackText } from './watched-text.ts';

type WebClient = webApi.WebClient;

export interface SlackWatchOptions {
  /** Background detection through the bots' queue (adapters/chat/watch/detector.ts). */
  detector: WatchDetector;
  settings?: WatchSettings | undefined;
  /** A store to use instead of opening one at the app's state location; the app then does not close it. */
  store?: WatchStore | undefined;
  leaseMs?: number | undefined;
  idlePollMs?: number | undefined;
  configTtlMs?: number | undefined;
}

const SCOPE_PREFIX = 'slack:';
/** Errors after which waiting will not help: the message is gone or the app cannot read the channel. */
const GONE = new Set(['channel_not_found', 'not_in_channel', 'missing_scope', 'message_not_found', 'thread_not_found', 'is_archived']);
const MODERATOR_TTL_MS = 10 * 60_000;
const GROUP_TTL_MS = 5 * 60_000;

export function teamIdOf(scope: string): string {
  return scope.startsWith(SCOPE_PREFIX) ? scope.slice(SCOPE_PREFIX.length) : scope;
}

export class SlackWatching {
  readonly store: WatchStore;
  readonly watcher: Watcher;
  readonly settings: WatchSettings;
  readonly #client: WebClient;
  readonly #ctx: SlackAppContext;
  readonly #logger: Logger;
  readonly #ownsStore: boolean;
  readonly #moderators = new Map<string, { moderator: boolean; until: number }>();
  readonly #groups = new Map<string, { members: Set<string>; until: number }>();

  constructor(client: WebClient, ctx: SlackAppContext, options: SlackWatchOptions, logger: Logger) {
    this.#client = client;
    this.#ctx = ctx;
    this.#logger = logger;
    this.settings = options.settings ?? DEFAULT_WATCH_SETTINGS;
    this.#ownsStore = options.store === undefined;
    const { redisUrl, dataDir, databaseUrl } = ctx.config;
    this.store = options.store ?? openWatchStore({ redisUrl, dataDir, databaseUrl }, logger);
    this.watcher = new Watcher({
      store: this.store,
      detector: options.detector,
      platform: this.#platform(),
      settings: this.settings,
      logger,
      leaseMs: options.leaseMs,
      idlePollMs: options.idlePollMs,
      configTtlMs: options.configTtlMs,
    });
  }

  /** The watch store's migrations (PostgreSQL): a database problem stops the start with its reason. */
  async ready(): Promise<void> {
    await this.store.ready?.();
  }

  start(): void {
    this.watcher.start();
  }

  async stop(): Promise<void> {
    await this.watcher.stop();
    if (this.#ownsStore) await this.store.close();
  }

  /** `/detect-settings delete-data`: everything the app keeps about a workspace, watch records and settings. */
  async removeTeam(teamId: string, reason: string): Promise<void> {
    const scope = teamScope(teamId);
    await this.watcher.deleteScope(scope);
    await this.#ctx.state.updateSettings(scope, clearEverySetting());
    this.#logger.info({ team: teamId, reason }, 'deleted everything kept about the workspace');
  }

  /** Workspace admins and owners, and members of the checkers group. */
  async isModerator(teamId: string, userId: string): Promise<boolean> {
    const cached = this.#moderators.get(userId);
    let admin: boolean;
    if (cached && cached.until > Date.now()) {
      admin = cached.moderator;
    } else {
      try {
        const res = await this.#client.users.info({ user: userId });
        admin = Boolean(res.user?.is_admin || res.user?.is_owner || res.user?.is_primary_owner);
      } catch {
        admin = false;
      }
      if (this.#moderators.size > 20_000) this.#moderators.clear();
      this.#moderators.set(userId, { moderator: admin, until: Date.now() + MODERATOR_TTL_MS });
    }
    if (admin) return true;
    const checkers = (await teamSettings(this.#ctx, teamId)).checkerId;
    return checkers !== undefined && (await this.memberOf(checkers, userId));
  }

  /** Membership of a user group (usergroups.users.list, cached for 5 minutes); false when Slack cannot say. */
  async memberOf(groupId: string, userId: string): Promise<boolean> {
    const cached = this.#groups.get(groupId);
    if (cached && cached.until > Date.now()) return cached.members.has(userId);
    let members = new Set<string>();
    try {
      members = new Set((await this.#client.usergroups.users.list({ usergroup: groupId })).users ?? []);
    } catch (err) {
      this.#logger.info({ group: groupId, slack_error: slackErrorCode(err) }, 'could not read a user group (usergroups:read?)');
    }
    this.#groups.set(groupId, { members, until: Date.now() + GROUP_TTL_MS });
    return members.has(userId);
  }

  /** Moderators and members of an exempt user group are never scored. */
  async isExempt(teamId: string, userId: string, exemptIds: string[]): Promise<boolean> {
    if (await this.isModerator(teamId, userId)) return true;
    for (const group of exemptIds) if (await this.memberOf(group, userId)) return true;
    return false;
  }

  /** The review channel of a workspace: its audit channel. */
  async reviewChannel(teamId: string): Promise<string | undefined> {
    return (await teamSettings(this.#ctx, teamId)).auditChannelId ?? auditChannelFor(this.#ctx.config, teamId);
  }

  #platform(): WatchPlatform {
    return {
      fetchMessage: (item) => this.#fetchMessage(item),
      reviewChannel: (scope) => this.reviewChannel(teamIdOf(scope)),
      postCard: (channel, card) => this.#postCard(channel, card),
      mode: (scope) => teamDefaultMode(this.#ctx, teamIdOf(scope)),
    };
  }

  async #fetchMessage(item: PendingItem): Promise<{ text: string } | undefined> {
    const window = { channel: item.channelId, latest: item.messageId, oldest: item.messageId, inclusive: true, limit: 1 };
    try {
      const res = item.threadId
        ? await this.#client.conversations.replies({ ...window, ts: item.threadId })
        : await this.#client.conversations.history(window);
      const message = (res.messages ?? []).find((m) => m.ts === item.messageId);
      if (!message) return undefined;
      return { text: (await watchedSlackText(message)).text };
    } catch (err) {
      const code = slackErrorCode(err);
      if (GONE.has(code)) {
        this.#logger.info({ channel: item.channelId, slack_error: code }, 'could not read a queued message again');
        return undefined;
      }
      throw new RetryLaterError(`Slack answered ${code}`);
    }
  }

  async #permalink(channel: string, ts: string): Promise<string | undefined> {
    try {
      return (await this.#client.chat.getPermalink({ channel, message_ts: ts })).permalink;
    } catch {
      return undefined;
    }
  }

  async #postCard(reviewChannel: string, card: ReviewCard): Promise<string> {
    const names = createNameResolver(this.#client, this.#ctx.names);
    const authorName = card.authorName ?? (await names.user?.(card.authorId));
    const highlights = new Map<string, string>();
    for (const h of card.judgment.highlights) {
      if (!h.messageId || highlights.has(h.messageId)) continue;
      const link = await this.#permalink(card.channelId, h.messageId);
      if (link) highlights.set(h.messageId, link);
    }
    const message = buildCard({ ...card, authorName }, { message: await this.#permalink(card.channelId, card.messageId), highlights });
    const res = await this.#client.chat.postMessage({
      channel: reviewChannel,
      text: message.text,
      blocks: message.blocks,
      unfurl_links: false,
      unfurl_media: false,
    });
    if (!res.ts) throw new Error('chat.postMessage answered without a ts');
    return res.ts;
  }
}
