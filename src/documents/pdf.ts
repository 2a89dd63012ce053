/**
 * The prose of a PDF's text layer, read with pdf.js (through unpdf's build for servers). Lines are
 * rebuilt from the positioned text pieces pdf.js gives, paragraphs from the gaps between lines, and
 * what repeats at the top or bottom of the pages (running headers, footers, page numbers) is left
 * out so it is not scored as prose.
 */
import { getDocumentProxy } from 'unpdf';
import { countChars } from '../contract.ts';
import { DocumentError, type ExtractedDocument, type ExtractLimits, textTooLong } from './types.ts';

interface Line {
  text: string;
  y: number;
  height: number;
  /** Horizontal extent, from the first piece's start to the last piece's end. */
  width: number;
}

interface PositionedItem {
  str: string;
  transform: number[];
  width: number;
  height: number;
  hasEOL: boolean;
}

/** Lines looked at on each page's top and bottom edge for repeated furniture. */
const EDGE_LINES = 2;

export async function extractPdf(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedDocument> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js refuses Node Buffers (and takes over the array it is given): it gets a plain copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: false });
  } catch (err) {
    throw pdfError(err, undefined);
  }
  try {
    const pages = pdf.numPages;
    // pdf.js takes the page tree's /Count as written; a count below one is a damaged file.
    if (!Number.isInteger(pages) || pages < 1) {
      throw new DocumentError(
        'file_unreadable',
        `The PDF is damaged: its page tree gives ${pages} as its number of pages. Open and save it again, or export it anew.`,
        { type: 'pdf', pages: null },
      );
    }
    if (pages > limits.maxPages) {
      throw new DocumentError(
        'too_many_pages',
        `The PDF has ${pages} pages, more than the ${limits.maxPages} this server reads; send the part to check as a shorter PDF.`,
        { type: 'pdf', pages },
      );
    }
    const perPage: Line[][] = [];
    // Characters the text is sure to hold (what no furniture rule can drop): past the document limit,
    // reading stops there instead of going through every page.
    let sure = 0;
    for (let number = 1; number <= pages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      const lines = toLines(content.items.filter((item) => 'str' in item) as PositionedItem[]);
      perPage.push(lines);
      page.cleanup();
      sure += sureChars(lines);
      if (sure > limits.maxChars) throw textTooLong({ type: 'pdf', pages, read: { pages: number, characters: sure, whole: false } });
    }
    const { text, pageStarts } = joinPages(dropFurniture(perPage));
    if (!/\p{L}/u.test(text) && perPage.some((lines) => lines.some((line) => /\p{L}/u.test(line.text)))) {
      // There is text, but only what repeats on the pages' edges: the pages are not images.
      throw new DocumentError(
        'no_text_in_file',
        `The PDF's only text is what repeats at the top or bottom of ${pages === 1 ? 'its page' : `its ${pages} pages`} (a running header, footer or page number), which is not prose to check. Send a document with body text, or paste its text.`,
        { type: 'pdf', pages },
      );
    }
    if (!/\p{L}/u.test(text)) {
      throw new DocumentError(
        'no_text_in_file',
        `The PDF has no text layer (its ${pages === 1 ? 'page is' : `${pages} pages are`} images, as in a scan), and text in images is not read: no OCR is done. Send the document as exported from the program that wrote it, or paste its text.`,
        { type: 'pdf', pages },
      );
    }
    return { type: 'pdf', pages, text, pageStarts };
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw pdfError(err, pdf.numPages);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

function pdfError(err: unknown, pages: number | undefined): DocumentError {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'PasswordException') {
    return new DocumentError(
      'file_unreadable',
      'The PDF is encrypted (it needs a password to open), so its text cannot be read; send a copy saved without a password.',
      { type: 'pdf', pages: pages ?? null },
    );
  }
  return new DocumentError(
    'file_unreadable',
    'The PDF is damaged or not a valid PDF (pdf.js could not read its structure); open and save it again, or export it anew.',
    { type: 'pdf', pages: pages ?? null },
  );
}

