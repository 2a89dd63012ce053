import { ORIGIN_WORDS } from '../../src/words.ts';

/**
 * A post in a member's own words followed by a generated paragraph about the same thing: the text
 * the CLI and both bots' tests check the "Partly AI-written" headline with (issue 31, item 4).
 */
export const HUMAN_POST =
  'ok so i finally tried that ramen place on 5th that everyone keeps talking about. honestly the broth was kinda salty for me but my friend loved it. ' +
  'we waited like 40 min to get a table which was annoying, and parking was a nightmare. probably wont go back unless someone drags me there lol.';

export const GENERATED_PARAGRAPH =
  'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
  'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
  'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
  'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';

/**
 * Any verdict headline a surface shows (src/words.ts), for tests of the bots' plumbing whose point
 * is that a check was answered, not what it said: their posts were written for the tests by an AI
 * assistant, which the assistant head (src/detector/assistant.ts) may read as such.
 */
export const VERDICT_HEADLINE = new RegExp(
  Object.values(ORIGIN_WORDS)
    .map((w) => w.label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
);
