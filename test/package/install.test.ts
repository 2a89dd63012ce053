/**
 * The package as another project gets it: `npm pack`, install the tarball into an empty project
 * (from npm's local cache where it can), then use it with plain node, no TypeScript loader:
 * the SDK talks to a real service, the installed `textdetect` bin answers --version/--help and scores
 * a file in-process (so models/detector.bin is found inside node_modules), and tsc resolves the
 * declarations of `import { DetectClient } from 'textdetect'`.
 *
 * Needs the build (`npm test` runs `npm run build` first); packing skips `prepare` so the test does
 * not rebuild dist/ under the other suites' feet.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_TEXT, startTestService, type TestService } from '../client/helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeout = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: err && code === 1 && !stderr ? String(err.message) : stderr });
    });
  });
}

function npm(args: string[], cwd: string): Promise<Run> {
  return run('npm', args, cwd, { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });
}

let dir: string;
let files: string[];
let service: TestService;

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'src', 'client', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test.');
  }
  dir = await mkdtemp(join(tmpdir(), 'textdetect-package-test-'));
  const packed = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT);
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  files = info.files.map((f) => f.path);
  const consumer = join(dir, 'consumer');
  await run('mkdir', ['-p', consumer], dir);
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // --prefer-offline: every dependency comes from npm's cache when it is there (it is after `npm ci`),
  // so the test does not depend on the registry being fast.
  const installed = await npm(['install', '--prefer-offline', '--no-save', '--ignore-scripts', join(dir, info.filename)], consumer);
  expect(installed.code, installed.stderr).toBe(0);
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
  }, 60_000);

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