/** Groups pdf.js's text pieces into lines (top to bottom as they come in the content stream). */
function toLines(items: PositionedItem[]): Line[] {
  const lines: Line[] = [];
  let current: { parts: string; y: number; height: number; startX: number; endX: number } | undefined;
  const finished = (line: NonNullable<typeof current>): Line => ({
    text: line.parts.replace(/\s+/g, ' ').trim(),
    y: line.y,
    height: line.height,
    width: line.endX - line.startX,
  });
  let breakNext = false;
  for (const item of items) {
    const x = item.transform[4] ?? 0;
    const y = item.transform[5] ?? 0;
    const height = Math.abs(item.height) || Math.abs(item.transform[3] ?? 0) || 10;
    if (item.str === '') {
      if (item.hasEOL) breakNext = true;
      continue;
    }
    const sameLine = current !== undefined && !breakNext && Math.abs(current.y - y) < Math.max(current.height, height) * 0.5;
    if (current && sameLine) {
      const gap = x - current.endX;
      const spaced = /\s$/.test(current.parts) || /^\s/.test(item.str);
      current.parts += !spaced && gap > height * 0.15 ? ` ${item.str}` : item.str;
      current.endX = x + item.width;
      current.height = Math.max(current.height, height);
    } else {
      if (current) lines.push(finished(current));
      current = { parts: item.str, y, height, startX: x, endX: x + item.width };
    }
    breakNext = item.hasEOL;
  }
  if (current) lines.push(finished(current));
  return lines.filter((line) => line.text !== '');
}

/** The indexes of a page's top-most and bottom-most EDGE_LINES lines, where furniture is looked for. */
function edgeIndexes(lines: Line[]): Set<number> {
  const byHeight = lines.map((line, index) => ({ index, y: line.y })).sort((a, b) => b.y - a.y);
  const edge = new Set<number>();
  for (const { index } of byHeight.slice(0, EDGE_LINES)) edge.add(index);
  for (const { index } of byHeight.slice(-EDGE_LINES)) edge.add(index);
  return edge;
}

/** Same line whatever its page number: digits stand for any digits, case and spacing are ignored. */
function furnitureKey(text: string): string {
  return text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
}

const PAGE_NUMBER = /^(?:[-–—]\s*)?(?:page\s+|p\.\s*)?(?:\d+|[ivxlcdm]+)(?:\s*(?:of|\/)\s*\d+)?(?:\s*[-–—])?$/i;

/**
 * Leaves out running headers and footers: a line among the top or bottom EDGE_LINES of a page whose
 * digit-blind form comes back at the edge of at least half the pages (at least two), and lone page
 * numbers at a page's edge.
 */
function dropFurniture(pages: Line[][]): Line[][] {
  const edges = pages.map(edgeIndexes);
  const seen = new Map<string, number>();
  pages.forEach((lines, page) => {
    const keys = new Set([...(edges[page] ?? [])].map((index) => furnitureKey(lines[index]?.text ?? '')));
    for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1);
  });
  const threshold = Math.max(2, Math.ceil(pages.length / 2));
  return pages.map((lines, page) =>
    lines.filter((line, index) => {
      if (!edges[page]?.has(index)) return true;
      if (PAGE_NUMBER.test(line.text)) return false;
      return (seen.get(furnitureKey(line.text)) ?? 0) < threshold;
    }),
  );
}

/**
 * Characters a page's lines give the text at the least, as `countChars` counts them: the lines that
 * are not among its edge lines (which may be dropped as furniture), less the hyphen a line-end join
 * removes.
 */
function sureChars(lines: Line[]): number {
  const edge = edgeIndexes(lines);
  let chars = 0;
  lines.forEach((line, index) => {
    if (!edge.has(index)) chars += countChars(line.text) - (line.text.endsWith('-') ? 1 : 0);
  });
  return chars;
}

/** A line ending in a word broken at a hyphen (`exam-`, or `exam -` as pdf.js spaces a justified line): the fragment. */
const RE_BROKEN_END = /(\p{L}+)\s?-$/u;
/** A line opening with the rest of a broken word. */
const RE_BROKEN_START = /^(\p{L}+)/u;
const RE_HYPHENATED_WORD = /\p{L}+(?:-\p{L}+)*/gu;

/**
 * Share of lines ending in a broken word from which a document is taken as hyphenated automatically
 * (LaTeX, or a word processor with hyphenation on, breaks one line in 10–20 of justified prose;
 * without it, only a compound's own hyphen ends a line, one line in a few hundred).
 */
const AUTO_HYPHENATION_SHARE = 0.02;

