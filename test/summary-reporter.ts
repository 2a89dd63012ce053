import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain `Tests: N passed, N failed, N skipped` line, so that tools reading
 * the log (CI included) can count results without parsing vitest's coloured summary.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed' || state === 'failed' || state === 'skipped') counts[state] += 1;
      }
    }
    process.stdout.write(`Tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
