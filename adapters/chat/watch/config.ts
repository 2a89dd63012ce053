/**
 * The operator's settings of watching, shared by both bots and read once at start, so a typo stops
 * the bot with a sentence naming the variable.
 */
export interface WatchSettings {
  /**
   * `author` (default): a flag is judged on the author's recent messages in the channel (the
   * author-level score, POST /v1/detect/author); `message`: on each message alone, for a detection
   * service without the author-level endpoint.
   */
  judge: 'author' | 'message';
  /** Author basis: at most this many of the author's recent messages in the channel are judged together. */
  recentMessages: number;
  /** Author basis: messages older than this are no longer "recent". */
  recentWindowMs: number;
  /** Records (scores, ids, outcomes) are kept this many days after the message was posted, unless a scope sets its own. */
  retentionDays: number;
  /** At most this many review cards per watched channel per clock hour. */
  cardsPerChannelHour: number;
  /** After a card about a member, further flags about them within this many ms get no card of their own. */
  cardWindowMs: number;
  /** Watched messages scored at once (each also needs a free place in the detection queue). */
  concurrency: number;
  /** A message still unscored after this long (the key's budget was spent on a flood) is dropped rather than scored late. */
  maxPendingAgeMs: number;
  /**
   * After a moderator's "False positive", the member gets no new card in the scope for this many
   * days unless a judgment is clearly stronger (clearings.ts); 0 turns clearings off.
   */
  clearDays: number;
}

export const DEFAULT_WATCH_SETTINGS: WatchSettings = {
  judge: 'author',
  recentMessages: 20,
  recentWindowMs: 24 * 3_600_000,
  retentionDays: 30,
  cardsPerChannelHour: 10,
  cardWindowMs: 60 * 60_000,
  concurrency: 4,
  maxPendingAgeMs: 24 * 3_600_000,
  clearDays: 30,
};

/** A WATCH_* variable with a value the bots cannot use; its message names the variable. */
export class WatchConfigError extends Error {
  override name = 'WatchConfigError';
}

/** Longest retention a scope may choose: a year. */
export const MAX_RETENTION_DAYS = 365;

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new WatchConfigError(`${name}="${raw}" must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

/**
 * - `WATCH_JUDGE` (`author`): `author` or `message` (see `WatchSettings.judge`).
 * - `WATCH_RECENT_MESSAGES` (20, 5–200) and `WATCH_RECENT_HOURS` (24): the author's recent messages judged together.
 * - `WATCH_RETENTION_DAYS` (30, 1–365): default retention of scores, ids and outcomes.
 * - `WATCH_CARDS_PER_CHANNEL_HOUR` (10): hourly card cap per watched channel.
 * - `WATCH_CARD_WINDOW_MINUTES` (60): one card per member per this many minutes.
 * - `WATCH_CONCURRENCY` (4): watched messages scored at once (at most half of DETECT_QUEUE_CONCURRENCY is sensible).
 * - `WATCH_MAX_PENDING_HOURS` (24): unscored messages older than this are dropped.
 * - `WATCH_CLEAR_DAYS` (30, 0–365): a member a moderator cleared gets no card on the same evidence for this long; 0 is off.
 */
export function readWatchSettings(env: NodeJS.ProcessEnv = process.env): WatchSettings {
  const d = DEFAULT_WATCH_SETTINGS;
  const judge = env.WATCH_JUDGE?.trim().toLowerCase() || d.judge;
  if (judge !== 'author' && judge !== 'message') {
    throw new WatchConfigError(
      `WATCH_JUDGE="${env.WATCH_JUDGE}" must be author (the member's recent messages) or message (each message alone).`,
    );
  }
  return {
    judge,
    recentMessages: wholeNumber(env, 'WATCH_RECENT_MESSAGES', d.recentMessages, 5, 200),
    recentWindowMs: wholeNumber(env, 'WATCH_RECENT_HOURS', d.recentWindowMs / 3_600_000, 1, 24 * 30) * 3_600_000,
    retentionDays: wholeNumber(env, 'WATCH_RETENTION_DAYS', d.retentionDays, 1, MAX_RETENTION_DAYS),
    cardsPerChannelHour: wholeNumber(env, 'WATCH_CARDS_PER_CHANNEL_HOUR', d.cardsPerChannelHour, 1, 1000),
    cardWindowMs: wholeNumber(env, 'WATCH_CARD_WINDOW_MINUTES', d.cardWindowMs / 60_000, 1, 7 * 24 * 60) * 60_000,
    concurrency: wholeNumber(env, 'WATCH_CONCURRENCY', d.concurrency, 1, 64),
    maxPendingAgeMs: wholeNumber(env, 'WATCH_MAX_PENDING_HOURS', d.maxPendingAgeMs / 3_600_000, 1, 24 * 30) * 3_600_000,
    clearDays: wholeNumber(env, 'WATCH_CLEAR_DAYS', d.clearDays, 0, MAX_RETENTION_DAYS),
  };
}
