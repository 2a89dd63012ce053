/**
 * Member checks, the platform-neutral part: which of a member's recent messages are sent to
 * `POST /v1/detect/author` (through the bots' queue), and which are left out and why. Each bot reads
 * the history its own way (adapters/discord/history.ts, adapters/slack/history.ts) and renders the
 * answer with the wording of format.ts.
 *
 * Why judge the member: most chat messages are too short for a verdict of their own, while a
 * member's messages together carry enough evidence (issue 17).
 */
import { AUTHOR_MAX_MESSAGES } from '../../src/contract.ts';
import type { LeftOutReason } from './format.ts';
import type { RenderedText } from './markup.ts';
import type { ScopeSettings } from './store/types.ts';

/** How much of a member's history a check reads: their latest `maxMessages` messages within `days`. */
export interface HistoryWindow {
  maxMessages: number;
  days: number;
}

export const DEFAULT_HISTORY_WINDOW: Readonly<HistoryWindow> = { maxMessages: 50, days: 30 };

/**
 * Bounds of the per-server/workspace setting. Fewer than 5 messages read leave little room above the
 * engine's least evidence for a verdict (40 words of scorable messages together, EVIDENCE_FLOOR_WORDS
 * in src/contract.ts) once links, emoji and commands are left out; more than AUTHOR_MAX_MESSAGES do not fit one request, and
 * a year is as far back as a moderator's question about "recent" messages reasonably goes.
 */
export const HISTORY_LIMITS = { minMessages: 5, maxMessages: AUTHOR_MAX_MESSAGES, minDays: 1, maxDays: 365 } as const;

/**
 * Most channel messages (of anyone) a check reads before it stops looking: in a busy channel a quiet
 * member's 50 messages may lie far back, and each page is one platform API call.
 */
export const MAX_SCANNED_MESSAGES = 1000;

/** The window of a server or workspace: its `/detect-settings history`, else the defaults. */
export function historyWindowOf(settings: ScopeSettings | undefined): HistoryWindow {
  const clamp = (value: number | undefined, min: number, max: number, fallback: number): number =>
    value === undefined || !Number.isInteger(value) ? fallback : Math.min(max, Math.max(min, value));
  return {
    maxMessages: clamp(
      settings?.historyMessages,
      HISTORY_LIMITS.minMessages,
      HISTORY_LIMITS.maxMessages,
      DEFAULT_HISTORY_WINDOW.maxMessages,
    ),
    days: clamp(settings?.historyDays, HISTORY_LIMITS.minDays, HISTORY_LIMITS.maxDays, DEFAULT_HISTORY_WINDOW.days),
  };
}

/** A checked value of the history setting, or the sentence that says what to type instead. */
export type HistorySettingValue = { ok: true; value: number } | { ok: false; problem: string };

export function checkHistoryMessages(value: number): HistorySettingValue {
  if (!Number.isInteger(value) || value < HISTORY_LIMITS.minMessages || value > HISTORY_LIMITS.maxMessages) {
    return {
      ok: false,
      problem: `The number of messages must be a whole number from ${HISTORY_LIMITS.minMessages} to ${HISTORY_LIMITS.maxMessages} (one check carries at most ${HISTORY_LIMITS.maxMessages}).`,
    };
  }
  return { ok: true, value };
}

export function checkHistoryDays(value: number): HistorySettingValue {
  if (!Number.isInteger(value) || value < HISTORY_LIMITS.minDays || value > HISTORY_LIMITS.maxDays) {
    return { ok: false, problem: `The number of days must be a whole number from ${HISTORY_LIMITS.minDays} to ${HISTORY_LIMITS.maxDays}.` };
  }
  return { ok: true, value };
}

/** "the last 50 messages within 30 days", for settings overviews. */
export function describeHistoryWindow(window: HistoryWindow): string {
  return `the member's last ${window.maxMessages} messages within ${window.days} day${window.days === 1 ? '' : 's'}`;
}

/** One message of the member, as read from the platform, newest first in a history. */
export interface MemberMessage {
  /** Platform id (Discord snowflake, Slack ts). */
  id: string;
  /** When it was posted, ms since the epoch. */
  at: number;
  /** What is scored (markup rendered, mentions/code/addresses left out); '' when left out. */
  text: string;
  /** What readers see, for quoting in the reply. */
  readable: string;
  /** Jump link / permalink, when known without another call. */
  link?: string | undefined;
  /** Set when the bot leaves the message out before the call. */
  leftOut?: LeftOutReason | undefined;
}

/**
 * Chat commands typed as text (`!rank`, `?help`, `.play song`, `/giphy cats`, `;;skip`): other
 * bots' syntax, not prose. A sentence that starts with punctuation (`...well`, `?!`, `~~struck~~`,
 * `.NET is…`) is kept: a lower-case command word must follow the prefix directly.
 */
export function looksLikeCommand(text: string): boolean {
  return /^(?:[!?.$%;&+=-]{1,2}|\/)\p{Ll}[\p{L}\p{N}_-]*(?:\s|$)/u.test(text.trim());
}

/**
 * Why a rendered message has nothing to score, or undefined when it has words. `attachments`
 * counts files, images and stickers (their words, if any, are not the member's prose).
 */
export function emptyReason(rendered: RenderedText, attachments: number): LeftOutReason | undefined {
  if (rendered.text.trim() !== '') return undefined;
  if (attachments > 0) return 'attachments_only';
  if (rendered.excluded.links > 0 && rendered.excluded.codeBlocks === 0) return 'link_only';
  if (rendered.readable.trim() !== '') return 'no_prose';
  return 'empty';
}

/** What a member check sends, and what it leaves out. */
export interface MessageSelection {
  /** Sent to the engine, in this order (newest first); request `messages[i]` is `send[i].text`. */
  send: MemberMessage[];
  /** Counts of messages the bot left out, by reason. */
  leftOut: Map<LeftOutReason, number>;
}

/** The service's default limits on one author request (AUTHOR_MAX_MESSAGE_CHARS, AUTHOR_MAX_TOTAL_CHARS). */
export const DEFAULT_AUTHOR_LIMITS = { maxMessageChars: 10_000, maxTotalChars: 50_000 } as const;

/** Cuts an over-long message at a word boundary: its first part is still the member's writing. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max);
  return text.slice(0, cut > max / 2 ? cut : max);
}

/**
 * Picks what to send from the member's messages (newest first): the ones with words, newest first,
 * each cut to `maxMessageChars`, until `maxTotalChars` (the service's limits on one request) would
 * be exceeded; the older rest are counted as `over_size`.
 */
export function selectMessages(
  messages: readonly MemberMessage[],
  limits: { maxMessageChars: number; maxTotalChars: number } = DEFAULT_AUTHOR_LIMITS,
): MessageSelection {
  const maxTotalChars = limits.maxTotalChars;
  const leftOut = new Map<LeftOutReason, number>();
  const count = (reason: LeftOutReason): void => {
    leftOut.set(reason, (leftOut.get(reason) ?? 0) + 1);
  };
  const send: MemberMessage[] = [];
  let chars = 0;
  for (const message of messages) {
    if (message.leftOut) {
      count(message.leftOut);
      continue;
    }
    const text = clip(message.text, limits.maxMessageChars);
    if (send.length >= AUTHOR_MAX_MESSAGES || chars + text.length > maxTotalChars) {
      count('over_size');
      continue;
    }
    send.push(text === message.text ? message : { ...message, text });
    chars += text.length;
  }
  return { send, leftOut };
}
