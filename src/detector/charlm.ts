/**
 * Smoothed character n-gram language model (interpolated absolute discounting, order up to 5).
 *
 * Why characters next to the word bigram model (`lm.ts`): a 15-word post gives a word bigram model
 * about 15 predictions, most of them of rare words it backs off on; the same post is ~80 character
 * predictions, and a character model still has something to say about words it never saw
 * (spelling, morphology, punctuation habits). That is the evidence short texts lack.
 *
 *   p_k(c | h) = max(C(h c) − D, 0) / C(h) + γ(h) · p_{k−1}(c | h')     (h' = h without its first symbol)
 *
 * Every context of up to 4 symbols is an exact 31-bit key (order in the top bits, 7 bits a
 * symbol); an n-gram is (its context's index << 7 | symbol), also exact, so there are no hash
 * collisions. Rare n-grams are pruned (their mass goes to γ). The Fast-DetectGPT moments of the
 * next symbol's log-probability are precomputed per kept context, so the analytic criterion costs
 * two array reads per character at run time.
 */

/** Lower-cased symbols with their own id; every other character maps to OTHER. Digits fold to `0`. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0 .,;:!?\'"()-/&%$*+=@#[]_çğıöşüâîûéèàäñ';
export const CHAR_SYMBOLS = ALPHABET.length + 1;
const OTHER = ALPHABET.length;
/** Context lengths 0..MAX_CONTEXT (so n-grams up to MAX_CONTEXT + 1 symbols). */
export const MAX_CONTEXT = 4;
/** The start of a text, as context (never predicted). */
const BOS_SYMBOL = 127;

const SYMBOL_OF = new Int8Array(0x250).fill(OTHER);
for (let i = 0; i < ALPHABET.length; i++) SYMBOL_OF[ALPHABET.charCodeAt(i)] = i;
for (let c = 0x30; c <= 0x39; c++) SYMBOL_OF[c] = ALPHABET.indexOf('0');
SYMBOL_OF[0x0a] = ALPHABET.indexOf(' ');

/** Symbol ids of a lower-cased text. */
export function charSymbols(lower: string): Uint8Array {
  const out = new Uint8Array(lower.length);
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    out[i] = c < SYMBOL_OF.length ? SYMBOL_OF[c]! : OTHER;
  }
  return out;
}

export interface CharLMArrays {
  /** Sorted context keys `(length << 28) | packed symbols` (length 1..MAX_CONTEXT; the empty context is implicit). */
  ctxKeys: Uint32Array;
  /** Per context (same order): log γ(h), μ(h), σ²(h). */
  ctxLogGamma: Float32Array;
  ctxMu: Float32Array;
  ctxSigma2: Float32Array;
  /** Sorted n-gram keys `(context index + 1) << 7 | symbol` (index 0 is the empty context) and their interpolated log p. */
  keys: Uint32Array;
  logp: Float32Array;
  /** log p of each symbol with an empty context; then μ and σ² of that distribution (last two entries). */
  logUni: Float32Array;
}

function ctxKey(symbols: Uint8Array, end: number, len: number): number {
  // `end` is the position predicted; the context is symbols[end-len .. end-1], BOS before the start.
  let k = 0;
  for (let j = end - len; j < end; j++) k = (k << 7) | (j < 0 ? BOS_SYMBOL : symbols[j]!);
  return ((len << 28) | k) >>> 0;
}

/**
 * The keys of the contexts of 1..maxLen symbols before position `t` (each `ctxKey(symbols, t, len)`,
 * built up from the shortest) into keys[1..maxLen], each context's slot marked not looked up yet
 * (−2): where both scorers start every symbol. Small enough that V8 inlines it into their loops.
 */
function contextKeys(symbols: Uint8Array, t: number, maxLen: number, keys: Uint32Array, slots: Int32Array): void {
  let packed = 0;
  for (let len = 1; len <= maxLen; len++) {
    const j = t - len;
    packed |= (j < 0 ? BOS_SYMBOL : symbols[j]!) << (7 * (len - 1));
    keys[len] = ((len << 28) | packed) >>> 0;
    slots[len] = -2;
  }
}

