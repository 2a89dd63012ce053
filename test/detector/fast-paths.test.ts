/**
 * The detector's fast paths against plain reference implementations written here, on the shipped
 * model: each is a speed-up only, so its numbers must be the plain way's bit for bit (a test with a
 * tolerance would let a changed score through). The character LM pair has its own in charlm.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readArtifact } from '../../src/detector/artifact.ts';
import {
  DENSE_NAMES,
  HASH_DIM,
  HASHED_DOCUMENT,
  HASHED_STRIDE,
  NUM_TOKEN,
  extractFeatures,
  fnv,
  hashedWeightSums,
  isFunctionWord,
  isWordToken,
  maskRuns,
  mix,
  quantiles,
  scanTokens,
  sparseFeatures,
  tokenIds,
  tokenize,
  tokenizeByRegExp,
  Vocabulary,
  type FeatureVector,
} from '../../src/detector/features.ts';
import { DEFAULT_MODEL_PATH } from '../../src/detector/index.ts';
import { blankNoise, evidenceWords, isSpaceCode, languageEvidence, languageEvidenceOfWords } from '../../src/detector/language.ts';
import { BOS, BigramPair, UNK } from '../../src/detector/lm.ts';
import { LoadedModel, linearScore, linearScorePair } from '../../src/detector/model.ts';
import { assistantSparseSum, type AssistantHead } from '../../src/detector/assistant.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { EV_FUNCTION_WORDS, logSumExp, sentenceEvidence } from '../../src/detector/segments.ts';

const { header, arrays } = readArtifact(DEFAULT_MODEL_PATH);
const model = new LoadedModel(header, arrays);

const TEXTS: Array<[string, 'en' | 'tr']> = [
  [
    'The committee reviewed the proposal in detail and concluded that further analysis of the budget is required before a decision can be made. The committee met again in 2024; the committee agreed.',
    'en',
  ],
  ['honestly i just dont get why ppl keep saying that lol, it was fine?? 10/10 would go again. ***** said so too', 'en'],
  ['In conclusion, it is important to note that these findings highlight the need for a comprehensive approach.', 'en'],
  ['Bugün hava çok güzel; parka gidip biraz yürüyüş yaptık, sonra eve döndük. İstanbul’da ışıklar yandı.', 'tr'],
  ['§ 12 (3): {x} ← [y] — 2024-05-01 @ 09:15 #tag ½ ✓', 'en'],
  ['a', 'en'],
  ['', 'en'],
];

// The hashes are the features' own (fnv, mix): what the plain way below checks is the counting, not them.
/** Each character 3–5-gram's mixed hash, the plain way: every n-gram reads and folds its own characters. */
function plainCharGrams(masked: string, visit: (hash: number) => void): void {
  for (let i = 0; i + 3 <= masked.length; i++) {
    let h = 0x811c9dc5;
    for (let j = 0; j < 5 && i + j < masked.length; j++) {
      let c = masked.charCodeAt(i + j);
      if (c >= 0x30 && c <= 0x39) c = 0x30;
      else if (c === 0x0a) c = 0x20;
      h = Math.imul(h ^ c, 0x01000193);
      if (j >= 2) visit(mix(h ^ (j * 0x3c6ef372)));
    }
  }
}

/** Hashed word 1–2-grams and character 3–5-grams as the plain way counts them: a Map per block, in first-seen order. */
function plainSparse(masked: string, tokens: readonly string[]): { idx: number[]; val: number[] } {
  const idx: number[] = [];
  const val: number[] = [];
  const flush = (counts: Map<number, number>) => {
    const roots = new Map<number, number>();
    let norm = 0;
    for (const [j, c] of counts) {
      const v = Math.fround(Math.sqrt(c));
      roots.set(j, v);
      norm += Math.sqrt(c) * Math.sqrt(c);
    }
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (const [j, v] of roots) {
      idx.push(j);
      val.push(Math.fround(v * inv));
    }
  };
  const words = new Map<number, number>();
  const add = (m: Map<number, number>, h: number) => m.set(h & (HASH_DIM - 1), (m.get(h & (HASH_DIM - 1)) ?? 0) + 1);
  let prev = 0x9747b28c;
  for (const tok of tokens) {
    const h = fnv(tok);
    add(words, mix(h ^ 0x1b873593));
    add(words, mix(Math.imul(prev, 0x01000193) ^ h ^ 0x5bd1e995));
    prev = h;
  }
  flush(words);
  const chars = new Map<number, number>();
  plainCharGrams(masked, (h) => add(chars, h));
  flush(chars);
  return { idx, val };
}

