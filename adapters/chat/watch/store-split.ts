/**
 * Watching's store over two, as the bots' other state (../store/split.ts) when both `DATABASE_URL`
 * and `REDIS_URL` are set: what must last (watched channels, scores, flags, outcomes, card windows)
 * in PostgreSQL, the queue of messages waiting for their score (ids only, claimed and renewed many
 * times a second) in Redis.
 */
import type { CardLimits, WatchStore } from './store.ts';
import type { PostgresWatchStore } from './store-postgres.ts';
import type { RedisWatchStore } from './store-redis.ts';
import type {
  CardReservation,
  CardState,
  FlagRecord,
  Outcome,
  PendingItem,
  Preset,
  ReportData,
  ReviewResult,
  ScoreRecord,
  WatchConfig,
  WatchedChannel,
} from './types.ts';

export class SplitWatchStore implements WatchStore {
  readonly kind = 'postgres+redis' as const;
  readonly durable: PostgresWatchStore;
  readonly queue: RedisWatchStore;
  #closing: Promise<void> | undefined;

  constructor(durable: PostgresWatchStore, queue: RedisWatchStore) {
    this.durable = durable;
    this.queue = queue;
  }

  ready(): Promise<void> {
    return this.durable.ready();
  }

  getConfig(scope: string): Promise<WatchConfig> {
    return this.durable.getConfig(scope);
  }

  watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }> {
    return this.durable.watchChannel(scope, channelId, since);
  }

  unwatchChannel(scope: string, channelId: string): Promise<boolean> {
    return this.durable.unwatchChannel(scope, channelId);
  }

  setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined> {
    return this.durable.setCards(scope, channelId, on);
  }

  setExempt(scope: string, id: string, exempt: boolean): Promise<string[]> {
    return this.durable.setExempt(scope, id, exempt);
  }

  setPreset(scope: string, preset: Preset | null): Promise<void> {
    return this.durable.setPreset(scope, preset);
  }

  setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void> {
    return this.durable.setRetention(scope, days, defaultDays, now);
  }

  async scopes(): Promise<string[]> {
    const [durable, queued] = await Promise.all([this.durable.scopes(), this.queue.scopes()]);
    return [...new Set([...durable, ...queued])].sort();
  }

  async enqueue(item: PendingItem): Promise<boolean> {
    // The scores are in PostgreSQL; a score recorded between this check and the queueing is
    // refused by recordScore, so the message is still scored once.
    if (await this.durable.isScored(item.scope, item.channelId, item.messageId)) return false;
    return this.queue.enqueue(item);
  }

  claim(now: number, leaseMs: number): Promise<PendingItem | undefined> {
    return this.queue.claim(now, leaseMs);
  }

  renew(keys: string[], until: number): Promise<void> {
    return this.queue.renew(keys, until);
  }

  release(key: string, availableAt: number): Promise<void> {
    return this.queue.release(key, availableAt);
  }

  complete(key: string): Promise<void> {
    return this.queue.complete(key);
  }

  drop(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return this.queue.drop(scope, channelId, messageId);
  }

  pendingCount(): Promise<number> {
    return this.queue.pendingCount();
  }

  isScored(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return this.durable.isScored(scope, channelId, messageId);
  }

  isPending(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return this.queue.isPending(scope, channelId, messageId);
  }

  recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean> {
    return this.durable.recordScore(record, expiresAt);
  }

  reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation> {
    return this.durable.reserveCard(scope, channelId, authorId, now, limits);
  }

  setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void> {
    return this.durable.setCard(scope, flagId, state, card);
  }

  getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined> {
    return this.durable.getFlag(scope, flagId);
  }

  review(scope: string, flagId: string, outcome: Outcome, reviewerId: string, at: number): Promise<ReviewResult | undefined> {
    return this.durable.review(scope, flagId, outcome, reviewerId, at);
  }

  report(scope: string, now: number): Promise<ReportData> {
    return this.durable.report(scope, now);
  }

  sweep(now: number): Promise<void> {
    return this.durable.sweep(now);
  }

  async deleteScope(scope: string): Promise<void> {
    // Redis too: its queue, and whatever a deployment kept there before DATABASE_URL was set.
    await this.queue.deleteScope(scope);
    await this.durable.deleteScope(scope);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const results = await Promise.allSettled([this.durable.close(), this.queue.close()]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    })();
    return this.#closing;
  }
}
