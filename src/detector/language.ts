/**
 * Language identification for en / tr, and a best guess for anything else so it can be refused
 * (a German text scored with the English model would get a meaningless probability).
 *
 * Works on the normalised text: script counts first (Cyrillic, Arabic, CJK, ... are refused
 * outright), then for Latin text the function words of each language plus the letters only one
 * of the languages uses (ğ, ı, ş for Turkish; ä, ß for German), counted as *evidence*, one unit
 * per word. What carries no evidence about the language is left out before counting: URLs, e-mail
 * addresses, @mentions, #hashtags, code (fenced or inline blocks and identifier-like tokens) and
 * names (capitalised words that do not start a sentence). Without enough evidence the guess is
 * `certain: false`, and the engine scores the text as the requested or default language with a
 * `language_uncertain` warning instead of refusing it: `@Ada test` is not Indonesian, whatever
 * `ada` means there.
 */
import type { Language } from './types.ts';

/** Function-word lists, written for this purpose: short, frequent, and mostly distinct between languages. */
const STOPWORDS: Record<string, string> = {
  en: 'the of and to a in is that it for was on are as with be by this have from or at not but an they which we you his her their has were been had there would will can all if more one its so what about also than into these them when some other should could our may such only who he she i my me do does did',
  tr: 've bir bu da de için ile çok ama gibi daha olarak ben bana beni benim ne mi mı mu mü o ki en her kadar sonra değil var yok olan oldu olduğu olduğunu şu diye ya veya hem ancak çünkü fakat tarafından bize biz siz sizin onun ise artık hiç bile şey hala hâlâ hesabıma hesabımdan',
  de: 'der die und den das ist nicht ein eine sich mit dem des auf für von zu im auch als sie es wird werden bei oder nach aus wie noch über ich wir durch sind hat einem einer am zum zur vom wurde wurden bis seit unter zwischen gegen eines dass',
  fr: 'le la les et des du un une est pas que qui dans pour sur au aux avec ce il elle ne se sont par plus mais nous vous ou été cette leur',
  es: 'el la los las y de que en un una es por con para del se no al lo como más pero sus le ya o este fue ha está son muy también',
  it: 'il di che la le è e per un una non sono con del della dei gli si al ha come ma più anche questo nel alla',
  pt: 'o a os as de que e do da em um uma para com não por se na no mais dos das como mas ao ele foi são está também',
  nl: 'de het een en van is dat niet op te in voor met zijn er maar ook als bij aan om dan wat nog heeft werd',
  id: 'yang dan di ke dari ini itu dengan untuk pada adalah tidak dalam akan juga ada oleh atau kami mereka',
};

const LANGS = Object.keys(STOPWORDS);
const SUPPORTED = new Set(['en', 'tr']);
/** Word → bit mask of the languages whose list contains it (one lookup per word for all languages). */
const STOPMASK = new Map<string, number>();
LANGS.forEach((lang, bit) => {
  for (const w of STOPWORDS[lang]!.split(' ')) STOPMASK.set(w, (STOPMASK.get(w) ?? 0) | (1 << bit));
});
const BIT_TR = LANGS.indexOf('tr');
const BIT_DE = LANGS.indexOf('de');