/** Open-addressing table from exact integer keys (< 2^32) to an index, for counting. */
class KeyIndex {
  private keys: Float64Array;
  private vals: Int32Array;
  private mask: number;
  size = 0;
  constructor(capacityLog2 = 16) {
    this.keys = new Float64Array(1 << capacityLog2).fill(-1);
    this.vals = new Int32Array(1 << capacityLog2);
    this.mask = (1 << capacityLog2) - 1;
  }
  private slot(key: number): number {
    let h = (Math.imul(key ^ (key >>> 15), 0x2c1b3c6d) ^ Math.imul(Math.floor(key / 4294967296), 0x297a2d39)) & this.mask;
    while (this.keys[h] !== -1 && this.keys[h] !== key) h = (h + 1) & this.mask;
    return h;
  }
  /** Index of `key`, added with the next free index if absent. */
  indexOf(key: number): number {
    let h = this.slot(key);
    if (this.keys[h] === -1) {
      if ((this.size + 1) * 2 > this.keys.length) {
        this.grow();
        h = this.slot(key);
      }
      this.keys[h] = key;
      this.vals[h] = this.size++;
    }
    return this.vals[h]!;
  }
  get(key: number): number {
    const h = this.slot(key);
    return this.keys[h] === -1 ? -1 : this.vals[h]!;
  }
  private grow(): void {
    const oldK = this.keys;
    const oldV = this.vals;
    this.keys = new Float64Array(oldK.length * 2).fill(-1);
    this.vals = new Int32Array(oldK.length * 2);
    this.mask = this.keys.length - 1;
    for (let i = 0; i < oldK.length; i++) {
      if (oldK[i] === -1) continue;
      const h = this.slot(oldK[i]!);
      this.keys[h] = oldK[i]!;
      this.vals[h] = oldV[i]!;
    }
  }
  entries(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== -1) out.push([this.keys[i]!, this.vals[i]!]);
    return out;
  }
}

class GrowCounts {
  data = new Float64Array(1 << 16);
  add(i: number, v: number): void {
    if (i >= this.data.length) {
      const next = new Float64Array(Math.max(this.data.length * 2, i + 1));
      next.set(this.data);
      this.data = next;
    }
    this.data[i]! += v;
  }
  at(i: number): number {
    return i < this.data.length ? this.data[i]! : 0;
  }
}

export interface CharBuildOptions {
  /** Absolute discount D. */
  discount: number;
  /** N-grams (with a non-empty context) seen fewer times are pruned. */
  minCount: number;
  /** Context lengths used (≤ MAX_CONTEXT). */
  order: number;
}

