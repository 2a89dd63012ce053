/**
 * Feature extraction shared by training and run time (one code path, so the model sees at run
 * time exactly what it was trained on).
 *
 * Input is the lower-cased normalised text. Two kinds of features:
 * - dense: n-gram LM statistics (Ghostbuster-style), the Fast-DetectGPT analytic criterion under the
 *   human and the AI bigram model, and stylometry (burstiness, punctuation, function words,
 *   repetition). None of them is raw length, which differs between the classes of some sources.
 * - sparse: hashed word 1–2-grams and character 3–5-grams, each block sublinear-tf and L2-normalised.
 */
import { type CharLM, charLMPair, charSymbols } from './charlm.ts';
import { BOS, UNK, bigramPair, type BigramLM } from './lm.ts';
import { POS_FEATURE_NAMES, posFeatures, type PosContext } from './pos.ts';

export const HASH_BITS = 18;
export const HASH_DIM = 1 << HASH_BITS;
const HASH_MASK = HASH_DIM - 1;

export const DENSE_NAMES = [
  'lmH_mean',
  'lmH_std',
  'lmH_p10',
  'lmH_p90',
  'lmA_mean',
  'lmA_std',
  'lmA_p10',
  'lmA_p90',
  'diff_mean',
  'diff_std',
  'diff_p10',
  'diff_p90',
  'uniH_mean',
  'ctx_gain',
  'expected_H',
  'fdg_H',
  'fdg_A',
  'fdg_AH',
  'binoculars',
  'diff_freq',
  'diff_rare',
  'diff_maxwin',
  'sent_len_log',
  'sent_len_cv',
  'sent_len_maxratio',
  'word_len_mean',
  'word_len_std',
  'mattr',
  'p_comma',
  'p_semicolon',
  'p_colon',
  'p_question',
  'p_exclaim',
  'p_quote',
  'p_paren',
  'p_hyphen',
  'p_dash',
  'p_number',
  'function_words',
  'rep_bigram',
  'rep_trigram',
  'is_tr',
  ...POS_FEATURE_NAMES,
  'ch_H_mean',
  'ch_A_mean',
  'ch_diff_mean',
  'ch_diff_std',
  'ch_diff_p10',
  'ch_diff_p90',
  'ch_fdg_H',
  'ch_fdg_A',
  'ch_diff_maxwin',
  'short_lex',
] as const;
export const DENSE_DIM = DENSE_NAMES.length;

