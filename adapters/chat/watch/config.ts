/**
 * The operator's settings of watching, shared by both bots and read once at start, so a typo stops
 * the bot with a sentence naming the variable.
 */
export interface WatchSettings {
  /** Records (scores, ids, outcomes) are kept this many days after the message was posted, unless a scope sets its own. */
  retentionDays: number;
  /** At most this many review cards per watched channel per clock hour. */
  cardsPerChannelHour: number;
  /** After a card about a member, further flags about them within this many ms get no card of their own. */
  authorWindowMs: number;
  /** Watched messages scored at once (each also needs a free place in the detection queue). */
  concurrency: number;
  /** A message still unscored after this long (the key's budget was spent on a flood) is dropped rather than scored late. */
  maxPendingAgeMs: number;
}

export const DEFAULT_WATCH_SETTINGS: WatchSettings = {
  retentionDays: 30,
  cardsPerChannelHour: 10,
  authorWindowMs: 60 * 60_000,
  concurrency: 2,
  maxPendingAgeMs: 24 * 3_600_000,
};

/** Longest retention a scope may choose: a year. */
export const MAX_RETENTION_DAYS = 365;

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}="${raw}" must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

/**
 * - `WATCH_RETENTION_DAYS` (30, 1–365): default retention of scores, ids and outcomes.
 * - `WATCH_CARDS_PER_CHANNEL_HOUR` (10): hourly card cap per watched channel.
 * - `WATCH_AUTHOR_WINDOW_MINUTES` (60): one card per member per this many minutes.
 * - `WATCH_CONCURRENCY` (2): watched messages scored at once.
 * - `WATCH_MAX_PENDING_HOURS` (24): unscored messages older than this are dropped.
 */
export function readWatchSettings(env: NodeJS.ProcessEnv = process.env): WatchSettings {
  const d = DEFAULT_WATCH_SETTINGS;
  return {
    retentionDays: wholeNumber(env, 'WATCH_RETENTION_DAYS', d.retentionDays, 1, MAX_RETENTION_DAYS),
    cardsPerChannelHour: wholeNumber(env, 'WATCH_CARDS_PER_CHANNEL_HOUR', d.cardsPerChannelHour, 1, 1000),
    authorWindowMs: wholeNumber(env, 'WATCH_AUTHOR_WINDOW_MINUTES', d.authorWindowMs / 60_000, 1, 7 * 24 * 60) * 60_000,
    concurrency: wholeNumber(env, 'WATCH_CONCURRENCY', d.concurrency, 1, 64),
    maxPendingAgeMs: wholeNumber(env, 'WATCH_MAX_PENDING_HOURS', d.maxPendingAgeMs / 3_600_000, 1, 24 * 30) * 3_600_000,
  };
}
