/**
 * The v5 family's word tells (DATA.md, "v5 data"): "honestly", "actually", "genuinely", "lol"
 * anywhere, and the openers "so", "ok", "okay", "basically", "yeah" at a sentence start. People write
 * them too, so a reader keyed on them flags the people who write that way and misses an assistant
 * told to avoid them.
 *
 * `stripTells` takes them out (`npm run eval:mirrors -- --strip-tells` measures the gap);
 * `injectTells` puts some into a person's text, so that `npm run train:assistant` can show the head
 * people who write that way, and bound it on them.
 */
import { rng, stableHash } from '../../src/detector/training.ts';

/** The tells written anywhere, and the ones that open a sentence: the one list a new family edits. */
const ANYWHERE = 'honestly|actually|genuinely|lol';
const OPENING = 'so|ok|okay|basically|yeah';
const RE_ANYWHERE = new RegExp(`\\b(${ANYWHERE})\\b,?\\s*`, 'gi');
const RE_OPENING = new RegExp(`(^|(?<=[.!?]\\s))(${OPENING})\\b,?\\s*`, 'gi');
const RE_ANY_TELL = new RegExp(`\\b(${ANYWHERE})\\b|(^|[.!?]\\s)(${OPENING})\\b`, 'i');

/** The text without the family's word tells, a sentence start capitalised again where one was cut. */
export function stripTells(text: string): string {
  let out = text.replace(RE_ANYWHERE, '');
  // Openers come in runs ("ok so"): each one taken out leaves the next at the sentence start.
  for (let before = ''; before !== out; ) {
    before = out;
    out = out.replace(RE_OPENING, '');
  }
  return out.replace(/(^|(?<=[.!?]\s))([a-z])/g, (_, start: string, c: string) => start + c.toUpperCase());
}

/** Whether a text holds any of the tells. */
export function hasTells(text: string): boolean {
  return RE_ANY_TELL.test(text);
}

const OPENERS = ['So', 'Ok so', 'Okay', 'Basically', 'Yeah', 'Honestly'];
const ADVERBS = ['honestly', 'actually', 'genuinely'];

/**
 * `text` with the tells a casual writer puts in: about one sentence in three gets an opener, an
 * adverb after its first word, or a "lol" at its end (at least one sentence gets one). Deterministic
 * for a given `seed` (the text's id).
 */
export function injectTells(text: string, seed: string): string {
  const random = rng(stableHash(seed));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const sentences = text.split(/(?<=[.!?])\s+/);
  const chosen = sentences.map(() => random() < 1 / 3);
  if (!chosen.includes(true)) chosen[Math.floor(random() * sentences.length)] = true;
  return sentences
    .map((s, i) => {
      if (!chosen[i] || !/[\p{L}]/u.test(s)) return s;
      const kind = random();
      if (kind < 0.4) return `${pick(OPENERS)} ${s.charAt(0).toLowerCase()}${s.slice(1)}`;
      if (kind < 0.75) return s.replace(/^(\S+)(\s+)/, (_, first: string, space: string) => `${first} ${pick(ADVERBS)}${space}`);
      return s.replace(/([.!?]*)$/, (end: string) => ` lol${end}`);
    })
    .join(' ');
}