/** Words with inner apostrophes, numbers, or a single non-space symbol. */
const RE_TOKEN = /\p{L}[\p{L}\p{M}]*(?:'\p{L}+)*|\p{N}+(?:[.,:]\p{N}+)*|[^\s\p{L}\p{N}\p{M}]/gu;
const RE_MASK = /\*{3,}/g;

export const NUM_TOKEN = '<num>';
/** Vocabulary ids below this are the ~300 most frequent tokens (function words, punctuation). */
const FREQ_IDS = 302;

/** Tokens of lower-cased text; numbers collapse to one token. Masking runs of `***` (site-anonymised names) are dropped. */
export function tokenize(lower: string): string[] {
  return tokenizeMasked(maskRuns(lower));
}

/** `tokenize` of a text whose masking runs are already blanked (`maskRuns`). */
export function tokenizeMasked(masked: string): string[] {
  return scanTokens(masked) ?? tokenizeByRegExp(masked);
}

/** `tokenizeMasked` by RE_TOKEN itself: the definition, which `scanTokens` answers as. */
export function tokenizeByRegExp(masked: string): string[] {
  const m = masked.match(RE_TOKEN);
  if (!m) return [];
  for (let i = 0; i < m.length; i++) {
    const c = m[i]!.charCodeAt(0);
    if ((c >= 0x30 && c <= 0x39) || (c > 0x7f && /^\p{N}/u.test(m[i]!))) m[i] = NUM_TOKEN;
  }
  return m;
}

const CLASS_L = 1;
const CLASS_M = 2;
const CLASS_N = 4;
const CLASS_SPACE = 8;
/** Per UTF-16 code unit (not a surrogate): which of \p{L}, \p{M}, \p{N}, \s it is, plus 16 once known (filled as met). */
const charClass = new Uint8Array(0x10000);
function classOf(c: number): number {
  let k = charClass[c]!;
  if (k === 0) {
    const ch = String.fromCharCode(c);
    k =
      16 |
      (/\p{L}/u.test(ch) ? CLASS_L : 0) |
      (/\p{M}/u.test(ch) ? CLASS_M : 0) |
      (/\p{N}/u.test(ch) ? CLASS_N : 0) |
      (/\s/u.test(ch) ? CLASS_SPACE : 0);
    charClass[c] = k;
  }
  return k;
}

/** Where the run of characters of the classes `mask` from `q` ends; -1 at a surrogate (scanTokens gives up). */
function runEnd(text: string, q: number, mask: number): number {
  const L = text.length;
  while (q < L) {
    const c = text.charCodeAt(q);
    if (c >= 0xd800 && c <= 0xdfff) return -1;
    if (!(classOf(c) & mask)) break;
    q++;
  }
  return q;
}

/**
 * RE_TOKEN's matches read by the characters' classes (`classOf`), numbers already `NUM_TOKEN`; undefined
 * for a text with a surrogate (a code point outside the BMP), which RE_TOKEN then reads. A match
 * starts with a letter (then letters and marks, then any number of `'` + letters), a digit (then
 * digits, then any number of `.`, `,` or `:` + digits) or one character that is none of letter,
 * digit, mark or white space; anything else starts none. The regular expression tried its three
 * alternatives at every position, about 3% of a 300-word `detect()`.
 */
export function scanTokens(text: string): string[] | undefined {
  const L = text.length;
  const out: string[] = [];
  let p = 0;
  while (p < L) {
    const c = text.charCodeAt(p);
    if (c >= 0xd800 && c <= 0xdfff) return undefined;
    const k = classOf(c);
    if (k & CLASS_L) {
      let q = runEnd(text, p + 1, CLASS_L | CLASS_M);
      while (q >= 0 && q + 1 < L && text.charCodeAt(q) === 0x27) {
        const d = text.charCodeAt(q + 1);
        if (d >= 0xd800 && d <= 0xdfff) return undefined;
        if (!(classOf(d) & CLASS_L)) break;
        q = runEnd(text, q + 2, CLASS_L);
      }
      if (q < 0) return undefined;
      out.push(text.slice(p, q));
      p = q;
    } else if (k & CLASS_N) {
      let q = runEnd(text, p + 1, CLASS_N);
      while (q >= 0 && q + 1 < L) {
        const sep = text.charCodeAt(q);
        if (sep !== 0x2e && sep !== 0x2c && sep !== 0x3a) break;
        const d = text.charCodeAt(q + 1);
        if (d >= 0xd800 && d <= 0xdfff) return undefined;
        if (!(classOf(d) & CLASS_N)) break;
        q = runEnd(text, q + 2, CLASS_N);
      }
      if (q < 0) return undefined;
      out.push(NUM_TOKEN);
      p = q;
    } else {
      if (!(k & (CLASS_M | CLASS_SPACE))) out.push(text[p]!);
      p++;
    }
  }
  return out;
}

/** Whether a token counts as a word (letters or a number) rather than punctuation. */
export function isWordToken(tok: string): boolean {
  if (tok === NUM_TOKEN || tok.length > 1) return true;
  return isLetterToken(tok);
}

/** Whether a one-character token is a letter: ASCII answered directly, the rest by `\p{L}`. */
function isLetterToken(tok: string): boolean {
  const c = tok.charCodeAt(0);
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
  return /\p{L}/u.test(tok);
}

const FUNCTION_WORDS: Record<'en' | 'tr', Set<string>> = {
  en: new Set(
    'the of and to a in is that it for was on are as with be by this have from or at not but an they which we you his her their has were been had there would will can all if more one its so what about also than into these them when some other should could our may such only who he she i my me do does did however therefore moreover furthermore thus while although because'.split(
      ' ',
    ),
  ),
  tr: new Set(
    've bir bu da de için ile çok ama gibi daha olarak ben bana beni benim ne mi mı mu mü o ki en her kadar sonra değil var yok olan şu diye ya veya hem ancak çünkü fakat tarafından bize biz siz sizin onun ise artık hiç bile şey ayrıca dolayı rağmen'
      // Spelled as lowerForFeatures leaves Turkish text: ı folded into i.
      .replace(/ı/g, 'i')
      .split(' '),
  ),
};

export interface LMContext {
  vocab: VocabLookup;
  human: BigramLM;
  ai: BigramLM;
  /** Per context: E and Var of log p_human under the AI model's next-token distribution. */
  cross: { mu: Float32Array; sigma2: Float32Array };
  /** Lexicon tagger and tag-trigram LMs (syntax-level features). */
  pos: PosContext;
  /** Character n-gram LMs, human and AI side: evidence that a few words already carry. */
  char: { human: CharLM; ai: CharLM };
  /** The short-text lexical model: weights over the hashed features, fitted on short texts only (see `short_lex`). */
  shortLex: ShortLexWeights;
  /**
   * At run time (`LoadedModel`), the hashed weights read at each feature of a text, interleaved:
   * at `HASHED_STRIDE * j` the short-text lexical model's weight of feature j (the same numbers as
   * `shortLex.weights`), then the document model's, the polish head's and the assistant head's (0
   * without one). A text's features are scattered over 2^18 indices, so each read is a likely cache
   * miss; with the four side by side, one line serves the four reads, the later ones
   * (`linearScorePair`, the sentences' sums) finding it already cached.
   */
  hashed?: Float32Array | undefined;
}

/** Weights per hashed feature in `LMContext.hashed`, and where each set sits in a feature's group. */
export const HASHED_STRIDE = 4;
export const HASHED_SHORT_LEX = 0;
export const HASHED_DOCUMENT = 1;
export const HASHED_POLISH = 2;
export const HASHED_ASSISTANT = 3;

export interface ShortLexWeights {
  bias: number;
  /** Per hashed feature (length HASH_DIM). */
  weights: Float32Array;
}

export interface FeatureVector {
  dense: Float64Array;
  /** Hashed feature indices (may repeat across blocks; values add). */
  idx: Int32Array;
  val: Float32Array;
  /** Number of word tokens (letters or digits), for the short-text rule. */
  words: number;
  /**
   * The text's tokens, their vocabulary ids (BOS first) and each token's word-LM evidence
   * (log p_AI − log p_human of its bigram), as the features read them: the polish head's own
   * signals read the same, so it need not tokenise and score the text a second time.
   */
  tokens?: TokenEvidence | undefined;
}

export interface TokenEvidence {
  tokens: string[];
  ids: Uint16Array;
  /** `diff[t]` for token t (its bigram with the token before it, BOS for the first). */
  diff: Float64Array;
}

// Scratch buffers: detection is synchronous and single-threaded, so one set suffices.
/**
 * Counts of one block's hashed features, in a small open-addressing table keyed by feature
 * index: a 300-word text touches a few thousand of the 2^18 indices, and a table that fits in
 * the core's cache counts them faster than an array of all 2^18. A slot is two words, the
 * feature index (−1 when free) and its count, so a probe reads one cache line. `touched` lists
 * the slots in the order their features were first seen, which is the order the features are
 * output (and their squares summed) in, as with a plain array of counts.
 */
let slots = new Int32Array(2 << 14).fill(-1);
let touched = new Int32Array(1 << 14);
let countMask = (1 << 14) - 1;
/** The output of `sparseFeatures` before it is copied out. */
let outIdx = new Int32Array(1 << 14);
let outVal = new Float32Array(1 << 14);
/** The characters of the text the character n-grams read, folded (digits to `0`, line breaks to spaces). */
let folded = new Uint16Array(4096);

/**
 * The characters of `text` as the character n-grams read them, in a scratch array: digits fold to
 * `0` (they are content, not style) and line breaks to spaces. Read and folded once, not once per
 * n-gram a character is in (up to five).
 */
function foldedChars(text: string): Uint16Array {
  if (text.length > folded.length) folded = new Uint16Array(text.length * 2);
  const chars = folded;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    chars[i] = c >= 0x30 && c <= 0x39 ? 0x30 : c === 0x0a ? 0x20 : c;
  }
  return chars;
}

