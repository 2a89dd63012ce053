import { describe, expect, it } from 'vitest';
import { hasTells, injectTells, stripTells } from '../../scripts/lib/tells.ts';

const TEXT =
  'The meeting ran long again. We agreed to move the deadline to Friday. Nobody was happy about it, but the client asked for more time. I will send the notes tomorrow. Then we can plan the launch.';
const words = (t: string): string[] => t.toLowerCase().match(/[a-z]+/g) ?? [];

describe('the v5 family’s word tells', () => {
  it('puts the same tells into a text for the same seed, and other ones for another', () => {
    expect(hasTells(TEXT)).toBe(false);
    const a = injectTells(TEXT, 'corpus-1');
    expect(injectTells(TEXT, 'corpus-1')).toBe(a);
    expect(hasTells(a)).toBe(true);
    const seeds = Array.from({ length: 20 }, (_, i) => injectTells(TEXT, `corpus-${i}`));
    expect(new Set(seeds).size).toBeGreaterThan(10);
  });

  it('adds only tells: taking them out again gives back every word of the text, in order', () => {
    for (let i = 0; i < 50; i++) {
      const injected = injectTells(TEXT, `seed-${i}`);
      const back = stripTells(injected);
      expect(hasTells(back), injected).toBe(false);
      expect(words(back)).toEqual(words(TEXT));
    }
  });

  it('takes out the openers only at a sentence start, and capitalises what follows', () => {
    expect(stripTells('Ok so the build failed. I think so too, honestly.')).toBe('The build failed. I think so too, .');
  });
});
