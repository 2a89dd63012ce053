/**
 * src/documents on its own: what the extractors keep and drop, and the worker pool's limits (time,
 * memory, bounded unpacking), with documents built in the test.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/documents/extract.ts';
import { DocumentError, DocumentReader } from '../../src/documents/index.ts';
import { buildDocx, buildDocxBomb, buildPdf, buildZip, inOrderShare, paragraphs, unzipEntries } from '../helpers/documents.ts';

const LIMITS = { maxPages: 50, maxUnpackedBytes: 16 * 1024 * 1024, maxChars: 750_000 };

async function failure(promise: Promise<unknown>): Promise<DocumentError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DocumentError);
  return err as DocumentError;
}

describe('extracting text', () => {
  it('drops running headers, footers and lone page numbers, keeps a heading that opens one page', async () => {
    const body = paragraphs(1200, 80, 2000);
    const pdf = buildPdf({
      paragraphs: ['Introduction to the survey', ...body],
      header: 'Draft for the board, March',
      footer: '- {n} -',
      linesPerPage: 25,
    });
    const document = await extractDocument(pdf, LIMITS);
    expect(document.pages).toBeGreaterThanOrEqual(4);
    expect(document.text.startsWith('Introduction to the survey')).toBe(true);
    expect(document.text).not.toContain('Draft for the board');
    expect(document.text).not.toMatch(/- \d+ -/);
    expect(inOrderShare(body.join('\n\n'), document.text)).toBeGreaterThanOrEqual(0.98);
    // Paragraphs stay paragraphs.
    expect(document.text.split('\n\n').length).toBeGreaterThanOrEqual(body.length);
  });

  it('a text without page furniture loses none of its words', async () => {
    const body = paragraphs(900, 80, 4000);
    const pdf = buildPdf({ paragraphs: body, linesPerPage: 25 });
    const document = await extractDocument(pdf, LIMITS);
    expect(inOrderShare(body.join('\n\n'), document.text)).toBeGreaterThanOrEqual(0.99);
  });

  it('tells formats from the bytes: an old .doc and a plain zip are refused, an encrypted Word file is unreadable', async () => {
    const cfb = Buffer.alloc(4096);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(cfb);
    cfb.writeUInt16LE(0x003e, 0x18);
    cfb.writeUInt16LE(0x0003, 0x1a);
    cfb.writeUInt16LE(0xfffe, 0x1c);
    const doc = await failure(extractDocument(cfb, LIMITS));
    expect(doc.code).toBe('unsupported_file_type');
    const encrypted = Buffer.concat([cfb, Buffer.from('EncryptionInfo', 'utf16le'), Buffer.from('EncryptedPackage', 'utf16le')]);
    const protectedWord = await failure(extractDocument(encrypted, LIMITS));
    expect(protectedWord.code).toBe('file_unreadable');
    expect(protectedWord.message).toMatch(/password/);
    const zip = await failure(extractDocument(buildZip([{ name: 'data.csv', data: Buffer.from('a,b\n1,2\n') }]), LIMITS));
    expect(zip.code).toBe('unsupported_file_type');
  });

  it('a DOCX whose document part is missing is unreadable, not a crash', async () => {
    const broken = buildZip([
      {
        name: '[Content_Types].xml',
        data: Buffer.from(
          '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        ),
      },
      { name: 'word/styles.xml', data: Buffer.from('<?xml version="1.0"?><w:styles/>') },
    ]);
    const err = await failure(extractDocument(broken, LIMITS));
    expect(err.code).toBe('file_unreadable');
  });

  it('a zip bomb is refused from its directory, and one that lies about its sizes while inflating', async () => {
    for (const lie of [false, true]) {
      const err = await failure(extractDocument(buildDocxBomb(64, lie), LIMITS));
      expect(err.code).toBe('file_unreadable');
      expect(err.message).toContain('unpacks to more than 16 MB');
    }
    // A normal document well under the limit is read.
    const ok = await extractDocument(buildDocx({ paragraphs: paragraphs(300, 100) }), LIMITS);
    expect(ok.type).toBe('docx');
  });
});

/**
 * How the time to read a file grows with its size: the time to read a file of size 4n over the time
 * to read a file of size n four times (the same bytes in all), each the best of five, the two taken
 * in turn so a busy moment of the machine does not fall on one only. About 1 when reading is linear,
 * 4 or more when quadratic; measured in the test itself, so it does not depend on the machine's
 * speed. The bound (3) leaves room for the garbage collector and a loaded machine.
 */