const SCRIPTS: Array<[string, RegExp]> = [
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['el', /\p{Script=Greek}/u],
  ['ar', /\p{Script=Arabic}/u],
  ['he', /\p{Script=Hebrew}/u],
  ['hi', /\p{Script=Devanagari}/u],
  ['th', /\p{Script=Thai}/u],
  ['ko', /\p{Script=Hangul}/u],
  ['ja', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['zh', /\p{Script=Han}/u],
];

export interface LanguageGuess {
  /** `en`, `tr`, or the code/script of an unsupported language (`de`, `cyrillic`, `unknown`, ...). */
  language: string;
  supported: boolean;
  /**
   * Whether there was enough evidence to decide. When false, `language` is only a leaning (a
   * supported one, or `en` when nothing leans anywhere) and the caller should say so.
   */
  certain: boolean;
}

/** Units of evidence (function words, words with a language's own letters) needed to decide. */
export const MIN_EVIDENCE = 3;
/** The winner must have this many times the evidence of the best language on the other side (supported vs not). */
const MIN_MARGIN = 1.5;

const RE_LETTER = /\p{L}/u;
/** Identification looks at most this many characters (from the start): plenty, and bounded in cost. */
const SAMPLE_CHARS = 3000;

/**
 * What says nothing about the language: fenced/inline code, URLs, e-mail addresses, @mentions,
 * #hashtags. Linear in the text: an e-mail address is only looked for from the start of a
 * whitespace-separated chunk, and its parts stop at the first `@` and the first `.` after it, so
 * no position is scanned twice. (`\S+@\S+\.\S+` tried every position of a long chunk against
 * every `@` in it: 20 ms for 3,000 letters without spaces, 12 s for 3,000 `@`.) The address is the
 * same as that pattern's except in a chunk where inline code ends right before it.
 */
const RE_NOISE = /```[\s\S]*?(?:```|$)|`[^`\n]*`|\b(?:https?:\/\/|www\.)\S+|(?<!\S)\S[^\s@]*@\S[^\s.]*\.\S+|[@#][\p{L}\p{N}_.-]+/gu;
/** Whitespace-separated chunk → its word and the punctuation around it. */
const RE_CHUNK = /\S+/gu;
const RE_WORD_CORE = /^[("'“‘«¿¡]*(\p{L}+(?:['’]\p{L}+)*)([.,;:!?)"'”’»…]*)$/u;
const RE_SENTENCE_END = /[.!?…:]["'”’»)]*$/u;
const RE_DASHES = /^[-–—•*>]+$/;
const RE_CAPITAL_START = /^[("'“‘«¿¡]*\p{Lu}/u;

/** Words of a text that can carry evidence, lower-cased; names and code-like tokens dropped. */
export function evidenceWords(text: string): string[] {
  return wordsOfCleaned(blankNoise(text));
}

/**
 * `text` with RE_NOISE's matches blanked. Each of its alternatives needs a backtick, an `@`, a `#`,
 * `://` or `www.` in the text; most texts have none, and finding that out is a few fast scans of
 * the string where the regular expression tries every position (about 2% of a 300-word `detect()`).
 */
export function blankNoise(text: string): string {
  if (!text.includes('`') && !text.includes('@') && !text.includes('#') && !text.includes('://') && !text.includes('www.')) return text;
  return text.replace(RE_NOISE, ' ');
}

/** `evidenceWords` of a text whose noise (`RE_NOISE`) is already blanked. */
function wordsOfCleaned(cleaned: string): string[] {
  const chunks = cleaned.match(RE_CHUNK) ?? [];
  // In a text written mostly in capitals (a shouted post, a case-swapping tool) capitals say
  // nothing about names.
  let capitals = 0;
  for (const chunk of chunks) if (!startsLowerAscii(chunk) && RE_CAPITAL_START.test(chunk)) capitals++;
  const namesByCase = capitals <= 0.5 * chunks.length;
  const out: string[] = [];
  let sentenceStart = true;
  for (const chunk of chunks) {
    // Most chunks are a lower-case ASCII word with at most closing punctuation: read those
    // directly, as the regular expressions below would.
    const end = plainWordEnd(chunk);
    if (end > 0) {
      out.push(end === chunk.length ? chunk : chunk.slice(0, end));
      sentenceStart = endsWithSentenceEnd(chunk, end);
      continue;
    }
    const word = chunkWord(chunk, sentenceStart, namesByCase);
    if (word !== undefined) out.push(word);
    sentenceStart = RE_SENTENCE_END.test(chunk) || RE_DASHES.test(chunk);
  }
  return out;
}

/** The evidence word of a chunk that is not a plain lower-case ASCII word, lower-cased, or undefined. */
function chunkWord(chunk: string, sentenceStart: boolean, namesByCase: boolean): string | undefined {
  const core = RE_WORD_CORE.exec(chunk);
  // Anything else (digits, code such as foo_bar(), x=1, a.b.c, emoji) is skipped.
  if (!core) return undefined;
  const word = core[1]!;
  const first = word.codePointAt(0)!;
  const ch = String.fromCodePoint(first);
  const capital = ch !== ch.toLowerCase();
  // A capitalised word inside a sentence is a name (or a title word): it tells nothing about
  // the language around it. At a sentence start it is an ordinary word.
  return !capital || sentenceStart || !namesByCase ? lowerWord(word) : undefined;
}

