/**
 * Issue 39, "Done when": a 100-page PDF and its DOCX, made by LibreOffice from one source
 * (test/helpers/hundred-pages.ts), checked on the web page in headless Chromium against the real
 * service. The page shows the headline of the answer and, under *Part by part*, one cell per window
 * with where it lies (pages in the PDF, words in the DOCX, which has no pages), its figure and its
 * reading; the PDF and the DOCX give the same headline and the same map. The CLI and the bots check
 * the same files in test/documents/hundred-pages.test.ts.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAnswer, formatPercent } from '../../src/words.ts';
import {
  type HundredPageReport,
  hundredPageReport,
  MAX_PAGES,
  type WholeDocument,
  wholeDocument,
  windowPlaces,
} from '../helpers/hundred-pages.ts';
import { NO_SOFFICE, SOFFICE } from '../helpers/libreoffice.ts';
import { startTestService, type TestService } from '../service/helpers.ts';
import { HAS_CHROMIUM, launchBrowser, NO_CHROMIUM_MESSAGE, type TestBrowser } from './browser.ts';

/** Code run inside the page reaches the DOM through this (the project's TypeScript has no DOM lib). */
type Dom = any;

if (!HAS_CHROMIUM) console.warn(`test/web/hundred-pages.test.ts: ${NO_CHROMIUM_MESSAGE}`);
if (!SOFFICE) console.warn(`test/web/hundred-pages.test.ts: ${NO_SOFFICE}`);

/** What the page shows of a checked file. */
interface Shown {
  answer: WholeDocument;
  headline: string;
  fileInfo: string;
  summary: string;
  boxHidden: boolean;
  cells: Array<{ where: string; percent: string; origin: string; tip: string }>;
}

describe.runIf(HAS_CHROMIUM && SOFFICE)('a 100-page report checked on the web page', () => {
  let service: TestService;
  let browser: TestBrowser;
  let report: HundredPageReport;
  const problems: string[] = [];
  const shown: Record<'pdf' | 'docx', Shown> = {} as never;

  beforeAll(async () => {
    report = await hundredPageReport();
    // Reading a 100-page PDF takes seconds, and longer on a busy machine: its bound is not what is tested.
    service = await startTestService({ playground: true, fileTimeoutMs: 300_000 });
    browser = await launchBrowser();
    const key = await service.newKey();
    const page = await browser.context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${service.url}/`);
    await page.fill('#api-key', key);
    await page.click('#key-form button[type="submit"]');
    await page.waitForSelector('#key-card', { state: 'hidden' });
    shown.pdf = await check(page, report.pdf.path);
    shown.docx = await check(page, report.docx.path);
    await page.close();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  async function check(page: Page, path: string): Promise<Shown> {
    await page.setInputFiles('#file', path);
    const answered = page.waitForResponse((r) => r.url() === `${service.url}/v1/detect/file`, { timeout: 600_000 });
    await page.click('#check');
    const response = await answered;
    const body = await response.json();
    expect(response.status(), JSON.stringify(body).slice(0, 300)).toBe(200);
    const answer = wholeDocument(body);
    await page.waitForFunction(
      (id: string) => (globalThis as Dom).document.getElementById('result').dataset.requestId === id,
      answer.request_id,
    );
    return {
      answer,
      ...(await page.evaluate(() => {
        const { document } = globalThis as Dom;
        const text = (id: string) => document.getElementById(id).textContent;
        return {
          headline: text('verdict'),
          fileInfo: text('file-info'),
          summary: text('windows-summary'),
          boxHidden: document.getElementById('windows-box').hidden,
          cells: [...document.querySelectorAll('#window-map li')].map((li: Dom) => ({
            where: li.querySelector('.window-where').textContent,
            percent: li.querySelector('.window-percent').textContent,
            origin: li.dataset.origin,
            tip: li.dataset.tip,
          })),
        };
      })),
    };
  }

  it('the PDF: its pages read, the headline, and every window in the map with its pages, figure and reading', () => {
    const { answer, ...page } = shown.pdf;
    expect(answer.file.pages).toBeGreaterThanOrEqual(95);
    expect(answer.file.pages).toBeLessThanOrEqual(MAX_PAGES);
    expect(page.fileInfo).toBe(
      `report.pdf: PDF, ${answer.file.pages} pages, ${answer.file.characters.toLocaleString('en-US')} characters read`,
    );
    // A human report with three generated sections: partly AI-written, and the map says where.
    expect(answer.origin).toBe('partly_ai');
    expect(page.headline).toBe(describeAnswer(answer).label);
    expect(page.headline).toMatch(/^Partly AI-written: about \d+% of the words look generated$/);
    expect(page.boxHidden).toBe(false);
    expect(page.summary).toBe(describeAnswer(answer).windows?.summary);
    expect(answer.windows.length).toBeGreaterThan(100);
    expect(page.cells.map((c) => c.where)).toEqual(windowPlaces(answer.windows));
    expect(page.cells[0]?.where).toMatch(/^pages? 1\b/);
    expect(page.cells.at(-1)?.where).toMatch(new RegExp(`\\b${answer.file.pages}$`));
    expect(page.cells.map((c) => c.percent)).toEqual(answer.windows.map((w) => formatPercent(w.ai_probability)));
    expect(page.cells.map((c) => c.origin)).toEqual(answer.windows.map((w) => w.origin));
    const origins = new Set(page.cells.map((c) => c.origin));
    expect(origins.has('human')).toBe(true);
    expect(origins.has('partly_ai') || origins.has('ai_written')).toBe(true);
    // Each AI-touched window lies within a stretch of pages the summary names.
    const named = [...page.summary.matchAll(/pages? (\d+)(?:–(\d+))?/g)].map((m) => [Number(m[1]), Number(m[2] ?? m[1])]);
    for (const w of answer.windows.filter((w) => w.origin === 'partly_ai' || w.origin === 'ai_written')) {
      expect(
        named.some(([first, last]) => first! <= w.pages!.first && w.pages!.last <= last!),
        JSON.stringify(w.pages),
      ).toBe(true);
    }
  });

  it('the DOCX: the same headline and the same windows, placed by words (a DOCX has no pages)', () => {
    const pdf = shown.pdf;
    const { answer, ...page } = shown.docx;
    expect(page.fileInfo).toBe(`report.docx: Word document, ${answer.file.characters.toLocaleString('en-US')} characters read`);
    expect(answer.origin).toBe(pdf.answer.origin);
    expect(page.headline).toBe(pdf.headline);
    expect(page.headline).toBe(describeAnswer(answer).label);
    expect(page.summary).toBe(describeAnswer(answer).windows?.summary);
    expect(page.cells.map((c) => c.where)).toEqual(windowPlaces(answer.windows));
    for (const cell of page.cells) expect(cell.where).toMatch(/^words [\d,]+–[\d,]+$/);
    // The same windows, cut at the same words: as many, reading the same way but for a few near a bar.
    expect(page.cells).toHaveLength(pdf.cells.length);
    const differing = page.cells.filter((c, i) => c.origin !== pdf.cells[i]?.origin);
    expect(differing.length, 'windows that read differently in the DOCX').toBeLessThanOrEqual(Math.ceil(pdf.cells.length / 20));
    answer.windows.forEach((w, i) => {
      expect(Math.abs(w.words - pdf.answer.windows[i]!.words), `window ${i}: words`).toBeLessThanOrEqual(40);
    });
  });

  it('the page threw nothing', () => {
    expect(problems).toEqual([]);
  });
});
