/**
 * The watcher: takes new messages of watched channels from a platform, queues their ids in the
 * store, scores them in the background (behind every interactive check) and raises review cards.
 * It never acts in the watched channel: the only thing it ever posts is a card in the review
 * channel, and only for channels whose cards are on (shadow mode records flags without a card).
 *
 * A message's text stays in memory while the message waits; after a restart (or when memory is
 * short) the platform reads it again by id. A message is taken by one instance at a time (a lease
 * in the store), and its score is recorded once: a second score of the same message is refused by
 * the store.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ConnectionError, RateLimitError, ServerError, TimeoutError } from '../../../src/client/errors.ts';
import type { Mode } from '../../../src/contract.ts';
import { errorCode } from '../errors.ts';
import { mostAiLikeSentences, truncate } from '../format.ts';
import { countWords } from '../message-text.ts';
import type { WatchSettings } from './config.ts';
import type { WatchDetector } from './detector.ts';
import { DEFAULT_PRESET, PRESET_BITS, presetMask } from './presets.ts';
import { authorKey, RecentMessages } from './recent.ts';
import type { PostedCardMark, WatchSpool } from './spool.ts';
import type { WatchStore } from '../store/types.ts';
import { DAY_MS, itemKey, type Judgment, type PendingItem, type Preset, type WatchConfig, type WatchedChannel } from './types.ts';
import { decideAfterClearings } from './clearings.ts';
import type { Clearing } from './types.ts';
import { originOfAnswer } from '../../../src/words.ts';

/**
 * Fewest words a single message needs to be scored on its own (`judge: message`): under 40 the
 * engine answers `short_text` and never `likely_ai` (WARNING_MESSAGES in src/contract.ts), so
 * shorter messages could never be flagged.
 */
export const MIN_MESSAGE_WORDS = 40;

/**
 * Fewest words a message needs to start an author-level judgment (`judge: author`), so a burst of
 * greetings and one-line replies costs no calls. Shorter messages still join the member's recent
 * messages, so they count in the next judgment. Whether those hold evidence enough for a verdict is
 * the engine's answer (`too_little_evidence`, which no preset flags), not a minimum kept here.
 */
export const AUTHOR_TRIGGER_WORDS = 20;

/** A new message of a channel, as a platform hands it over (text already rendered as readers see it). */
export interface IncomingMessage {
  scope: string;
  /** The channel as watched: for a thread reply, the channel the thread belongs to. */
  channelId: string;
  messageId: string;
  threadId?: string | undefined;
  authorId: string;
  /** Shown on the card as plain text; never stored. */
  authorName?: string | undefined;
  postedAt: number;
  /** The words that are scored (platform markup rendered, code and mentions left out). */
  text: string;
}

/** A card to post: everything a platform needs to render it. */
export interface ReviewCard {
  flagId: string;
  scope: string;
  channelId: string;
  messageId: string;
  threadId?: string | undefined;
  authorId: string;
  authorName?: string | undefined;
  postedAt: number;
  judgment: Judgment;
  preset: Preset;
  /** Set on the card that took the channel's last place this hour: further flags get no card until `until`. */
  capReached?: { cap: number; until: number } | undefined;
  /** The member's clearings in force this card is clearly stronger than (clearings.ts): the card names them. */
  clearings?: Clearing[] | undefined;
  /**
   * The flag was recorded by a process that stopped (a crash, a kill) before recording its card:
   * the card may be out already. A platform that can find it returns it instead of posting again.
   */
  recovered?: boolean | undefined;
}

export interface WatchPlatform {
  /**
   * Reads a queued message again by id (after a restart); undefined when it is gone or cannot be
   * read; throws `RetryLaterError` when the platform may answer later.
   */
  fetchMessage(item: PendingItem): Promise<{ text: string; authorName?: string | undefined } | undefined>;
  /** The scope's review channel (its mod-log or audit channel); undefined when none is set. */
  reviewChannel(scope: string): Promise<string | undefined>;
  /**
   * Posts a card and returns its id (for a `recovered` card, the id of the one already out, where the
   * platform can find it); throws when the platform refuses.
   */
  postCard(reviewChannelId: string, card: ReviewCard): Promise<string>;
  /** The mode the scope's messages are scored in. */
  mode(scope: string): Promise<Mode>;
}

export type OfferResult =
  | 'queued'
  | 'buffered'
  | 'not_watched'
  | 'history'
  | 'exempt'
  | 'too_short'
  | 'duplicate'
  | 'already_scored'
  | 'updated';