function startsLowerAscii(chunk: string): boolean {
  const c = chunk.charCodeAt(0);
  return c >= 0x61 && c <= 0x7a;
}

/** `. , ; : ! ? ) " ' ” ’ » …`: what RE_WORD_CORE allows after a word. */
function isClosing(c: number): boolean {
  return (
    c === 0x2e ||
    c === 0x2c ||
    c === 0x3b ||
    c === 0x3a ||
    c === 0x21 ||
    c === 0x3f ||
    c === 0x29 ||
    c === 0x22 ||
    c === 0x27 ||
    c === 0x201d ||
    c === 0x2019 ||
    c === 0xbb ||
    c === 0x2026
  );
}

/**
 * Where the word ends when `chunk` is lower-case ASCII letters followed only by closing
 * punctuation (then RE_WORD_CORE's word is those letters, and the word is already lower-case);
 * −1 for any other chunk.
 */
function plainWordEnd(chunk: string): number {
  let i = 0;
  while (i < chunk.length) {
    const c = chunk.charCodeAt(i);
    if (c < 0x61 || c > 0x7a) break;
    i++;
  }
  if (i === 0) return -1;
  for (let j = i; j < chunk.length; j++) if (!isClosing(chunk.charCodeAt(j))) return -1;
  return i;
}

/** RE_SENTENCE_END on a chunk whose characters from `from` on are closing punctuation: `. ! ? … :` before any trailing `" ' ” ’ » )`. */
function endsWithSentenceEnd(chunk: string, from: number): boolean {
  return endsWithSentenceEndIn(chunk, from, chunk.length);
}

/** `endsWithSentenceEnd` of the chunk `text[..end)` (`from` inside it). */
function endsWithSentenceEndIn(text: string, from: number, end: number): boolean {
  let k = end - 1;
  while (k >= from) {
    const c = text.charCodeAt(k);
    if (c !== 0x22 && c !== 0x27 && c !== 0x201d && c !== 0x2019 && c !== 0xbb && c !== 0x29) break;
    k--;
  }
  if (k < from) return false;
  const c = text.charCodeAt(k);
  return c === 0x2e || c === 0x21 || c === 0x3f || c === 0x2026 || c === 0x3a;
}

function lowerWord(word: string): string {
  let w = word.toLowerCase().replace(/’/g, "'");
  // İ lower-cases to i + U+0307 outside Turkish rules; fold it back.
  if (w.includes('\u0307')) w = w.replace(/\u0307/g, '');
  return w;
}

/** What identification counts over a text's evidence words: per language (LANGS order), the words, and their letters. */
export interface LanguageEvidence {
  evidence: number[];
  words: number;
  latinLetters: number;
  nonAsciiLetters: number;
}

function noEvidence(): LanguageEvidence {
  return { evidence: new Array<number>(LANGS.length).fill(0), words: 0, latinLetters: 0, nonAsciiLetters: 0 };
}

/** Adds one evidence word's counts (`w` as `evidenceWords` gives it) to `e`. */
function addWord(e: LanguageEvidence, w: string): void {
  const mask = STOPMASK.get(w);
  if (mask !== undefined) addMask(e, mask);
  // ğ, ı, ş are frequent in Turkish and absent from the other languages listed; ä and ß are German.
  let nonAscii = 0;
  let tr = false;
  let de = false;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c <= 0x7f) continue;
    nonAscii++;
    if (c === 0x11f || c === 0x131 || c === 0x15f) tr = true;
    else if (c === 0xe4 || c === 0xdf) de = true;
  }
  if (tr) e.evidence[BIT_TR]!++;
  else if (de) e.evidence[BIT_DE]!++;
  // Words are letters and apostrophes only (see evidenceWords).
  e.words++;
  e.latinLetters += w.length;
  e.nonAsciiLetters += nonAscii;
}