async function growth(make: (n: number) => string, n: number): Promise<{ ratio: number; text: string }> {
  const small = Buffer.from(make(n));
  const large = Buffer.from(make(4 * n));
  const time = async (bytes: Buffer, times: number): Promise<{ ms: number; text: string }> => {
    const start = performance.now();
    let text = '';
    // Without the document limit, which would stop the larger files early: the whole reading is what is timed.
    for (let i = 0; i < times; i++) text = (await extractDocument(bytes, { ...LIMITS, maxChars: Number.MAX_SAFE_INTEGER })).text;
    return { ms: performance.now() - start, text };
  };
  const times = large.length / small.length;
  // Warm-up at both sizes (the JIT, the first large strings).
  await time(small, 1);
  let text = (await time(large, 1)).text;
  let [a, b] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (let round = 0; round < 5; round++) {
    a = Math.min(a, (await time(small, Math.round(times))).ms);
    const measured = await time(large, 1);
    b = Math.min(b, measured.ms);
    text = measured.text;
  }
  return { ratio: b / Math.max(a, 0.001), text };
}

describe('reading time grows linearly with the file (issue 32 item 16)', () => {
  // A few lines of Markdown first, so the files are told as Markdown.
  const md = '# Notes\n\n- a [link](https://example.com)\n- **bold** point\n\n';
  it('plain text with a long run of spaces before a word', async () => {
    const { ratio, text } = await growth((n) => `word ${' '.repeat(n)}x\nA second line of the note.   `, 2_000_000);
    expect(ratio, `time grew ${ratio.toFixed(2)} times as fast as the size`).toBeLessThan(3);
    expect(text.endsWith('A second line of the note.')).toBe(true);
  }, 120_000);
  it('HTML with deeply nested <div> elements', async () => {
    const { ratio, text } = await growth((n) => `<!DOCTYPE html><html><body>${'<div>'.repeat(n)}Deep text.</body></html>`, 200_000);
    expect(ratio, `time grew ${ratio.toFixed(2)} times as fast as the size`).toBeLessThan(3);
    expect(text).toBe('Deep text.');
  }, 120_000);
  it('Markdown with deeply nested quotes', async () => {
    const { ratio, text } = await growth((n) => `${md}${'> '.repeat(n)}A deeply quoted line.\n`, 1_000_000);
    expect(ratio, `time grew ${ratio.toFixed(2)} times as fast as the size`).toBeLessThan(3);
    expect(text).toContain('A deeply quoted line.');
  }, 120_000);
  it('Markdown with deeply nested lists, on one line and as a staircase of 3,000 levels', async () => {
    const { ratio, text } = await growth((n) => `${md}${'- '.repeat(n)}A deeply listed item.\n`, 1_000_000);
    expect(ratio, `time grew ${ratio.toFixed(2)} times as fast as the size`).toBeLessThan(3);
    expect(text).toContain('A deeply listed item.');
    // A staircase n levels deep is n² bytes; read it at 3,000 levels and check every item is there.
    const staircase = md + Array.from({ length: 3000 }, (_, i) => `${'  '.repeat(i)}- item ${i}`).join('\n');
    const document = await extractDocument(Buffer.from(staircase), LIMITS);
    expect(document.text).toContain('item 0');
    expect(document.text).toContain('item 2999');
  }, 120_000);
  it('a Markdown table as wide as it is long', async () => {
    const { ratio, text } = await growth((n) => `${md}|${' cell |'.repeat(n)}\n|${'---|'.repeat(n)}\n${'| row |\n'.repeat(n)}`, 20_000);
    expect(ratio, `time grew ${ratio.toFixed(2)} times as fast as the size`).toBeLessThan(3);
    expect(text).toContain('cell');
    expect(text).toContain('row');
    // An ordinary table is still read as cells.
    const table = await extractDocument(Buffer.from(`${md}| Ward | Turnout |\n|---|---|\n| North | Fifty |\n`), LIMITS);
    expect(table.text).toMatch(/Ward\s+Turnout/);
    expect(table.text).not.toContain('|');
  }, 120_000);
});

