/**
 * Where the web page tests find Chromium, without loading playwright: the test reporter reads it too,
 * to say at the end of a run that those tests were skipped.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM_PATH);
export const NO_CHROMIUM_MESSAGE =
  `skipped: no Chromium at ${CHROMIUM_PATH}. Install Debian's package (apt-get install -y chromium) ` +
  'or set CHROMIUM_PATH to a Chromium binary to run the web page tests.';

/**
 * The test files that need Chromium: every test file that launches the browser (test/web/browser.ts).
 * The reporter counts what each of them skipped; skip-notice.test.ts checks this list against the files.
 */
export const BROWSER_TEST_FILES = [
  'test/web/playground.test.ts',
  'test/web/file.test.ts',
  'test/web/words.test.ts',
  'test/web/hundred-pages.test.ts',
] as const;