/** Builds the model from lower-cased texts. Training-time only. */
export function buildCharLM(texts: Iterable<string>, opts: CharBuildOptions): CharLMArrays {
  const ctx = new KeyIndex(20);
  const ctxTotal = new GrowCounts();
  const ngram = new KeyIndex(22);
  const ngramCount = new GrowCounts();
  const uni = new Float64Array(CHAR_SYMBOLS);
  // Context index 0 is the empty context; real contexts are ctx.indexOf + 1.
  for (const text of texts) {
    const s = charSymbols(text);
    for (let t = 0; t < s.length; t++) {
      const c = s[t]!;
      uni[c]! += 1;
      for (let len = 1; len <= opts.order; len++) {
        const ci = ctx.indexOf(ctxKey(s, t, len)) + 1;
        ctxTotal.add(ci, 1);
        const ni = ngram.indexOf(ci * 128 + c);
        ngramCount.add(ni, 1);
      }
    }
  }
  const uniTotal = uni.reduce((a, b) => a + b, 0) + 0.5 * CHAR_SYMBOLS;
  const pUni = Float64Array.from(uni, (u) => (u + 0.5) / uniTotal);
  // Contexts sorted by key; n-grams re-keyed by the sorted context index.
  const ctxEntries = ctx.entries().sort((a, b) => a[0] - b[0]);
  const nCtx = ctxEntries.length;
  const sortedIndexOf = new Int32Array(nCtx + 1);
  ctxEntries.forEach(([, i], j) => {
    sortedIndexOf[i + 1] = j + 1;
  });
  const lenOf = new Uint8Array(nCtx + 1);
  const parentOf = new Int32Array(nCtx + 1); // sorted index of h' (0 = empty context)
  const ctxKeys = new Uint32Array(nCtx);
  const total = new Float64Array(nCtx + 1);
  ctxEntries.forEach(([key, i], j) => {
    ctxKeys[j] = key;
    lenOf[j + 1] = key >>> 28;
    total[j + 1] = ctxTotal.at(i + 1);
  });
  ctxEntries.forEach(([key], j) => {
    const len = key >>> 28;
    if (len <= 1) return;
    const packed = key & 0x0fffffff;
    const parentPacked = packed & ((1 << (7 * (len - 1))) - 1);
    parentOf[j + 1] = sortedIndexOf[ctx.get((((len - 1) << 28) | parentPacked) >>> 0) + 1]!;
  });
  const D = opts.discount;
  const gamma = new Float64Array(nCtx + 1).fill(1);
  const kept: Array<[number, number]> = [];
  for (const [nkey, ni] of ngram.entries()) {
    const count = ngramCount.at(ni);
    if (count < opts.minCount) continue;
    const ci = Math.floor(nkey / 128);
    const c = nkey % 128;
    const sj = sortedIndexOf[ci]!;
    gamma[sj]! -= (count - D) / ctxTotal.at(ci);
    kept.push([((sj << 7) | c) >>> 0, count]);
  }
  kept.sort((a, b) => a[0] - b[0]);
  const keys = Uint32Array.from(kept, ([k]) => k);
  // Full distributions, shortest contexts first (a context's parent is shorter, so it is done).
  const dist = new Map<number, Float64Array>();
  dist.set(0, pUni);
  const byLen = Array.from({ length: nCtx }, (_, j) => j + 1).sort((a, b) => lenOf[a]! - lenOf[b]! || a - b);
  // Per context: its kept n-grams as (symbol, count, position in `keys`).
  const keptOf = new Map<number, Array<[number, number, number]>>();
  kept.forEach(([k, count], i) => {
    const sj = k >>> 7;
    const list = keptOf.get(sj);
    if (list) list.push([k & 127, count, i]);
    else keptOf.set(sj, [[k & 127, count, i]]);
  });
  const ctxLogGamma = new Float32Array(nCtx);
  const ctxMu = new Float32Array(nCtx);
  const ctxSigma2 = new Float32Array(nCtx);
  const logp = new Float32Array(kept.length);
  const moments = (p: Float64Array): [number, number] => {
    let m = 0;
    let e2 = 0;
    for (let c = 0; c < CHAR_SYMBOLS; c++) {
      const lp = Math.log(p[c]!);
      m += p[c]! * lp;
      e2 += p[c]! * lp * lp;
    }
    return [m, Math.max(e2 - m * m, 1e-6)];
  };
  for (const sj of byLen) {
    const parent = dist.get(parentOf[sj]!) ?? pUni;
    const g = Math.max(gamma[sj]!, 1e-9);
    const p = Float64Array.from(parent, (q) => g * q);
    for (const [c, count, i] of keptOf.get(sj) ?? []) {
      p[c]! += (count - D) / total[sj]!;
      logp[i] = Math.log(p[c]!);
    }
    // Only contexts that can be a parent need their distribution kept.
    if (lenOf[sj]! < opts.order) dist.set(sj, p);
    ctxLogGamma[sj - 1] = Math.log(g);
    [ctxMu[sj - 1], ctxSigma2[sj - 1]] = moments(p);
  }
  const [uMu, uS2] = moments(pUni);
  const logUni = new Float32Array(CHAR_SYMBOLS + 2);
  for (let c = 0; c < CHAR_SYMBOLS; c++) logUni[c] = Math.log(pUni[c]!);
  logUni[CHAR_SYMBOLS] = uMu;
  logUni[CHAR_SYMBOLS + 1] = uS2;
  return { ctxKeys, ctxLogGamma, ctxMu, ctxSigma2, keys, logp, logUni };
}

