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
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { SplitChatStore } from '../../chat/store/index.ts';
import { clearEverySetting } from '../../chat/store/types.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../../chat/watch/config.ts';
import type { WatchDetector } from '../../chat/watch/detector.ts';
import { defaultDataDir, openWatchStore, type WatchStore } from '../../chat/store/index.ts';
import { WatchSpool } from '../../chat/watch/spool.ts';
import type { PendingItem } from '../../chat/watch/types.ts';
import { RetryLaterError, Watcher, type ReviewCard, type WatchPlatform } from '../../chat/watch/watcher.ts';
import { createNameResolver, slackErrorCode, teamDefaultMode, teamScope, teamSettings, type SlackAppContext } from '../checks.ts';
import { auditChannelFor } from '../config.ts';
import { checkPrefixForScope, isInstallationMissing } from '../oauth.ts';
import type { SlackWatchingApi, WorkspaceClients } from './api.ts';
import { buildCard } from './card.ts';
import { cardMetadata, findPostedCard } from './posted-card.ts';
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

export class SlackWatching implements SlackWatchingApi {
  readonly store: WatchStore;
  readonly watcher: Watcher;
  readonly settings: WatchSettings;
  readonly #clients: WorkspaceClients;
  readonly #ctx: SlackAppContext;
  readonly #logger: Logger;
  readonly #ownsStore: boolean;
  /** By workspace and user: with an organisation, one user id is in several workspaces. */
  readonly #moderators = new Map<string, { moderator: boolean; until: number }>();
  readonly #groups = new Map<string, { members: Set<string>; until: number }>();

