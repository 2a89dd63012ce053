/**
 * `npm run check:words`: every dev answer (../shared/data/*-dev.jsonl, `segments: true`) and the long
 * documents of test/words/dev-answers.ts, rendered on the four surfaces (the page in headless
 * Chromium, the CLI's printer, Slack's blocks, Discord's embed) and held to the rules of
 * test/words/contradictions.ts. Prints, per rule and surface, how many answers break it, and a few
 * of them. The test (test/words/contradictions.test.ts) holds a sample of the same answers to zero.
 *
 *   npm run check:words                  all dev answers (about 7,300) and the documents
 *   npm run check:words -- --every 4     every 4th text of each file and label
 *   npm run check:words -- --no-page     without Chromium
 *   npm run check:words -- --examples 3  examples shown per rule and surface (default 2)
 */
import { existsSync } from 'node:fs';
import type { Rule } from '../test/words/contradictions.ts';
import { scriptArgs } from './lib/options.mjs';

const values = scriptArgs(import.meta.url, {
  options: {
    every: { type: 'string', default: '1' },
    'no-page': { type: 'boolean', default: false },
    examples: { type: 'string', default: '2' },
  },
});
// Loaded once the options are read, so that --help and a mistyped option answer at once, not
// after seconds of loading what the run needs.
const { createDetector } = await import('../src/detector/index.ts');
const { checkSurfaces, formatTally } = await import('../test/words/check.ts');
const { RULES } = await import('../test/words/contradictions.ts');
const { DEV_FILES, devAnswers, documentAnswers } = await import('../test/words/dev-answers.ts');
const { SURFACES } = await import('../test/words/surfaces.ts');
const { startTestService } = await import('../test/service/helpers.ts');
const { trainingDataFile } = await import('../test/helpers/training-data.ts');
const { HAS_CHROMIUM, launchBrowser } = await import('../test/web/browser.ts');

const every = Number(values.every);
const examples = Number(values.examples);
if (!Number.isInteger(every) || every < 1 || !Number.isInteger(examples) || examples < 0) {
  process.stderr.write('check:words: --every and --examples take whole numbers (every ≥ 1); --help lists the options.\n');
  process.exit(2);
}
const missing = DEV_FILES.filter((file) => !existsSync(trainingDataFile(file)));
if (missing.length > 0) {
  process.stderr.write(`check:words: the dev data is not here (${missing.join(', ')} under ../shared/data); nothing to check.\n`);
  process.exit(2);
}
const usePage = !values['no-page'];
if (usePage && !HAS_CHROMIUM) {
  process.stderr.write('check:words: no Chromium (set CHROMIUM_PATH, or pass --no-page to leave the page out).\n');
  process.exit(2);
}

const detector = await createDetector();
const items = [
  ...devAnswers(detector, { every }),
  ...documentAnswers(detector).map((d) => ({ ...d, id: `document:${d.id}`, label: 'document' })),
];
process.stderr.write(`check:words: ${items.length} answers (model ${detector.model}), rendering…\n`);

const service = usePage ? await startTestService({ playground: true }) : undefined;
const browser = usePage ? await launchBrowser() : undefined;
try {
  const page = browser ? await browser.context.newPage() : undefined;
  if (page && service) await page.goto(`${service.url}/`);
  const tally = await checkSurfaces(items, page);
  const rules = Object.keys(RULES) as Rule[];
  process.stdout.write(`${formatTally(tally, rules)}\n`);
  for (const rule of rules) {
    for (const surface of SURFACES) {
      const found = tally.findings.filter((f) => f.rule === rule && f.surface === surface).slice(0, examples);
      for (const f of found) {
        process.stdout.write(
          `\n[${rule} · ${surface}] ${f.id}\n  headline: ${f.headline}\n  ${f.body.replace(/\n/g, '\n  ').slice(0, 600)}\n`,
        );
      }
    }
  }
} finally {
  await browser?.close();
  await service?.stop();
}