function addMask(e: LanguageEvidence, mask: number): void {
  for (let b = 0; b < LANGS.length; b++) if (mask & (1 << b)) e.evidence[b]!++;
}

/** The counts of `evidenceWords(text)`'s words, one by one (the plain way, which `languageEvidence` answers as). */
export function languageEvidenceOfWords(words: readonly string[]): LanguageEvidence {
  const e = noEvidence();
  for (const w of words) addWord(e, w);
  return e;
}

/**
 * A lower-case ASCII word of 1..11 letters as a number (base 27, a = 1): exact below 2^53, and
 * one number per word. The stop words of that form, keyed so.
 */
const ASCII_STOP = new Map<number, number>();
let ASCII_STOP_MAX = 0;
for (const [w, mask] of STOPMASK) {
  if (!/^[a-z]+$/.test(w)) continue;
  if (w.length > 11) throw new Error(`The stop word ${w} is too long for its number to be exact.`);
  let key = 0;
  for (let i = 0; i < w.length; i++) key = key * 27 + (w.charCodeAt(i) - 0x60);
  ASCII_STOP.set(key, mask);
  ASCII_STOP_MAX = Math.max(ASCII_STOP_MAX, w.length);
}

/** Whether a UTF-16 code unit is one that `\s` matches (WhiteSpace and LineTerminator). */
export function isSpaceCode(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** `( " ' “ ‘ « ¿ ¡`: what may open a chunk before its word (RE_WORD_CORE, the capitals test). */
function isOpening(c: number): boolean {
  return c === 0x28 || c === 0x22 || c === 0x27 || c === 0x201c || c === 0x2018 || c === 0xab || c === 0xbf || c === 0xa1;
}

/** Start and end of each whitespace-separated chunk of the current text (scratch). */
let chunkBounds = new Int32Array(2048);

/**
 * `languageEvidenceOfWords(evidenceWords(cleaned))` for a text whose noise is already blanked,
 * without making a string per word: the chunks (`\S+`) are found by their characters, a chunk of
 * lower-case ASCII letters and closing punctuation (most of them) is read in place, its stop-word
 * entry looked up by the number its letters make, and any other chunk goes the way
 * `wordsOfCleaned` takes it, as a string. Where a string per word was made, matched and looked
 * up, this took about a third of identification's time.
 */
export function languageEvidence(cleaned: string): LanguageEvidence {
  const e = noEvidence();
  const L = cleaned.length;
  let n = 0;
  for (let i = 0; i < L; ) {
    while (i < L && isSpaceCode(cleaned.charCodeAt(i))) i++;
    if (i >= L) break;
    const start = i;
    while (i < L && !isSpaceCode(cleaned.charCodeAt(i))) i++;
    if (2 * n + 2 > chunkBounds.length) {
      const grown = new Int32Array(2 * chunkBounds.length);
      grown.set(chunkBounds);
      chunkBounds = grown;
    }
    chunkBounds[2 * n] = start;
    chunkBounds[2 * n + 1] = i;
    n++;
  }
  const bounds = chunkBounds;
  // As in wordsOfCleaned: chunks that start with a capital (after opening punctuation).
  let capitals = 0;
  for (let k = 0; k < n; k++) {
    const start = bounds[2 * k]!;
    const end = bounds[2 * k + 1]!;
    const c0 = cleaned.charCodeAt(start);
    if (c0 >= 0x61 && c0 <= 0x7a) continue;
    let p = start;
    while (p < end && isOpening(cleaned.charCodeAt(p))) p++;
    if (p === end) continue;
    const c = cleaned.charCodeAt(p);
    if (c < 0x80) {
      if (c >= 0x41 && c <= 0x5a) capitals++;
    } else if (RE_CAPITAL_START.test(cleaned.slice(start, end))) capitals++;
  }
  const namesByCase = capitals <= 0.5 * n;
  let sentenceStart = true;
  for (let k = 0; k < n; k++) {
    const start = bounds[2 * k]!;
    const end = bounds[2 * k + 1]!;
    // plainWordEnd in place, the letters' number taken on the way.
    let p = start;
    let key = 0;
    while (p < end) {
      const c = cleaned.charCodeAt(p);
      if (c < 0x61 || c > 0x7a) break;
      key = key * 27 + (c - 0x60);
      p++;
    }
    let plain = p > start;
    for (let j = p; plain && j < end; j++) if (!isClosing(cleaned.charCodeAt(j))) plain = false;
    if (plain) {
      const length = p - start;
      if (length <= ASCII_STOP_MAX) {
        const mask = ASCII_STOP.get(key);
        if (mask !== undefined) addMask(e, mask);
      }
      e.words++;
      e.latinLetters += length;
      sentenceStart = endsWithSentenceEndIn(cleaned, p, end);
      continue;
    }
    const chunk = cleaned.slice(start, end);
    const word = chunkWord(chunk, sentenceStart, namesByCase);
    if (word !== undefined) addWord(e, word);
    sentenceStart = RE_SENTENCE_END.test(chunk) || RE_DASHES.test(chunk);
  }
  return e;
}

export function identifyLanguage(fullText: string): LanguageGuess {
  const text = fullText.length > SAMPLE_CHARS ? fullText.slice(0, SAMPLE_CHARS) : fullText;
  // Blanked once for both the script count and the words.
  const cleaned = blankNoise(text);
  const scripts = scriptCounts(cleaned);
  if (scripts.other > scripts.latin && scripts.other >= MIN_EVIDENCE) {
    // A non-Latin script is clear evidence by itself (a few letters of it are not).
    let best = 'unknown';
    let bestCount = 0;
    for (const [name, count] of scripts.byScript) if (count > bestCount) [best, bestCount] = [name, count];
    return { language: best, supported: false, certain: true };
  }

  const { evidence, words: nWords, latinLetters, nonAsciiLetters } = languageEvidence(cleaned);
  const bestOf = (supported: boolean): [string, number] => {
    let best = '';
    let count = -1;
    LANGS.forEach((lang, b) => {
      if (SUPPORTED.has(lang) === supported && evidence[b]! > count) [best, count] = [lang, evidence[b]!];
    });
    return [best, count];
  };
  const [sup, supEv] = bestOf(true);
  const [uns, unsEv] = bestOf(false);
  if (supEv >= MIN_EVIDENCE && supEv >= MIN_MARGIN * unsEv && (nWords < 15 || supEv / nWords >= 0.08)) {
    return { language: sup, supported: true, certain: true };
  }
  if (unsEv >= MIN_EVIDENCE && unsEv >= MIN_MARGIN * supEv && (nWords < 15 || unsEv / nWords >= 0.08)) {
    return { language: uns, supported: false, certain: true };
  }
  if (nWords >= 15) {
    // Citation lists, tables and name lists have few function words; plain-ASCII Latin text is
    // then taken as English, anything with a real share of other Latin letters is refused.
    if (nonAsciiLetters <= 0.02 * latinLetters && supEv >= unsEv) return { language: 'en', supported: true, certain: true };
    if (Math.max(supEv, unsEv) < MIN_EVIDENCE && nonAsciiLetters > 0.02 * latinLetters)
      return { language: 'unknown', supported: false, certain: true };
  }
  // Too little evidence to decide: lean towards a supported language if anything points there.
  const leaning = supEv > 0 && supEv >= unsEv ? sup : 'en';
  return { language: leaning, supported: true, certain: false };
}

function scriptCounts(text: string): { latin: number; other: number; byScript: Map<string, number> } {
  let latin = 0;
  let other = 0;
  const byScript = new Map<string, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) {
      latin++;
      continue;
    }
    if (c < 0x80 || (c >= 0xdc00 && c <= 0xdfff)) continue;
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    if (!RE_LETTER.test(ch)) continue;
    if (c < 0x250 || (c >= 0x1e00 && c <= 0x1eff)) {
      latin++;
      continue;
    }
    other++;
    for (const [name, re] of SCRIPTS) {
      if (re.test(ch)) {
        byScript.set(name, (byScript.get(name) ?? 0) + 1);
        break;
      }
    }
  }
  return { latin, other, byScript };
}

export function isLanguage(value: string): value is Language {
  return value === 'en' || value === 'tr';
}
