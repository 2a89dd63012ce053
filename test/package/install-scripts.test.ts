/**
 * `npm install` in the repository warned on every run (npm 11.16+: "npm warn install-scripts …
 * esbuild"). The one dependency with an install script, esbuild (under tsx and vitest), is approved in
 * package.json's `allowScripts`, so npm has nothing unreviewed to list, and npm 12, which runs only
 * approved scripts, keeps running it. See docs/build.md, "Install scripts".
 */
import { expect, it } from 'vitest';
import { npm, ROOT } from './helpers.ts';

const version = await npm(['--version'], ROOT);
const [major = 0, minor = 0] = version.stdout.trim().split('.').map(Number);
const hasAllowScripts = major > 11 || (major === 11 && minor >= 16);
if (!hasAllowScripts)
  console.warn(`test/package/install-scripts.test.ts: npm ${version.stdout.trim()} predates allowScripts (11.16); skipped.`);

it.runIf(hasAllowScripts)(
  'npm finds no dependency whose install script is not reviewed',
  async () => {
    const pending = await npm(['approve-scripts', '--allow-scripts-pending'], ROOT);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout.trim()).toBe('No packages with unreviewed install scripts.');
  },
  60_000,
);
