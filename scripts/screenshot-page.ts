/**
 * `npm run screenshot:page`: re-takes docs/img/playground.png, the page after a check, with this
 * checkout's model and words. It starts the service (page on, a throw-away key file), opens the page
 * in headless Chromium (Debian's `chromium`, or CHROMIUM_PATH), saves a sandbox key, checks a text
 * written for the picture (a person's diary paragraphs, then two sentences in a generic AI
 * register), points at one sentence, and saves the page.
 *
 *   npm run screenshot:page                       writes docs/img/playground.png
 *   npm run screenshot:page -- --out /tmp/p.png   writes elsewhere
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { scriptArgs } from './lib/options.mjs';

const TEXT =
  "Got back from the allotment at half six, knees filthy, hands worse. The beans have finally climbed past the canes, which Dad said they never would. Mrs Okafor from plot 12 gave me a bag of windfall apples and a lecture about slugs. I ate two on the bus home. Tomorrow it's the shed roof, if the felt turns up, which it won't.\n\n" +
  "The bus was late again, so I walked the last mile in the drizzle. Somebody had chalked a hopscotch grid outside the launderette and I did it, badly, with my shopping bag swinging. Tea was beans on toast because I couldn't face the hob.\n\n" +
  'Community gardens offer numerous benefits that extend far beyond the simple act of growing food. They foster a sense of belonging, encourage sustainable practices, and provide valuable opportunities for intergenerational learning. ' +
  'Furthermore, engaging with nature has been shown to significantly reduce stress and enhance overall well-being, making such spaces an essential component of vibrant, resilient communities.';

const values = scriptArgs(import.meta.url, { options: { out: { type: 'string', default: 'docs/img/playground.png' } } });
// Loaded once the options are read, so that --help and a mistyped option answer at once, not
// after seconds of loading what the run needs.
const { startTestService } = await import('../test/service/helpers.ts');
const { HAS_CHROMIUM, launchBrowser, NO_CHROMIUM_MESSAGE } = await import('../test/web/browser.ts');

if (!HAS_CHROMIUM) {
  process.stderr.write(`screenshot:page: ${NO_CHROMIUM_MESSAGE}\n`);
  process.exit(2);
}

const service = await startTestService({ playground: true });
// One width the page is designed for, at 1 device pixel per CSS pixel: a picture that reads well in
// the docs and stays small.
const browser = await launchBrowser({ width: 1180, height: 800 });
try {
  const page = await browser.context.newPage();
  await page.goto(`${service.url}/`);
  await page.fill('#api-key', await service.newKey());
  await page.click('#key-form button[type="submit"]');
  await page.fill('#text', TEXT);
  await page.click('#check');
  await page.waitForSelector('#result[data-state="done"]');
  // The tooltip of a sentence of the generated passage shows how the figures read.
  await page.locator('#highlighted .gen-span .seg').first().hover();
  await mkdir(dirname(values.out), { recursive: true });
  await page.screenshot({ path: values.out, fullPage: true });
  const origin = await page.getAttribute('#result', 'data-origin');
  process.stdout.write(`screenshot:page: ${values.out} (headline ${await page.textContent('#verdict')}, origin ${origin})\n`);
} finally {
  await browser.close();
  await service.stop();
}