export interface WatcherCounters {
  offered: number;
  queued: number;
  skipped: Record<string, number>;
  scored: number;
  flagged: number;
  cards: number;
  /** Messages deleted or unreadable by the time their turn came. */
  gone: number;
  /** Messages dropped unscored after `maxPendingAgeMs`. */
  expired: number;
  /** Scoring attempts that failed and were put back (429, service down). */
  retried: number;
  /** Messages the service refused (e.g. a language it does not support). */
  refused: number;
}

export interface WatcherOptions {
  store: WatchStore;
  detector: WatchDetector;
  platform: WatchPlatform;
  settings: WatchSettings;
  logger: Logger;
  /** How long a claimed message stays this instance's before another may take it (renewed while scoring). */
  leaseMs?: number | undefined;
  /** How long a watched-channel lookup is cached (other instances' changes show after this). */
  configTtlMs?: number | undefined;
  /** How often the queue is polled when this instance saw nothing new (others may have queued). */
  idlePollMs?: number | undefined;
  /** Messages whose text is kept in memory while they wait; older ones are read again when their turn comes. */
  maxCachedTexts?: number | undefined;
  /** After a card post the platform refused, the waits before each new try (default 10 s, 1 min, 5 min). */
  cardRetryDelaysMs?: number[] | undefined;
  /**
   * Where messages the store could not queue are kept on disk until it can (spool.ts); without it
   * they are kept in memory only, and lost if the process stops first.
   */
  spool?: WatchSpool | undefined;
  /**
   * The community's clock: what counts as a member's recent messages, a message too old to score,
   * clearings and the card window and hourly cap are read against it. Date.now unless a replay of a
   * past month (scripts/replay-reviews.ts) runs the community on its own time; queue leases and
   * retries always follow the real clock.
   */
  clock?: (() => number) | undefined;
}

interface CachedMessage {
  text: string;
  authorName?: string | undefined;
}

interface Watching {
  channel: WatchedChannel;
  config: WatchConfig;
}

/** A platform's failure to read a message that may pass (its API down or rate limited): the message stays queued. */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError';
}

function isTransient(err: unknown): boolean {
  return (
    err instanceof RateLimitError ||
    err instanceof ServerError ||
    err instanceof TimeoutError ||
    err instanceof ConnectionError ||
    err instanceof RetryLaterError
  );
}