/** The longest context of a model's arrays (its n-grams have one symbol more). */
function orderOf(arrays: CharLMArrays): number {
  let order = 0;
  for (let i = 0; i < arrays.ctxKeys.length; i++) order = Math.max(order, arrays.ctxKeys[i]! >>> 28);
  return order;
}

function mixKey(k: number): number {
  return (Math.imul(k ^ (k >>> 15), 0x2c1b3c6d) >>> 12) ^ Math.imul(k, 0x297a2d39);
}

/**
 * Open-addressing table built at load: each slot holds a key and its values side by side, so a
 * probe reads one cache line (the tables are several MB, and a miss to memory is what scoring
 * costs). Key 0 marks an empty slot: no context or n-gram key is 0.
 */
class Table {
  readonly keys: Uint32Array;
  readonly values: Float32Array;
  private readonly mask: number;
  private readonly stride: number;
  constructor(keys: Uint32Array, columns: Float32Array[]) {
    let cap = 1;
    while (cap < keys.length * 2) cap <<= 1;
    this.stride = 1 + columns.length;
    const buffer = new ArrayBuffer(cap * this.stride * 4);
    this.keys = new Uint32Array(buffer);
    this.values = new Float32Array(buffer);
    this.mask = cap - 1;
    for (let i = 0; i < keys.length; i++) {
      let h = mixKey(keys[i]!) & this.mask;
      while (this.keys[h * this.stride] !== 0) h = (h + 1) & this.mask;
      this.keys[h * this.stride] = keys[i]!;
      for (let c = 0; c < columns.length; c++) this.values[h * this.stride + 1 + c] = columns[c]![i]!;
    }
  }
  /** The slot's offset (its values follow at +1, +2, …), or −1. */
  find(key: number): number {
    let h = mixKey(key) & this.mask;
    for (;;) {
      const at = h * this.stride;
      const k = this.keys[at]!;
      if (k === key) return at;
      if (k === 0) return -1;
      h = (h + 1) & this.mask;
    }
  }
}

export class CharLM {
  readonly arrays: CharLMArrays;
  // Built on first use: a model loaded for the detector is scored through `CharLMPair`, which
  // builds its own tables, so these are only made where one model is scored on its own.
  private tables: { ctx: Table; ngrams: Table } | undefined;
  readonly order: number;
  // Per symbol scratch: the packed key of each context length and its slot (−1 absent, −2 not looked up yet).
  private readonly slot = new Int32Array(MAX_CONTEXT + 1);
  private readonly key = new Uint32Array(MAX_CONTEXT + 1);

  constructor(arrays: CharLMArrays) {
    this.arrays = arrays;
    this.order = orderOf(arrays);
  }

  private build(): { ctx: Table; ngrams: Table } {
    const arrays = this.arrays;
    const ctx = new Table(arrays.ctxKeys, [arrays.ctxLogGamma, arrays.ctxMu, arrays.ctxSigma2]);
    // Re-key the n-grams by where their context landed in the table, so scoring needs no index column.
    const slotOf = Uint32Array.from(arrays.ctxKeys, (k) => ctx.find(k) / 4 + 1);
    const ngrams = new Table(
      Uint32Array.from(arrays.keys, (k) => ((slotOf[(k >>> 7) - 1]! << 7) | (k & 127)) >>> 0),
      [arrays.logp],
    );
    this.tables = { ctx, ngrams };
    return this.tables;
  }