  /**
   * `clients` gives each workspace's client: in OAuth mode the app's own client has no token, and
   * the watcher's work (reading a queued message, posting a card, users.info) has no request whose
   * token it could use.
   */
  constructor(clients: WorkspaceClients, ctx: SlackAppContext, options: SlackWatchOptions, logger: Logger) {
    this.#clients = clients;
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
      // Next to the SQLite files: what a database outage kept from the queue outlives a stop or a crash.
      spool: new WatchSpool(resolve(dataDir ?? defaultDataDir())),
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

  /**
   * `/detect-settings delete-data`: everything the app keeps about a workspace: watch records,
   * settings, and the texts kept behind the result buttons of its checks (as an uninstall does).
   */
  async removeTeam(teamId: string, reason: string): Promise<void> {
    const scope = teamScope(teamId);
    await this.watcher.deleteScope(scope);
    await this.#ctx.state.updateSettings(scope, clearEverySetting());
    const checks =
      this.#ctx.state instanceof SplitChatStore ? await this.#ctx.state.shortLived.forgetChecks(checkPrefixForScope(scope)) : 0;
    for (const key of [...this.#moderators.keys()]) if (key.startsWith(`${teamId}:`)) this.#moderators.delete(key);
    for (const key of [...this.#groups.keys()]) if (key.startsWith(`${teamId}:`)) this.#groups.delete(key);
    this.#logger.info({ team: teamId, reason, check_records: checks }, 'deleted everything kept about the workspace');
  }

  /** Workspace admins and owners, and members of the checkers group. */
  async isModerator(teamId: string, userId: string): Promise<boolean> {
    const key = `${teamId}:${userId}`;
    const cached = this.#moderators.get(key);
    let admin: boolean;
    if (cached && cached.until > Date.now()) {
      admin = cached.moderator;
    } else {
      try {
        const res = await (await this.#clients.forTeam(teamId)).users.info({ user: userId });
        admin = Boolean(res.user?.is_admin || res.user?.is_owner || res.user?.is_primary_owner);
        if (this.#moderators.size > 20_000) this.#moderators.clear();
        this.#moderators.set(key, { moderator: admin, until: Date.now() + MODERATOR_TTL_MS });
      } catch (err) {
        // Not cached: a failure says nothing about the person, the next message asks again.
        this.#logger.warn({ team: teamId, slack_error: slackErrorCode(err) }, 'could not read whether a member is a workspace admin');
        admin = false;
      }
    }
    if (admin) return true;
    const checkers = (await teamSettings(this.#ctx, teamId)).checkerId;
    return checkers !== undefined && (await this.memberOf(teamId, checkers, userId));
  }

  /** Membership of a user group (usergroups.users.list, cached for 5 minutes); false when Slack cannot say. */
  async memberOf(teamId: string, groupId: string, userId: string): Promise<boolean> {
    const key = `${teamId}:${groupId}`;
    const cached = this.#groups.get(key);
    if (cached && cached.until > Date.now()) return cached.members.has(userId);
    let members = new Set<string>();
    try {
      members = new Set((await (await this.#clients.forTeam(teamId)).usergroups.users.list({ usergroup: groupId })).users ?? []);
      if (this.#groups.size > 5_000) this.#groups.clear();
      this.#groups.set(key, { members, until: Date.now() + GROUP_TTL_MS });
    } catch (err) {
      this.#logger.info(
        { team: teamId, group: groupId, slack_error: slackErrorCode(err) },
        'could not read a user group (usergroups:read?)',
      );
    }
    return members.has(userId);
  }

  /** Moderators and members of an exempt user group are never scored. */
  async isExempt(teamId: string, userId: string, exemptIds: string[]): Promise<boolean> {
    if (await this.isModerator(teamId, userId)) return true;
    for (const group of exemptIds) if (await this.memberOf(teamId, group, userId)) return true;
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
      const client = await this.#clients.forTeam(teamIdOf(item.scope));
      const res = item.threadId
        ? await client.conversations.replies({ ...window, ts: item.threadId })
        : await client.conversations.history(window);
      const message = (res.messages ?? []).find((m) => m.ts === item.messageId);
      if (!message) return undefined;
      return { text: (await watchedSlackText(message)).text };
    } catch (err) {
      if (isInstallationMissing(err)) {
        this.#logger.info({ channel: item.channelId }, 'a queued message’s workspace has no installation any more; left out');
        return undefined;
      }
      const code = slackErrorCode(err);
      if (GONE.has(code)) {
        this.#logger.info({ channel: item.channelId, slack_error: code }, 'could not read a queued message again');
        return undefined;
      }
      throw new RetryLaterError(`Slack answered ${code}`);
    }
  }

  async #permalink(client: WebClient, channel: string, ts: string): Promise<string | undefined> {
    try {
      return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
    } catch {
      return undefined;
    }
  }

  async #postCard(reviewChannel: string, card: ReviewCard): Promise<string> {
    const client = await this.#clients.forTeam(teamIdOf(card.scope));
    if (card.recovered) {
      try {
        const earlier = await findPostedCard(client, reviewChannel, card.flagId, card.postedAt);
        if (earlier) {
          this.#logger.info(
            { flagId: card.flagId, cardId: earlier },
            'the card of a recovered flag was already out; recorded, not posted again',
          );
          return earlier;
        }
      } catch (err) {
        this.#logger.info(
          { flagId: card.flagId, slack_error: slackErrorCode(err) },
          'could not look for the card of a recovered flag; posting it (it may show twice)',
        );
      }
    }
    const names = createNameResolver(client, this.#ctx.names);
    const authorName = card.authorName ?? (await names.user?.(card.authorId));
    const highlights = new Map<string, string>();
    for (const h of card.judgment.highlights) {
      if (!h.messageId || highlights.has(h.messageId)) continue;
      const link = await this.#permalink(client, card.channelId, h.messageId);
      if (link) highlights.set(h.messageId, link);
    }
    const reviewerNames = new Map<string, string>();
    for (const clearing of card.clearings ?? []) {
      const name = reviewerNames.has(clearing.reviewerId) ? undefined : await names.user?.(clearing.reviewerId);
      if (name) reviewerNames.set(clearing.reviewerId, name);
    }
    const message = buildCard(
      { ...card, authorName },
      { message: await this.#permalink(client, card.channelId, card.messageId), highlights, reviewerNames },
    );
    const res = await client.chat.postMessage({
      channel: reviewChannel,
      text: message.text,
      blocks: message.blocks,
      unfurl_links: false,
      unfurl_media: false,
      metadata: cardMetadata(card.flagId),
    });
    if (!res.ts) throw new Error('chat.postMessage answered without a ts');
    return res.ts;
  }
}
