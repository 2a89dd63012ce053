/**
 * Unicode normalisation that defeats the cheap evasion tricks (homoglyphs, zero-width and other
 * invisible format characters, odd whitespace) while remembering, for every code unit of the
 * normalised string, where it came from in the original string. Segment offsets are reported in
 * the caller's original string, so the mapping is what makes `input.slice(start, end)` exact.
 *
 * Case is kept here (sentence segmentation uses it); features are computed on a lower-cased copy,
 * which is what makes swapped case harmless.
 */

export interface NormalizedText {
  /** NFKC text with homoglyphs folded, invisible characters removed and whitespace runs collapsed to one ' ' or '\n'. */
  text: string;
  /**
   * `map[i]` is the UTF-16 offset in the original string of the character that produced `text[i]`;
   * `map[text.length]` is the original length, so a normalised range [s, e) maps to [map[s], map[e]).
   */
  map: Int32Array;
}

/** Cyrillic and Greek letters that render like Latin ones; used to swap letters inside Latin text. */
const HOMOGLYPHS: Record<number, string> = {
  0x0430: 'a',
  0x0435: 'e',
  0x043e: 'o',
  0x0440: 'p',
  0x0441: 'c',
  0x0443: 'y',
  0x0445: 'x',
  0x0456: 'i',
  0x0458: 'j',
  0x0455: 's',
  0x0501: 'd',
  0x04bb: 'h',
  0x0261: 'g',
  0x051b: 'q',
  0x051d: 'w',
  0x0410: 'A',
  0x0412: 'B',
  0x0415: 'E',
  0x041a: 'K',
  0x041c: 'M',
  0x041d: 'H',
  0x041e: 'O',
  0x0420: 'P',
  0x0421: 'C',
  0x0422: 'T',
  0x0425: 'X',
  0x0406: 'I',
  0x0408: 'J',
  0x0405: 'S',
  0x04c0: 'I',
  0x03bf: 'o',
  0x03bd: 'v',
  0x03c1: 'p',
  0x0391: 'A',
  0x0392: 'B',
  0x0395: 'E',
  0x0396: 'Z',
  0x0397: 'H',
  0x0399: 'I',
  0x039a: 'K',
  0x039c: 'M',
  0x039d: 'N',
  0x039f: 'O',
  0x03a1: 'P',
  0x03a4: 'T',
  0x03a5: 'Y',
  0x03a7: 'X',
  // Typographic variants that differ between scrapers and sources rather than between authors.
  0x2018: "'",
  0x2019: "'",
  0x201a: "'",
  0x201b: "'",
  0x2032: "'",
  0x02bc: "'",
  0x201c: '"',
  0x201d: '"',
  0x201e: '"',
  0x201f: '"',
  0x2033: '"',
  0x00ab: '"',
  0x00bb: '"',
  0x2010: '-',
  0x2011: '-',
  0x2212: '-',
  0x2026: '...',
};

const NEWLINES = new Set([0x0a, 0x0b, 0x0c, 0x0d, 0x85, 0x2028, 0x2029]);
const RE_SPACE = /^\s$/u;
const RE_INVISIBLE = /^[\p{Cf}\p{Cc}\u180e\u034f\u115f\u1160\u3164\uffa0]$/u;
const RE_MARK = /^\p{M}$/u;
const RE_CYRILLIC_GREEK = /[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]/gu;

/**
 * Whether Cyrillic/Greek lookalikes should be folded to Latin: only when the text is Latin with a
 * sprinkling of lookalikes. Real Russian or Greek text keeps its letters so that language
 * identification reports it instead of scoring it as garbled English.
 */
function shouldFoldHomoglyphs(input: string): boolean {
  const foreign = input.match(RE_CYRILLIC_GREEK);
  if (!foreign) return false;
  let nonLookalike = 0;
  for (const ch of foreign) if (HOMOGLYPHS[ch.codePointAt(0)!] === undefined) nonLookalike++;
  const letters = input.length;
  // A real Cyrillic/Greek text uses many letters that have no Latin twin (б, д, ж, λ, π, ...).
  return nonLookalike < Math.max(2, 0.02 * letters);
}

