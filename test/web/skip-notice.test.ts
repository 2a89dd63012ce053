/**
 * Without Chromium the web page tests are skipped, and the run says so in one line at its end, next
 * to the `Tests:` line (test/summary-reporter.ts), not only in that file's output further up.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

function runVitest(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [VITEST, 'run', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

it('prints one line naming what to install when the web page tests are skipped', async () => {
  const missing = '/nonexistent/chromium-for-this-test';
  const run = await runVitest(['test/web/playground.test.ts'], { CHROMIUM_PATH: missing, NO_COLOR: '1', FORCE_COLOR: '' });
  expect(run.code).toBe(0);
  const lines = run.stdout.split('\n');
  const notice = lines.filter((line) => line.startsWith('Web page tests ('));
  expect(notice).toHaveLength(1);
  expect(notice[0]).toMatch(
    new RegExp(
      `^Web page tests \\(test/web/playground\\.test\\.ts, \\d+\\) skipped: no Chromium at ${missing}\\. Install Debian's package \\(apt-get install -y chromium\\)`,
    ),
  );
  // Right after the summary line, where a reader of the log looks.
  expect(lines[lines.indexOf(notice[0]!) - 1]).toMatch(/^Tests: 0 passed, 0 failed, \d+ skipped$/);
});
