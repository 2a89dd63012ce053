import { describe, expect, it } from 'vitest';
import { CHAR_SYMBOLS, CharLM, buildCharLM, charSymbols } from '../../src/detector/charlm.ts';

const TEXTS = [
  'the cat sat on the mat. the dog sat on the log.',
  'a cat and a dog; the end!',
  'the mat is flat, and the cat is fat.',
  'şu an çok güzel bir gün, değil mi?',
];

/** Every symbol the model can be asked about after `prefix`: its log p and the moments given there. */
function nextSymbol(lm: CharLM, prefix: string): { logp: number[]; mu: number; sigma2: number } {
  const logp: number[] = [];
  let mu = 0;
  let sigma2 = 0;
  // One representative character per symbol id (the alphabet and an unknown character).
  const reps = new Map<number, string>();
  for (const ch of 'abcdefghijklmnopqrstuvwxyz0 .,;:!?\'"()-/&%$*+=@#[]_çğıöşüâîûéèàäñ\u4e00') {
    const id = charSymbols(ch)[0]!;
    if (!reps.has(id)) reps.set(id, ch);
  }
  expect(reps.size).toBe(CHAR_SYMBOLS);
  for (const ch of reps.values()) {
    const s = charSymbols(prefix + ch);
    const lp = new Float64Array(s.length);
    const m = new Float64Array(s.length);
    const v = new Float64Array(s.length);
    lm.score(s, lp, m, v);
    logp.push(lp[s.length - 1]!);
    mu = m[s.length - 1]!;
    sigma2 = v[s.length - 1]!;
  }
  return { logp, mu, sigma2 };
}

describe('character LM', () => {
  for (const minCount of [1, 2]) {
    it(`is a distribution over the symbols after every context, with its moments (minCount ${minCount})`, () => {
      const lm = new CharLM(buildCharLM(TEXTS, { discount: 0.75, minCount, order: 4 }));
      for (const prefix of ['', 't', 'the c', 'the ca', 'xyzq', 'şu a', 'a cat and a d']) {
        const { logp, mu, sigma2 } = nextSymbol(lm, prefix);
        const p = logp.map(Math.exp);
        expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
        // μ and σ² are the mean and variance of log p under the same distribution.
        const m = p.reduce((a, pi, i) => a + pi * logp[i]!, 0);
        const e2 = p.reduce((a, pi, i) => a + pi * logp[i]! ** 2, 0);
        expect(mu).toBeCloseTo(m, 4);
        expect(sigma2).toBeCloseTo(e2 - m * m, 3);
      }
    });
  }

  it('predicts what it saw: the seen continuation is likelier than an unseen one', () => {
    const lm = new CharLM(buildCharLM(TEXTS, { discount: 0.75, minCount: 1, order: 4 }));
    const { logp } = nextSymbol(lm, 'the ca');
    const t = charSymbols('t')[0]!;
    const q = charSymbols('q')[0]!;
    expect(logp[t]).toBeGreaterThan(logp[q]! + 2);
  });

  it('folds digits into one symbol and line breaks into spaces', () => {
    expect([...charSymbols('2024')]).toEqual([...charSymbols('0000')]);
    expect([...charSymbols('a\nb')]).toEqual([...charSymbols('a b')]);
  });
});

describe('character LM scoring', () => {
  it('gives exactly the back-off the arrays define, read the plain way', () => {
    const arrays = buildCharLM(TEXTS, { discount: 0.75, minCount: 2, order: 4 });
    const lm = new CharLM(arrays);
    const ctxIndex = new Map([...arrays.ctxKeys].map((k, i) => [k, i]));
    const ngram = new Map([...arrays.keys].map((k, i) => [k, arrays.logp[i]!]));
    // p_k(c | h) is the stored value where the n-gram was kept, else γ(h) · p_(k−1)(c | h').
    const reference = (s: Uint8Array, t: number): number => {
      let lp = arrays.logUni[s[t]!]!;
      let packed = 0;
      for (let len = 1; len <= Math.min(4, t + 1); len++) {
        packed |= (t - len < 0 ? 127 : s[t - len]!) << (7 * (len - 1));
        const i = ctxIndex.get(((len << 28) | packed) >>> 0);
        if (i === undefined) break;
        const stored = ngram.get((((i + 1) << 7) | s[t]!) >>> 0);
        lp = stored !== undefined ? stored : arrays.ctxLogGamma[i]! + lp;
      }
      return lp;
    };
    for (const text of [...TEXTS, 'the cat sat on the log; the dog ran.', 'qqq zzz', 'şu an güzel', '']) {
      const s = charSymbols(text);
      const lp = new Float64Array(s.length);
      lm.score(s, lp, new Float64Array(s.length), new Float64Array(s.length));
      for (let t = 0; t < s.length; t++) expect(lp[t], `${text} @${t}`).toBe(reference(s, t));
    }
  });
});