export class Watcher {
  readonly store: WatchStore;
  readonly settings: WatchSettings;
  readonly counters: WatcherCounters = {
    offered: 0,
    queued: 0,
    skipped: {},
    scored: 0,
    flagged: 0,
    cards: 0,
    gone: 0,
    expired: 0,
    retried: 0,
    refused: 0,
  };
  readonly #detector: WatchDetector;
  readonly #platform: WatchPlatform;
  readonly #logger: Logger;
  readonly #leaseMs: number;
  readonly #configTtlMs: number;
  readonly #idlePollMs: number;
  readonly #maxCachedTexts: number;
  readonly #texts = new Map<string, CachedMessage>();
  readonly #recent: RecentMessages;
  readonly #clock: () => number;
  readonly #configs = new Map<string, { config: WatchConfig; until: number }>();
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #attempts = new Map<string, number>();
  /** Messages deleted while this instance was scoring them: their score is not recorded. */
  readonly #deletedWhileScoring = new Set<string>();
  /** Per member, the tail of their events being handled (see inArrivalOrder). */
  readonly #arrivals = new Map<string, Promise<void>>();
  readonly #shutdown = new AbortController();
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #cardRetryDelaysMs: number[];
  /** Messages the store could not queue (the database unreachable), queued again as soon as it answers; also in the spool. */
  readonly #backlog: PendingItem[] = [];
  readonly #spool: WatchSpool | undefined;
  /** Cards the platform accepted while the store could not record them; also in the spool, recorded as soon as it answers. */
  readonly #postedCards: PostedCardMark[] = [];
  #backlogTimer: NodeJS.Timeout | undefined;
  #backlogAttempt = 0;
  /**
   * Cards the platform refused, by message: the message stays queued (released until the next try),
   * so a restart meanwhile scores it again and posts the card then (see #record).
   */
  readonly #cardRetries = new Map<
    string,
    {
      message: CachedMessage;
      judgment: Judgment;
      flagId: string;
      preset: Preset;
      attempt: number;
      recovered: boolean;
      clearings: Clearing[];
    }
  >();
  #renewer: NodeJS.Timeout | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: WatcherOptions) {
    this.store = options.store;
    this.settings = options.settings;
    this.#detector = options.detector;
    this.#platform = options.platform;
    this.#logger = options.logger.child({ component: 'watch' });
    this.#leaseMs = options.leaseMs ?? 60_000;
    this.#configTtlMs = options.configTtlMs ?? 5_000;
    this.#idlePollMs = options.idlePollMs ?? 1_000;
    this.#maxCachedTexts = options.maxCachedTexts ?? 20_000;
    this.#cardRetryDelaysMs = options.cardRetryDelaysMs ?? [10_000, 60_000, 300_000];
    this.#spool = options.spool;
    this.#clock = options.clock ?? Date.now;
    this.#recent = new RecentMessages({ maxPerAuthor: this.settings.recentMessages, windowMs: this.settings.recentWindowMs });
  }

  /** Words a message needs to be queued for a judgment. */
  get minWords(): number {
    return this.settings.judge === 'author' ? AUTHOR_TRIGGER_WORDS : MIN_MESSAGE_WORDS;
  }

  /** Members' recent messages held in memory for author-level judgments. */
  get recentMessages(): number {
    return this.#recent.size;
  }

  /** Starts scoring queued messages (those left by a previous run included). */
  start(): void {
    if (this.#loop) return;
    this.#replaySpool();
    this.#loop = this.#run();
    this.#renewer = setInterval(
      () => {
        if (this.#inflight.size === 0) return;
        this.store.renew([...this.#inflight.keys()], Date.now() + this.#leaseMs).catch((err: unknown) => {
          this.#logger.warn({ err: (err as Error).message }, 'could not renew the leases of messages being scored');
        });
      },
      Math.max(100, Math.floor(this.#leaseMs / 3)),
    );
    this.#renewer.unref();
    const sweep = (): void => {
      this.store.sweep(Date.now(), this.settings.retentionDays).catch((err: unknown) => {
        this.#logger.warn({ err: (err as Error).message }, 'could not delete expired watch records');
      });
    };
    sweep();
    this.#sweeper = setInterval(sweep, 10 * 60_000);
    this.#sweeper.unref();
  }

  /**
   * Stops taking messages; calls on the wire are abandoned and their messages put back in the
   * queue, so the next start (here or in another instance) scores them.
   */
  async stop(): Promise<void> {
    if (this.#shutdown.signal.aborted) return;
    this.#shutdown.abort(new Error('the watcher is stopping'));
    clearInterval(this.#renewer);
    clearInterval(this.#sweeper);
    clearTimeout(this.#backlogTimer);
    this.#wake?.();
    await this.#loop;
    await Promise.allSettled([...this.#inflight.values()]);
    if (this.#backlog.length > 0 || this.#postedCards.length > 0) {
      if (this.#spool) {
        this.#logger.warn(
          { kept: this.#backlog.length, cards: this.#postedCards.length, spool: this.#spool.path },
          'watched messages the database could not queue are kept in the spool; the next start queues them',
        );
      } else {
        this.#logger.error(
          { lost: this.#backlog.length, cards: this.#postedCards.length },
          'watched messages the database could not queue are lost (no spool)',
        );
      }
    }
  }

  /** Messages a previous run kept in the spool go back to the queue (the store may refuse them still: they wait in the backlog). */
  #replaySpool(): void {
    let spooled: { items: PendingItem[]; cards: PostedCardMark[] };
    try {
      spooled = this.#spool?.read() ?? { items: [], cards: [] };
    } catch (err) {
      this.#logger.error({ err: (err as Error).message, spool: this.#spool?.path }, 'could not read the watch spool');
      return;
    }
    if (spooled.items.length === 0 && spooled.cards.length === 0) return;
    const known = new Set(this.#backlog.map(itemKey));
    for (const item of spooled.items) if (!known.has(itemKey(item))) this.#backlog.push(item);
    for (const card of spooled.cards) if (!this.#postedCards.some((c) => c.flagId === card.flagId)) this.#postedCards.push(card);
    // Written again at once: a line a crash cut short is dropped before anything is appended after it.
    this.#rewriteSpool();
    this.#logger.info({ spooled: spooled.items.length, cards: spooled.cards.length }, 'queueing the watched messages kept in the spool');
    this.#scheduleBacklog(0);
  }

  /** The scope's watched channel, or undefined; cached for a few seconds. */
  async watching(scope: string, channelId: string): Promise<Watching | undefined> {
    const config = await this.config(scope);
    const channel = config.channels.find((c) => c.channelId === channelId);
    return channel ? { channel, config } : undefined;
  }

  async config(scope: string): Promise<WatchConfig> {
    const cached = this.#configs.get(scope);
    if (cached && cached.until > Date.now()) return cached.config;
    let config: WatchConfig;
    try {
      config = await this.store.getConfig(scope);
    } catch (err) {
      // The database is unreachable: the last configuration seen keeps messages coming in (they are
      // buffered below) rather than dropping them.
      if (!cached) throw err;
      return cached.config;
    }
    if (this.#configs.size > 10_000) this.#configs.clear();
    this.#configs.set(scope, { config, until: Date.now() + this.#configTtlMs });
    return config;
  }

  /** Forgets the cached settings of a scope (after a change made here). */
  invalidate(scope: string): void {
    this.#configs.delete(scope);
  }

  /**
   * Runs `work` (the handling of one of a member's messages) after the member's previous ones, in
   * the order the platform delivered them. A member's messages are judged with their earlier ones
   * (`judge: author`); handled side by side, a later message could be queued and judged before an
   * earlier one had joined the member's recent messages, with a store whose lookups may answer out
   * of order (a PostgreSQL pool). Call it synchronously on delivery; other members are not held up.
   */
  inArrivalOrder<T>(scope: string, memberId: string, work: () => Promise<T>): Promise<T> {
    const key = `${scope}|${memberId}`;
    const previous = this.#arrivals.get(key);
    const run = previous ? previous.then(work) : work();
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#arrivals.set(key, tail);
    void tail.then(() => {
      if (this.#arrivals.get(key) === tail) this.#arrivals.delete(key);
    });
    return run;
  }

  /**
   * A new message. `isExempt` is asked only for watched channels (it may cost the platform a
   * lookup): true for moderators and members of an exempt role or group.
   */
  async offer(message: IncomingMessage, isExempt?: (exemptIds: string[]) => boolean | Promise<boolean>): Promise<OfferResult> {
    this.counters.offered += 1;
    const result = await this.#offer(message, isExempt);
    if (result === 'queued' || result === 'buffered') this.counters.queued += 1;
    else this.counters.skipped[result] = (this.counters.skipped[result] ?? 0) + 1;
    return result;
  }

  /**
   * An edited message: left alone once scored; a waiting message is scored with its new text; one
   * never queued (too short when posted) is taken as new if it was posted while the channel was watched.
   */
  async edited(message: IncomingMessage, isExempt?: (exemptIds: string[]) => boolean | Promise<boolean>): Promise<OfferResult> {
    const key = itemKey(message);
    const recentKey = authorKey(message.scope, message.channelId, message.authorId);
    // A member's later judgments read what their message says now.
    if (this.#recent.has(recentKey, message.messageId)) this.#recent.add(recentKey, this.#recentOf(message), this.#clock());
    if (await this.store.isScored(message.scope, message.channelId, message.messageId, message.postedAt)) return 'already_scored';
    if (await this.store.isPending(message.scope, message.channelId, message.messageId)) {
      if (countWords(message.text) < this.minWords) {
        await this.store.drop(message.scope, message.channelId, message.messageId);
        this.#texts.delete(key);
        return 'too_short';
      }
      this.#remember(key, { text: message.text, authorName: message.authorName });
      return 'updated';
    }
    return this.offer(message, isExempt);
  }

  /** A deleted message: dropped from the queue if it was waiting (its author removed it; there is nothing to review). */
  async deleted(scope: string, channelId: string, messageId: string): Promise<boolean> {
    const key = itemKey({ scope, channelId, messageId });
    this.#texts.delete(key);
    this.#cardRetries.delete(key);
    this.#recent.removeMessage(scope, channelId, messageId);
    if (this.#inflight.has(key)) {
      this.#deletedWhileScoring.add(key);
      return true;
    }
    return this.store.drop(scope, channelId, messageId);
  }

  /** Deletes everything of a scope (bot removed, or `delete-data`). */
  async deleteScope(scope: string): Promise<void> {
    await this.store.deleteScope(scope);
    const kept = this.#backlog.filter((item) => item.scope !== scope);
    const keptCards = this.#postedCards.filter((card) => card.scope !== scope);
    if (kept.length < this.#backlog.length || keptCards.length < this.#postedCards.length) {
      this.#backlog.splice(0, this.#backlog.length, ...kept);
      this.#postedCards.splice(0, this.#postedCards.length, ...keptCards);
      this.#rewriteSpool();
    }
    for (const key of this.#texts.keys()) if (key.startsWith(`${scope}|`)) this.#texts.delete(key);
    this.#recent.deleteScope(scope);
    this.invalidate(scope);
    this.#logger.info({ scope }, 'deleted every watch record of the scope');
  }

  /** Retention of a scope, in days. */
  retentionDays(config: WatchConfig): number {
    return config.retentionDays ?? this.settings.retentionDays;
  }

  /** Messages waiting or being scored, in every scope (the queue depth). */
  pendingCount(): Promise<number> {
    return this.store.pendingCount();
  }

  /** Texts held in memory for waiting messages. */
  get cachedTexts(): number {
    return this.#texts.size;
  }

  async #offer(message: IncomingMessage, isExempt?: (exemptIds: string[]) => boolean | Promise<boolean>): Promise<OfferResult> {
    const watching = await this.watching(message.scope, message.channelId);
    if (!watching) return 'not_watched';
    if (message.postedAt < watching.channel.since) return 'history';
    if (isExempt && (await isExempt(watching.config.exemptIds))) return 'exempt';
    const words = countWords(message.text);
    if (words === 0) return 'too_short';
    if (this.settings.judge === 'author')
      this.#recent.add(authorKey(message.scope, message.channelId, message.authorId), this.#recentOf(message), this.#clock());
    if (words < this.minWords) return 'too_short';
    const key = itemKey(message);
    const item: PendingItem = {
      scope: message.scope,
      channelId: message.channelId,
      messageId: message.messageId,
      threadId: message.threadId,
      authorId: message.authorId,
      postedAt: message.postedAt,
      enqueuedAt: Date.now(),
    };
    // Remembered before queueing: another instance's worker cannot have it, but ours may claim it at once.
    const hadText = this.#texts.has(key);
    this.#remember(key, { text: message.text, authorName: message.authorName });
    let queued: boolean;
    try {
      queued = await this.store.enqueue(item);
    } catch (err) {
      if (this.#backlog.length >= this.#maxCachedTexts) throw err;
      this.#backlog.push(item);
      let spooled = false;
      try {
        this.#spool?.add(item);
        spooled = this.#spool !== undefined;
      } catch (spoolErr) {
        this.#logger.error(
          { err: (spoolErr as Error).message },
          'could not write a watched message to the spool; it is kept in memory only',
        );
      }
      this.#logger.warn(
        { err: (err as Error).message, buffered: this.#backlog.length, spooled },
        spooled
          ? 'could not queue a watched message; kept in the spool until the store answers'
          : 'could not queue a watched message; kept in memory until the store answers',
      );
      this.#scheduleBacklog();
      return 'buffered';
    }
    if (!queued) {
      if (!hadText && !this.#inflight.has(key)) this.#texts.delete(key);
      return (await this.store.isScored(message.scope, message.channelId, message.messageId, message.postedAt))
        ? 'already_scored'
        : 'duplicate';
    }
    this.#wake?.();
    return 'queued';
  }

  /** Queues the buffered messages, oldest first; while the store still refuses, tries again after 1 s doubling to 30 s. */
  #scheduleBacklog(delayMs?: number): void {
    if (this.#backlogTimer || this.#shutdown.signal.aborted) return;
    const delay = delayMs ?? Math.min(30_000, 1_000 * 2 ** Math.min(this.#backlogAttempt, 5));
    this.#backlogTimer = setTimeout(async () => {
      const before = this.#backlog.length + this.#postedCards.length;
      try {
        // Cards first: a message scored again before its card is recorded would post the card again.
        while (this.#postedCards.length > 0) {
          const { scope, flagId, cardId, cardChannelId } = this.#postedCards[0]!;
          await this.store.setCard(scope, flagId, 'posted', { cardId, cardChannelId });
          this.#postedCards.shift();
        }
        while (this.#backlog.length > 0) {
          await this.store.enqueue(this.#backlog[0]!);
          this.#backlog.shift();
        }
        this.#backlogAttempt = 0;
        this.#wake?.();
      } catch {
        this.#backlogAttempt += 1;
      } finally {
        this.#backlogTimer = undefined;
        // Only once they are in the store do they leave the spool.
        if (this.#backlog.length + this.#postedCards.length < before) this.#rewriteSpool();
        if (this.#backlog.length > 0 || this.#postedCards.length > 0) this.#scheduleBacklog();
      }
    }, delay);
    this.#backlogTimer.unref();
  }

  #rewriteSpool(): void {
    try {
      this.#spool?.replace(this.#backlog, this.#postedCards);
    } catch (err) {
      this.#logger.error({ err: (err as Error).message, spool: this.#spool?.path }, 'could not rewrite the watch spool');
    }
  }

  #recentOf(message: Pick<IncomingMessage, 'messageId' | 'threadId' | 'postedAt' | 'text'>) {
    return { messageId: message.messageId, threadId: message.threadId, postedAt: message.postedAt, text: message.text };
  }

  #remember(key: string, message: CachedMessage): void {
    this.#texts.delete(key);
    this.#texts.set(key, message);
    // Oldest first: those are read again from the platform when their turn comes.
    while (this.#texts.size > this.#maxCachedTexts) {
      const oldest = this.#texts.keys().next().value;
      if (oldest === undefined) break;
      this.#texts.delete(oldest);
    }
  }

  async #nap(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
    this.#wake = undefined;
  }

  async #run(): Promise<void> {
    const signal = this.#shutdown.signal;
    while (!signal.aborted) {
      if (this.#inflight.size >= this.settings.concurrency) {
        await this.#nap(this.#idlePollMs);
        continue;
      }
      let room = true;
      try {
        room = await this.#detector.roomForBackground();
      } catch {
        room = true;
      }
      if (!room) {
        // Usually a watched call waiting for its start (a local check, no I/O): it starts within one pace.
        await this.#nap(5);
        continue;
      }
      let item: PendingItem | undefined;
      try {
        item = await this.store.claimNext(Date.now(), this.#leaseMs);
      } catch (err) {
        this.#logger.warn({ err: (err as Error).message }, 'could not read the watch queue; trying again shortly');
        await this.#nap(1_000);
        continue;
      }
      if (!item) {
        await this.#nap(this.#idlePollMs);
        continue;
      }
      if (signal.aborted) {
        await this.store.release(itemKey(item), Date.now()).catch(() => undefined);
        break;
      }
      const key = itemKey(item);
      const work = this.#process(item).finally(() => {
        this.#inflight.delete(key);
        this.#wake?.();
      });
      this.#inflight.set(key, work);
    }
  }

  async #process(item: PendingItem): Promise<void> {
    const key = itemKey(item);
    const log = this.#logger.child({ scope: item.scope, channelId: item.channelId, messageId: item.messageId });
    try {
      if (this.#clock() - item.postedAt > this.settings.maxPendingAgeMs) {
        this.counters.expired += 1;
        log.warn('watched message waited too long for its score and was dropped');
        await this.#finish(key);
        return;
      }
      const watching = await this.watching(item.scope, item.channelId);
      if (!watching) {
        await this.#finish(key);
        return;
      }
      const refused = this.#cardRetries.get(key);
      if (refused) {
        // Scored and recorded before: only its card is tried again.
        const { message, judgment, flagId, preset, attempt, recovered, clearings } = refused;
        const retryInMs = await this.#raiseCard(item, message, judgment, flagId, preset, log, attempt, recovered, clearings);
        if (retryInMs !== undefined) await this.store.release(key, Date.now() + retryInMs);
        else await this.#finish(key);
        return;
      }
      let message = this.#texts.get(key);
      if (!message) {
        message = await this.#platform.fetchMessage(item);
        if (!message || countWords(message.text) < this.minWords) {
          this.counters.gone += 1;
          log.info({ readAgain: true }, 'watched message is gone or unreadable; not scored');
          await this.#finish(key);
          return;
        }
        if (this.settings.judge === 'author') {
          this.#recent.add(
            authorKey(item.scope, item.channelId, item.authorId),
            this.#recentOf({ ...item, text: message.text }),
            this.#clock(),
          );
        }
      }
      const mode = await this.#platform.mode(item.scope);
      const judgment =
        this.settings.judge === 'author' ? await this.#judgeAuthor(item, message.text, mode) : await this.#judge(message.text, mode);
      if (this.#deletedWhileScoring.has(key)) {
        this.counters.gone += 1;
        log.info('watched message was deleted while it was scored; not recorded');
      } else {
        const retryInMs = await this.#record(item, message, judgment, watching, log);
        if (retryInMs !== undefined) {
          await this.store.release(key, Date.now() + retryInMs);
          return;
        }
      }
      await this.#finish(key);
    } catch (err) {
      if (this.#shutdown.signal.aborted) {
        await this.store.release(key, Date.now()).catch(() => undefined);
        return;
      }
      if (this.#deletedWhileScoring.has(key)) {
        await this.#finish(key).catch(() => undefined);
        return;
      }
      if (isTransient(err)) {
        const attempt = (this.#attempts.get(key) ?? 0) + 1;
        this.#attempts.set(key, attempt);
        this.counters.retried += 1;
        const delay = Math.min(60_000, 1_000 * 2 ** Math.min(attempt - 1, 6));
        log.warn({ code: errorCode(err), attempt, retryInMs: delay }, 'watched message not scored yet; it stays queued');
        await this.store.release(key, Date.now() + delay).catch(() => undefined);
        return;
      }
      this.counters.refused += 1;
      log.warn({ code: errorCode(err), errName: (err as Error)?.name }, 'watched message not scored');
      await this.#finish(key).catch(() => undefined);
    }
  }

  async #finish(key: string): Promise<void> {
    this.#attempts.delete(key);
    this.#cardRetries.delete(key);
    this.#deletedWhileScoring.delete(key);
    this.#texts.delete(key);
    await this.store.complete(key);
  }

  /** The author's recent messages in the channel, up to this one, judged together. */
  async #judgeAuthor(item: PendingItem, text: string, mode: Mode): Promise<Judgment> {
    let recent = this.#recent.window(authorKey(item.scope, item.channelId, item.authorId), item.postedAt);
    if (!recent.some((m) => m.messageId === item.messageId)) {
      recent = [...recent, { messageId: item.messageId, threadId: item.threadId, postedAt: item.postedAt, text }].slice(
        -this.settings.recentMessages,
      );
    }
    const result = await this.#detector.detectAuthor({ messages: recent.map((m) => m.text), mode }, { signal: this.#shutdown.signal });
    const highlights = result.messages
      .filter((m) => m.skipped === null && m.ai_probability !== null && recent[m.index] !== undefined)
      .sort((a, b) => (b.ai_probability ?? 0) - (a.ai_probability ?? 0))
      .slice(0, 3)
      .map((m) => {
        const message = recent[m.index]!;
        return {
          text: truncate(message.text.replace(/\s+/g, ' ').trim(), 200),
          probability: m.ai_probability ?? 0,
          messageId: message.messageId,
          threadId: message.threadId,
        };
      });
    return {
      basis: 'author',
      probability: result.ai_probability,
      verdict: result.verdict,
      origin: originOfAnswer(result),
      confidence: result.confidence,
      warnings: Array.isArray(result.warnings) ? result.warnings : [],
      mode: result.mode,
      requestId: result.request_id,
      model: result.model,
      messagesUsed: result.messages_used,
      wordsUsed: result.words_used,
      highlights,
    };
  }

  async #judge(text: string, mode: Mode): Promise<Judgment> {
    const result = await this.#detector.detect({ text, mode, segments: true }, { signal: this.#shutdown.signal });
    return {
      basis: 'message',
      probability: result.ai_probability,
      verdict: result.verdict,
      origin: originOfAnswer(result),
      generatedShare: result.generated_share,
      confidence: result.confidence,
      warnings: Array.isArray(result.warnings) ? result.warnings : [],
      mode: result.mode,
      requestId: result.request_id,
      model: result.model,
      messagesUsed: 1,
      wordsUsed: countWords(text),
      highlights: mostAiLikeSentences(result.segments).map((s) => ({
        text: truncate(s.text.replace(/\s+/g, ' ').trim(), 300),
        probability: s.ai_probability,
      })),
    };
  }

  /**
   * Records the score and raises the flag's card; returns when to try a refused card again
   * (undefined when there is nothing more to do).
   */
  async #record(
    item: PendingItem,
    message: CachedMessage,
    judgment: Judgment,
    watching: Watching,
    log: Logger,
  ): Promise<number | undefined> {
    const preset = watching.config.preset ?? DEFAULT_PRESET;
    const presets = presetMask(judgment);
    const flagged = (presets & PRESET_BITS[preset]) !== 0;
    const flagId = flagged ? randomBytes(9).toString('base64url') : undefined;
    const cards = watching.channel.cards;
    // A member a moderator cleared: no card (nor shadow flag) on evidence that is not clearly stronger.
    const cleared = flagged && this.settings.clearDays > 0 ? await this.#afterClearings(item, judgment) : undefined;
    const held = cleared?.action === 'hold';
    const fresh = await this.store.recordScore(
      {
        scope: item.scope,
        channelId: item.channelId,
        messageId: item.messageId,
        threadId: item.threadId,
        authorId: item.authorId,
        postedAt: item.postedAt,
        probability: judgment.probability,
        verdict: judgment.verdict,
        confidence: judgment.confidence,
        presets,
        requestId: judgment.requestId,
        flagId,
        card: flagged ? (held ? 'cleared' : cards ? 'failed' : 'shadow') : undefined,
        preset,
        words: judgment.wordsUsed,
      },
      item.postedAt + this.retentionDays(watching.config) * DAY_MS,
    );
    if (!fresh) {
      // A flag recorded by a process that stopped (a crash, a kill) before its card was posted keeps
      // card 'failed' without a card id, and its message stays queued: scored again now, the card
      // is posted this once. The queue's lease makes this instance the only one doing it.
      const earlier = cards ? await this.store.flagOfMessage(item.scope, item.channelId, item.messageId) : undefined;
      const posted = earlier && this.#postedCards.some((c) => c.flagId === earlier.flagId);
      if (earlier && !posted && earlier.card === 'failed' && earlier.cardId === undefined && earlier.outcome === undefined) {
        log.info({ flagId: earlier.flagId }, 'watched message was flagged before its card was posted; posting the card now');
        return this.#raiseCard(item, message, judgment, earlier.flagId, preset, log, 0, true);
      }
      log.info('watched message was scored before; this score is not recorded again');
      return undefined;
    }
    this.counters.scored += 1;
    log.info(
      { requestId: judgment.requestId, verdict: judgment.verdict, flagged, shadow: flagged && !cards, preset },
      'watched message scored',
    );
    if (!flagged || !flagId) return undefined;
    this.counters.flagged += 1;
    if (held) {
      log.info({ flagId, clearings: cleared.clearings.length }, 'flag recorded without a card: a moderator cleared the member');
      return undefined;
    }
    if (!cards) return undefined;
    return this.#raiseCard(item, message, judgment, flagId, preset, log, 0, false, cleared?.clearings);
  }

  async #afterClearings(item: PendingItem, judgment: Judgment): Promise<ReturnType<typeof decideAfterClearings>> {
    const now = this.#clock();
    const clearings = await this.store.clearingsOf(item.scope, item.authorId, now);
    if (clearings.length === 0) return decideAfterClearings(judgment, clearings);
    const confirmed = await this.store.confirmedSince(item.scope, item.authorId, now - this.settings.clearDays * DAY_MS);
    return decideAfterClearings(judgment, clearings, confirmed);
  }

  async #raiseCard(
    item: PendingItem,
    message: CachedMessage,
    judgment: Judgment,
    flagId: string,
    preset: Preset,
    log: Logger,
    attempt = 0,
    recovered = false,
    clearings: Clearing[] = [],
  ): Promise<number | undefined> {
    const reviewChannel = await this.#platform.reviewChannel(item.scope);
    if (!reviewChannel) {
      log.warn({ flagId }, 'flag has no card: no review (mod-log) channel is set');
      return undefined;
    }
    const reservedAt = this.#clock();
    // A recovered card's place was taken by the process that stopped before posting it: taking
    // another would hold the card back behind its own author window.
    const reservation = recovered
      ? undefined
      : await this.store.reserveCard(item.scope, item.channelId, item.authorId, reservedAt, {
          windowMs: this.settings.cardWindowMs,
          cap: this.settings.cardsPerChannelHour,
        });
    if (reservation && !reservation.ok) {
      await this.store.setCard(item.scope, flagId, reservation.reason);
      log.info({ flagId, reason: reservation.reason }, 'flag recorded without a card');
      return undefined;
    }
    const card: ReviewCard = {
      flagId,
      scope: item.scope,
      channelId: item.channelId,
      messageId: item.messageId,
      threadId: item.threadId,
      authorId: item.authorId,
      authorName: message.authorName,
      postedAt: item.postedAt,
      judgment,
      preset,
      capReached: reservation && reservation.slot >= reservation.cap ? { cap: reservation.cap, until: reservation.hourEndsAt } : undefined,
      clearings: clearings.length > 0 ? clearings : undefined,
      recovered: recovered || undefined,
    };
    let cardId: string;
    try {
      cardId = await this.#platform.postCard(reviewChannel, card);
    } catch (err) {
      // The place was for a card moderators see: the member's window and the channel's hour get it back.
      if (reservation) await this.store.releaseCard(item.scope, item.channelId, item.authorId, reservedAt).catch(() => undefined);
      const retryInMs = this.#cardRetryDelaysMs[attempt];
      log.warn({ flagId, err: (err as Error).message, retryInMs }, 'could not post the review card; the flag is recorded');
      if (retryInMs === undefined) return undefined;
      this.#cardRetries.set(itemKey(item), { message, judgment, flagId, preset, attempt: attempt + 1, recovered, clearings });
      return retryInMs;
    }
    try {
      await this.store.setCard(item.scope, flagId, 'posted', { cardId, cardChannelId: reviewChannel });
    } catch (err) {
      // The card is out: the store must hear of it (from the spool, if this process stops first), or
      // the message's next score would post the card again.
      const mark = { scope: item.scope, flagId, cardId, cardChannelId: reviewChannel };
      this.#postedCards.push(mark);
      try {
        this.#spool?.addCard(mark);
      } catch (spoolErr) {
        log.error({ err: (spoolErr as Error).message }, 'could not write a posted card to the spool');
      }
      log.warn({ flagId, cardId, err: (err as Error).message }, 'review card posted; it is recorded once the store answers');
      this.#scheduleBacklog();
    }
    this.counters.cards += 1;
    log.info({ flagId, cardId }, 'review card posted');
    return undefined;
  }
}