  /**
   * Per predicted symbol: log p of the symbol, and μ, σ² of the log-probability of the next symbol
   * under the longest known context (the Fast-DetectGPT moments). Writes into the given arrays.
   */
  score(symbols: Uint8Array, logp: Float64Array, mu: Float64Array, sigma2: Float64Array): void {
    const A = this.arrays;
    const { ctx, ngrams } = this.tables ?? this.build();
    const C = ctx.values;
    const N = ngrams.values;
    const slot = this.slot;
    const key = this.key;
    for (let t = 0; t < symbols.length; t++) {
      const c = symbols[t]!;
      // Contexts of 1..maxLen symbols before t (one start-of-text symbol before the first).
      const maxLen = Math.min(this.order, t + 1);
      contextKeys(symbols, t, maxLen, key, slot);
      // The longest known context: every suffix of a context seen in training was seen too, so
      // the first one found from the longest down is the longest, and all shorter ones exist.
      let longest = 0;
      for (let len = maxLen; len >= 1; len--) {
        const at = ctx.find(key[len]!);
        slot[len] = at;
        if (at >= 0) {
          longest = len;
          break;
        }
      }
      // The stored value of the longest context that kept the n-gram already includes every
      // shorter order; above it, each context adds its back-off weight γ (in increasing order,
      // as p_k = γ · p_(k−1) is built).
      let hitLen = 0;
      let lp = A.logUni[c]!;
      for (let len = longest; len >= 1; len--) {
        let at = slot[len]!;
        if (at === -2) {
          at = ctx.find(key[len]!);
          slot[len] = at;
        }
        const hit = ngrams.find(((((at >>> 2) + 1) << 7) | c) >>> 0);
        if (hit >= 0) {
          lp = N[hit + 1]!;
          hitLen = len;
          break;
        }
      }
      for (let len = hitLen + 1; len <= longest; len++) {
        let at = slot[len]!;
        if (at === -2) {
          at = ctx.find(key[len]!);
          slot[len] = at;
        }
        lp = C[at + 1]! + lp;
      }
      logp[t] = lp;
      if (longest > 0) {
        const at = slot[longest]!;
        mu[t] = C[at + 2]!;
        sigma2[t] = C[at + 3]!;
      } else {
        mu[t] = A.logUni[CHAR_SYMBOLS]!;
        sigma2[t] = A.logUni[CHAR_SYMBOLS + 1]!;
      }
    }
  }
}

/** Which of the pair's models holds a context or n-gram (bits of a slot's last word). */
const HUMAN_BIT = 1;
const AI_BIT = 2;
/** Words per slot: context key, human log γ, μ, σ², AI log γ, μ, σ², model bits (32 bytes, two to a cache line). */
const CTX_STRIDE = 8;
/** Words per slot: context key, symbol | model bits << 8, human log p, AI log p (16 bytes). */
const NGRAM_STRIDE = 4;

/** The union of two sorted key lists, sorted. */
function sortedUnion(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i]! : 0xffffffff;
    const y = j < b.length ? b[j]! : 0xffffffff;
    if (x <= y) {
      out[n++] = x;
      i++;
      if (x === y) j++;
    } else {
      out[n++] = y;
      j++;
    }
  }
  return out.subarray(0, n);
}

/** Open-addressing slots for `count` keys at a load of at most 0.7 (a power of two). */
function capacityFor(count: number): number {
  let cap = 1;
  while (cap * 0.7 < count) cap <<= 1;
  return cap;
}

/** Positions whose slots `CharLMPair.score` reads ahead at a time. */
const TOUCH_CHUNK = 4096;
/** The low 7·len bits, per context length. */
const LOW_BITS = Array.from({ length: MAX_CONTEXT + 1 }, (_, len) => 2 ** (7 * len) - 1);

/** Home slot of an n-gram: its context's key and its symbol. */
function ngramHash(ctxKey: number, symbol: number): number {
  return mixKey((ctxKey ^ Math.imul(symbol + 1, 0x9e3779b1)) >>> 0);
}

