/** Texts the watching tests post, and the least evidence the engine judges an author on. */
import { AI_TEXTS } from '../../demo/texts.ts';
import { createDetector } from '../../src/detector/index.ts';

export { AI_TEXTS };

/**
 * The fewest of AI_TEXTS, posted in order, that the engine (the one the service loads) calls their
 * author likely_ai on; under the evidence floor (40 words together) it answers `mixed` with
 * `too_little_evidence`, which no preset flags.
 */
export const ENGINE_MIN_MESSAGES = await (async () => {
  const engine = await createDetector();
  const n = AI_TEXTS.findIndex((_, i) => engine.detectAuthor(AI_TEXTS.slice(0, i + 1)).verdict === 'likely_ai') + 1;
  if (n === 0) throw new Error('No prefix of AI_TEXTS is likely_ai as an author: the fixtures no longer test watching.');
  return n;
})();
export const HUMAN_TEXT =
  'ok so i finally got the raid team together last night and honestly it was a mess lol. tank disconnected twice, our healer was eating pizza the whole time and kept forgetting to heal, and i died to the same dumb fire thing like four times. still we got the boss down at like 2am so whatever, worth it. anyone up for tonight? i can do 9ish my time';
