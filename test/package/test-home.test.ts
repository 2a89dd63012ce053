/**
 * No test touches the user's home (issue 25, item 12: the bots' main tests once left
 * ~/.local/share/textdetect/textdetect-bots.sqlite behind). The run gets a throw-away HOME from the
 * global setup (test/helpers/test-home.ts); this file checks that the environment every test and
 * spawned process inherits points there, and that `npm start` and the CLI, started with nothing but
 * that environment, write only there. The global teardown fails the run if the real home's textdetect
 * folders changed at all.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REAL_HOME_VAR, snapshot, TEST_HOME_VAR, textdetectPaths } from '../helpers/test-home.ts';
import { ROOT, run } from './helpers.ts';

const isInside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..');
};

describe('the test run keeps out of the user home', () => {
  it('gives every test process a temporary HOME, XDG folders inside it, and no DATA_DIR or API_KEYS_FILE', () => {
    const home = process.env.HOME ?? '';
    expect(home, 'HOME of a test worker').not.toBe(userInfo().homedir);
    expect(home).not.toBe(process.env[REAL_HOME_VAR]);
    expect(isInside(tmpdir(), home), `HOME ${home} is under ${tmpdir()}`).toBe(true);
    expect(process.env[TEST_HOME_VAR]).toBe(home);
    for (const name of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME']) {
      expect(isInside(home, process.env[name] ?? ''), `${name}=${process.env[name]}`).toBe(true);
    }
    expect(process.env.DATA_DIR).toBeUndefined();
    expect(process.env.API_KEYS_FILE).toBeUndefined();
  });

  it('gives the run a temporary folder of its own (TMPDIR), which the end of the run removes (issue 32, item 24)', () => {
    // Screenshots, browser profiles, servers' folders: nothing of a run stays in the machine's /tmp.
    expect(process.env.TMPDIR).toBe(tmpdir());
    expect(tmpdir()).toMatch(/textdetect-test-tmp-[^/\\]+$/);
    expect(isInside(tmpdir(), process.env[TEST_HOME_VAR] ?? '')).toBe(true);
  });

  it('npm start and `textdetect keys` with the inherited environment write under the temporary HOME only', async () => {
    expect(existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js')), 'dist/ is missing: run `npm run build`').toBe(true);
    const real = textdetectPaths({ HOME: process.env[REAL_HOME_VAR] ?? userInfo().homedir });
    const before = await snapshot(real);

    const child = spawn(process.execPath, ['dist/src/service/main.js'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', DETECT_WORKERS: '1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // The signal too: a CI run once saw this child end by a signal it did not send itself.
    const exited = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(signal ?? String(code))));
    // Its SIGTERM handler is set once it listens (the banner): a signal before that ends it by the
    // signal, which is what this test once saw on a loaded machine after waiting 30 s. So it waits
    // for the banner as long as the test may run, and says so if it never came.
    const deadline = Date.now() + 100_000;
    while (!/Web page:/.test(output) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const listening = /Web page:/.test(output);
    child.kill('SIGTERM');
    const ended = await exited;
    expect(listening, `the service did not say it listens within 100 s:\n${output}`).toBe(true);
    expect(ended, output).toBe('0');
    const keysFile = join(process.env.XDG_CONFIG_HOME ?? '', 'textdetect', 'api-keys.json');
    expect(output).toContain(keysFile);
    expect(existsSync(keysFile)).toBe(true);

    const listed = await run(process.execPath, [join(ROOT, 'bin', 'textdetect.mjs'), 'keys', 'list'], ROOT);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('first sandbox key');

    expect([...(await snapshot(real)).entries()]).toEqual([...before.entries()]);
  });
});
