/**
 * What a review card says about the judgment behind a flag, worded once for both bots: its title
 * and its reading follow the answer's headline (`origin`), so a moderator sees whether the member's
 * messages read as written by an AI or as their own writing an AI polished (a non-native writer who
 * had their English fixed is not someone who posts generated text), not only the verdict.
 */
import type { Judgment } from './types.ts';
import { ORIGIN_WORDS, originHeadline } from '../../../src/words.ts';

/** The card's title, without markup: why it was raised, in the words of the headline, and the headline's emoji. */
export function cardTitle(j: Pick<Judgment, 'basis' | 'origin'>): { emoji: string; text: string } {
  const emoji = ORIGIN_WORDS[j.origin].emoji;
  if (j.basis === 'author') {
    return {
      emoji,
      text:
        j.origin === 'ai_polished'
          ? 'Flag for review: this member’s recent messages read as their own writing, polished by an AI'
          : 'Flag for review: this member’s recent messages look AI-written',
    };
  }
  if (j.origin === 'ai_polished')
    return { emoji, text: 'Flag for review: a message that reads as the author’s own text, polished by an AI' };
  if (j.origin === 'partly_ai') return { emoji, text: 'Flag for review: a partly AI-written message' };
  return { emoji, text: 'Flag for review: possible AI-written message' };
}

/** The reading under the title: the headline with its emoji (and, for partly AI-written, the share). */
export function cardReading(j: Pick<Judgment, 'origin' | 'generatedShare'>): string {
  return originHeadline(j.origin, j.generatedShare);
}

/** The card's colour (0xRRGGBB), the headline's. */
export function cardColour(j: Pick<Judgment, 'origin'>): number {
  return ORIGIN_WORDS[j.origin].colour;
}

/** The name of the reading's field on both cards. */
export const READING_FIELD = 'Reads as';
