/**
 * What the bots say about what reviews teach them (clearings.ts, precision.ts), worded once for
 * both bots; each passes the command as typed on its platform.
 */
import { MIN_EXTRA_WORDS, WORDS_FACTOR } from './clearings.ts';
import { DEFAULT_PRECISION_BOUND, MIN_REVIEWS } from './precision.ts';

/** What "False positive" does, and what is kept for it. */
export function learningStatement(clearDays: number): string {
  if (clearDays === 0) {
    return 'Clearings are off in this bot (`WATCH_CLEAR_DAYS=0`): a member marked false positive is flagged again on the usual rules, and nothing is kept for it.';
  }
  return `After a moderator marks a flag *False positive*, that member gets no new card here for ${clearDays} days (nor a shadow-mode flag) unless a new judgment is clearly stronger: at least ${WORDS_FACTOR}× the words of the cleared one (and ${MIN_EXTRA_WORDS} more) and a probability at least as high; such a card says who cleared the member and when. Kept for it: the member, flag and moderator ids, the date, the cleared probability and word count, never a text.`;
}

export function precisionBoundSet(bound: number | null): string {
  const shown = Math.round(100 * (bound ?? DEFAULT_PRECISION_BOUND));
  return `A channel whose moderators confirm less than ${shown}% of its reviewed flags (over ${MIN_REVIEWS} reviews or more) now gets a stricter preset suggested in the report and the review channel${bound === null ? ' (the default bound)' : ''}. The preset changes only when an admin applies it.`;
}

export function precisionBoundUsage(command: string): string {
  return `Use ${command} with a share from 0.01 to 1 (e.g. 0.8 or 80%), or default (${DEFAULT_PRECISION_BOUND}).`;
}

export function clearingsForgotten(count: number): string {
  return `Forgot ${count} clearing${count === 1 ? '' : 's'}: members moderators marked false positive get cards again on the usual rules. Scores and review outcomes stay.`;
}

export function presetApplied(preset: string, description: string, bold: (text: string) => string): string {
  return `Watched messages are now flagged with the ${bold(preset)} preset: ${description}. The report shows what each preset would have flagged.`;
}
