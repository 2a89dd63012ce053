import { defineConfig } from 'vitest/config';
import SummaryLineReporter from './test/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', new SummaryLineReporter()],
    globalSetup: ['test/global-setup.ts'],
    // Upper bounds only, for a test that hangs: a passing test is not slowed by them. Tests start real
    // processes (tsx, redis-server, Chromium) that take a few seconds on a quiet 2-core machine and
    // ten times that at load 10, so no file sets a shorter bound of its own.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: the suites start real servers and Redis instances, so keep parallelism modest.
    maxWorkers: 2,
  },
});