/**
 * The human and the AI character LM in shared tables: the detector scores every text under both
 * with the same contexts, so one probe finds a context (or an n-gram) for both models. An n-gram
 * is keyed by its context's key and its symbol rather than by where the context sits, so its
 * key can be computed from the text alone, and `score` reads every position's first slots in a
 * pass before scoring, so their cache misses overlap (the tables are tens of MB, and misses are
 * what scoring costs). The values are the models' own float32s, combined in the same
 * order as `CharLM.score`, so every log-probability and sum is bit-identical to scoring each
 * model alone.
 */
export class CharLMPair {
  readonly human: CharLM;
  readonly ai: CharLM;
  private readonly ctxKeys: Uint32Array;
  private readonly ctxVals: Float32Array;
  private readonly ctxMask: number;
  private readonly ngramKeys: Uint32Array;
  private readonly ngramVals: Float32Array;
  private readonly ngramMask: number;
  private readonly order: number;
  private readonly slot = new Int32Array(MAX_CONTEXT + 1);
  private readonly key = new Uint32Array(MAX_CONTEXT + 1);
  /** Σ μ and Σ σ² of the last `score` call, human then AI (the Fast-DetectGPT criterion's parts). */
  readonly moments = new Float64Array(4);

  constructor(human: CharLM, ai: CharLM) {
    this.human = human;
    this.ai = ai;
    this.order = Math.max(human.order, ai.order);
    const H = human.arrays;
    const A = ai.arrays;
    // Both models' contexts, merged in key order (each model's keys are sorted), each put in
    // once with the values of the models that hold it.
    const ctxCap = capacityFor(sortedUnion(H.ctxKeys, A.ctxKeys).length);
    const ctxBuffer = new ArrayBuffer(ctxCap * CTX_STRIDE * 4);
    this.ctxKeys = new Uint32Array(ctxBuffer);
    this.ctxVals = new Float32Array(ctxBuffer);
    this.ctxMask = ctxCap - 1;
    const CK = this.ctxKeys;
    const CV = this.ctxVals;
    for (let i = 0, j = 0; i < H.ctxKeys.length || j < A.ctxKeys.length; ) {
      const x = i < H.ctxKeys.length ? H.ctxKeys[i]! : 0xffffffff;
      const y = j < A.ctxKeys.length ? A.ctxKeys[j]! : 0xffffffff;
      const key = x <= y ? x : y;
      let h = mixKey(key) & this.ctxMask;
      while (CK[h * CTX_STRIDE] !== 0) h = (h + 1) & this.ctxMask;
      const at = h * CTX_STRIDE;
      CK[at] = key;
      if (x === key) {
        CV[at + 1] = H.ctxLogGamma[i]!;
        CV[at + 2] = H.ctxMu[i]!;
        CV[at + 3] = H.ctxSigma2[i]!;
        CK[at + 7]! |= HUMAN_BIT;
        i++;
      }
      if (y === key) {
        CV[at + 4] = A.ctxLogGamma[j]!;
        CV[at + 5] = A.ctxMu[j]!;
        CV[at + 6] = A.ctxSigma2[j]!;
        CK[at + 7]! |= AI_BIT;
        j++;
      }
    }
    // N-grams of both models as context key · 128 + symbol: each model's are sorted by its
    // context index, which follows its sorted context keys, so these are in order too and merge.
    const pairsOf = (m: CharLMArrays): Float64Array => {
      const out = new Float64Array(m.keys.length);
      for (let i = 0; i < out.length; i++) {
        const k = m.keys[i]!;
        out[i] = m.ctxKeys[(k >>> 7) - 1]! * 128 + (k & 127);
      }
      return out;
    };
    const hPairs = pairsOf(H);
    const aPairs = pairsOf(A);
    let union = 0;
    for (let i = 0, j = 0; i < hPairs.length || j < aPairs.length; union++) {
      const x = i < hPairs.length ? hPairs[i]! : Number.POSITIVE_INFINITY;
      const y = j < aPairs.length ? aPairs[j]! : Number.POSITIVE_INFINITY;
      if (x <= y) i++;
      if (y <= x) j++;
    }
    const ngramCap = capacityFor(union);
    const ngramBuffer = new ArrayBuffer(ngramCap * NGRAM_STRIDE * 4);
    this.ngramKeys = new Uint32Array(ngramBuffer);
    this.ngramVals = new Float32Array(ngramBuffer);
    this.ngramMask = ngramCap - 1;
    const NK = this.ngramKeys;
    const NV = this.ngramVals;
    for (let i = 0, j = 0; i < hPairs.length || j < aPairs.length; ) {
      const x = i < hPairs.length ? hPairs[i]! : Number.POSITIVE_INFINITY;
      const y = j < aPairs.length ? aPairs[j]! : Number.POSITIVE_INFINITY;
      const pair = x <= y ? x : y;
      const ctxKey = Math.floor(pair / 128);
      const symbol = pair - ctxKey * 128;
      let h = ngramHash(ctxKey, symbol) & this.ngramMask;
      while (NK[h * NGRAM_STRIDE] !== 0) h = (h + 1) & this.ngramMask;
      const at = h * NGRAM_STRIDE;
      NK[at] = ctxKey;
      let bits = 0;
      if (x === pair) {
        NV[at + 2] = H.logp[i++]!;
        bits |= HUMAN_BIT;
      }
      if (y === pair) {
        NV[at + 3] = A.logp[j++]!;
        bits |= AI_BIT;
      }
      NK[at + 1] = symbol | (bits << 8);
    }
  }

