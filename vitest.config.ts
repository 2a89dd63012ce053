import { defineConfig } from 'vitest/config';
import SummaryLineReporter from './test/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', new SummaryLineReporter()],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: the suites start real servers and Redis instances, so keep parallelism modest.
    maxWorkers: 2,
  },
});
