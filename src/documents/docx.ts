/**
 * The prose of a DOCX: mammoth turns the Word XML into HTML (paragraphs, tables, footnotes), whose
 * text is read like HTML's. Before mammoth (whose zip reader inflates whatever it is asked for), the
 * zip is checked with yauzl: the unpacked sizes its central directory declares must stay under the
 * limit, so a zip bomb is refused before a byte is inflated; then every part is inflated once, as a
 * stream whose bytes are dropped, with yauzl's size check, which stops the moment a part unpacks to
 * more than it declared, so a zip that lies about its sizes cannot use more memory than the limit
 * either. Every part, whatever its name: the package's relationships choose which parts mammoth
 * reads (a document part may be called document.bin, a styles part styles.dat), so a name says
 * nothing about what will be inflated. While the main document part (the one the package's
 * relationships name) streams through that check, the characters of its text runs are counted: a
 * document holding more than the document limit is refused there, before mammoth builds anything
 * (61.7 million characters fit in a 365 KB file).
 */
import mammoth from 'mammoth';
import yauzl from 'yauzl';
import { htmlToText } from './html.ts';
import { DocumentError, type ExtractedDocument, type ExtractLimits, textTooLong } from './types.ts';

/** More parts than any real document has; beyond it the zip is refused unread. */
const MAX_ENTRIES = 10_000;

export async function extractDocx(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedDocument> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await checkZip(buffer, limits);
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer },
      // Images are dropped without being read: they carry no prose, and inflating them costs memory.
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })), ignoreEmptyParagraphs: true },
    );
    html = result.value;
  } catch {
    throw unreadable('its Word content could not be read (a part is missing or damaged)');
  }
  // Footnote markers ([1]) and the back-links (↑) of the footnote list are links, not prose.
  html = html
    .replace(/<sup><a href="#(?:footnote|endnote)-[^"]*"[^>]*>\[\d+\]<\/a><\/sup>/g, '')
    .replace(/\s*<a href="#(?:footnote|endnote)-ref-[^"]*">↑<\/a>/g, '');
  const text = htmlToText(html, { maxChars: limits.maxChars, type: 'docx' });
  if (!/\p{L}/u.test(text)) {
    throw new DocumentError('no_text_in_file', 'The Word document holds no text to check (it is empty, or only images: no OCR is done).', {
      type: 'docx',
    });
  }
  return { type: 'docx', pages: null, text, pageStarts: null };
}

function unreadable(why: string): DocumentError {
  return new DocumentError('file_unreadable', `The Word document cannot be read: ${why}. Open and save it again, then resend it.`, {
    type: 'docx',
  });
}

async function checkZip(buffer: Buffer, limits: ExtractLimits): Promise<void> {
  const { maxUnpackedBytes, maxChars } = limits;
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false });
  } catch {
    throw unreadable('its zip structure is damaged');
  }
  const tooBig = (bytes: number): DocumentError =>
    new DocumentError(
      'file_unreadable',
      `The Word document unpacks to more than ${formatBytes(maxUnpackedBytes)}${bytes > 0 ? ` (it declares ${formatBytes(bytes)})` : ''}, more than this server reads, as a zip bomb would; it was not unpacked. Send a smaller document.`,
      { type: 'docx' },
    );
  try {
    // Pass 1: the central directory alone (nothing inflated).
    const entries: yauzl.Entry[] = [];
    let declared = 0;
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      if (entries.length >= MAX_ENTRIES) throw unreadable(`it has more than ${MAX_ENTRIES} parts`);
      if (entry.isEncrypted()) throw unreadable('it is encrypted (password-protected); save a copy without a password');
      declared += entry.uncompressedSize;
      if (declared > maxUnpackedBytes) throw tooBig(declared);
      entries.push(entry);
    }
    // Pass 2: inflate every part (what mammoth reads is chosen by the relationships, not by names);
    // yauzl errors as soon as a part outgrows its declared size. The package relationships name the
    // main document part, whose text is counted as it streams by.
    let mainPart: string | undefined;
    let counted = false;
    const inflate = async (entry: yauzl.Entry, count: boolean): Promise<string | undefined> => {
      const stream = await zip.openReadStreamPromise(entry);
      const counter = count ? new WordTextCounter() : undefined;
      const keep = entry.fileName === PACKAGE_RELATIONSHIPS ? new TextDecoder() : undefined;
      let kept = '';
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          // Reading is the check; the bytes are dropped (mammoth reads its own copy).
          if (keep && kept.length < 65_536) kept += keep.decode(chunk, { stream: true });
          if (counter) {
            counter.feed(chunk);
            if (counter.characters > maxChars) {
              stream.destroy();
              throw textTooLong({ type: 'docx', read: { characters: counter.characters, whole: false } });
            }
          }
        }
      } catch (err) {
        if (err instanceof DocumentError) throw err;
        if (/too many bytes|expected \d+ bytes|size mismatch/i.test((err as Error).message)) throw tooBig(0);
        throw unreadable('a part of it is damaged');
      }
      return keep ? kept : undefined;
    };
    for (const entry of entries) {
      if (entry.fileName.endsWith('/') && entry.uncompressedSize === 0) continue;
      const isMain = mainPart !== undefined && entry.fileName === mainPart;
      const relationships = await inflate(entry, isMain);
      if (isMain) counted = true;
      if (relationships !== undefined) mainPart = mainDocumentPart(relationships);
    }
    // The main part came before the relationships in the zip: it is counted now, in a pass of its own.
    const main = !counted && mainPart !== undefined ? entries.find((entry) => entry.fileName === mainPart) : undefined;
    if (main) await inflate(main, true);
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw unreadable('its zip structure is damaged');
  } finally {
    zip.close();
  }
}