export function normalize(input: string): NormalizedText {
  const n = input.length;
  const out: string[] = [];
  const map = new Int32Array(n * 3 + 1); // NFKC can expand; grown below if ever needed
  let mapArr = map;
  let len = 0;
  const fold = shouldFoldHomoglyphs(input);
  let pendingSpace = 0; // 0 none, 1 space, 2 newline
  let pendingAt = 0;

  const push = (s: string, origin: number): void => {
    if (pendingSpace !== 0) {
      if (len > 0) {
        out.push(pendingSpace === 2 ? '\n' : ' ');
        mapArr[len++] = pendingAt;
      }
      pendingSpace = 0;
    }
    for (let k = 0; k < s.length; k++) {
      if (len + 2 >= mapArr.length) {
        const bigger = new Int32Array(mapArr.length * 2);
        bigger.set(mapArr);
        mapArr = bigger;
      }
      mapArr[len++] = origin;
    }
    out.push(s);
  };

  let i = 0;
  while (i < n) {
    const c = input.charCodeAt(i);
    if (c > 0x20 && c < 0x7f) {
      // Fast path: a run of printable ASCII with single spaces needs no work; copy it whole.
      let j = i + 1;
      for (;;) {
        if (j >= n) break;
        const d = input.charCodeAt(j);
        if (d > 0x20 && d < 0x7f) j++;
        else if (d === 0x20 && j + 1 < n && input.charCodeAt(j + 1) > 0x20 && input.charCodeAt(j + 1) < 0x7f) j += 2;
        else break;
      }
      // A combining mark after the run belongs with its last character (e.g. s + U+0327 → ş).
      if (j < n && input.charCodeAt(j) >= 0x300 && RE_MARK.test(input[j]!)) j--;
      if (j > i) {
        const run = input.slice(i, j);
        push(run, i);
        // push() gave every character of the run the origin i; make them sequential.
        for (let k = 1; k < run.length; k++) mapArr[len - run.length + k] = i + k;
        i = j;
        continue;
      }
    }
    const cp = input.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const ch = width === 2 ? input.slice(i, i + 2) : input[i]!;
    const isBreak = c === 0x20 || c === 0x09 || NEWLINES.has(cp);
    if (!isBreak && (c < 0x20 || c === 0x7f || (c > 0x7f && RE_INVISIBLE.test(ch)))) {
      // Zero-width spaces/joiners, BOM, soft hyphens, bidi controls: invisible, so dropped
      // (tested before whitespace because JavaScript's \s includes U+FEFF).
      i += width;
      continue;
    }
    if (isBreak || (c > 0x7f && RE_SPACE.test(ch))) {
      const nl = NEWLINES.has(cp) ? 2 : 1;
      if (pendingSpace === 0) pendingAt = i;
      if (nl > pendingSpace) pendingSpace = nl;
      i += width;
      continue;
    }
    // Take the character with its combining marks so NFKC can compose e.g. s + U+0327 into ş.
    let j = i + width;
    while (j < n) {
      const next = input.codePointAt(j)!;
      const w = next > 0xffff ? 2 : 1;
      const s = input.slice(j, j + w);
      if (!RE_MARK.test(s)) break;
      j += w;
    }
    let cluster = input.slice(i, j).normalize('NFKC');
    if (fold || cp >= 0x2000 || cp < 0x370) {
      let folded = '';
      for (const u of cluster) {
        const code = u.codePointAt(0)!;
        const rep = HOMOGLYPHS[code];
        if (rep !== undefined && (fold || code < 0x370 || code >= 0x2000)) folded += rep;
        else folded += u;
      }
      cluster = folded;
    }
    // NFKC turns some characters (e.g. U+00A0 inside a cluster) into spaces; keep spacing collapsed.
    if (/^\s+$/u.test(cluster)) {
      if (pendingSpace === 0) pendingAt = i;
      if (pendingSpace < 1) pendingSpace = 1;
    } else if (cluster.length > 0) {
      push(cluster, i);
    }
    i = j;
  }
  mapArr[len] = n;
  return { text: out.join(''), map: mapArr.subarray(0, len + 1) };
}

/**
 * Lower-cases for feature extraction (features only: offsets never refer to this string, so its
 * length may differ from the input's).
 */
export function lowerForFeatures(text: string, language: 'en' | 'tr'): string {
  // Turkish: dotted and dotless i are folded into one letter. A case-swapping tool that is not
  // Turkish-aware turns i into I, which Turkish rules would lower to ı, so keeping them apart would
  // let a case swap change the score; the distinction carries little authorship signal.
  // Also "i̇" (i + combining dot, what a root-locale lower-casing makes of İ) becomes i.
  if (language === 'tr')
    return text
      .toLocaleLowerCase('tr')
      .replace(/ı/g, 'i')
      .replace(/(?<=i)\u0307/g, '');
  return text
    .replace(/İ/g, 'i')
    .toLowerCase()
    .replace(/(?<=i)\u0307/g, '');
}
