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
  /** Contexts: key, then log γ, μ, σ² (16 bytes a slot, four to a cache line). */
  private readonly ctx: Table;
  /** N-grams, keyed by their context's slot in `ctx` (slot number + 1) << 7 | symbol, then log p. */
  private readonly ngrams: Table;
  private readonly order: number;
  // Per symbol scratch: the packed key of each context length and its slot (−1 absent, −2 not looked up yet).
  private readonly slot = new Int32Array(MAX_CONTEXT + 1);
  private readonly key = new Uint32Array(MAX_CONTEXT + 1);

  constructor(arrays: CharLMArrays) {
    this.arrays = arrays;
    this.ctx = new Table(arrays.ctxKeys, [arrays.ctxLogGamma, arrays.ctxMu, arrays.ctxSigma2]);
    // Re-key the n-grams by where their context landed in the table, so scoring needs no index column.
    const slotOf = Uint32Array.from(arrays.ctxKeys, (k) => this.ctx.find(k) / 4 + 1);
    this.ngrams = new Table(
      Uint32Array.from(arrays.keys, (k) => ((slotOf[(k >>> 7) - 1]! << 7) | (k & 127)) >>> 0),
      [arrays.logp],
    );
    let order = 0;
    for (let i = 0; i < arrays.ctxKeys.length; i++) order = Math.max(order, arrays.ctxKeys[i]! >>> 28);
    this.order = order;
  }

  /**
   * Per predicted symbol: log p of the symbol, and μ, σ² of the log-probability of the next symbol
   * under the longest known context (the Fast-DetectGPT moments). Writes into the given arrays.
   */
  score(symbols: Uint8Array, logp: Float64Array, mu: Float64Array, sigma2: Float64Array): void {
    const A = this.arrays;
    const C = this.ctx.values;
    const N = this.ngrams.values;
    const slot = this.slot;
    const key = this.key;
    for (let t = 0; t < symbols.length; t++) {
      const c = symbols[t]!;
      // Contexts of 1..maxLen symbols before t (one start-of-text symbol before the first).
      const maxLen = Math.min(this.order, t + 1);
      let packed = 0;
      for (let len = 1; len <= maxLen; len++) {
        const j = t - len;
        packed |= (j < 0 ? BOS_SYMBOL : symbols[j]!) << (7 * (len - 1));
        key[len] = ((len << 28) | packed) >>> 0;
        slot[len] = -2;
      }
      // The longest known context: every suffix of a context seen in training was seen too, so
      // the first one found from the longest down is the longest, and all shorter ones exist.
      let longest = 0;
      for (let len = maxLen; len >= 1; len--) {
        const at = this.ctx.find(key[len]!);
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
          at = this.ctx.find(key[len]!);
          slot[len] = at;
        }
        const hit = this.ngrams.find(((((at >>> 2) + 1) << 7) | c) >>> 0);
        if (hit >= 0) {
          lp = N[hit + 1]!;
          hitLen = len;
          break;
        }
      }
      for (let len = hitLen + 1; len <= longest; len++) {
        let at = slot[len]!;
        if (at === -2) {
          at = this.ctx.find(key[len]!);
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
