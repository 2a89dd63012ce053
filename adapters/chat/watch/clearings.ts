/**
 * What a moderator's "False positive" teaches the watcher: the member was cleared, so for the
 * clearing window (`WATCH_CLEAR_DAYS`, 30 by default, 0 off) a new flag about them in the same
 * scope gets no card, in cards-on and in shadow-mode channels alike, unless the new judgment is
 * clearly stronger than every clearing still in force:
 *
 * - more evidence: at least half as many words again as the cleared judgment read, and at least
 *   `MIN_EXTRA_WORDS` more (a member's next judgment usually reads a message or two more; that alone
 *   is the same evidence, not stronger evidence), and
 * - a probability at least as high as the cleared one.
 *
 * Such a card says that the member was cleared before, by whom and when, so the moderator weighs the
 * new evidence against their colleague's answer. A flag held back is recorded with the card state
 * `cleared` and counted in the report. Only ids, the date and the cleared judgment's probability and
 * words are kept (store: `watch_clearings`), until the window ends or the scope's data is deleted.
 */
import { formatPercent } from '../format.ts';
import type { Clearing, Judgment } from './types.ts';

/** The fewest extra words a judgment needs over a cleared one to count as stronger. */
export const MIN_EXTRA_WORDS = 20;
/** The factor of the cleared judgment's words a stronger judgment needs. */
export const WORDS_FACTOR = 1.5;

/** True when `judgment` is clearly stronger than the one `clearing` cleared. */
export function strongerThan(
  judgment: Pick<Judgment, 'probability' | 'wordsUsed'>,
  clearing: Pick<Clearing, 'probability' | 'words'>,
): boolean {
  const words = Math.max(Math.ceil(clearing.words * WORDS_FACTOR), clearing.words + MIN_EXTRA_WORDS);
  return judgment.wordsUsed >= words && judgment.probability >= clearing.probability;
}

/** What to do with a flag about a member, given their clearings in force: `card` (with the clearings to name), or `hold`. */
export function decideAfterClearings(
  judgment: Pick<Judgment, 'probability' | 'wordsUsed'>,
  clearings: readonly Clearing[],
): { action: 'card' | 'hold'; clearings: Clearing[] } {
  if (clearings.length === 0) return { action: 'card', clearings: [] };
  return { action: clearings.every((c) => strongerThan(judgment, c)) ? 'card' : 'hold', clearings: [...clearings] };
}

export interface ClearingMarkup {
  /** A moderator, never a mention that notifies. */
  person(id: string): string;
  date(ms: number): string;
}

/**
 * The line a card raised despite earlier clearings carries, worded once for both bots:
 * "Marked false positive by … on … (73%, 120 words); this judgment reads more (…)".
 */
export function clearingNote(
  clearings: readonly Clearing[],
  judgment: Pick<Judgment, 'probability' | 'wordsUsed'>,
  markup: ClearingMarkup,
): string {
  const each = clearings.map(
    (c) => `by ${markup.person(c.reviewerId)} on ${markup.date(c.clearedAt)} (${formatPercent(c.probability)}, ${c.words} words)`,
  );
  return `This member’s earlier flag was marked false positive ${each.join(' and ')}. This judgment is clearly stronger (${formatPercent(judgment.probability)}, ${judgment.wordsUsed} words), so it is shown again.`;
}

/** The title of that line on a card. */
export const CLEARING_TITLE = 'Cleared before';
