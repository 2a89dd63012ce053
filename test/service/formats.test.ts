/**
 * The same document gives the same answer whatever its format (issue 39 item 2): one report, made
 * into a PDF, a DOCX, an HTML and an XHTML file by LibreOffice (a real office suite, from one source), and
 * into Markdown and hard-wrapped plain text, and into the PDF and DOCX this repository's own
 * writers build, sent to the real service: the same verdict and headline, probabilities within
 * 0.02, the same windows and spans over the same words. The report has running headers, page
 * numbers, headings, automatic hyphenation and a generated part (so there are spans to compare).
 * Without LibreOffice the office-suite tests are skipped with a notice (.ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocx, buildPdf, paragraphs, wordsOf } from '../helpers/documents.ts';
import { AI_PARAGRAPHS, buildFodt, convertWithLibreOffice, type FodtSection, NO_SOFFICE, SOFFICE } from '../helpers/libreoffice.ts';
import { type Answer, startTestService, type TestService, uploadFile } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService({ fileTimeoutMs: 60_000 });
  key = await service.newKey();
});
afterAll(async () => service?.stop());

if (!SOFFICE) console.warn(`formats.test.ts: ${NO_SOFFICE}`);

const HUMAN = paragraphs(4000, 140, 3000);
const SECTIONS: FodtSection[] = [
  { heading: 'Background', paragraphs: HUMAN.slice(0, 10) },
  { heading: 'Findings', paragraphs: AI_PARAGRAPHS },
  { heading: 'Further work', paragraphs: HUMAN.slice(10) },
];

/** Hard-wrapped at 72 columns, as e-mail and plain-text editors write it. */
function wrap(paragraph: string, width = 72): string {
  const lines: string[] = [];
  let line = '';
  for (const word of paragraph.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/** What is compared: the headline, the probabilities, and where windows and spans lie, in words. */
interface Reading {
  name: string;
  answer: Answer;
  words: string[];
}

/** The words of the extracted text before `offset` (read off the answer's segments, which carry their text). */
function wordIndex(answer: Answer, offset: number): number {
  let words = 0;
  for (const s of answer.body.segments as Array<{ start: number; end: number; text: string }>) {
    if (s.end <= offset) words += wordsOf(s.text).length;
    else if (s.start < offset) return words + wordsOf(s.text.slice(0, offset - s.start)).length;
    else break;
  }
  return words;
}

/** A range of the extracted text as the words it covers. */
function wordsIn(answer: Answer, range: { start: number; end: number }): string {
  return (answer.body.segments as Array<{ start: number; end: number; text: string }>)
    .filter((s) => s.start >= range.start && s.end <= range.end)
    .flatMap((s) => wordsOf(s.text))
    .join(' ');
}

async function read(name: string, bytes: Uint8Array | string): Promise<Reading> {
  const answer = await uploadFile(service, key, bytes, name, { segments: 'true' });
  expect(answer.status, `${name}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
  const words = (answer.body.segments as Array<{ text: string }>).flatMap((s) => wordsOf(s.text));
  return { name, answer, words };
}

/** Every reading agrees with the first: verdict, headline, probabilities within 0.02, windows and spans over the same words. */
function expectAgreement(readings: Reading[], wordSlack = 0): void {
  const [first, ...rest] = readings as [Reading, ...Reading[]];
  const a = first.answer.body;
  expect(a.windows.length, 'a document of several windows').toBeGreaterThan(1);
  expect(a.generated_spans.length, 'a document with generated spans').toBeGreaterThan(0);
  for (const other of rest) {
    const b = other.answer.body;
    const what = `${other.name} vs ${first.name}`;
    expect(Math.abs(other.words.length - first.words.length), `${what}: words`).toBeLessThanOrEqual(wordSlack);
    expect(b.verdict, what).toBe(a.verdict);
    expect(b.origin, what).toBe(a.origin);
    expect(b.composition, what).toBe(a.composition);
    expect(Math.abs(b.ai_probability - a.ai_probability), `${what}: ai_probability`).toBeLessThanOrEqual(0.02);
    expect(Math.abs(b.generated_share - a.generated_share), `${what}: generated_share`).toBeLessThanOrEqual(0.02);
    expect(b.windows.length, `${what}: windows`).toBe(a.windows.length);
    b.windows.forEach((w: any, i: number) => {
      const v = a.windows[i];
      expect(w.verdict, `${what}: window ${i}`).toBe(v.verdict);
      expect(Math.abs(w.ai_probability - v.ai_probability), `${what}: window ${i}`).toBeLessThanOrEqual(0.02);
      expect(
        Math.abs(wordIndex(other.answer, w.start) - wordIndex(first.answer, v.start)),
        `${what}: window ${i} starts`,
      ).toBeLessThanOrEqual(wordSlack);
    });
    const shown = (r: Reading) => r.answer.body.generated_spans.filter((s: any) => s.confidence !== 'low');
    expect(
      shown(other).map((s: any) => wordsIn(other.answer, s)),
      `${what}: the spans of medium or high confidence cover the same words`,
    ).toEqual(shown(first).map((s: any) => wordsIn(first.answer, s)));
    // A `low` span shows nothing (no part stands out). Where the readings' words differ, one run of
    // sentences at the 50% edge may be a low span in one and not the other (the dense PDF's
    // hyphenation: a Brown news paragraph at 0.71 as a document, its sentences just either side of 50%).
    const low = (r: Reading) =>
      r.answer.body.generated_spans.filter((s: any) => s.confidence === 'low').map((s: any) => wordsIn(r.answer, s));
    const [lowA, lowB] = [low(first), low(other)];
    if (wordSlack === 0) expect(lowB, `${what}: the low spans cover the same words`).toEqual(lowA);
    else
      expect(
        Math.abs(lowB.length - lowA.length) + lowB.filter((w: string) => !lowA.includes(w)).length,
        `${what}: low spans`,
      ).toBeLessThanOrEqual(2);
  }
}

describe('one report in every format gives one answer', () => {
  it.skipIf(!SOFFICE)(
    'LibreOffice PDF, DOCX, HTML and XHTML, Markdown and hard-wrapped text: running header, page numbers, headings, hyphenation',
    async () => {
      const fodt = buildFodt({
        sections: SECTIONS,
        header: 'Regional Review, Annual Report',
        footer: 'Page {n} of {total}',
        hyphenate: true,
      });
      const office = await convertWithLibreOffice(fodt, ['docx', 'pdf', 'html', 'xhtml']);
      const markdown = SECTIONS.map((s) => `## ${s.heading}\n\n${s.paragraphs.join('\n\n')}`).join('\n\n');
      const text = SECTIONS.map((s) => `${s.heading}\n\n${s.paragraphs.map((p) => wrap(p)).join('\n\n')}`).join('\n\n');
      const readings = [
        await read('report.docx', office.docx),
        await read('report.pdf', office.pdf),
        await read('report.html', office.html),
        await read('report.xhtml', office.xhtml),
        await read('report.md', markdown),
        await read('report.txt', text),
      ];
      expect(readings[1]!.answer.body.file.pages).toBeGreaterThan(4);
      // Not the running header, nor a page number: the PDF's extra lines are furniture.
      for (const reading of readings) expect(reading.words.join(' ')).not.toMatch(/regional review|page \d+ of/);
      expectAgreement(readings);
      // The windows of the PDF say on which pages they lie.
      const pages = readings[1]!.answer.body.windows.map((w: any) => w.pages);
      expect(pages[0].first).toBe(1);
      expect(pages.at(-1).last).toBe(readings[1]!.answer.body.file.pages);
      for (const reading of readings.slice(2)) expect(reading.answer.body.windows.every((w: any) => w.pages === null)).toBe(true);
    },
    300_000,
  );

  it.skipIf(!SOFFICE)(
    'a dense LibreOffice PDF (10 pt, narrow margins, no space between paragraphs) and its DOCX',
    async () => {
      const fodt = buildFodt({
        sections: SECTIONS,
        header: 'Regional Review',
        footer: '{n}',
        hyphenate: true,
        fontSize: '10pt',
        margin: '1.5cm',
        paragraphSpacing: '0cm',
      });
      const office = await convertWithLibreOffice(fodt, ['docx', 'pdf']);
      // A compound broken at its own hyphen at a line end reads as one word in the PDF (`week-end` →
      // `weekend`: an automatically hyphenated PDF does not tell the two hyphens apart), so the PDF
      // may hold a word or two fewer.
      expectAgreement([await read('dense.docx', office.docx), await read('dense.pdf', office.pdf)], 2);
    },
    300_000,
  );

  it.skipIf(!SOFFICE)(
    'a 100-page report (10-point type, narrow margins): its PDF and DOCX are judged whole, window by window, alike',
    async () => {
      const body = paragraphs(108_000, 150);
      const sections = Array.from({ length: Math.ceil(body.length / 12) }, (_, i) => ({
        heading: `Section ${i + 1}`,
        paragraphs: body.slice(i * 12, i * 12 + 12),
      }));
      const fodt = buildFodt({
        sections,
        header: 'Regional Review',
        footer: 'Page {n} of {total}',
        fontSize: '10pt',
        margin: '1.5cm',
        hyphenate: true,
      });
      const office = await convertWithLibreOffice(fodt, ['docx', 'pdf']);
      const [docx, pdf] = [await read('report.docx', office.docx), await read('report.pdf', office.pdf)];
      const pages = pdf.answer.body.file.pages;
      expect(pages).toBeGreaterThan(90);
      expect(pages).toBeLessThanOrEqual(100);
      expect(pdf.answer.body.file.characters).toBeGreaterThan(600_000);
      const windows = pdf.answer.body.windows;
      expect(windows.length).toBeGreaterThan(120);
      expect(windows[0].pages.first).toBe(1);
      expect(windows.at(-1).pages.last).toBe(pages);
      for (let i = 1; i < windows.length; i++) expect(windows[i].pages.first).toBeGreaterThanOrEqual(windows[i - 1].pages.last - 1);
      const [a, b] = [docx.answer.body, pdf.answer.body];
      expect(Math.abs(docx.words.length - pdf.words.length)).toBeLessThanOrEqual(20);
      expect(b.verdict).toBe(a.verdict);
      expect(b.origin).toBe(a.origin);
      expect(Math.abs(b.ai_probability - a.ai_probability)).toBeLessThanOrEqual(0.02);
      expect(b.windows.length).toBe(a.windows.length);
      const differing = b.windows.filter((w: any, i: number) => Math.abs(w.ai_probability - a.windows[i].ai_probability) > 0.02);
      expect(differing.length, 'windows whose probability differs by more than 0.02').toBeLessThanOrEqual(Math.ceil(a.windows.length / 20));
    },
    600_000,
  );

  it('the PDF and DOCX this repository writes, with a running header and page numbers', async () => {
    const all = SECTIONS.flatMap((s) => [s.heading, ...s.paragraphs]);
    const readings = [
      await read('built.docx', buildDocx({ paragraphs: all })),
      await read('built.pdf', buildPdf({ paragraphs: all, spreadOver: 12, header: 'Regional Review', footer: 'Page {n} of {total}' })),
      await read('built.txt', all.join('\n\n')),
    ];
    expectAgreement(readings);
  }, 120_000);
});
