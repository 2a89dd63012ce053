/**
 * The 100-page report that issue 39's first "Done when" checks on every surface: made by LibreOffice
 * from one source as a PDF and a DOCX (test/helpers/libreoffice.ts). About 105,000 words of Brown
 * corpus prose (human) in 10-point type with narrow margins, a running header and page numbers, and
 * three generated sections (AI_PARAGRAPHS, twice each) a quarter, a half and three quarters in, so
 * the map of its windows has parts that read as an AI's work among the human ones.
 *
 * Made once per test run: the files are kept in the run's temporary folder (the global setup's
 * TMPDIR, removed at the end of the run) under a name that is the source's hash, so the test files
 * that need them (the page's, the CLI's and the bots') convert it once between them.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DetectFileResponse, DocumentWindow } from '../../src/contract.ts';
import { paragraphs } from './documents.ts';
import { AI_PARAGRAPHS, buildFodt, convertWithLibreOffice, type FodtSection } from './libreoffice.ts';

/** The service's default MAX_FILE_PAGES: a PDF of more pages is refused, so the report stays within it. */
export const MAX_PAGES = 100;

/** An answer for a document judged window by window (`windows` is optional in the contract, for older servers). */
export type WholeDocument = DetectFileResponse & { windows: DocumentWindow[] };

/** `answer`, once it is seen to have its windows. */
export function wholeDocument(answer: DetectFileResponse): WholeDocument {
  if (!Array.isArray(answer.windows)) throw new Error(`No windows in the answer: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer as WholeDocument;
}

export interface HundredPageReport {
  pdf: { path: string; bytes: Buffer };
  docx: { path: string; bytes: Buffer };
}

function source(): string {
  const human = paragraphs(102_000, 150);
  const sections: FodtSection[] = [];
  const perSection = 12;
  const generatedAfter = new Set([15, 30, 45]);
  for (let i = 0; i < human.length; i += perSection) {
    sections.push({ heading: `Section ${sections.length + 1}`, paragraphs: human.slice(i, i + perSection) });
    // About 960 words: more than one window, so at least one lies wholly in generated prose.
    if (generatedAfter.has(sections.length)) {
      sections.push({ heading: `Section ${sections.length + 1}`, paragraphs: [...AI_PARAGRAPHS, ...AI_PARAGRAPHS] });
    }
  }
  return buildFodt({
    sections,
    header: 'Regional Review, Annual Report',
    footer: 'Page {n} of {total}',
    fontSize: '10pt',
    margin: '1.5cm',
  });
}

let made: Promise<HundredPageReport> | undefined;

/** The report's PDF and DOCX, converted by the first caller of the run and read from its folder by the rest. */
export function hundredPageReport(): Promise<HundredPageReport> {
  made ??= (async () => {
    const fodt = source();
    const dir = join(tmpdir(), `textdetect-hundred-pages-${createHash('sha256').update(fodt).digest('hex').slice(0, 16)}`);
    const files = async (): Promise<HundredPageReport> => ({
      pdf: { path: join(dir, 'report.pdf'), bytes: await readFile(join(dir, 'report.pdf')) },
      docx: { path: join(dir, 'report.docx'), bytes: await readFile(join(dir, 'report.docx')) },
    });
    try {
      return await files();
    } catch {
      // Not made yet: convert into a folder of our own and move it into place whole, so a test file
      // running beside this one reads both files or neither (whoever moves first wins; the other's goes).
    }
    const office = await convertWithLibreOffice(fodt, ['pdf', 'docx']);
    const own = await mkdtemp(join(tmpdir(), 'textdetect-hundred-pages-making-'));
    await writeFile(join(own, 'report.pdf'), office.pdf);
    await writeFile(join(own, 'report.docx'), office.docx);
    await rename(own, dir).catch(() => rm(own, { recursive: true, force: true }));
    return files();
  })();
  return made;
}

/**
 * Where each window lies, as every surface names it, worked out here from the answer's own fields:
 * its pages in a PDF ("page 4", "pages 4–6"), else its words counted from the start ("words 1–787").
 */
export function windowPlaces(windows: readonly DocumentWindow[]): string[] {
  const n = (x: number) => x.toLocaleString('en-US');
  let before = 0;
  return windows.map((w) => {
    const [unit, first, last] = w.pages ? ['page', w.pages.first, w.pages.last] : ['word', before + 1, before + w.words];
    before += w.words;
    return first === last ? `${unit} ${n(first)}` : `${unit}s ${n(first)}–${n(last)}`;
  });
}
