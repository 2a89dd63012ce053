/**
 * Every entry point on a Node older than 22 stops at once with what to do, before it does anything
 * (no key file created, no bot database folder). Runs the compiled entries (`npm test` builds them
 * first) with an older node found on this machine's PATH or in /usr/bin; without one the Node-20
 * case is skipped, saying so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A node binary whose major version is below 22, if this machine has one. */
function findOldNode(): { path: string; version: string } | undefined {
  const candidates = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.add(join(dir, 'node'));
  for (const path of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) candidates.add(path);
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    try {
      const version = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim().replace(/^v/, '');
      if (Number(version.split('.')[0]) < 22) return { path, version };
    } catch {
      // not runnable: try the next
    }
  }
  return undefined;
}

function run(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // A start that got past the check would keep running (the service listens): stop it.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ENTRIES: Array<{ name: string; args: string[] }> = [
  { name: 'npm start (dist/src/service/main.js)', args: ['dist/src/service/main.js'] },
  { name: 'the CLI (bin/textdetect.mjs)', args: ['bin/textdetect.mjs', 'keys', 'list'] },
  { name: 'npm run slack (dist/adapters/slack/main.js)', args: ['dist/adapters/slack/main.js'] },
  { name: 'npm run discord (dist/adapters/discord/main.js)', args: ['dist/adapters/discord/main.js'] },
  { name: 'npm run discord:register (dist/adapters/discord/register.js)', args: ['dist/adapters/discord/register.js', '--dry-run'] },
];

const oldNode = findOldNode();
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  expect(existsSync(join(ROOT, 'dist', 'src', 'node-version.js')), 'dist/ is missing or stale: run `npm run build`').toBe(true);
  dir = await mkdtemp(join(tmpdir(), 'textdetect-node-version-'));
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    API_KEYS_FILE: join(dir, 'keys', 'api-keys.json'),
    DATA_DIR: join(dir, 'bot-data'),
    PORT: '0',
    // Credentials that look real, so a bot that got past the check would go on to open its database.
    SLACK_BOT_TOKEN: 'xoxb-1-2-abc',
    SLACK_SIGNING_SECRET: 'secret',
    DISCORD_TOKEN: 'token',
    DETECT_API_URL: '',
  };
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Node.js version check', () => {
  it.skipIf(!oldNode)(
    `every entry point refuses Node ${oldNode?.version ?? '< 22 (none found here)'} with the README line, before doing anything`,
    async () => {
      const node = oldNode!;
      const major = node.version.split('.')[0];
      for (const entry of ENTRIES) {
        const result = await run(node.path, entry.args, env);
        expect(result.code, `${entry.name}: ${result.stderr}`).toBe(1);
        expect(result.stderr, entry.name).toBe(
          `textdetect needs Node.js 22 or newer; this is ${node.version}.\n` +
            'README, "Quick start": "Node.js 22 or newer (.nvmrc)". Install it (with nvm: `nvm install` in the textdetect folder, which reads .nvmrc) and run the command again with that node.\n',
        );
        expect(result.stderr.startsWith(`textdetect needs Node.js 22 or newer; this is ${major}.`)).toBe(true);
        expect(result.stdout, entry.name).toBe('');
      }
      // Nothing happened before the check: no key file, no bot database folder.
      expect(existsSync(join(dir, 'keys'))).toBe(false);
      expect(existsSync(join(dir, 'bot-data'))).toBe(false);
      // The line quoted is the README's.
      expect(await readFile(join(ROOT, 'README.md'), 'utf8')).toContain('Node.js 22 or newer (`.nvmrc`)');
    },
    120_000,
  );

  it.skipIf(!oldNode)(
    `npm test says so first, before tsc, Biome and the build, on Node ${oldNode?.version ?? '< 22 (none found here)'} (issue 32, item 24)`,
    async () => {
      const node = oldNode!;
      const scripts = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
      const [first, ...rest] = scripts.test!.split(' && ');
      expect(first).toBe('node scripts/check-node.mjs');
      expect(rest[0]).toBe('tsc --noEmit');
      // What that first step prints on the old node: the same sentence as every entry point.
      const check = await run(node.path, ['scripts/check-node.mjs'], env);
      const entry = await run(node.path, ['dist/src/service/main.js'], env);
      expect(check.code).toBe(1);
      expect(check.stderr).toMatch(
        new RegExp(`^textdetect needs Node\\.js 22 or newer; this is ${node.version.replaceAll('.', '\\.')}\\.\n`),
      );
      expect(check.stderr).toBe(entry.stderr);
    },
  );

  it('lets the current Node through', async () => {
    const check = await run(process.execPath, ['scripts/check-node.mjs'], env);
    expect(check).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const result = await run(process.execPath, ['bin/textdetect.mjs', '--version'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^textdetect \d+\.\d+\.\d+/);
    expect(result.stderr).toBe('');
  });
});