  /** The slot's offset in the context table, or −1. */
  private findCtx(key: number): number {
    const keys = this.ctxKeys;
    let h = mixKey(key) & this.ctxMask;
    for (;;) {
      const at = h * CTX_STRIDE;
      const k = keys[at]!;
      if (k === key) return at;
      if (k === 0) return -1;
      h = (h + 1) & this.ctxMask;
    }
  }

  /** The slot's offset in the n-gram table, or −1. */
  private findNgram(ctxKey: number, symbol: number): number {
    const keys = this.ngramKeys;
    let h = ngramHash(ctxKey, symbol) & this.ngramMask;
    for (;;) {
      const at = h * NGRAM_STRIDE;
      const k = keys[at]!;
      if (k === ctxKey && (keys[at + 1]! & 127) === symbol) return at;
      if (k === 0) return -1;
      h = (h + 1) & this.ngramMask;
    }
  }

  /**
   * Scores the symbols under both models: log p of each symbol into `logpH` / `logpA`; returns
   * Σ log p (human, AI) and leaves Σ μ, Σ σ² per model in `moments` (human μ, σ², AI μ, σ²). The
   * same numbers, summed in the same order, as `CharLM.score` of each model and a sum over its outputs.
   */
  score(symbols: Uint8Array, logpH: Float64Array, logpA: Float64Array): [number, number] {
    const uniH = this.human.arrays.logUni;
    const uniA = this.ai.arrays.logUni;
    const CK = this.ctxKeys;
    const C = this.ctxVals;
    const NK = this.ngramKeys;
    const N = this.ngramVals;
    const slot = this.slot;
    const key = this.key;
    const order = this.order;
    let sumH = 0;
    let sumA = 0;
    let muH = 0;
    let s2H = 0;
    let muA = 0;
    let s2A = 0;
    // Per chunk of positions, a first pass only reads the slots where each position's longest
    // context and its n-gram would be found: these reads do not depend on each other, so their
    // cache misses overlap (the tables are tens of MB), and the scoring pass then finds most of
    // them in cache (a chunk's slots fit in the core's cache). The values read are not used.
    let ahead = 0;
    let roll = 0;
    const keep = order > 0 ? 2 ** (7 * (order - 1)) - 1 : 0;
    for (let len = 1; len <= order; len++) roll |= BOS_SYMBOL << (7 * (len - 1));
    for (let t = 0; t < symbols.length; t++) {
      if (t % TOUCH_CHUNK === 0) {
        const end = Math.min(symbols.length, t + TOUCH_CHUNK);
        for (let u = t; u < end; u++) {
          const len = Math.min(order, u + 1);
          const k = ((len << 28) | (roll & LOW_BITS[len]!)) >>> 0;
          ahead ^= CK[(mixKey(k) & this.ctxMask) * CTX_STRIDE]! ^ NK[(ngramHash(k, symbols[u]!) & this.ngramMask) * NGRAM_STRIDE]!;
          roll = ((roll & keep) << 7) | symbols[u]!;
        }
      }
      const c = symbols[t]!;
      const maxLen = Math.min(order, t + 1);
      contextKeys(symbols, t, maxLen, key, slot);
      // Each model's longest known context (every suffix of one of its contexts is one of its
      // contexts too, so the first found from the longest down is the longest).
      let longH = 0;
      let longA = 0;
      for (let len = maxLen; len >= 1; len--) {
        const at = this.findCtx(key[len]!);
        slot[len] = at;
        if (at < 0) continue;
        const bits = CK[at + 7]!;
        if (longH === 0 && bits & HUMAN_BIT) longH = len;
        if (longA === 0 && bits & AI_BIT) longA = len;
        if (longH !== 0 && longA !== 0) break;
      }
      // The longest context of each model that kept the n-gram (one probe serves both models).
      let hitH = 0;
      let hitA = 0;
      let lpH = uniH[c]!;
      let lpA = uniA[c]!;
      let needH = longH > 0;
      let needA = longA > 0;
      for (let len = longH > longA ? longH : longA; len >= 1 && (needH || needA); len--) {
        const forH = needH && len <= longH;
        const forA = needA && len <= longA;
        if (!forH && !forA) continue;
        const hit = this.findNgram(key[len]!, c);
        if (hit < 0) continue;
        const bits = NK[hit + 1]! >>> 8;
        if (forH && bits & HUMAN_BIT) {
          lpH = N[hit + 2]!;
          hitH = len;
          needH = false;
        }
        if (forA && bits & AI_BIT) {
          lpA = N[hit + 3]!;
          hitA = len;
          needA = false;
        }
      }
      // Above the hit, each context's back-off weight γ, in increasing order as in `CharLM.score`.
      for (let len = hitH + 1; len <= longH; len++) {
        let at = slot[len]!;
        if (at === -2) {
          at = this.findCtx(key[len]!);
          slot[len] = at;
        }
        lpH = C[at + 1]! + lpH;
      }
      for (let len = hitA + 1; len <= longA; len++) {
        let at = slot[len]!;
        if (at === -2) {
          at = this.findCtx(key[len]!);
          slot[len] = at;
        }
        lpA = C[at + 4]! + lpA;
      }
      logpH[t] = lpH;
      logpA[t] = lpA;
      sumH += lpH;
      sumA += lpA;
      if (longH > 0) {
        const at = slot[longH]!;
        muH += C[at + 2]!;
        s2H += C[at + 3]!;
      } else {
        muH += uniH[CHAR_SYMBOLS]!;
        s2H += uniH[CHAR_SYMBOLS + 1]!;
      }
      if (longA > 0) {
        const at = slot[longA]!;
        muA += C[at + 5]!;
        s2A += C[at + 6]!;
      } else {
        muA += uniA[CHAR_SYMBOLS]!;
        s2A += uniA[CHAR_SYMBOLS + 1]!;
      }
    }
    const m = this.moments;
    m[0] = muH;
    m[1] = s2H;
    m[2] = muA;
    m[3] = s2A;
    this.ahead = ahead;
    return [sumH, sumA];
  }
  /** Keeps the read-ahead loads from being optimised away. */
  ahead = 0;
}

const pairs = new WeakMap<CharLM, { ai: CharLM; pair: CharLMPair }>();
/** The pair of two models, built once per model object (training scores many texts with the same fold's models). */
export function charLMPair(human: CharLM, ai: CharLM): CharLMPair {
  const cached = pairs.get(human);
  if (cached?.ai === ai) return cached.pair;
  const pair = new CharLMPair(human, ai);
  pairs.set(human, { ai, pair });
  return pair;
}
