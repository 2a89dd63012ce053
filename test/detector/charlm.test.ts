import { describe, expect, it } from 'vitest';
import { readArtifact } from '../../src/detector/artifact.ts';
import { CHAR_SYMBOLS, CharLM, CharLMPair, buildCharLM, charSymbols } from '../../src/detector/charlm.ts';
import { DEFAULT_MODEL_PATH } from '../../src/detector/index.ts';
import { charLMFrom } from '../../src/detector/model.ts';

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

/**
 * The pair's shared tables are a speed-up only: each model's log p per symbol, and the sums the
 * features take of them (in symbol order), must be exactly what the model scored alone gives.
 */
function expectPairMatchesSingles(human: CharLM, ai: CharLM, texts: readonly string[]): void {
  const pair = new CharLMPair(human, ai);
  for (const text of texts) {
    const s = charSymbols(text);
    const n = s.length;
    const alone = (lm: CharLM) => {
      const lp = new Float64Array(n);
      const mu = new Float64Array(n);
      const s2 = new Float64Array(n);
      lm.score(s, lp, mu, s2);
      let sum = 0;
      let muSum = 0;
      let s2Sum = 0;
      for (let i = 0; i < n; i++) {
        sum += lp[i]!;
        muSum += mu[i]!;
        s2Sum += s2[i]!;
      }
      return { lp, sum, muSum, s2Sum };
    };
    const h = alone(human);
    const a = alone(ai);
    const lpH = new Float64Array(n);
    const lpA = new Float64Array(n);
    const [sumH, sumA] = pair.score(s, lpH, lpA);
    expect([...lpH], text).toEqual([...h.lp]);
    expect([...lpA], text).toEqual([...a.lp]);
    expect([sumH, sumA, ...pair.moments], text).toEqual([h.sum, a.sum, h.muSum, h.s2Sum, a.muSum, a.s2Sum]);
  }
}

describe('character LM pair', () => {
  it('scores two models with different contexts and orders exactly as each alone', () => {
    // Different texts, pruning and orders, so that each model has contexts and n-grams the other lacks.
    const human = new CharLM(buildCharLM(TEXTS.slice(0, 2), { discount: 0.75, minCount: 1, order: 4 }));
    const ai = new CharLM(buildCharLM(TEXTS.slice(1), { discount: 0.6, minCount: 2, order: 3 }));
    expectPairMatchesSingles(human, ai, [...TEXTS, 'the cat sat on the log; the dog ran.', 'qqq zzz', 'şu an güzel', 'a', '']);
    expectPairMatchesSingles(ai, human, TEXTS);
  });

  it('scores the shipped models exactly as each alone', () => {
    const { arrays } = readArtifact(DEFAULT_MODEL_PATH);
    const texts = [
      'The committee reviewed the proposal in detail and concluded that further analysis of the budget is required.',
      'honestly i just dont get why ppl keep saying that lol, it was fine?? 10/10 would go again',
      'In conclusion, it is important to note that these findings highlight the need for a comprehensive approach.',
      'Bugün hava çok güzel; parka gidip biraz yürüyüş yaptık, sonra eve döndük.',
      '§ 12 (3): {x} ← [y] — 2024-05-01 @ 09:15 #tag ½ ✓',
      // Longer than the positions whose slots are read ahead at a time.
      Array.from({ length: 300 }, (_, i) => `sentence ${i} talks about ${['cats', 'rivers', 'budgets', 'ideas'][i % 4]} again.`).join(' '),
    ];
    expectPairMatchesSingles(charLMFrom(arrays, 'char.human'), charLMFrom(arrays, 'char.ai'), texts);
  });
});
