/**
 * Checking a document on the web page, in a real headless Chromium against the real service: a file
 * chosen beside the text box (and one dropped on it) is sent to POST /v1/detect/file, and the page
 * shows what was read (name, pages, characters), the verdict and the sentences as for pasted text.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf, paragraphs } from '../helpers/documents.ts';
import { startTestService, type TestService } from '../service/helpers.ts';
import { HAS_CHROMIUM, launchBrowser, NO_CHROMIUM_MESSAGE, type TestBrowser } from './browser.ts';

/** Code run inside the page reaches the DOM through this (the project's TypeScript has no DOM lib). */
type Dom = any;

if (!HAS_CHROMIUM) console.warn(`test/web/file.test.ts: ${NO_CHROMIUM_MESSAGE}`);

describe.runIf(HAS_CHROMIUM)('checking a document on the web page', () => {
  let service: TestService;
  let browser: TestBrowser;
  let key: string;
  let dir: string;
  const problems: string[] = [];
  const SOURCE = paragraphs(700, 80, 1200);

  beforeAll(async () => {
    service = await startTestService({ playground: true, maxFileBytes: 512 * 1024 });
    key = await service.newKey();
    browser = await launchBrowser();
    dir = await mkdtemp(join(tmpdir(), 'textdetect-page-files-'));
    await writeFile(
      join(dir, 'essay.pdf'),
      buildPdf({ paragraphs: SOURCE, header: 'Seminar paper, spring term', footer: 'Page {n}', linesPerPage: 28 }),
    );
    await writeFile(join(dir, 'scan.pdf'), buildPdf({ imageOnly: true, pages: 2 }));
    await writeFile(join(dir, 'big.txt'), Buffer.alloc(600 * 1024, 'a'));
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function openPage(): Promise<Page> {
    const page = await browser.context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(message.text());
      if (/Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${service.url}/`);
    // The key is kept in the browser profile after the first page saved it.
    if (await page.isVisible('#key-card')) {
      await page.fill('#api-key', key);
      await page.click('#key-form button[type="submit"]');
      await page.waitForSelector('#key-card', { state: 'hidden' });
    }
    return page;
  }

  it('a chosen PDF: file name, pages and characters read, the verdict and the sentences', async () => {
    const page = await openPage();
    await page.setInputFiles('#file', join(dir, 'essay.pdf'));
    expect(await page.textContent('#file-chosen-name')).toMatch(/^essay\.pdf \(\d+ KB\) will be checked instead of the text box\.$/);
    expect(await page.textContent('#check .btn-label')).toBe('Check file');
    const answerPromise = page.waitForResponse((r) => r.url() === `${service.url}/v1/detect/file`);
    await page.click('#check');
    const response = await answerPromise;
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${key}`);
    expect(response.request().headers()['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const answer = (await response.json()) as any;
    await page.waitForSelector('#result[data-state="done"]');

    const shown = await page.evaluate(() => {
      const { document } = globalThis as Dom;
      return {
        info: document.getElementById('file-info').textContent,
        infoHidden: document.getElementById('file-info').hidden,
        verdict: document.getElementById('result').dataset.verdict,
        // A sentence that crosses a line break is drawn as one box per line, each with the sentence's start.
        sentences: [...document.querySelectorAll('#highlighted .seg')].reduce((out: Dom[], node: Dom) => {
          const last = out[out.length - 1];
          if (last && last.start === node.dataset.start) last.text += ` ${node.firstChild.textContent}`;
          else out.push({ start: node.dataset.start, text: node.firstChild.textContent, probability: Number(node.dataset.probability) });
          return out;
        }, []),
        sentencesHidden: document.getElementById('sentences-card').hidden,
      };
    });
    expect(shown.infoHidden).toBe(false);
    expect(shown.info).toBe(
      `essay.pdf: PDF, ${answer.file.pages} pages, ${answer.file.characters.toLocaleString('en-US')} characters read`,
    );
    expect(answer.file.pages).toBeGreaterThan(1);
    expect(shown.verdict).toBe(answer.verdict);
    expect(shown.sentencesHidden).toBe(false);
    // Every sentence of the answer is on the page, with its own score, and no page furniture.
    const words = (text: string): string => text.replace(/\s+/g, ' ').trim();
    expect(shown.sentences.map((s: { text: string }) => words(s.text))).toEqual(
      answer.segments.map((s: { text: string }) => words(s.text)),
    );
    expect(shown.sentences.map((s: { probability: number }) => s.probability)).toEqual(
      answer.segments.map((s: { ai_probability: number }) => s.ai_probability),
    );
    expect(shown.sentences.map((s: { text: string }) => s.text).join(' ')).not.toMatch(/Seminar paper, spring term/);
    await page.screenshot({ path: join(dir, 'file-result.png'), fullPage: true });

    // Removing the file brings the text box back into use.
    await page.click('#clear-file');
    expect(await page.textContent('#check .btn-label')).toBe('Check text');
    await page.close();
  });

  it('a file dropped on the text box is chosen, and a scan gets the service sentence about OCR', async () => {
    const page = await openPage();
    const bytes = [...(await readFile(join(dir, 'scan.pdf')))];
    const transfer = await page.evaluateHandle((data: number[]) => {
      const { DataTransfer, File, Uint8Array: Bytes } = globalThis as Dom;
      const dt = new DataTransfer();
      dt.items.add(new File([new Bytes(data)], 'scan.pdf', { type: 'application/pdf' }));
      return dt;
    }, bytes);
    await page.dispatchEvent('#text', 'dragover', { dataTransfer: transfer });
    await page.dispatchEvent('#text', 'drop', { dataTransfer: transfer });
    expect(await page.textContent('#file-chosen-name')).toMatch(/^scan\.pdf /);
    const answerPromise = page.waitForResponse((r) => r.url() === `${service.url}/v1/detect/file`);
    await page.click('#check');
    expect((await answerPromise).status()).toBe(422);
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toMatch(/no text layer.*no OCR is done/);
    await page.close();
  });

  it('a file over the size limit is refused by the page before it is sent', async () => {
    const page = await openPage();
    let sent = false;
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/detect/file')) sent = true;
    });
    await page.setInputFiles('#file', join(dir, 'big.txt'));
    await page.click('#check');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toMatch(/big\.txt is 600 KB; this server reads files of at most 512 KB/);
    expect(sent).toBe(false);
    await page.close();
  });

  it('the page broke no policy and threw nothing', () => {
    expect(problems).toEqual([]);
  });
});
