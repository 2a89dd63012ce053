/**
 * Watching chosen channels (docs/discord.md and docs/slack.md, "Watching channels"): the words both
 * bots and both stores share. A scope is a server (`discord:<guild>`) or a workspace (`slack:<team>`),
 * as for the settings in adapters/chat/store/.
 *
 * What is kept about a member is ids, scores and outcomes; a message's text lives only in the
 * watcher's memory while the message waits for its score, and on the platform itself.
 */
import type { Confidence, Mode, Origin, Verdict } from '../../../src/contract.ts';

/** How eagerly a scope flags, strictest first; `standard` is the engine's own `likely_ai` verdict. */
export const PRESETS = ['strict', 'standard', 'loose'] as const;
export type Preset = (typeof PRESETS)[number];

/** What a moderator answered on a review card. */
export const OUTCOMES = ['confirmed', 'false_positive', 'dismissed'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * What happened to a flag under the scope's preset: `shadow` (recorded, no card: the channel is in
 * shadow mode), `posted`, held back by the author window or the channel's hourly cap, `cleared`
 * (held back because a moderator marked the member's earlier flag a false positive, and this one is
 * not clearly stronger: clearings.ts), or `failed` (no review channel, or the platform refused the post).
 */
export const CARD_STATES = ['shadow', 'posted', 'author_window', 'cap', 'cleared', 'failed'] as const;
export type CardState = (typeof CARD_STATES)[number];

export interface WatchedChannel {
  channelId: string;
  /** When watching started (ms); messages posted before it are history and never scored. */
  since: number;
  /** False while the channel is in shadow mode (flags recorded and counted, no card posted). */
  cards: boolean;
}

export interface WatchConfig {
  channels: WatchedChannel[];
  /** Roles (Discord) or user groups (Slack) whose members are never scored. */
  exemptIds: string[];
  /** Unset: `standard`. */
  preset: Preset | undefined;
  /** Unset: the bot's default (`WATCH_RETENTION_DAYS`). */
  retentionDays: number | undefined;
  /** Precision under which the report suggests a stricter preset (precision.ts); unset: 0.8. */
  precisionBound?: number | undefined;
}

/** A message waiting for its score. Only ids are persisted: the text is read again from the platform after a restart. */
export interface PendingItem {
  scope: string;
  /** The watched channel (for a thread reply: the channel the thread belongs to). */
  channelId: string;
  messageId: string;
  /** Discord: the thread's channel id; Slack: the thread's `thread_ts`. Undefined outside threads. */
  threadId?: string | undefined;
  authorId: string;
  /** When the message was posted (ms). */
  postedAt: number;
  enqueuedAt: number;
}

/** The identity of a message across the queue and the scores. */
export function itemKey(item: Pick<PendingItem, 'scope' | 'channelId' | 'messageId'>): string {
  return `${item.scope}|${item.channelId}|${item.messageId}`;
}

/** What the store keeps about one scored message: no text. */
export interface ScoreRecord {
  scope: string;
  channelId: string;
  messageId: string;
  threadId?: string | undefined;
  authorId: string;
  postedAt: number;
  probability: number;
  verdict: Verdict;
  confidence: Confidence;
  /** Bit per preset that would flag it (1 strict, 2 standard, 4 loose). */
  presets: number;
  requestId: string;
  /** Set when the scope's preset at scoring time flagged it. */
  flagId?: string | undefined;
  card?: CardState | undefined;
  /** The scope's preset when the message was scored (unset in records from before it was kept). */
  preset?: Preset | undefined;
  /** Words of evidence the judgment read (the author's recent messages together, or the one message). */
  words?: number | undefined;
}

export interface FlagRecord {
  flagId: string;
  scope: string;
  channelId: string;
  messageId: string;
  threadId?: string | undefined;
  authorId: string;
  postedAt: number;
  probability: number;
  verdict: Verdict;
  requestId: string;
  card: CardState;
  /** The card's message id (Discord) or `ts` (Slack). */
  cardId?: string | undefined;
  cardChannelId?: string | undefined;
  outcome?: Outcome | undefined;
  reviewerId?: string | undefined;
  reviewedAt?: number | undefined;
  confidence?: Confidence | undefined;
  /** Bit per preset that would flag it (1 strict, 2 standard, 4 loose). */
  presets: number;
  /** The preset in force when it was scored; unset in records from before it was kept. */
  preset?: Preset | undefined;
  words?: number | undefined;
}

/**
 * A moderator's "False positive" on a member's flag, kept for the clearing window (clearings.ts):
 * ids, a date and the cleared judgment's scores, nothing else.
 */
export interface Clearing {
  flagId: string;
  authorId: string;
  channelId: string;
  reviewerId: string;
  clearedAt: number;
  probability: number;
  words: number;
}

/** The answer of `reserveCard`: a card may be posted (its place in the hour), or why not. */
export type CardReservation = { ok: true; slot: number; cap: number; hourEndsAt: number } | { ok: false; reason: 'author_window' | 'cap' };

export interface ReviewResult {
  /** False when another moderator answered first (the flag keeps their outcome). */
  applied: boolean;
  flag: FlagRecord;
}

/** Counts for one channel over one period; the report prints them. */
export interface ChannelCounts {
  scored: number;
  /** Messages each preset would have flagged. */
  byPreset: Record<Preset, number>;
  /** Flags under the preset in force when each was scored, by what happened to them. */
  cards: Record<CardState, number>;
  outcomes: Record<Outcome, number>;
}

export interface ReportData {
  /** Per channel id: the last 7 days and the last 30 days (today and the 6 or 29 UTC days before). */
  channels: Map<string, { week: ChannelCounts; month: ChannelCounts }>;
}

export function emptyCounts(): ChannelCounts {
  return {
    scored: 0,
    byPreset: { strict: 0, standard: 0, loose: 0 },
    cards: { shadow: 0, posted: 0, author_window: 0, cap: 0, cleared: 0, failed: 0 },
    outcomes: { confirmed: 0, false_positive: 0, dismissed: 0 },
  };
}

/**
 * The judgment behind a flag: of the author's recent messages in the channel (`author`, the
 * author-level score of POST /v1/detect/author), or of the one message (`message`).
 */
export interface Judgment {
  basis: 'author' | 'message';
  probability: number;
  verdict: Verdict;
  /**
   * The answer's headline (`origin`: AI-written, the author's own text polished by an AI, partly
   * AI-written, …), for the card only; the store keeps the verdict.
   */
  origin: Origin;
  /** With `origin: partly_ai`, the share of the words that look generated. */
  generatedShare?: number | null | undefined;
  confidence: Confidence;
  warnings: string[];
  mode: Mode;
  requestId: string;
  model: string;
  messagesUsed: number;
  wordsUsed: number;
  /**
   * Up to three most AI-like messages (author basis: with their ids, for links) or sentences
   * (message basis); for the card only, never stored.
   */
  highlights: { text: string; probability: number; messageId?: string | undefined; threadId?: string | undefined }[];
}

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** UTC day number of a time, the report's bucket. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}