/** The package's relationships, which name its main document part. */
const PACKAGE_RELATIONSHIPS = '_rels/.rels';

/** The main document part's name in the zip, from the package relationships (`Type` …/officeDocument). */
function mainDocumentPart(relationships: string): string | undefined {
  for (const [tag] of relationships.matchAll(/<(?:\w+:)?Relationship\b[^>]*>/g)) {
    if (!/\bType\s*=\s*["'][^"']*\/officeDocument["']/.test(tag)) continue;
    const target = /\bTarget\s*=\s*["']([^"']+)["']/.exec(tag)?.[1];
    if (target) return target.replace(/^\/+/, '');
  }
  return undefined;
}

/**
 * Counts, as `countChars` would and never more, the characters of the text runs (`<w:t>`) of a
 * WordprocessingML part fed to it in chunks: an entity counts as one character, a run of whitespace
 * as one, and what mammoth does not read is skipped (the `mc:Choice` of alternate content, whose
 * `mc:Fallback` it reads, and text moved away, `w:moveFrom`). Paragraph breaks are not counted, so
 * the count stays under what the extracted text holds.
 */
class WordTextCounter {
  characters = 0;
  readonly #decoder = new TextDecoder();
  /** Inside a `<w:t>` element's text. */
  #inText = false;
  /** Inside an entity (`&amp;`), counted when it began. */
  #inEntity = false;
  /** Depth of skipped elements around the current position. */
  #skip = 0;
  #space = false;
  /** An unfinished tag at the end of the last chunk. */
  #carry = '';

  feed(chunk: Uint8Array): void {
    const s = this.#carry + this.#decoder.decode(chunk, { stream: true });
    this.#carry = '';
    let i = 0;
    while (i < s.length) {
      if (this.#inText) {
        const lt = s.indexOf('<', i);
        this.#count(s, i, lt < 0 ? s.length : lt);
        if (lt < 0) return;
        this.#inText = false;
        i = lt;
        continue;
      }
      const lt = s.indexOf('<', i);
      if (lt < 0) return;
      const gt = s.indexOf('>', lt);
      if (gt < 0) {
        this.#carry = s.slice(lt);
        return;
      }
      this.#tag(s.slice(lt + 1, gt));
      i = gt + 1;
    }
  }

  #tag(tag: string): void {
    const closing = tag.startsWith('/');
    const name = (closing ? tag.slice(1) : tag).split(/[\s/]/, 1)[0];
    const selfClosing = tag.endsWith('/');
    if (name === 'mc:Choice' || name === 'w:moveFrom') {
      if (closing) this.#skip = Math.max(0, this.#skip - 1);
      else if (!selfClosing) this.#skip++;
    } else if (name === 'w:t' && !closing && !selfClosing && this.#skip === 0) this.#inText = true;
  }

  #count(s: string, from: number, to: number): void {
    for (let i = from; i < to; i++) {
      const c = s.charCodeAt(i);
      if (this.#inEntity) {
        if (c === 0x3b) this.#inEntity = false;
        continue;
      }
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.#space = this.characters > 0;
        continue;
      }
      if (this.#space) {
        this.characters++;
        this.#space = false;
      }
      if (c === 0x26) this.#inEntity = true;
      // A low surrogate ends a character already counted.
      if (c < 0xdc00 || c > 0xdfff) this.characters++;
    }
  }
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry): void => {
      cleanup();
      resolve(entry);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(undefined);
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
  if (bytes >= 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MB`;
  return `${Math.round(bytes / 1024)} KB`;
}
