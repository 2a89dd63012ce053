/**
 * The package as another project gets it: packed as a release packs it (`scripts/pack.mjs`, behind
 * `npm run package`), installed into an empty project (from npm's local cache where it can), then
 * used with plain node, no TypeScript loader: the SDK talks to a real service, the installed
 * `textdetect` bin answers --version/--help and scores a file in-process (so models/detector.bin is
 * found inside node_modules), and tsc resolves the declarations of
 * `import { DetectClient } from 'textdetect'`. The install runs with scripts allowed and must
 * neither run nor warn about one: the tarball's package.json carries no `prepare`.
 *
 * Needs the build (`npm test` runs `npm run build` first); the pack script does not rebuild, so the
 * test does not rebuild dist/ under the other suites' feet. The SDK-only package:
 * client-install.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_TEXT, startTestService, type TestService } from '../client/helpers.ts';
import { emptyProject, INSTALL_SCRIPTS, npm, packPackage, ROOT, run } from './helpers.ts';

let dir: string;
let files: string[];
let installWarnings: string;
let service: TestService;

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'src', 'client', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test.');
  }
  dir = await mkdtemp(join(tmpdir(), 'textdetect-package-test-'));
  const packed = await packPackage('textdetect', dir);
  files = packed.files;
  const consumer = await emptyProject(join(dir, 'consumer'));
  // --prefer-offline: every dependency comes from npm's cache when it is there (it is after `npm ci`),
  // so the test does not depend on the registry being fast.
  const installed = await npm(['install', '--prefer-offline', '--no-save', packed.path], consumer);
  expect(installed.code, installed.stderr).toBe(0);
  installWarnings = installed.stderr;
  service = await startTestService();
}, 300_000);

afterAll(async () => {
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships what runs and nothing else', () => {
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/textdetect.mjs',
      'models/detector.bin',
      'models/segments.json',
      'dist/src/client/index.js',
      'dist/src/client/index.d.ts',
      'dist/src/contract.js',
      'dist/src/contract.d.ts',
      'dist/src/words.js',
      'dist/src/service/main.js',
      'dist/src/service/detect-worker.js',
      'dist/adapters/slack/main.js',
      'dist/adapters/discord/main.js',
    ]) {
      expect(files).toContain(path);
    }
    const stray = files.filter(
      (path) =>
        path.startsWith('test/') ||
        path.startsWith('scripts/') ||
        path.startsWith('docs/') ||
        path.startsWith('patches/') ||
        /^(src|adapters)\//.test(path) ||
        (path.endsWith('.ts') && !path.endsWith('.d.ts')) ||
        (path.endsWith('.mjs') && path !== 'bin/textdetect.mjs'),
    );
    expect(stray).toEqual([]);
  });

  it('installs as many packages and megabytes as README.md and docs/build.md say', async () => {
    const consumer = join(dir, 'consumer');
    const lock = JSON.parse(await readFile(join(consumer, 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const packages = Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/')).length;
    // As `du -sh node_modules` counts it (disk usage, MiB), the figure the docs give.
    const du = await run('du', ['-sk', join(consumer, 'node_modules')], consumer);
    const megabytes = Number(du.stdout.split(/\s/)[0]) / 1024;
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const build = await readFile(join(ROOT, 'docs', 'build.md'), 'utf8');
    const stated = /the full `textdetect` package brings (\d+) packages and (\d+) MB/.exec(readme);
    const tabled = /\| `textdetect` \(`textdetect-[^|]*\|[^|]*\| (\d+) packages, (\d+) MB \|/.exec(build);
    expect(stated, 'README.md: "the full `textdetect` package brings N packages and M MB"').not.toBeNull();
    expect(tabled, 'docs/build.md: the packages table').not.toBeNull();
    const summary = `measured ${packages} packages, ${megabytes.toFixed(1)} MB`;
    for (const [, count, size] of [stated!, tabled!]) {
      // A dependency's patch release can add or drop a package; the size is rounded to whole MB.
      expect(Math.abs(Number(count) - packages), summary).toBeLessThanOrEqual(3);
      expect(Math.abs(Number(size) - megabytes), summary).toBeLessThanOrEqual(1);
    }
  });

  it('carries no install-time script, so the install neither runs nor lists one', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'consumer', 'node_modules', 'textdetect', 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
    // npm 11 lists every installed package with an install script (including `prepare`) as "not yet
    // covered by allowScripts"; the repository's own scripts (start, test, …) stay, they run nothing.
    expect(installWarnings).not.toMatch(/install scripts|allowScripts|prepare/i);
    expect(manifest.scripts?.start).toBe('node dist/src/service/main.js');
  });

  it('is importable with plain node and its client scores a text against a real service', async () => {
    const program = `
      import { DetectClient, AuthenticationError, MODES } from 'textdetect';
      import { ERROR_CODES } from 'textdetect/contract';
      const client = new DetectClient({ apiKey: process.env.KEY, baseUrl: process.env.URL });
      const result = await client.detect({ text: process.env.TEXT, mode: 'academic', segments: true });
      let rejected = '';
      const bad = new DetectClient({ apiKey: 'sk_test_not_a_key', baseUrl: process.env.URL, maxRetries: 0 });
      try { await bad.detect({ text: process.env.TEXT }); } catch (err) { rejected = err instanceof AuthenticationError ? err.code : String(err); }
      await Promise.all([client.close(), bad.close()]);
      console.log(JSON.stringify({ result, rejected, modes: MODES, codes: ERROR_CODES.length }));
    `;
    const out = await run(process.execPath, ['--input-type=module', '-e', program], join(dir, 'consumer'), {
      KEY: service.key,
      URL: service.url,
      TEXT: SAMPLE_TEXT,
      NODE_OPTIONS: '',
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const { result, rejected, modes, codes } = JSON.parse(out.stdout) as {
      result: { request_id: string; mode: string; segments: { start: number; end: number; text: string }[]; ai_probability: number };
      rejected: string;
      modes: string[];
      codes: number;
    };
    expect(result.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(result.mode).toBe('academic');
    expect(result.ai_probability).toBeGreaterThanOrEqual(0);
    expect(result.ai_probability).toBeLessThanOrEqual(1);
    for (const segment of result.segments) expect(SAMPLE_TEXT.slice(segment.start, segment.end)).toBe(segment.text);
    expect(rejected).toBe('invalid_api_key');
    expect(modes).toEqual(['academic', 'financial', 'legal', 'general']);
    expect(codes).toBeGreaterThan(10);
  });

  it("serves the page the compiled words module every surface uses, and the page's modules import it", async () => {
    // The installed service's page, read as the service reads it, and its modules loaded as a browser
    // would: from where they are served, side by side.
    const program = `
      import { mkdtempSync, writeFileSync } from 'node:fs';
      import { join } from 'node:path';
      import { pathToFileURL } from 'node:url';
      const base = join(process.cwd(), 'node_modules', 'textdetect', 'dist', 'src');
      const { loadAssets } = await import(pathToFileURL(join(base, 'service', 'playground', 'assets.js')).href);
      const assets = await loadAssets({ maxTextChars: 50000, defaultMode: 'general', modes: ['general'], environment: 'sandbox', maxFileBytes: 1 });
      const served = mkdtempSync(join(process.env.DIR, 'served-'));
      for (const [name, asset] of assets.files) writeFileSync(join(served, name), asset.body);
      const words = await import(pathToFileURL(join(served, 'words.js')).href);
      const wording = await import(pathToFileURL(join(served, 'wording.js')).href);
      const answer = { ai_probability: 0.95, verdict: 'mixed', confidence: 'low', warnings: ['strict_threshold'], origin: 'uncertain' };
      console.log(JSON.stringify({ files: [...assets.files.keys()], label: words.describeAnswer(answer).label, error: wording.errorSentence({ status: 0 }).sentence }));
    `;
    const out = await run(process.execPath, ['--input-type=module', '-e', program], join(dir, 'consumer'), { DIR: dir, NODE_OPTIONS: '' });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const { files: served, label, error } = JSON.parse(out.stdout) as { files: string[]; label: string; error: string };
    expect(served).toEqual(expect.arrayContaining(['app.js', 'render.js', 'wording.js', 'words.js', 'contract.js']));
    expect(label).toBe('Unclear');
    expect(error).toMatch(/^The service could not be reached/);
  });

  it('installs a working textdetect bin that finds the model inside node_modules', async () => {
    const consumer = join(dir, 'consumer');
    const bin = join(consumer, 'node_modules', '.bin', 'textdetect');
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const version = await run(bin, ['--version'], consumer);
    expect(version.stdout.trim()).toBe(`textdetect ${pkg.version}`);
    const help = await run(bin, ['--help'], consumer);
    expect(help.code).toBe(0);
    for (const command of ['detect', 'score', 'eval', 'keys']) expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));

    const input = join(dir, 'in.jsonl');
    await writeFile(input, `${JSON.stringify({ id: 'a', text: SAMPLE_TEXT, mode: 'general' })}\n`);
    const scored = await run(bin, ['score', '--local', '--input', input], consumer);
    expect(scored.stderr).not.toMatch(/error|ENOENT/i);
    expect(scored.code).toBe(0);
    const line = JSON.parse(scored.stdout.trim().split('\n').at(-1) ?? '{}') as { id?: string; ai_probability?: number };
    expect(line.id).toBe('a');
    expect(typeof line.ai_probability).toBe('number');
  });

  it('gives a TypeScript consumer full declarations', async () => {
    const consumer = join(dir, 'consumer');
    await writeFile(
      join(consumer, 'use.ts'),
      `import { DetectClient, RateLimitError, type DetectResponse, type Mode } from 'textdetect';
       import type { ErrorEnvelope } from 'textdetect/contract';
       const mode: Mode = 'legal';
       const client = new DetectClient({ apiKey: 'sk_test_x', limiter: { max: 10, intervalMs: 5_000 } });
       export async function check(text: string): Promise<DetectResponse['verdict'] | number> {
         try { return (await client.detect({ text, mode })).verdict; }
         catch (err) { if (err instanceof RateLimitError) return err.retryAfterMs; throw err; }
       }
       export const envelope: ErrorEnvelope = { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'wait' } };
       // @ts-expect-error the contract knows the modes
       export const wrong: Mode = 'poetry';
      `,
    );
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          // The package's own declarations are checked too, not skipped.
          skipLibCheck: false,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['use.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', consumer], consumer);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  }, 120_000);
});