/** Makes room for counting up to `adds` distinct features in one block and for `total` features out. */
function reserve(adds: number, total: number): void {
  if (adds * 2 > touched.length) {
    let cap = touched.length;
    while (cap < adds * 2) cap <<= 1;
    slots = new Int32Array(2 * cap).fill(-1);
    touched = new Int32Array(cap);
    countMask = cap - 1;
  }
  if (total > outIdx.length) {
    outIdx = new Int32Array(total * 2);
    outVal = new Float32Array(total * 2);
  }
}

/** Adds one occurrence of feature `j`; returns the number of distinct features so far. */
function count(j: number, distinct: number): number {
  let h = Math.imul(j, 0x9e3779b1) & countMask;
  for (;;) {
    const at = h << 1;
    const k = slots[at]!;
    if (k === j) {
      slots[at + 1]!++;
      return distinct;
    }
    if (k === -1) {
      slots[at] = j;
      slots[at + 1] = 1;
      touched[distinct] = h;
      return distinct + 1;
    }
    h = (h + 1) & countMask;
  }
}

/** FNV-1a of a token or character n-gram, unsigned: the hashed features' first step. */
export function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A finalising mix of a hash, so its low bits pick a hashed feature or a table slot evenly. */
export function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Hoare's selection with the middle value as pivot, which the features were defined with: it stays
 * for values with a NaN, where "the k-th smallest" is not defined and `select` could answer
 * otherwise (the log-ratios have none: they are differences of finite log-probabilities).
 */
