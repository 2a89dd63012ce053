/**
 * The prose of a DOCX: mammoth turns the Word XML into HTML (paragraphs, tables, footnotes), whose
 * text is read like HTML's. Before mammoth (whose zip reader inflates whatever it is asked for), the
 * zip is checked with yauzl: the unpacked sizes its central directory declares must stay under the
 * limit, so a zip bomb is refused before a byte is inflated; then every part is inflated once, as a
 * stream whose bytes are dropped, with yauzl's size check, which stops the moment a part unpacks to
 * more than it declared, so a zip that lies about its sizes cannot use more memory than the limit
 * either. Every part, whatever its name: the package's relationships choose which parts mammoth
 * reads (a document part may be called document.bin, a styles part styles.dat), so a name says
 * nothing about what will be inflated.
 */
import mammoth from 'mammoth';
import yauzl from 'yauzl';
import { htmlToText } from './html.ts';
import { DocumentError, type ExtractedDocument, type ExtractLimits } from './types.ts';

/** More parts than any real document has; beyond it the zip is refused unread. */
const MAX_ENTRIES = 10_000;

export async function extractDocx(bytes: Uint8Array, limits: ExtractLimits): Promise<ExtractedDocument> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await checkZip(buffer, limits.maxUnpackedBytes);
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
  const text = htmlToText(html);
  if (!/\p{L}/u.test(text)) {
    throw new DocumentError('no_text_in_file', 'The Word document holds no text to check (it is empty, or only images: no OCR is done).', {
      type: 'docx',
    });
  }
  return { type: 'docx', pages: null, text };
}

function unreadable(why: string): DocumentError {
  return new DocumentError('file_unreadable', `The Word document cannot be read: ${why}. Open and save it again, then resend it.`, {
    type: 'docx',
  });
}

async function checkZip(buffer: Buffer, maxUnpackedBytes: number): Promise<void> {
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
    // yauzl errors as soon as a part outgrows its declared size.
    for (const entry of entries) {
      if (entry.fileName.endsWith('/') && entry.uncompressedSize === 0) continue;
      const stream = await zip.openReadStreamPromise(entry);
      try {
        for await (const _chunk of stream) {
          // Reading is the check; the bytes are dropped (mammoth reads its own copy).
        }
      } catch (err) {
        if (/too many bytes|expected \d+ bytes|size mismatch/i.test((err as Error).message)) throw tooBig(0);
        throw unreadable('a part of it is damaged');
      }
    }
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw unreadable('its zip structure is damaged');
  } finally {
    zip.close();
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