/**
 * How a word broken at a line-end hyphen is put together again, as the same text's DOCX or HTML
 * holds it: kept hyphenated (`A-bombs`, `well-known`) when that form is in the document elsewhere
 * or the hyphen follows a capital or digit; joined (`exam-ple` → `example`) when the joined word is
 * in the document elsewhere; otherwise joined when both parts are lower-case in a document that is
 * hyphenated automatically (`hyphenated`), kept when it is not. A compound broken at its own hyphen
 * in an automatically hyphenated document, and found nowhere else in it, is joined (`week-end` →
 * `weekend`): nothing in the PDF tells the two hyphens apart.
 */
function hyphenJoin(words: Set<string>, hyphenated: boolean, before: string, after: string): boolean {
  const joined = `${before}${after}`.toLowerCase();
  if (words.has(`${before}-${after}`.toLowerCase()) && !words.has(joined)) return false;
  if (words.has(joined)) return true;
  return hyphenated && /\p{Ll}$/u.test(before) && /^\p{Ll}/u.test(after);
}

/**
 * Lines to paragraphs: a gap clearly wider than the page's usual line spacing starts a new one.
 * Also gives where each page's text begins in the result.
 */
function joinPages(pages: Line[][]): { text: string; pageStarts: number[] } {
  // The document's words as its lines hold them (not broken ones), for putting broken words together.
  const words = new Set<string>();
  let lineCount = 0;
  let brokenCount = 0;
  for (const lines of pages)
    for (const line of lines) {
      lineCount++;
      if (RE_BROKEN_END.test(line.text)) brokenCount++;
      for (const [word] of line.text.replace(/\s?-$/, '').matchAll(RE_HYPHENATED_WORD)) words.add(word.toLowerCase());
    }
  const hyphenated = brokenCount > AUTO_HYPHENATION_SHARE * lineCount;
  const paragraphs: string[] = [];
  const pageStarts: number[] = [];
  /** Length of the finished paragraphs with their separators, where `current` begins. */
  let done = 0;
  let current = '';
  /** Appends a line; returns where it begins in the text. */
  const append = (text: string): number => {
    const base = done + (paragraphs.length > 0 ? 2 : 0);
    if (current === '') {
      current = text;
      return base;
    }
    const broken = RE_BROKEN_END.exec(current);
    const rest = broken ? RE_BROKEN_START.exec(text) : null;
    if (broken && rest) {
      current =
        current.slice(0, broken.index + broken[1]!.length) + (hyphenJoin(words, hyphenated, broken[1]!, rest[1]!) ? '' : '-') + text;
      return base + current.length - text.length;
    }
    current += ` ${text}`;
    return base + current.length - text.length;
  };
  const flush = (): void => {
    if (current) {
      done += (paragraphs.length > 0 ? 2 : 0) + current.length;
      paragraphs.push(current);
    }
    current = '';
  };
  for (const lines of pages) {
    // A page without text begins where the next text will.
    pageStarts.push(current === '' ? done + (paragraphs.length > 0 ? 2 : 0) : done + (paragraphs.length > 0 ? 2 : 0) + current.length + 1);
    const gaps: number[] = [];
    for (let i = 1; i < lines.length; i++) {
      const gap = (lines[i - 1]?.y ?? 0) - (lines[i]?.y ?? 0);
      if (gap > 0) gaps.push(gap);
    }
    gaps.sort((a, b) => a - b);
    const usual = gaps[Math.floor(gaps.length / 2)] ?? 0;
    const widths = lines.map((line) => line.width).sort((a, b) => a - b);
    const fullWidth = widths[Math.floor(widths.length * 0.9)] ?? 0;
    lines.forEach((line, i) => {
      const previous = lines[i - 1];
      if (previous) {
        const gap = previous.y - line.y;
        // A jump up (a new column) or a wide gap ends the paragraph; so does a change of type size (a
        // heading, before or after it), and a short line ending a sentence (the last line of a
        // paragraph set without spacing), as the same text's DOCX or HTML paragraphs would.
        const resized = Math.abs(line.height - previous.height) > 0.15 * Math.max(line.height, previous.height);
        const shortEnd = fullWidth > 0 && previous.width < 0.8 * fullWidth && /[.!?:"”)]$/.test(previous.text);
        if (gap < 0 || (usual > 0 && gap > usual * 1.4) || resized || shortEnd) flush();
      }
      const at = append(line.text);
      if (i === 0) pageStarts[pageStarts.length - 1] = at;
    });
    // A paragraph running on to the next page continues unless the page ended a sentence.
    if (/[.!?:;"'”’)]$/.test(current)) flush();
  }
  flush();
  return { text: paragraphs.join('\n\n'), pageStarts };
}