function selectHoare(a: Float64Array, k: number, lo = 0, hi = a.length - 1): number {
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

/**
 * The k-th smallest value (0-based) of `a[lo..hi]`, reordering it so that what is left of k is no
 * larger and what is right of it no smaller (Floyd and Rivest's selection: on a long range it first
 * selects within a sample around where k should fall, so the pivot partitioning the range lands
 * close to k; Hoare's selection with the middle value as pivot read the ~1,800 character log-ratios
 * about three times per percentile, with a mispredicted branch on about every other value). Any
 * selection gives the same value, the k-th smallest.
 */
function select(a: Float64Array, k: number, lo = 0, hi = a.length - 1): number {
  let left = lo;
  let right = hi;
  while (right > left) {
    if (right - left > 600) {
      const n = right - left + 1;
      const m = k - left + 1;
      const z = Math.log(n);
      const s = 0.5 * Math.exp((2 * z) / 3);
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (m - n / 2 < 0 ? -1 : 1);
      select(a, k, Math.max(left, Math.floor(k - (m * s) / n + sd)), Math.min(right, Math.floor(k + ((n - m) * s) / n + sd)));
    }
    const t = a[k]!;
    let i = left;
    let j = right;
    a[k] = a[left]!;
    a[left] = t;
    if (a[right]! > t) {
      a[left] = a[right]!;
      a[right] = t;
    }
    while (i < j) {
      const x = a[i]!;
      a[i] = a[j]!;
      a[j] = x;
      i++;
      j--;
      while (a[i]! < t) i++;
      while (a[j]! > t) j--;
    }
    if (a[left] === t) {
      const x = a[left]!;
      a[left] = a[j]!;
      a[j] = x;
    } else {
      j++;
      const x = a[j]!;
      a[j] = a[right]!;
      a[right] = x;
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
  return a[k]!;
}

/**
 * The q-quantile of `values` as linear interpolation between the two order statistics around
 * q·(n − 1), by selection rather than a sort (reorders `values`). Per text there are a few hundred
 * word and ~6 times as many character log-ratios, and sorting them was a large part of a call.
 * `from`: values[0 .. from) are already the `from` smallest (a selection made them so), so the
 * order statistic is looked for in values[from ..] alone (q·(n − 1) must be at least `from`).
 */
function selectQuantile(values: Float64Array, q: number, from = 0, plain = false): number {
  if (values.length === 0) return 0;
  const pos = q * (values.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(values.length - 1, lo + 1);
  const a = plain ? selectHoare(values, lo, from) : select(values, lo, from);
  // After selecting lo, everything above index lo is ≥ a: the next order statistic is their minimum.
  let b = a;
  if (hi !== lo) {
    b = Number.POSITIVE_INFINITY;
    for (let i = lo + 1; i < values.length; i++) if (values[i]! < b) b = values[i]!;
  }
  return a + (b - a) * (pos - lo);
}

let quantileScratch = new Float64Array(4096);
/** The 10th and 90th percentiles of `values` (left as they are). */
export function quantiles(values: Float64Array): [number, number] {
  if (values.length > quantileScratch.length) quantileScratch = new Float64Array(values.length * 2);
  const copy = quantileScratch.subarray(0, values.length);
  copy.set(values);
  let nan = false;
  for (let i = 0; i < copy.length; i++) if (Number.isNaN(copy[i]!)) nan = true;
  const p10 = selectQuantile(copy, 0.1, 0, nan);
  // Selecting the 10th percentile left the smallest tenth at the front: the 90th is among the rest.
  return [p10, selectQuantile(copy, 0.9, Math.floor(0.1 * (values.length - 1)), nan)];
}

function meanStd(values: Float64Array): [number, number] {
  const n = values.length;
  if (n === 0) return [0, 0];
  let s = 0;
  for (let i = 0; i < n; i++) s += values[i]!;
  const m = s / n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (values[i]! - m) ** 2;
  return [m, Math.sqrt(v / n)];
}

/**
 * Moves the counted block into the output from position `at` with sqrt-tf and L2 normalisation
 * (a count's square root is kept at float32 precision, as the features' values are, and its
 * square summed unrounded); returns the new output length. The table is read once, in the
 * first-seen order, and the output then scaled in place.
 */
function flushBlock(distinct: number, at: number): number {
  let norm = 0;
  for (let i = 0; i < distinct; i++) {
    const slot = touched[i]! << 1;
    const v = Math.sqrt(slots[slot + 1]!);
    norm += v * v;
    outIdx[at + i] = slots[slot]!;
    // Float32 storage rounds it as the features' values are rounded.
    outVal[at + i] = v;
    slots[slot] = -1;
  }
  const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = at; i < at + distinct; i++) outVal[i] = outVal[i]! * inv;
  return at + distinct;
}

/** What `tokenIds` needs of a vocabulary: a `Map` (training builds one), or the loaded model's `Vocabulary`. */
export interface VocabLookup {
  get(token: string): number | undefined;
  readonly size: number;
}

/**
 * Token → id of a model's vocabulary, answering as a `Map` of its words to their positions does
 * (a word listed twice has its last position). A `Map` of tens of thousands of strings costs a
 * text's tokens three scattered memory reads each (bucket, entry, key); here a token's own hash
 * picks a slot holding that hash and the id, so a probe is one read, and the word itself is read
 * only to confirm a match.
 */
export class Vocabulary implements VocabLookup {
  readonly size: number;
  private readonly words: readonly string[];
  /** Per slot: the word's hash and its id (−1: free). */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(words: readonly string[]) {
    this.words = words;
    let cap = 2;
    while (cap < words.length * 2) cap <<= 1;
    this.slots = new Int32Array(2 * cap).fill(-1);
    this.mask = cap - 1;
    let size = 0;
    for (let id = 0; id < words.length; id++) {
      const word = words[id]!;
      const hash = vocabHash(word);
      let h = mix(hash) & this.mask;
      for (;;) {
        const at = h << 1;
        const other = this.slots[at + 1]!;
        if (other === -1) {
          this.slots[at] = hash;
          this.slots[at + 1] = id;
          size++;
          break;
        }
        if (this.slots[at] === hash && words[other] === word) {
          this.slots[at + 1] = id;
          break;
        }
        h = (h + 1) & this.mask;
      }
    }
    this.size = size;
  }

  get(token: string): number | undefined {
    const hash = vocabHash(token);
    let h = mix(hash) & this.mask;
    for (;;) {
      const at = h << 1;
      const id = this.slots[at + 1]!;
      if (id === -1) return undefined;
      if (this.slots[at] === hash && this.words[id] === token) return id;
      h = (h + 1) & this.mask;
    }
  }
}

/** `fnv` of a word as a signed 32-bit integer (what an Int32Array slot holds). */
function vocabHash(s: string): number {
  return fnv(s) | 0;
}

export function tokenIds(tokens: string[], vocab: VocabLookup): Uint16Array {
  const ids = new Uint16Array(tokens.length + 1);
  ids[0] = BOS;
  for (let i = 0; i < tokens.length; i++) ids[i + 1] = vocab.get(tokens[i]!) ?? UNK;
  return ids;
}

/** Per-token log p under each word LM and their difference (scratch: detection is single-threaded). */
let wordScratch = new Float64Array(3 * 1024);

/**
 * `keepTokens`: also return the tokens and their evidence (`FeatureVector.tokens`), which the polish
 * head reads at run time; training leaves them out, as it holds tens of thousands of vectors.
 */
export function extractFeatures(lower: string, language: 'en' | 'tr', lm: LMContext, keepTokens = false): FeatureVector {
  const masked = maskRuns(lower);
  const tokens = tokenizeMasked(masked);
  const ids = tokenIds(tokens, lm.vocab);
  const n = tokens.length;
  const dense = new Float64Array(DENSE_DIM);

  // --- n-gram LM statistics ---
  if (3 * n > wordScratch.length) wordScratch = new Float64Array(6 * n);
  const lh = wordScratch.subarray(0, n);
  const la = wordScratch.subarray(n, 2 * n);
  const diff = wordScratch.subarray(2 * n, 3 * n);
  let uniSum = 0;
  let muH = 0,
    s2H = 0,
    muA = 0,
    s2A = 0,
    muX = 0,
    s2X = 0;
  const X = lm.cross;
  const H = lm.human.arrays;
  const A = lm.ai.arrays;
  const bigrams = bigramPair(lm.human, lm.ai);
  for (let t = 1; t <= n; t++) {
    const prev = ids[t - 1]!;
    const cur = ids[t]!;
    bigrams.logProbs(prev, cur);
    const h = bigrams.h;
    const a = bigrams.a;
    lh[t - 1] = h;
    la[t - 1] = a;
    diff[t - 1] = a - h;
    uniSum += H.logUni[cur]!;
    muH += H.mu[prev]!;
    s2H += H.sigma2[prev]!;
    muA += A.mu[prev]!;
    s2A += A.sigma2[prev]!;
    muX += X.mu[prev]!;
    s2X += X.sigma2[prev]!;
  }
  const nn = Math.max(1, n);
  const [mH, sH] = meanStd(lh);
  const [mA, sA] = meanStd(la);
  const [mD, sD] = meanStd(diff);
  const [h10, h90] = quantiles(lh);
  const [a10, a90] = quantiles(la);
  const [d10, d90] = quantiles(diff);
  let sumH = 0,
    sumA = 0;
  for (let i = 0; i < n; i++) {
    sumH += lh[i]!;
    sumA += la[i]!;
  }
  let k = 0;
  dense[k++] = mH;
  dense[k++] = sH;
  dense[k++] = h10;
  dense[k++] = h90;
  dense[k++] = mA;
  dense[k++] = sA;
  dense[k++] = a10;
  dense[k++] = a90;
  dense[k++] = mD;
  dense[k++] = sD;
  dense[k++] = d10;
  dense[k++] = d90;
  dense[k++] = uniSum / nn;
  dense[k++] = mH - uniSum / nn;
  dense[k++] = muH / nn;
  // Fast-DetectGPT criterion, divided by √n so it does not grow with length.
  dense[k++] = n > 0 ? (sumH - muH) / Math.sqrt(s2H) / Math.sqrt(nn) : 0;
  dense[k++] = n > 0 ? (sumA - muA) / Math.sqrt(s2A) / Math.sqrt(nn) : 0;
  // Sampling model = AI LM, scoring model = human LM: does the text sit where AI text would, as seen by human text?
  dense[k++] = n > 0 ? (sumH - muX) / Math.sqrt(s2X) / Math.sqrt(nn) : 0;
  // Binoculars-style: human-LM log-perplexity over the AI→human cross-entropy.
  dense[k++] = n > 0 && muX < 0 ? sumH / muX : 1;
  // The AI−human log-ratio split by the predicted word: the most frequent words (ids are frequency
  // ranks) carry style and syntax; the rest carry topic, which in this corpus differs between
  // sources and so stands in for authorship when a generator is new.
  let fS = 0,
    fN = 0,
    rS = 0,
    rN = 0;
  for (let t = 1; t <= n; t++) {
    if (ids[t]! < FREQ_IDS && ids[t]! !== UNK) {
      fS += diff[t - 1]!;
      fN++;
    } else {
      rS += diff[t - 1]!;
      rN++;
    }
  }
  dense[k++] = fN > 0 ? fS / fN : 0;
  dense[k++] = rN > 0 ? rS / rN : 0;
  // The most AI-like stretch of 60 tokens (mean AI−human log-ratio): a generated part of a text
  // that also has human-written parts is diluted in the whole-text mean.
  dense[k++] = maxWindowMean(diff, 60, mD);
  // No out-of-vocabulary rate: it separates the classes only weakly (0.35 SD on dev) and a typo
  // attack moves it by 3 SD (misspellings are out of vocabulary), so it was mainly an evasion lever.

  // --- stylometry ---
  const sentLens: number[] = [];
  let cur = 0;
  let words = 0;
  let wordLenSum = 0,
    wordLenSq = 0;
  const punct = new Float64Array(10);
  let fw = 0;
  const fwIds = functionWordIds(lm.vocab, language);
  for (let t = 0; t < n; t++) {
    const tok = tokens[t]!;
    const c = tok.charCodeAt(0);
    if (isWordToken(tok)) {
      words++;
      cur++;
      if (tok === NUM_TOKEN) punct[9]! += 1;
      else {
        wordLenSum += tok.length;
        wordLenSq += tok.length * tok.length;
        const id = ids[t + 1]!;
        if (isFunctionWordAt(tok, id, fwIds, language)) fw++;
      }
      continue;
    }
    switch (c) {
      case 0x2e:
      case 0x21:
      case 0x3f: // . ! ?
        if (c === 0x3f) punct[3]! += 1;
        if (c === 0x21) punct[4]! += 1;
        if (cur > 0) sentLens.push(cur);
        cur = 0;
        break;
      case 0x2c:
        punct[0]! += 1;
        break;
      case 0x3b:
        punct[1]! += 1;
        break;
      case 0x3a:
        punct[2]! += 1;
        break;
      case 0x22:
        punct[5]! += 1;
        break;
      case 0x28:
      case 0x29:
        punct[6]! += 1;
        break;
      case 0x2d:
        punct[7]! += 1;
        break;
      case 0x2013:
      case 0x2014:
        punct[8]! += 1;
        break;
      default:
        break;
    }
  }
  if (cur > 0) sentLens.push(cur);
  const nw = Math.max(1, words);
  const sl = Float64Array.from(sentLens);
  const [slm, sls] = meanStd(sl);
  let slMax = 0;
  for (const v of sentLens) if (v > slMax) slMax = v;
  const plainWords = Math.max(1, words - punct[9]!);
  const wlm = wordLenSum / plainWords;
  dense[k++] = Math.log1p(slm);
  dense[k++] = slm > 0 ? sls / slm : 0;
  dense[k++] = slm > 0 ? Math.log(slMax / slm) : 0;
  dense[k++] = wlm;
  dense[k++] = Math.sqrt(Math.max(0, wordLenSq / plainWords - wlm * wlm));
  dense[k++] = mattr(tokens, ids, 50);
  for (let i = 0; i < 10; i++) dense[k++] = punct[i]! / nw;
  dense[k++] = fw / plainWords;
  const [rb, rt] = repetition(ids);
  dense[k++] = rb;
  dense[k++] = rt;
  dense[k++] = language === 'tr' ? 1 : 0;
  // The tagger is learnt from English (Brown): on Turkish its tags would describe word endings, not
  // syntax, and only separate the two Turkish sources' sites, so the block stays 0 there.
  if (language === 'en') k = posFeatures(tokens, ids, lm.pos, dense, k);
  else k += POS_FEATURE_NAMES.length;
  k = charFeatures(masked, lm.char, dense, k);

  const { idx, val } = sparseFeatures(masked, tokens);
  // The short-text lexical model's logit: what word and character n-grams say when they are
  // learnt from short texts alone, where the whole-text model's sparse weights are set mostly by
  // long texts. Cross-fitted in training like the LMs, so the classifier sees honest values.
  let lex = lm.shortLex.bias;
  const table = lm.hashed;
  if (table) for (let i = 0; i < idx.length; i++) lex += table[HASHED_STRIDE * idx[i]!]! * val[i]!;
  else for (let i = 0; i < idx.length; i++) lex += lm.shortLex.weights[idx[i]!]! * val[i]!;
  dense[k++] = lex;
  return { dense, idx, val, words, tokens: keepTokens ? { tokens, ids, diff: diff.slice() } : undefined };
}

/** The lower-cased text with its masking runs (`***`, site-anonymised names) blanked, as the character features read it. */
export function maskRuns(lower: string): string {
  return lower.replace(RE_MASK, ' ');
}

/**
 * The hashed sparse features of a lower-cased text (`masked` by `maskRuns`, `tokens` its tokens):
 * word 1–2-grams and character 3–5-grams, each block sublinear-tf and L2-normalised.
 */
export function sparseFeatures(masked: string, tokens: readonly string[]): { idx: Int32Array; val: Float32Array } {
  const L = masked.length;
  const wordAdds = 2 * tokens.length;
  const charAdds = 3 * L;
  // A block never has more distinct features than HASH_DIM, however long the text.
  reserve(Math.min(Math.max(wordAdds, charAdds), HASH_DIM), Math.min(wordAdds, HASH_DIM) + Math.min(charAdds, HASH_DIM));
  let distinct = 0;
  let prevHash = 0x9747b28c;
  for (const tok of tokens) {
    const h = fnv(tok);
    distinct = count(mix(h ^ 0x1b873593) & HASH_MASK, distinct);
    distinct = count(mix(Math.imul(prevHash, 0x01000193) ^ h ^ 0x5bd1e995) & HASH_MASK, distinct);
    prevHash = h;
  }
  let out = flushBlock(distinct, 0);
  distinct = 0;
  const chars = foldedChars(masked);
  for (let i = 0; i + 3 <= L; i++) {
    let h = 0x811c9dc5;
    const end = Math.min(5, L - i);
    for (let j = 0; j < end; j++) {
      h = Math.imul(h ^ chars[i + j]!, 0x01000193);
      if (j >= 2) distinct = count(mix(h ^ (j * 0x3c6ef372)) & HASH_MASK, distinct);
    }
  }
  out = flushBlock(distinct, out);
  return { idx: outIdx.slice(0, out), val: outVal.slice(0, out) };
}

// Detection is synchronous and single-threaded, so one scratch area serves every call.
let charScratch = new Float64Array(3 * 4096);
/**
 * Character-LM view: the per-character log-probability under the human and the AI character
 * model, their difference (mean, spread, 10th/90th percentile, and its most AI-like 200-character
 * stretch) and the Fast-DetectGPT criterion under each model, divided by √n like the word one.
 */
function charFeatures(text: string, lm: LMContext['char'], dense: Float64Array, k: number): number {
  const s = charSymbols(text);
  const n = s.length;
  if (n === 0) return k + 9;
  if (n > charScratch.length / 3) charScratch = new Float64Array(n * 6);
  const lh = charScratch.subarray(0, n);
  const la = charScratch.subarray(n, 2 * n);
  const diff = charScratch.subarray(2 * n, 3 * n);
  const pair = charLMPair(lm.human, lm.ai);
  const [sumH, sumA] = pair.score(s, lh, la);
  const muH = pair.moments[0]!;
  const s2H = pair.moments[1]!;
  const muA = pair.moments[2]!;
  const s2A = pair.moments[3]!;
  for (let i = 0; i < n; i++) diff[i] = la[i]! - lh[i]!;
  const [mD, sD] = meanStd(diff);
  dense[k++] = sumH / n;
  dense[k++] = sumA / n;
  dense[k++] = mD;
  dense[k++] = sD;
  const [c10, c90] = quantiles(diff);
  dense[k++] = c10;
  dense[k++] = c90;
  dense[k++] = (sumH - muH) / Math.sqrt(s2H) / Math.sqrt(n);
  dense[k++] = (sumA - muA) / Math.sqrt(s2A) / Math.sqrt(n);
  dense[k++] = maxWindowMean(diff, 200, mD);
  return k;
}

/** The largest mean of `window` consecutive values; `whole` (the mean of all) when there are no more than that. */
function maxWindowMean(values: Float64Array, window: number, whole: number): number {
  const n = values.length;
  if (n <= window) return whole;
  let s = 0;
  for (let i = 0; i < window; i++) s += values[i]!;
  let best = s;
  for (let i = window; i < n; i++) {
    s += values[i]! - values[i - window]!;
    if (s > best) best = s;
  }
  return best / window;
}

/** Per vocabulary id, its sequence number in the current `mattr` call (−1: not seen yet); reset after each call. */
const numberOfId = new Int32Array(1 << 16).fill(-1);
let mattrSeq = new Int32Array(1024);

/**
 * Moving-average type/token ratio (window w): vocabulary richness independent of length. `ids`:
 * the tokens' vocabulary ids (`tokenIds`, BOS first). Each distinct word is numbered once, so the
 * sliding window counts in an array instead of a map: a word in the vocabulary by its id (one
 * string has one id, one id one string: the vocabulary is at most 2^16 distinct words, as the
 * 16-bit ids and the artifact have it), any other by its text.
 */
function mattr(tokens: string[], ids: Uint16Array, w: number): number {
  if (tokens.length > mattrSeq.length) mattrSeq = new Int32Array(tokens.length * 2);
  const seq = mattrSeq;
  let m = 0;
  let distinctWords = 0;
  let others: Map<string, number> | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (!(tok.length > 1 || isLetterToken(tok))) continue;
    const id = ids[i + 1]!;
    let number: number | undefined;
    if (id !== UNK) {
      number = numberOfId[id]!;
      if (number < 0) {
        number = distinctWords++;
        numberOfId[id] = number;
      }
    } else {
      others ??= new Map();
      number = others.get(tok);
      if (number === undefined) {
        number = distinctWords++;
        others.set(tok, number);
      }
    }
    seq[m++] = number;
  }
  for (let i = 1; i < ids.length; i++) numberOfId[ids[i]!] = -1;
  if (m === 0) return 0;
  if (m <= w) return distinctWords / m;
  const counts = new Int32Array(distinctWords);
  let distinct = 0;
  for (let i = 0; i < w; i++) if (counts[seq[i]!]!++ === 0) distinct++;
  let total = distinct;
  let windows = 1;
  for (let i = w; i < m; i++) {
    if (--counts[seq[i - w]!]! === 0) distinct--;
    if (counts[seq[i]!]!++ === 0) distinct++;
    total += distinct;
    windows++;
  }
  return total / windows / w;
}

/** Per vocabulary and language, which ids are function words (the stylometry feature's list). */
const FUNCTION_WORD_IDS = new WeakMap<VocabLookup, Record<'en' | 'tr', Uint8Array>>();

/**
 * Flags by vocabulary id of the language's function words, so a token in the vocabulary is checked
 * by its id instead of hashing its text again; undefined for a vocabulary too large for 16-bit ids.
 */
export function functionWordIds(vocab: VocabLookup, language: 'en' | 'tr'): Uint8Array | undefined {
  if (vocab.size > 1 << 16) return undefined;
  let flags = FUNCTION_WORD_IDS.get(vocab);
  if (!flags) {
    const of = (lang: 'en' | 'tr'): Uint8Array => {
      const out = new Uint8Array(1 << 16);
      for (const word of FUNCTION_WORDS[lang]) {
        const id = vocab.get(word);
        if (id !== undefined) out[id] = 1;
      }
      return out;
    };
    flags = { en: of('en'), tr: of('tr') };
    FUNCTION_WORD_IDS.set(vocab, flags);
  }
  return flags[language];
}

/** Fraction of token bigrams and trigrams that occur more than once in the text. */
function repetition(ids: Uint16Array): [number, number] {
  const n = ids.length;
  if (n < 4) return [0, 0];
  let cap = 64;
  while (cap < 2 * n) cap <<= 1;
  if (seenKeys.length < 2 * cap) seenKeys = new Float64Array(2 * cap);
  // Bigrams in the first half of the table, trigrams in the second: a key is seen again or new.
  const keys = seenKeys.subarray(0, 2 * cap).fill(-1);
  const mask = cap - 1;
  // `hash`: the key's low 32 bits xor its high bits, computed by the caller from the ids in
  // integer arithmetic rather than from the number (a division and a remainder of doubles).
  const seen = (key: number, hash: number, base: number): boolean => {
    let h = (Math.imul(hash, 0x9e3779b1) >>> 0) & mask;
    for (;;) {
      const k = keys[base + h]!;
      if (k === key) return true;
      if (k === -1) {
        keys[base + h] = key;
        return false;
      }
      h = (h + 1) & mask;
    }
  };
  let biRep = 0,
    triRep = 0;
  for (let i = 2; i < n; i++) {
    const a = ids[i - 2]!;
    const b = ids[i - 1]!;
    const c = ids[i]!;
    const low = (b << 16) | c;
    if (seen(b * 65536 + c, low, 0)) biRep++;
    if (seen((a * 65536 + b) * 65536 + c, low ^ a, cap)) triRep++;
  }
  return [biRep / (n - 2), triRep / (n - 2)];
}
/** Scratch of `repetition`: which token bigrams and trigrams a text has had. */
let seenKeys = new Float64Array(4096);

/** One column of hashed-feature weights: feature j's weight is `sparse[stride * j + offset]`. */
export interface HashedColumn {
  sparse: Float32Array;
  stride: number;
  offset: number;
}

/**
 * The linear model's sparse weights summed over the hashed features of one piece of text, per
 * block, with the number of features in each: the same hashing as `extractFeatures`, but raw
 * counts (no sublinear tf, no L2 norm), so the sums of neighbouring pieces can be pooled. The
 * sentence model (`segments.ts`) scores sentences and runs of sentences from these. Feature j's
 * weight is `sparse[stride * j + offset]` (the plain array, or the document model's in `LMContext.hashed`).
 * `family`, when given, is summed over the same features in the same pass (the assistant head's
 * column: its weights sit beside the document model's in the interleaved table, so they cost no
 * second hashing).
 */
export function hashedWeightSums(
  lower: string,
  tokens: readonly string[],
  sparse: Float32Array,
  stride = 1,
  offset = 0,
  family?: HashedColumn,
): { word: number; wordN: number; char: number; charN: number; familyWord: number; familyChar: number } {
  const fam = family?.sparse;
  const fs = family?.stride ?? 0;
  const fo = family?.offset ?? 0;
  let word = 0;
  let familyWord = 0;
  let prevHash = 0x9747b28c;
  for (const tok of tokens) {
    const h = fnv(tok);
    const j1 = mix(h ^ 0x1b873593) & HASH_MASK;
    const j2 = mix(Math.imul(prevHash, 0x01000193) ^ h ^ 0x5bd1e995) & HASH_MASK;
    word += sparse[stride * j1 + offset]! + sparse[stride * j2 + offset]!;
    if (fam) familyWord += fam[fs * j1 + fo]! + fam[fs * j2 + fo]!;
    prevHash = h;
  }
  let char = 0;
  let familyChar = 0;
  let charN = 0;
  const text = maskRuns(lower);
  const L = text.length;
  const chars = foldedChars(text);
  for (let i = 0; i + 3 <= L; i++) {
    let h = 0x811c9dc5;
    const end = Math.min(5, L - i);
    for (let j = 0; j < end; j++) {
      h = Math.imul(h ^ chars[i + j]!, 0x01000193);
      if (j >= 2) {
        const k = mix(h ^ (j * 0x3c6ef372)) & HASH_MASK;
        char += sparse[stride * k + offset]!;
        if (fam) familyChar += fam[fs * k + fo]!;
        charN++;
      }
    }
  }
  return { word, wordN: 2 * tokens.length, char, charN, familyWord, familyChar };
}

/** Whether a lower-cased token is one of the language's function words (the stylometry feature's list). */
export function isFunctionWord(tok: string, language: 'en' | 'tr'): boolean {
  return FUNCTION_WORDS[language].has(tok);
}

/** `isFunctionWord` of a token with vocabulary id `id`, read off `functionWordIds`' flags when it is in the vocabulary. */
export function isFunctionWordAt(tok: string, id: number, flags: Uint8Array | undefined, language: 'en' | 'tr'): boolean {
  return flags && id !== UNK ? flags[id] === 1 : FUNCTION_WORDS[language].has(tok);
}
