import type { Reporter, TestModule } from 'vitest/node';
import { HAS_TRAINING_DATA, NO_TRAINING_DATA_MESSAGE, TRAINING_DATA_TEST_FILES } from './helpers/training-data.ts';
import { BROWSER_TEST_FILES, HAS_CHROMIUM, NO_CHROMIUM_MESSAGE } from './web/chromium.ts';

/**
 * Ends the run with one plain `Tests: N passed, N failed, N skipped` line, so that tools reading
 * the log (CI included) can count results without parsing vitest's coloured summary. When the web
 * page tests were skipped for want of Chromium, or the engine's measurements for want of the training
 * data, one more line says so next to it, where it is seen, rather than only in that file's output
 * further up.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const browserSkips = new Map<string, number>();
    let dataTestsSkipped = 0;
    const dataFolders = new Set<string>();
    for (const testModule of testModules) {
      const path = testModule.moduleId.replaceAll('\\', '/');
      const browserFile = BROWSER_TEST_FILES.find((file) => path.endsWith(file));
      const needsData = TRAINING_DATA_TEST_FILES.some((file) => path.endsWith(file));
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed' || state === 'failed' || state === 'skipped') counts[state] += 1;
        if (browserFile && state === 'skipped') browserSkips.set(browserFile, (browserSkips.get(browserFile) ?? 0) + 1);
        if (needsData && state === 'skipped') {
          dataTestsSkipped += 1;
          dataFolders.add(`${/test\/[^/]+\//.exec(path)?.[0] ?? 'test/'}`);
        }
      }
    }
    process.stdout.write(`Tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    if (browserSkips.size > 0 && !HAS_CHROMIUM) {
      // e.g. "Web page tests (17: test/web/playground.test.ts 13, test/web/file.test.ts 4) skipped: …"
      const total = [...browserSkips.values()].reduce((a, b) => a + b, 0);
      const files = BROWSER_TEST_FILES.filter((file) => browserSkips.has(file))
        .map((file) => `${file} ${browserSkips.get(file)}`)
        .join(', ');
      process.stdout.write(`Web page tests (${total}: ${files}) ${NO_CHROMIUM_MESSAGE}\n`);
    }
    if (dataTestsSkipped > 0 && !HAS_TRAINING_DATA) {
      process.stdout.write(
        `Training data tests (${dataTestsSkipped}, in ${[...dataFolders].sort().join(', ')}) ${NO_TRAINING_DATA_MESSAGE}\n`,
      );
    }
  }
}
