/**
 * Issue 39 on the page: the answers of test/words/contradictions.test.ts (the engine's, for the dev
 * texts and long documents made of them) rendered by the page's own render code in headless Chromium,
 * against the real service that serves it and its words module, held to the same rules, and headlined
 * in the same words as the CLI, Slack and Discord.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDetector } from '../../src/detector/index.ts';
import { describeAnswer } from '../../src/words.ts';
import { NO_TRAINING_DATA_MESSAGE, trainingDataFile } from '../helpers/training-data.ts';
import { startTestService, type TestService } from '../service/helpers.ts';
import { checkSurfaces, formatTally, type Tally } from '../words/check.ts';
import { RULES, type Rule } from '../words/contradictions.ts';
import { DEV_FILES, type DevAnswer, HAS_DEV_FILES, testAnswers } from '../words/dev-answers.ts';
import { HAS_CHROMIUM, launchBrowser, NO_CHROMIUM_MESSAGE, type TestBrowser } from './browser.ts';

if (!HAS_CHROMIUM) console.warn(`test/web/words.test.ts: ${NO_CHROMIUM_MESSAGE}`);
if (!HAS_DEV_FILES)
  console.warn(`test/web/words.test.ts: ${NO_TRAINING_DATA_MESSAGE} (${DEV_FILES.map((f) => trainingDataFile(f)).join(', ')})`);

/** Code run inside the page reaches the DOM through this (the project's TypeScript has no DOM lib). */
type Dom = any;

describe.runIf(HAS_CHROMIUM && HAS_DEV_FILES)('the page says what every surface says, over the dev answers', () => {
  let service: TestService;
  let browser: TestBrowser;
  let page: Page;
  let answers: Array<DevAnswer & { document: boolean }>;
  let tally: Tally;
  const problems: string[] = [];

  beforeAll(async () => {
    answers = testAnswers(await createDetector());
    service = await startTestService({ playground: true });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${service.url}/`);
    tally = await checkSurfaces(answers, page);
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('breaks no rule, and headlines each answer as the CLI, Slack and Discord do', () => {
    expect(problems).toEqual([]);
    expect(tally.checked.page).toBe(answers.length);
    const shown = tally.findings.slice(0, 5).map((f) => `${f.rule} · ${f.surface} · ${f.id}\n${f.headline}\n${f.body}`);
    expect(tally.findings.length, `${formatTally(tally, Object.keys(RULES) as Rule[])}\n\n${shown.join('\n\n')}`).toBe(0);
  });

  it("maps a long document's windows: one cell per window, in order, with its place, figure and reading", async () => {
    for (const d of answers.filter((a) => a.document)) {
      const map = describeAnswer(d.answer).windows;
      const cells = (await page.evaluate(
        `(async (answer, text) => {
          const src = document.querySelector('script[type=module]').getAttribute('src');
          const { renderResult } = await import(src.replace(/app\\.js$/, 'render.js'));
          renderResult(answer, text);
          return {
            hidden: document.getElementById('windows-box').hidden,
            summary: document.getElementById('windows-summary').textContent,
            cells: [...document.querySelectorAll('#window-map li')].map((li) => ({
              origin: li.dataset.origin,
              start: Number(li.dataset.start),
              tip: li.dataset.tip,
              where: li.querySelector('.window-where').textContent,
              percent: li.querySelector('.window-percent').textContent,
              focusable: li.tabIndex === 0,
            })),
          };
        })(${JSON.stringify(d.answer)}, ${JSON.stringify(d.text)})`,
      )) as Dom;
      expect(cells.hidden, d.id).toBe(false);
      expect(cells.summary).toBe(map?.summary);
      expect(cells.cells).toEqual(
        (d.answer.windows ?? []).map((w, i) => ({
          origin: w.origin,
          start: w.start,
          tip: map?.windows[i]?.label,
          where: map?.windows[i]?.where,
          percent: map?.windows[i]?.percent,
          focusable: true,
        })),
      );
    }
    // A text of one window has no map.
    const single = answers.find((a) => !a.document && !a.answer.warnings.includes('too_little_evidence'));
    const hidden = await page.evaluate(
      `(async (answer, text) => {
        const src = document.querySelector('script[type=module]').getAttribute('src');
        const { renderResult } = await import(src.replace(/app\\.js$/, 'render.js'));
        renderResult(answer, text);
        return document.getElementById('windows-box').hidden && document.querySelectorAll('#window-map li').length === 0;
      })(${JSON.stringify(single?.answer)}, ${JSON.stringify(single?.text)})`,
    );
    expect(hidden).toBe(true);
  });
});