const lowerOf = (text: string, language: 'en' | 'tr') => lowerForFeatures(normalize(text).text, language);

describe('detector fast paths give the plain way’s numbers exactly', () => {
  it('sparse features: counted in a small table, as with a map per block (first-seen order, same values)', () => {
    // The last text has far more distinct features than the table starts with, so it grows.
    const long = Array.from({ length: 400 }, (_, i) => `word${i} and ${String.fromCharCode(0x61 + (i % 26))}x${i * 7} here.`).join(' ');
    for (const [text, language] of [...TEXTS, [long, 'en'] as [string, 'en']]) {
      const masked = maskRuns(lowerOf(text, language));
      const tokens = tokenize(lowerOf(text, language));
      const fast = sparseFeatures(masked, tokens);
      const plain = plainSparse(masked, tokens);
      expect([...fast.idx], text.slice(0, 40)).toEqual(plain.idx);
      expect([...fast.val], text.slice(0, 40)).toEqual(plain.val);
    }
  });

  it('word bigrams: the pair table answers each model’s own logProb', () => {
    const pair = new BigramPair(model.lm.human, model.lm.ai);
    for (const [text, language] of TEXTS) {
      const ids = tokenIds(tokenize(lowerOf(text, language)), model.lm.vocab);
      for (let t = 1; t < ids.length; t++) {
        pair.logProbs(ids[t - 1]!, ids[t]!);
        expect([pair.h, pair.a]).toEqual([model.lm.human.logProb(ids[t - 1]!, ids[t]!), model.lm.ai.logProb(ids[t - 1]!, ids[t]!)]);
      }
    }
    // Unknown and start-of-text contexts, and every kept bigram of the AI model with its human value.
    for (const [prev, cur] of [
      [UNK, 5],
      [BOS, UNK],
      [BOS, 7],
      [UNK, UNK],
    ] as const) {
      pair.logProbs(prev, cur);
      expect([pair.h, pair.a]).toEqual([model.lm.human.logProb(prev, cur), model.lm.ai.logProb(prev, cur)]);
    }
    const keys = model.lm.ai.arrays.keys;
    for (let i = 0; i < keys.length; i += 97) {
      const prev = keys[i]! >>> 16;
      const cur = keys[i]! & 0xffff;
      pair.logProbs(prev, cur);
      expect([pair.h, pair.a]).toEqual([model.lm.human.logProb(prev, cur), model.lm.ai.logProb(prev, cur)]);
    }
  });

  it('repetition: the share of repeated token bigrams and trigrams as two maps count it', () => {
    const bi = DENSE_NAMES.indexOf('rep_bigram');
    const tri = DENSE_NAMES.indexOf('rep_trigram');
    for (const [text, language] of TEXTS) {
      const lower = lowerOf(text, language);
      const ids = tokenIds(tokenize(lower), model.lm.vocab);
      const n = ids.length;
      let expected = [0, 0];
      if (n >= 4) {
        const seenBi = new Set<number>();
        const seenTri = new Set<number>();
        let b = 0;
        let t = 0;
        for (let i = 2; i < n; i++) {
          const kb = ids[i - 1]! * 65536 + ids[i]!;
          const kt = (ids[i - 2]! * 65536 + ids[i - 1]!) * 65536 + ids[i]!;
          if (seenBi.has(kb)) b++;
          if (seenTri.has(kt)) t++;
          seenBi.add(kb);
          seenTri.add(kt);
        }
        expected = [b / (n - 2), t / (n - 2)];
      }
      const f = extractFeatures(lower, language, model.lm);
      expect([f.dense[bi], f.dense[tri]], text.slice(0, 40)).toEqual(expected);
    }
  });

  it('moving type/token ratio: words numbered once and counted in an array, as a map of words counts them', () => {
    const at = DENSE_NAMES.indexOf('mattr');
    const long = Array.from({ length: 120 }, (_, i) => ['the', 'cat', `w${i % 37}`, 'sat', `x${i % 11}`][i % 5]).join(' ');
    // Words out of the vocabulary (numbered by their text) among words in it (numbered by id).
    const mixed = Array.from({ length: 90 }, (_, i) => ['zqvx', `qqj${i % 7}`, 'and', 'blorft', 'the', '7', 'şimdi'][i % 7]).join(' ');
    const extra: Array<[string, 'en' | 'tr']> = [
      [long, 'en'],
      [mixed, 'en'],
      [mixed, 'tr'],
    ];
    for (const [text, language] of [...TEXTS, ...extra]) {
      const lower = lowerOf(text, language);
      const words = tokenize(lower).filter((t) => t.length > 1 || /\p{L}/u.test(t));
      let expected = 0;
      if (words.length > 0 && words.length <= 50) expected = new Set(words).size / words.length;
      else if (words.length > 50) {
        const counts = new Map<string, number>();
        const add = (word: string, by: number) => counts.set(word, (counts.get(word) ?? 0) + by);
        for (const word of words.slice(0, 50)) add(word, 1);
        const distinct = () => [...counts.values()].filter((c) => c > 0).length;
        let total = distinct();
        let windows = 1;
        for (let i = 50; i < words.length; i++) {
          add(words[i - 50]!, -1);
          add(words[i]!, 1);
          total += distinct();
          windows++;
        }
        expected = total / windows / 50;
      }
      expect(extractFeatures(lower, language, model.lm).dense[at], text.slice(0, 40)).toBe(expected);
    }
  });

  it('function words: a token in the vocabulary checked by its id, as the word list checks its text', () => {
    const at = DENSE_NAMES.indexOf('function_words');
    const mixed = Array.from({ length: 90 }, (_, i) => ['zqvx', 'however', 'and', 'blorft', 'The', '7', 've', 'için', 'bir'][i % 9]).join(
      ' ',
    );
    const texts: Array<[string, 'en' | 'tr']> = [...TEXTS, [mixed, 'en'], [mixed, 'tr']];
    for (const [text, language] of texts) {
      const lower = lowerOf(text, language);
      const tokens = tokenize(lower);
      let words = 0;
      let numbers = 0;
      let fw = 0;
      for (const tok of tokens) {
        if (!isWordToken(tok)) continue;
        words++;
        if (tok === NUM_TOKEN) numbers++;
        else if (isFunctionWord(tok, language)) fw++;
      }
      expect(extractFeatures(lower, language, model.lm).dense[at], `${language} ${text.slice(0, 40)}`).toBe(
        fw / Math.max(1, words - numbers),
      );
      // The sentences' evidence counts them the same way.
      const plainSentence = tokens.filter((tok) => isWordToken(tok) && isFunctionWord(tok, language)).length;
      expect(sentenceEvidence(lower, language, model.lm, model.weights.sparse)[EV_FUNCTION_WORDS], text.slice(0, 40)).toBe(plainSentence);
    }
  });

  it('language evidence words: plain lower-case chunks read directly, as the regular expressions read them', () => {
    // The words as the regular expressions alone find them (RE_NOISE blanks nothing in these texts).
    const plain = (text: string): string[] => {
      const chunks = text.match(/\S+/gu) ?? [];
      let capitals = 0;
      for (const chunk of chunks) if (/^[("'“‘«¿¡]*\p{Lu}/u.test(chunk)) capitals++;
      const namesByCase = capitals <= 0.5 * chunks.length;
      const out: string[] = [];
      let sentenceStart = true;
      for (const chunk of chunks) {
        const core = /^[("'“‘«¿¡]*(\p{L}+(?:['’]\p{L}+)*)([.,;:!?)"'”’»…]*)$/u.exec(chunk);
        const endsSentence = /[.!?…:]["'”’»)]*$/u.test(chunk) || /^[-–—•*>]+$/.test(chunk);
        if (core) {
          const word = core[1]!;
          const ch = String.fromCodePoint(word.codePointAt(0)!);
          if (ch === ch.toLowerCase() || sentenceStart || !namesByCase)
            out.push(
              word
                .toLowerCase()
                .replace(/’/g, "'")
                .replace(/\u0307/g, ''),
            );
        }
        sentenceStart = endsSentence;
      }
      return out;
    };
    const chunks = [
      'end.',
      'end."',
      'end.")',
      'end.)',
      'end:',
      'end…',
      'end”',
      'end’.',
      "word's",
      "don't",
      "abc'",
      'x.y',
      'a...',
      'hello,',
      'ok?!',
      'ok")',
      'ok).',
      'ok.».',
      'é',
      'café.',
      'Zed',
      'ab1',
      'ab-cd',
      '—',
      '-',
      '(the',
      'the)',
      'it;',
      'so»',
      'İstanbul',
      'ıı',
    ];
    const texts = [
      ...TEXTS.map(([text]) => text),
      chunks.join(' '),
      chunks.map((c) => `Name ${c} then Other words`).join(' '),
      [...chunks].reverse().join(' Next '),
      'SHOUTING TEXT WITH a few lower words. AND Names',
    ];
    for (const text of texts) expect(evidenceWords(text), text.slice(0, 40)).toEqual(plain(text));
    // Identification's counts read in place, as counting evidenceWords' words one by one gives them.
    const more = [
      ...texts,
      'bu bir deneme ve çok güzel, ama değil mi? Ich weiß, daß es für dich ist. the of and zwischen werden',
      'Ünal İstanbul’da. ¿Qué? «Le» ¡Hola! “The” ‘dog’ (And) "so" \'it\' Ärger Ωmega 𝐀bc x\u00a0y\u2003z\u3000w\ufeffv',
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa zwischenzwischen thethe the. THE. The) tHe',
      '',
      '   ',
      'A B C D e f',
    ];
    for (const text of more) {
      const cleaned = blankNoise(text);
      expect(languageEvidence(cleaned), text.slice(0, 40)).toEqual(languageEvidenceOfWords(evidenceWords(text)));
    }
  });

  it('white space: the code units \\s matches, as the regular expression says', () => {
    for (let c = 0; c < 0x10000; c++) expect(isSpaceCode(c), `U+${c.toString(16)}`).toBe(/\s/u.test(String.fromCharCode(c)));
  });

  it('language noise: a text with none of its characters is left as it is, as the regular expression leaves it', () => {
    const RE_NOISE = /```[\s\S]*?(?:```|$)|`[^`\n]*`|\b(?:https?:\/\/|www\.)\S+|(?<!\S)\S[^\s@]*@\S[^\s.]*\.\S+|[@#][\p{L}\p{N}_.-]+/gu;
    const texts = [
      ...TEXTS.map(([text]) => text),
      'see https://example.com/x or http://a.b and www.example.org today',
      'WWW.EXAMPLE.ORG HTTPS://EXAMPLE.COM ftp://host.example',
      'mail ada@example.com, @bob and #tag_1; `inline` code',
      '```\nfenced\n``` after',
      'a@b.c',
      '#',
      '@',
      '`',
      'www.',
      '://',
      'plain text, no noise at all: 3.5 kg; “quoted” — dash',
    ];
    for (const text of texts) expect(blankNoise(text), text.slice(0, 40)).toBe(text.replace(RE_NOISE, ' '));
  });

  it('tokens: read by the characters’ classes, as the regular expression matches them', () => {
    const texts = [
      ...TEXTS.map(([text, language]) => maskRuns(lowerOf(text, language))),
      "don't can't rock'n'roll o'' 'tis x'1 a'b'c' it's'",
      '3.14 1,000,000 12:30 1. 2.. 3.a .5 ,6 7: 8:9:10 ٣٤٥ ½ ² 42nd a1b2',
      'e\u0301cole \u0301start ñ ü ß ı İ ǅ ʰ 中文 한국어 ﬁ',
      'tab\tnew\nline\u00a0nbsp\u2003em\u3000ideo\ufeffbom\u200bzwsp — – … “ ” ‘ ’ « » ¿ ¡ © ® ™ € $ % & * + = < > | ~ ^',
      '',
      '   ',
      "'",
      "a'",
      '1.',
    ];
    for (const text of texts) expect(scanTokens(text), JSON.stringify(text.slice(0, 40))).toEqual(tokenizeByRegExp(text));
    // A code point outside the BMP is left to the regular expression.
    expect(scanTokens('emoji 😀 here')).toBeUndefined();
    expect(tokenize('emoji 😀 here')).toEqual(tokenizeByRegExp('emoji 😀 here'));
  });

  it('vocabulary: the hashed table answers as a Map of each word to its position', () => {
    const plain = new Map(header.vocab.map((word, id) => [word, id] as [string, number]));
    const table = new Vocabulary(header.vocab);
    expect(table.size).toBe(plain.size);
    for (const word of header.vocab) expect(table.get(word), word).toBe(plain.get(word));
    const others = [
      ...TEXTS.flatMap(([text, language]) => tokenize(lowerOf(text, language))),
      ...header.vocab.slice(0, 2000).flatMap((w) => [`${w}s`, w.slice(1), w.toUpperCase(), `${w}\u0307`]),
      '',
      '😀',
      'ı',
      NUM_TOKEN,
    ];
    for (const token of others) expect(table.get(token), token).toBe(plain.get(token));
    // A word listed twice answers with its last position, as Map.set leaves it.
    const twice = new Vocabulary(['a', 'b', 'a', 'c']);
    expect([twice.get('a'), twice.get('b'), twice.get('c'), twice.get('d'), twice.size]).toEqual([2, 1, 3, undefined, 3]);
    // And the ids a text is scored with are those of the plain Map.
    for (const [text, language] of TEXTS) {
      const tokens = tokenize(lowerOf(text, language));
      expect([...tokenIds(tokens, model.lm.vocab)], text.slice(0, 40)).toEqual([...tokenIds(tokens, plain)]);
    }
  });

  it('percentiles: the 90th selected among what the 10th left above it, as interpolating a sorted copy gives', () => {
    const plain = (values: Float64Array, q: number): number => {
      if (values.length === 0) return 0;
      const sorted = [...values].sort((a, b) => a - b);
      const pos = q * (sorted.length - 1);
      const lo = Math.floor(pos);
      const a = sorted[lo]!;
      const b = sorted[Math.min(sorted.length - 1, lo + 1)]!;
      return a + (b - a) * (pos - lo);
    };
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    // Above 601 values the selection first selects within a sample (Floyd and Rivest); sorted,
    // reversed and constant inputs are the classic bad cases of a selection.
    for (const n of [0, 1, 2, 3, 5, 9, 10, 11, 20, 57, 300, 600, 601, 602, 603, 1000, 1799, 2500, 4000, 12000]) {
      for (const kind of ['spread', 'ties', 'zeros', 'sorted', 'reversed', 'constant']) {
        const values = Float64Array.from({ length: n }, (_, i) =>
          kind === 'spread'
            ? (random() - 0.6) * 9
            : kind === 'ties'
              ? Math.round(random() * 4) / 2
              : kind === 'zeros'
                ? random() < 0.5
                  ? -0
                  : 0
                : kind === 'sorted'
                  ? i / 7
                  : kind === 'reversed'
                    ? (n - i) / 7
                    : 1.5,
        );
        const before = [...values];
        expect(quantiles(values), `${kind} ${n}`).toEqual([plain(values, 0.1), plain(values, 0.9)]);
        expect([...values]).toEqual(before);
      }
    }
  });

  it('linear models: the document model’s and the polish head’s sums in one pass, as linearScore sums each; the polish answer the same either way', () => {
    const polish = (model as unknown as { polish: Parameters<typeof linearScore>[1] }).polish;
    // The assistant head's column of the table sums as its own weights do (0 for a model without the head).
    const head = (model as unknown as { assistant: AssistantHead | undefined }).assistant;
    const assistantHashedSum = (f: FeatureVector): number => (head ? assistantSparseSum(head.linear.sparse, f) : 0);
    const long = Array.from({ length: 60 }, (_, i) => TEXTS[i % 5]![0]).join(' ');
    for (const [text, language] of [...TEXTS, [long, 'en'] as [string, 'en']]) {
      const lower = lowerOf(text, language);
      const f = extractFeatures(lower, language, model.lm);
      expect(linearScorePair(f, model.weights, polish), text.slice(0, 40)).toEqual([
        linearScore(f, model.weights),
        linearScore(f, polish),
        0,
      ]);
      // The interleaved table holds the same weights: the same sums, and the same short-text lexical feature.
      expect(linearScorePair(f, model.weights, polish, model.lm.hashed), text.slice(0, 40)).toEqual([
        linearScore(f, model.weights),
        linearScore(f, polish),
        linearScorePair(f, model.weights, polish, model.lm.hashed)[2],
      ]);
      const plainLex = extractFeatures(lower, language, { ...model.lm, hashed: undefined });
      expect(linearScorePair(f, model.weights, polish, model.lm.hashed)[2], text.slice(0, 40)).toBe(assistantHashedSum(f));
      expect([...f.dense], text.slice(0, 40)).toEqual([...plainLex.dense]);
      // A training vector (no tokens) is summed on its own; a run-time one shares the pass with rawLogit.
      const runtime = model.features(lower, language);
      const raw = model.rawLogit(runtime);
      expect(raw).toBe(model.rawLogit(f));
      expect(model.polishedProbability(runtime, lower, raw), text.slice(0, 40)).toBe(model.polishedProbability(f, lower, raw));
    }
  });

  it('hashed weight sums: the characters folded once, as reading each n-gram’s characters gives', () => {
    const sparse = model.weights.sparse;
    const plain = (lower: string) => {
      let char = 0;
      let charN = 0;
      plainCharGrams(maskRuns(lower), (h) => {
        char += sparse[h & (HASH_DIM - 1)]!;
        charN++;
      });
      return { char, charN };
    };
    for (const [text, language] of [...TEXTS, ['Line one 42\nline two 7.5; ***** masked', 'en'] as [string, 'en']]) {
      const lower = lowerOf(text, language);
      const sums = hashedWeightSums(lower, tokenize(lower), sparse);
      expect({ char: sums.char, charN: sums.charN }, text.slice(0, 40)).toEqual(plain(lower));
      // Read from the interleaved table (`LMContext.hashed`), as the sentence model does: the same sums.
      expect(hashedWeightSums(lower, tokenize(lower), model.lm.hashed!, HASHED_STRIDE, HASHED_DOCUMENT), text.slice(0, 40)).toEqual(sums);
    }
  });

  it('hashed weight sums: the assistant head’s column, taken in the same pass, is what summing it alone gives', () => {
    const head = arrays['assistant.sparse'] as Float32Array;
    const family = model.assistantColumn!;
    expect(family).toBeDefined();
    let read = 0;
    for (const [text, language] of TEXTS) {
      const lower = lowerOf(text, language);
      const tokens = tokenize(lower);
      const both = hashedWeightSums(lower, tokens, model.lm.hashed!, HASHED_STRIDE, HASHED_DOCUMENT, family);
      const alone = hashedWeightSums(lower, tokens, head);
      expect({ familyWord: both.familyWord, familyChar: both.familyChar }, text.slice(0, 40)).toEqual({
        familyWord: alone.word,
        familyChar: alone.char,
      });
      // The document model's sums are the same as without the column.
      expect({ ...both, familyWord: 0, familyChar: 0 }).toEqual(
        hashedWeightSums(lower, tokens, model.lm.hashed!, HASHED_STRIDE, HASHED_DOCUMENT),
      );
      // The plain array the sentence model is trained with gives what the interleaved table gives.
      const plain = hashedWeightSums(lower, tokens, model.weights.sparse, 1, 0, { sparse: head, stride: 1, offset: 0 });
      expect(plain).toEqual(both);
      read += Math.abs(alone.word) + Math.abs(alone.char);
    }
    expect(read).toBeGreaterThan(0);
  });

  it('log-sum-exp: one exp where the larger term is exp(0) = 1, as computing both gives', () => {
    const plain = (x: number, y: number) => {
      const m = x > y ? x : y;
      if (m === -Infinity) return m;
      return m + Math.log(Math.exp(x - m) + Math.exp(y - m));
    };
    const values = [0, -0, 1e-300, -1e-12, 0.5, -0.5, 3, -3, -40, -745, -746, 700, 709, 710, -1e308, Infinity, -Infinity, Number.NaN];
    let seed = 11;
    for (let i = 0; i < 300; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      values.push((seed / 2 ** 32 - 0.5) * 200);
    }
    const differ: string[] = [];
    for (const x of values) {
      for (const y of values.slice(0, 60)) {
        if (!Object.is(logSumExp(x, y), plain(x, y))) differ.push(`${x} ${y}`);
        if (!Object.is(logSumExp(y, x), plain(y, x))) differ.push(`${y} ${x}`);
      }
    }
    expect(differ).toEqual([]);
  });

  it('word tokens: one ASCII character answered directly, as \\p{L} answers it', () => {
    const singles = [...Array.from({ length: 0x250 }, (_, c) => String.fromCharCode(c)), 'ı', 'ş', '—', '€', '中'];
    for (const tok of singles) expect(isWordToken(tok), `U+${tok.charCodeAt(0).toString(16)}`).toBe(/\p{L}/u.test(tok));
    expect([isWordToken(NUM_TOKEN), isWordToken('ab'), isWordToken('..')]).toEqual([true, true, true]);
  });
});
