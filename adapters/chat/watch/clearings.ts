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
 * A clearing that moderators contradicted holds nothing back: when, within the window, they confirmed
 * as many of the member's flags as they cleared, the answers disagree and the member is carded on the
 * usual rules (a single mistaken "False positive" on a member who does post AI text, moderators'
 * answers being wrong now and then, must not hide them for a month).
 *
 * Such a card says that the member was cleared before, by whom and when, so the moderator weighs the
 * new evidence against their colleague's answer. A flag held back is recorded with the card state
 * `cleared` and counted in the report. Only ids, the date and the cleared judgment's probability and
 * words are kept (store: `watch_clearings`), until the window ends or the scope's data is deleted.
 */
import type { Clearing, Judgment } from './types.ts';
import { formatPercent } from '../../../src/words.ts';

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

/**
 * What to do with a flag about a member, given their clearings in force and how many of their flags
 * moderators confirmed in the same window: `card` (naming the clearings), or `hold`.
 */
export function decideAfterClearings(
  judgment: Pick<Judgment, 'probability' | 'wordsUsed'>,
  clearings: readonly Clearing[],
  confirmed = 0,
): { action: 'card' | 'hold'; clearings: Clearing[] } {
  if (clearings.length === 0) return { action: 'card', clearings: [] };
  // Answers that disagree: as many confirmations as clearings, and the clearing does not stand.
  if (confirmed >= clearings.length) return { action: 'card', clearings: [...clearings] };
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
  const why = clearings.every((c) => strongerThan(judgment, c))
    ? `This judgment is clearly stronger (${formatPercent(judgment.probability)}, ${judgment.wordsUsed} words), so it is shown again.`
    : 'Moderators also confirmed flags of this member since, so the clearing does not hold it back.';
  return `This member’s earlier flag was marked false positive ${each.join(' and ')}. ${why}`;
}

/** The title of that line on a card. */
export const CLEARING_TITLE = 'Cleared before';