describe('reading stops at the document limit (issue 40 item 3)', () => {
  it('a DOCX far over the limit is refused while its text streams by, before mammoth reads it', async () => {
    // Three million characters in a file of a few kilobytes, as in the issue (61.7 million in 365 KB).
    const docx = buildDocx({ paragraphs: ['word '.repeat(600_000)] });
    expect(docx.length).toBeLessThan(64 * 1024);
    const err = await failure(extractDocument(docx, { ...LIMITS, maxChars: 50_000 }));
    expect(err.code).toBe('text_too_long');
    // Counted up to the limit and at most one inflated chunk past it, not to the end.
    expect(err.read?.characters).toBeGreaterThan(50_000);
    expect(err.read?.characters).toBeLessThan(200_000);
  });

  it('a PDF over the limit is not read past the page where it passes it', async () => {
    const pdf = buildPdf({ paragraphs: paragraphs(30_000, 110), linesPerPage: 50 });
    const err = await failure(extractDocument(pdf, { ...LIMITS, maxChars: 20_000, maxPages: 1000 }));
    expect(err.code).toBe('text_too_long');
    expect(err.pages).toBeGreaterThan(30);
    expect(err.read?.pages).toBeLessThan(8);
    expect(err.read?.characters).toBeGreaterThan(20_000);
  });

  it('HTML and plain text over the limit are refused; at the limit they are read', async () => {
    const html = `<!DOCTYPE html><html><body>${'<p>Some words here.</p>'.repeat(2000)}</body></html>`;
    expect((await failure(extractDocument(Buffer.from(html), { ...LIMITS, maxChars: 5000 }))).code).toBe('text_too_long');
    const text = `${'word '.repeat(999)}word`;
    expect((await extractDocument(Buffer.from(text), { ...LIMITS, maxChars: 4999 })).text).toBe(text);
    expect((await failure(extractDocument(Buffer.from(text), { ...LIMITS, maxChars: 4998 }))).code).toBe('text_too_long');
  });
});

describe('zip bombs in parts of any name (issue 32 item 14)', () => {
  it('a document part named .bin and a styles part named .dat that lie about their sizes are refused by what they inflate to', async () => {
    const bombs = [
      buildDocxBomb(64, true, { documentName: 'word/document.bin' }),
      buildDocxBomb(64, true, { stylesName: 'styles.dat' }),
      buildDocxBomb(64, true, { documentName: 'word/media/image1.png' }),
    ];
    for (const bomb of bombs) {
      const err = await failure(extractDocument(bomb, LIMITS));
      expect(err.code).toBe('file_unreadable');
      expect(err.message).toContain('unpacks to more than 16 MB');
    }
    // An honest document whose main part is named .bin is read.
    const renamed = unzipEntries(buildDocx({ paragraphs: ['A document whose main part has an unusual name.'] })).map((entry) =>
      entry.name === 'word/document.xml'
        ? { ...entry, name: 'word/document.bin' }
        : entry.name === '_rels/.rels'
          ? { ...entry, data: Buffer.from(entry.data.toString().replace('word/document.xml', 'word/document.bin')) }
          : entry,
    );
    expect((await extractDocument(buildZip(renamed), LIMITS)).text).toBe('A document whose main part has an unusual name.');
  });
});

describe('DocumentReader (reader processes)', () => {
  const readers: DocumentReader[] = [];
  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.close()));
  });

  it('gives up on a file after the time limit, hands its place to the spare reader, and reads the next file', async () => {
    // 250 ms: far less than the 341-page PDF below takes (0.9 s on a warm, idle machine; more when
    // loaded), far more than a short text file takes on the fresh worker (a few ms).
    // Its text (1.5 million characters) is over the default document limit: with that limit it would be refused early instead.
    const reader = new DocumentReader({ workers: 1, timeoutMs: 250, ...LIMITS, maxPages: 1000, maxChars: 10_000_000 });
    readers.push(reader);
    await reader.ready();
    // The reader and the spare, both started.
    const [first, spare] = reader.pids;
    expect(reader.pids).toHaveLength(2);
    const big = buildPdf({ paragraphs: paragraphs(250_000, 110), linesPerPage: 60 });
    const err = await failure(reader.read(big));
    expect(err.code).toBe('file_unreadable');
    expect(err.message).toMatch(/took longer than/);
    const next = await reader.read(Buffer.from('A short note that is read after the slow file was given up.'));
    expect(next.type).toBe('text');
    // The spare read the note, and a new spare was started; the killed reader is gone once its exit is seen.
    while (reader.pids.includes(first!)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reader.pids).toHaveLength(2);
    expect(reader.pids[0]).toBe(spare);
  });

  it('reads files queued behind each other in order, one per worker', async () => {
    const reader = new DocumentReader({ workers: 1, timeoutMs: 20_000, ...LIMITS });
    readers.push(reader);
    const texts = ['First file, plain text.', 'Second file, plain text.', 'Third file, plain text.'];
    const answers = await Promise.all(texts.map((text) => reader.read(Buffer.from(text))));
    expect(answers.map((answer) => answer.text)).toEqual(texts);
    expect(reader.queued).toBe(0);
  });
});
