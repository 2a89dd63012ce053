/**
 * Reads the prose out of a document, whatever thread it runs in (the service runs it in a worker:
 * see pool.ts). The format is told from the bytes (sniff.ts), never from a name.
 */
import { extractDocx } from './docx.ts';
import { htmlToText } from './html.ts';
import { markdownToText } from './markdown.ts';
import { extractPdf } from './pdf.ts';
import { sniffType } from './sniff.ts';
import { DocumentError, type ExtractedDocument, type ExtractLimits, textTooLong } from './types.ts';
import { countChars } from '../contract.ts';

export async function extractDocument(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedDocument> {
  const document = await extractAny(bytes, limits);
  // The scorer refuses NUL characters and lone surrogates in a submitted text; a file's are dropped
  // (a page's start moves back by the NULs before it).
  let text = document.text;
  let pageStarts = document.pageStarts;
  if (text.includes('\u0000')) {
    if (pageStarts) {
      const nulsBefore = (offset: number) => text.slice(0, offset).split('\u0000').length - 1;
      pageStarts = pageStarts.map((start) => start - nulsBefore(start));
    }
    text = text.replaceAll('\u0000', '');
  }
  text = text.replace(/\p{Cs}/gu, '\uFFFD');
  // The text is the service's only once it is within the document limit: a longer one never leaves
  // the reader (the extractors stop early when they can tell sooner).
  const characters = countChars(text);
  if (characters > limits.maxChars) throw textTooLong({ type: document.type, pages: document.pages, read: { characters, whole: true } });
  return { ...document, text, pageStarts };
}

async function extractAny(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedDocument> {
  if (isEncryptedOffice(bytes)) {
    throw new DocumentError(
      'file_unreadable',
      'The Word document is encrypted (it needs a password to open), so its text cannot be read; send a copy saved without a password.',
      { type: 'docx' },
    );
  }
  const type = await sniffType(bytes);
  switch (type) {
    case 'pdf':
      return extractPdf(bytes, limits);
    case 'docx':
      return extractDocx(bytes, limits);
    default: {
      const source = new TextDecoder().decode(bytes).replace(/^\uFEFF/, '');
      const text =
        type === 'html'
          ? htmlToText(source, { maxChars: limits.maxChars, type })
          : type === 'markdown'
            ? markdownToText(source, limits.maxChars)
            : plainText(source);
      if (!/\p{L}/u.test(text)) {
        throw new DocumentError(
          'no_text_in_file',
          'The file holds no words to check (it is empty or only whitespace, digits and symbols).',
          {
            type,
          },
        );
      }
      return { type, pages: null, text, pageStarts: null };
    }
  }
}

/**
 * Line endings unified and trailing spaces trimmed, and a hard-wrapped text (its lines cut at a
 * fixed width, as e-mail and some editors write it) unwrapped: a line that reaches the wrap width
 * continues on the next one, as the same paragraph does in the text's PDF, DOCX, HTML or Markdown
 * (the sentence scores read line breaks as sentence ends). The text is otherwise scored as written.
 * Trailing spaces by hand: /[ \t]+$/gm retries every space of a long run that does not end its line
 * (100,000 spaces before a word took longer than the reading time limit).
 */
export function plainText(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    let end = line.length;
    while (end > 0 && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--;
    if (end < line.length) lines[i] = line.slice(0, end);
  }
  return unwrap(lines).trim();
}

/** Widest wrap width taken for hard wrapping (e-mail wraps at 72–78); a file of longer lines keeps its line breaks. */
const MAX_WRAP_WIDTH = 100;
/** A list item, a quote or an indented line: never joined to the line before it. */
const RE_LINE_OF_ITS_OWN = /^(?:\s|[-*+•>]\s|\d{1,3}[.)]\s)/u;

function unwrap(lines: string[]): string {
  const lengths = lines
    .filter((line) => line !== '')
    .map((line) => line.length)
    .sort((a, b) => a - b);
  const width = lengths[Math.floor(lengths.length * 0.9)] ?? 0;
  if (lengths.length < 4 || width > MAX_WRAP_WIDTH) return lines.join('\n');
  let out = lines[0] ?? '';
  for (let i = 1; i < lines.length; i++) {
    const previous = lines[i - 1] as string;
    const line = lines[i] as string;
    const wrapped = previous.length >= width * 0.75 && line !== '' && !RE_LINE_OF_ITS_OWN.test(line);
    // A line cut after a hyphen (`well-` / `known`) goes on without a space: plain text keeps its hyphens.
    out += wrapped ? (/\p{L}-$/u.test(previous) ? '' : ' ') : '\n';
    out += line;
  }
  return out;
}

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le');

/**
 * Word (and every Office program) saves a password-protected .docx not as a zip but as an OLE
 * compound file holding an `EncryptedPackage` stream; told apart here from an old binary .doc,
 * which is refused as an unsupported type.
 */
function isEncryptedOffice(bytes: Uint8Array): boolean {
  if (bytes.length < 512 || !CFB_MAGIC.every((byte, i) => bytes[i] === byte)) return false;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(ENCRYPTED_PACKAGE);
}
