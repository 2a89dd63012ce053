/**
 * POST /v1/detect/file against the real service: documents built in the test (PDF, DOCX, text,
 * Markdown, HTML), read in the real worker threads, scored by the real engine. Checks the extracted
 * text through the answer's segments (each carries its text), the envelope of every refusal, the cost
 * in the rate limit, and that nothing of a file reaches the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileRequestCost } from '../../src/contract.ts';
import { buildDocx, buildDocxBomb, buildPdf, buildZip, inOrderShare, paragraphs } from '../helpers/documents.ts';
import { type Answer, call, expectEnvelope, startTestService, type TestService, uploadFile } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService({ maxFileBytes: 2 * 1024 * 1024, maxFilePages: 30, fileTimeoutMs: 20_000, maxTextChars: 50_000 });
  key = await service.newKey();
});
afterAll(async () => service?.stop());

function upload(
  data: Uint8Array | string,
  filename: string,
  fields: Record<string, string> = {},
  options: { key?: string; type?: string; field?: string } = {},
): Promise<Answer> {
  return uploadFile(service, options.key ?? key, data, filename, fields, options);
}

/** The extracted text as the answer shows it: the segments' texts in order. */
function segmentText(answer: Answer): string {
  return (answer.body.segments as Array<{ text: string }>).map((segment) => segment.text).join(' ');
}

const SOURCE = paragraphs(1600, 100);
const SOURCE_TEXT = SOURCE.join('\n\n');

