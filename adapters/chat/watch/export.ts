/**
 * Reviewed flags as JSON Lines, for an operator who measures the detector on their own community
 * (`/detect-settings export-reviews` on Discord, `npm run export:reviews` against either database).
 * One object per reviewed flag: ids, scores, the verdict, the moderator's outcome, the preset in
 * force, which presets would have flagged it, and dates. Never a text or a name: the store has none.
 */
import { PRESET_BITS } from './presets.ts';
import { PRESETS, type FlagRecord } from './types.ts';

export interface ExportedReview {
  scope: string;
  channel_id: string;
  message_id: string;
  thread_id: string | null;
  author_id: string;
  flag_id: string;
  request_id: string;
  ai_probability: number;
  verdict: string;
  confidence: string | null;
  words: number | null;
  /** The preset in force when it was scored; null in records from before it was kept. */
  preset: string | null;
  /** Every preset that would have flagged the same score. */
  flagged_by: string[];
  card: string;
  outcome: string;
  reviewer_id: string | null;
  posted_at: string;
  reviewed_at: string | null;
}

export function exportedReview(flag: FlagRecord): ExportedReview {
  return {
    scope: flag.scope,
    channel_id: flag.channelId,
    message_id: flag.messageId,
    thread_id: flag.threadId ?? null,
    author_id: flag.authorId,
    flag_id: flag.flagId,
    request_id: flag.requestId,
    ai_probability: flag.probability,
    verdict: flag.verdict,
    confidence: flag.confidence ?? null,
    words: flag.words ?? null,
    preset: flag.preset ?? null,
    flagged_by: PRESETS.filter((p) => (flag.presets & PRESET_BITS[p]) !== 0),
    card: flag.card,
    outcome: flag.outcome ?? 'unreviewed',
    reviewer_id: flag.reviewerId ?? null,
    posted_at: new Date(flag.postedAt).toISOString(),
    reviewed_at: flag.reviewedAt === undefined ? null : new Date(flag.reviewedAt).toISOString(),
  };
}

/** The flags as JSON Lines (each line ends with a newline; empty for none). */
export function reviewsJsonl(flags: readonly FlagRecord[]): string {
  return flags.map((f) => `${JSON.stringify(exportedReview(f))}\n`).join('');
}
