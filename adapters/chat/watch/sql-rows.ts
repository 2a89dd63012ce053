/**
 * What the two SQL watch stores (SQLite and PostgreSQL) read back from their rows: both tables have
 * the same columns, and a row must mean the same record whichever database answered.
 */
import type { Verdict } from '../../../src/contract.ts';
import {
  CARD_STATES,
  emptyCounts,
  OUTCOMES,
  PRESETS,
  type CardState,
  type ChannelCounts,
  type FlagRecord,
  type Outcome,
  type PendingItem,
  type ReportData,
} from './types.ts';

function optional(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}

export function pendingFromRow(row: Record<string, unknown>): PendingItem {
  return {
    scope: String(row.scope),
    channelId: String(row.channel_id),
    messageId: String(row.message_id),
    threadId: optional(row.thread_id),
    authorId: String(row.author_id),
    postedAt: Number(row.posted_at),
    enqueuedAt: Number(row.enqueued_at),
  };
}

export function flagFromRow(row: Record<string, unknown>): FlagRecord {
  return {
    flagId: String(row.flag_id),
    scope: String(row.scope),
    channelId: String(row.channel_id),
    messageId: String(row.message_id),
    threadId: optional(row.thread_id),
    authorId: String(row.author_id),
    postedAt: Number(row.posted_at),
    probability: Number(row.probability),
    verdict: String(row.verdict) as Verdict,
    requestId: String(row.request_id),
    card: String(row.card ?? 'failed') as CardState,
    cardId: optional(row.card_id),
    cardChannelId: optional(row.card_channel_id),
    outcome: optional(row.outcome) as Outcome | undefined,
    reviewerId: optional(row.reviewer_id),
    reviewedAt: row.reviewed_at === null || row.reviewed_at === undefined ? undefined : Number(row.reviewed_at),
  };
}

/**
 * Per channel, the counts of a report query's rows: `scored`, then `p_<preset>`, `c_<card state>`
 * and `o_<outcome>` columns (each database writes its own conditional counts).
 */
export function countsByChannel(rows: Iterable<Record<string, unknown>>): Map<string, ChannelCounts> {
  const out = new Map<string, ChannelCounts>();
  for (const row of rows) {
    const counts = emptyCounts();
    counts.scored = Number(row.scored);
    for (const p of PRESETS) counts.byPreset[p] = Number(row[`p_${p}`] ?? 0);
    for (const c of CARD_STATES) counts.cards[c] = Number(row[`c_${c}`] ?? 0);
    for (const o of OUTCOMES) counts.outcomes[o] = Number(row[`o_${o}`] ?? 0);
    out.set(String(row.channel_id), counts);
  }
  return out;
}

/** The report of the last 7 and 30 days; a channel with nothing in the week shows empty counts there. */
export function reportFrom(week: Map<string, ChannelCounts>, month: Map<string, ChannelCounts>): ReportData {
  const channels: ReportData['channels'] = new Map();
  for (const [channelId, counts] of month) channels.set(channelId, { week: week.get(channelId) ?? emptyCounts(), month: counts });
  return { channels };
}