describe('POST /v1/detect/file reads documents', () => {
  it('a multi-page PDF: pages counted, words in reading order, running header and page numbers left out', async () => {
    const pdf = buildPdf({
      paragraphs: SOURCE,
      header: 'Journal of Regional Studies, Volume 12',
      footer: 'Page {n} of {total}',
      linesPerPage: 30,
    });
    const answer = await upload(pdf, 'report.pdf', { segments: 'true', mode: 'academic' });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
    const { file } = answer.body;
    expect(file.type).toBe('pdf');
    expect(file.name).toBe('report.pdf');
    expect(file.pages).toBeGreaterThanOrEqual(4);
    expect(answer.body.mode).toBe('academic');
    const text = segmentText(answer);
    expect(inOrderShare(SOURCE_TEXT, text)).toBeGreaterThanOrEqual(0.98);
    expect(text).not.toMatch(/Journal of Regional Studies|Page \d+ of/);
    // Offsets index the extracted text, whose length is `characters`.
    const last = answer.body.segments.at(-1);
    expect(last.end).toBeLessThanOrEqual(file.characters);
    expect(file.characters).toBeGreaterThan(SOURCE_TEXT.length * 0.95);
    expect(answer.body.language).toBe('en');
  });

  it('a DOCX with a table and footnotes: body, cells and footnote text all read', async () => {
    const docx = buildDocx({
      paragraphs: SOURCE.slice(0, 6),
      table: {
        after: 2,
        rows: [
          ['Ward', 'Turnout'],
          ['Northside precinct', 'Fifty-one percent'],
        ],
      },
      footnotes: [{ after: 1, text: 'Figures from the county clerk, published in the autumn bulletin.' }],
    });
    const answer = await upload(docx, 'essay.docx', { segments: 'true' });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
    expect(answer.body.file).toMatchObject({ name: 'essay.docx', type: 'docx', pages: null });
    const text = segmentText(answer);
    expect(inOrderShare(SOURCE.slice(0, 6).join('\n\n'), text)).toBeGreaterThanOrEqual(0.98);
    expect(text).toContain('Northside precinct');
    expect(text).toContain('Figures from the county clerk');
    expect(text).not.toMatch(/↑|\[1\]/);
  });

  it('plain text, Markdown and HTML, told from the bytes', async () => {
    const prose = SOURCE.slice(0, 2).join('\n\n');
    const markdown = `# Findings\n\n${SOURCE[0]}\n\n- first point of the list\n- second point\n\nSee [the report](https://example.com/r) for **details**.\n\n${SOURCE[1]}`;
    const html = `<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style></head><body><p>${SOURCE[0]}</p><script>var x = 1;</script><p>${SOURCE[1]}</p></body></html>`;
    const cases: Array<[string, string, string]> = [
      ['notes.txt', prose, 'text'],
      ['notes.md', markdown, 'markdown'],
      // Named .txt: the bytes say HTML.
      ['page.txt', html, 'html'],
    ];
    for (const [name, content, type] of cases) {
      const answer = await upload(content, name, { segments: 'true' });
      expect(answer.status, name).toBe(200);
      expect(answer.body.file.type, name).toBe(type);
      const text = segmentText(answer);
      expect(inOrderShare(prose, text), name).toBeGreaterThanOrEqual(0.98);
      expect(text, name).not.toMatch(/color:red|var x|<p>|\*\*|\]\(/);
    }
  });

  it('a PDF renamed .docx and declared as Word is read as the PDF it is', async () => {
    const pdf = buildPdf({ paragraphs: SOURCE.slice(0, 3) });
    const answer = await upload(pdf, 'essay.docx', {}, { type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    expect(answer.status).toBe(200);
    expect(answer.body.file).toMatchObject({ name: 'essay.docx', type: 'pdf', pages: 1 });
    expect(answer.body.segments).toEqual([]);
  });
});

describe('POST /v1/detect/file refuses what it cannot read, in the envelope', () => {
  it('415 unsupported_file_type for an image, a zip and an executable', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const zip = buildZip([{ name: 'notes.txt', data: Buffer.from('hello') }]);
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)]);
    for (const [name, bytes] of [
      ['photo.pdf', png],
      ['archive.docx', zip],
      ['tool.txt', elf],
    ] as const) {
      const answer = await upload(bytes, name);
      expectEnvelope(answer, 415, 'unsupported_file_type');
      expect(answer.body.error.param).toBe('file');
    }
  });

  it('413 file_too_large over MAX_FILE_BYTES and 413 too_many_pages over MAX_FILE_PAGES', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024 + 10, 'a');
    expectEnvelope(await upload(big, 'big.txt'), 413, 'file_too_large');
    const long = buildPdf({ paragraphs: ['A short page.'], pages: 31 });
    const answer = await upload(long, 'long.pdf');
    expectEnvelope(answer, 413, 'too_many_pages');
    expect(answer.body.error.message).toContain('31 pages');
  });

  it('422 file_unreadable for an encrypted and a damaged PDF', async () => {
    const encrypted = buildPdf({ paragraphs: SOURCE.slice(0, 2), encrypted: true });
    const answer = await upload(encrypted, 'secret.pdf');
    expectEnvelope(answer, 422, 'file_unreadable');
    expect(answer.body.error.message).toMatch(/password/);
    const whole = buildPdf({ paragraphs: SOURCE.slice(0, 6) });
    const damaged = Buffer.concat([whole.subarray(0, Math.floor(whole.length / 3)), Buffer.alloc(2000, 0x37)]);
    expectEnvelope(await upload(damaged, 'damaged.pdf'), 422, 'file_unreadable');
  });

  it('422 no_text_in_file for a scanned (image-only) PDF, saying no OCR is done', async () => {
    const answer = await upload(buildPdf({ imageOnly: true, pages: 3 }), 'scan.pdf');
    expectEnvelope(answer, 422, 'no_text_in_file');
    expect(answer.body.error.message).toMatch(/OCR/);
  });

  it('a DOCX zip bomb is refused quickly, whether its sizes are honest or lie', async () => {
    for (const lie of [false, true]) {
      const bomb = buildDocxBomb(256, lie);
      expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
      const started = performance.now();
      const answer = await upload(bomb, 'bomb.docx');
      const ms = performance.now() - started;
      expectEnvelope(answer, 422, 'file_unreadable');
      expect(answer.body.error.message).toMatch(/unpacks to more than/);
      // Refused by the size check, before the reader's 10 s time limit (the bench measures the real figure).
      expect(ms).toBeLessThan(10_000);
    }
  });

  it('the extracted text too long or in another language is answered as /v1/detect answers it', async () => {
    const small = await startTestService({ maxTextChars: 2000 });
    try {
      const smallKey = await small.newKey();
      const form = new FormData();
      form.append('file', new Blob([SOURCE.slice(0, 5).join('\n\n')]), 'long.txt');
      const response = await fetch(`${small.url}/v1/detect/file`, {
        method: 'POST',
        headers: { authorization: `Bearer ${smallKey}` },
        body: form,
      });
      const answer = { status: response.status, headers: response.headers, body: await response.json() };
      expectEnvelope(answer, 413, 'text_too_long');
    } finally {
      await small.stop();
    }
    const german =
      'Die Stadtverwaltung hat am Montag beschlossen, die Bibliothek im Zentrum zu erweitern. Die Arbeiten sollen im Frühjahr beginnen und zwei Jahre dauern. Während dieser Zeit bleibt die Zweigstelle im Norden länger geöffnet, damit die Leser nicht auf ihre Bücher verzichten müssen. Der Bürgermeister sprach von einer wichtigen Investition in die Zukunft der Stadt.';
    expectEnvelope(await upload(german, 'brief.txt'), 422, 'unsupported_language');
  });

  it('400 for a form without a file, an unknown field, or a bad mode; 415 for JSON', async () => {
    const form = new FormData();
    form.append('mode', 'general');
    const noFile = await fetch(`${service.url}/v1/detect/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expectEnvelope({ status: noFile.status, headers: noFile.headers, body: await noFile.json() }, 400, 'invalid_request');
    const unknown = await upload('Some words here.', 'a.txt', { colour: 'blue' });
    expectEnvelope(unknown, 400, 'invalid_request');
    expect(unknown.body.error.param).toBe('colour');
    const badMode = await upload('Some words here.', 'a.txt', { mode: 'poetry' });
    expectEnvelope(badMode, 400, 'invalid_request');
    expect(badMode.body.error.param).toBe('mode');
    expectEnvelope(await call(service, '/v1/detect/file', { key, body: { text: 'hello' } }), 415, 'unsupported_media_type');
    expectEnvelope(await call(service, '/v1/detect/file', { method: 'GET', key }), 405, 'method_not_allowed');
  });
});

describe('POST /v1/detect/file and the rest of the service', () => {
  it('costs what /v1/detect costs for the extracted text (one unit per started 5,000 characters), and logs type, size and pages only', async () => {
    const limitedKey = await service.newKey({ rateLimitMax: 100 });
    const pdf = buildPdf({ paragraphs: paragraphs(3500, 100, 5000), header: 'Confidential draft' });
    const before = await call(service, '/v1/detect', { key: limitedKey, body: { text: SOURCE[0] } });
    const remainingBefore = Number(before.headers.get('ratelimit-remaining'));
    const answer = await upload(pdf, 'Private Name Of Student.pdf', {}, { key: limitedKey });
    expect(answer.status).toBe(200);
    const cost = fileRequestCost(answer.body.file.characters);
    expect(cost).toBeGreaterThan(1);
    expect(Number(answer.headers.get('ratelimit-remaining'))).toBe(remainingBefore - cost);

    const line = service.logs.find((entry) => entry.path === '/v1/detect/file' && entry.request_id === answer.body.request_id);
    expect(line).toMatchObject({
      file_type: 'pdf',
      file_bytes: pdf.length,
      file_pages: answer.body.file.pages,
      cost_units: cost,
      status: 200,
    });
    const logs = service.rawLogs();
    expect(logs).not.toContain('Private Name Of Student');
    expect(logs).not.toContain(SOURCE[0]!.slice(0, 40));
  });

  it('the SDK detectFile sends the form and gets the typed answer and typed errors', async () => {
    const { DetectClient, NoTextInFileError, FileError } = await import('../../src/client/index.ts');
    const client = new DetectClient({ apiKey: key, baseUrl: service.url, maxRetries: 0 });
    try {
      const answer = await client.detectFile(buildPdf({ paragraphs: SOURCE.slice(0, 2) }), {
        filename: 'two.pdf',
        segments: true,
        mode: 'legal',
      });
      expect(answer.file).toMatchObject({ name: 'two.pdf', type: 'pdf', pages: 1 });
      expect(answer.mode).toBe('legal');
      expect(answer.segments.length).toBeGreaterThan(3);
      const error = await client.detectFile(buildPdf({ imageOnly: true }), { filename: 'scan.pdf' }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(NoTextInFileError);
      expect(error).toBeInstanceOf(FileError);
      expect((error as InstanceType<typeof FileError>).status).toBe(422);
    } finally {
      await client.close();
    }
  });
});

describe('POST /v1/detect/file with the engine in worker threads', () => {
  let threaded: TestService;
  let threadedKey: string;
  beforeAll(async () => {
    threaded = await startTestService({ workers: 1, fileWorkers: 1 });
    threadedKey = await threaded.newKey();
  });
  afterAll(async () => threaded?.stop());

  async function send(pdf: Buffer): Promise<{ status: number; body: any }> {
    const form = new FormData();
    form.append('file', new Blob([pdf as Uint8Array<ArrayBuffer>]), 'report.pdf');
    const response = await fetch(`${threaded.url}/v1/detect/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${threadedKey}` },
      body: form,
    });
    return { status: response.status, body: await response.json() };
  }

  it('scores in the file lane the same as the main engine, and lets one key have only 2 files in at once', async () => {
    const pdf = buildPdf({ paragraphs: SOURCE, linesPerPage: 30 });
    const lane = await send(pdf);
    expect(lane.status, JSON.stringify(lane.body).slice(0, 300)).toBe(200);
    // The engine is deterministic: the main-thread service above gives the same figure for the same file.
    expect(lane.body.ai_probability).toBe((await upload(pdf, 'report.pdf')).body.ai_probability);

    // Long reports (~50,000 characters each, a few hundred ms to read and score), all sent at once.
    const report = buildPdf({ paragraphs: paragraphs(7800, 110), spreadOver: 20 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(report)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]?.body.error.message).toMatch(/already has 2 files being read/);
  });
});
