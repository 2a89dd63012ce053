/**
 * Without Chromium the web page tests are skipped, and the run says so in one line at its end, next
 * to the `Tests:` line (test/summary-reporter.ts), not only in that file's output further up.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readdir, readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { BROWSER_TEST_FILES } from './chromium.ts';

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

it('prints one line naming what to install when the web page tests are skipped, counting every page test file', async () => {
  const missing = '/nonexistent/chromium-for-this-test';
  const run = await runVitest([...BROWSER_TEST_FILES], { CHROMIUM_PATH: missing, NO_COLOR: '1', FORCE_COLOR: '' });
  expect(run.code).toBe(0);
  const lines = run.stdout.split('\n');
  const notice = lines.filter((line) => line.startsWith('Web page tests ('));
  expect(notice).toHaveLength(1);
  const counts =
    /^Web page tests \((\d+): (.+)\) skipped: no Chromium at (\S+)\. Install Debian's package \(apt-get install -y chromium\)/.exec(
      notice[0]!,
    );
  expect(counts, notice[0]).not.toBeNull();
  const [, total, perFile, path] = counts!;
  expect(path).toBe(missing);
  // e.g. "test/web/playground.test.ts 13, test/web/file.test.ts 4": every page test file, each with its skips.
  const files = perFile!.split(', ').map((part) => /^(\S+) (\d+)$/.exec(part));
  expect(files.map((f) => f?.[1])).toEqual([...BROWSER_TEST_FILES]);
  for (const f of files) expect(Number(f?.[2])).toBeGreaterThan(0);
  expect(Number(total)).toBe(files.reduce((n, f) => n + Number(f?.[2]), 0));
  // Every skipped test of the run is a page test, so the line accounts for all of them.
  expect(lines.find((line) => line.startsWith('Tests: '))).toBe(`Tests: 0 passed, 0 failed, ${total} skipped`);
  // Right after the summary line, where a reader of the log looks.
  expect(lines[lines.indexOf(notice[0]!) - 1]).toMatch(/^Tests: 0 passed, 0 failed, \d+ skipped$/);
});

it('the reporter knows every test file that launches Chromium', async () => {
  const files = (await readdir(new URL('../', import.meta.url), { recursive: true })).filter((f) => f.endsWith('.test.ts'));
  const launching: string[] = [];
  for (const file of files) {
    if ((await readFile(new URL(`../${file}`, import.meta.url), 'utf8')).includes(['await', 'launchBrowser('].join(' ')))
      launching.push(`test/${file}`);
  }
  expect(launching.sort()).toEqual([...BROWSER_TEST_FILES].sort());
});
