/**
 * The SDK on its own: `textdetect-client` (packages/client/, compiled from src/client/ and
 * src/contract.ts) as a project that only calls the service gets it. Packed as a release packs it,
 * installed into an empty project, counted, then used with plain node against a real service.
 *
 * Expected install: exactly 3 packages (textdetect-client, undici, bottleneck), well under 5 MB;
 * the whole product pulls 211 packages and about 81 MB. ioredis is an optional peer: without it
 * the client loads and scores, and only the `redis` option says what to install; with it the
 * limiter shares the budget through a real Redis. The declarations typecheck with and without it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_TEXT, startTestService, type TestService } from '../client/helpers.ts';
import { emptyProject, INSTALL_SCRIPTS, npm, packPackage, ROOT, run, type Packed } from './helpers.ts';

const CLIENT_DIR = join(ROOT, 'packages', 'client');

interface Manifest {
  name: string;
  version: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

let dir: string;
let consumer: string;
let packed: Packed;
let installWarnings: string;
let service: TestService;

beforeAll(async () => {
  if (!existsSync(join(CLIENT_DIR, 'dist', 'client', 'index.js'))) {
    throw new Error('packages/client/dist/ is missing: run `npm run build` (npm test does) before this test.');
  }
  dir = await mkdtemp(join(tmpdir(), 'textdetect-client-package-test-'));
  packed = await packPackage('textdetect-client', dir);
  consumer = await emptyProject(join(dir, 'consumer'));
  // Saved (not --no-save), so installing ioredis later keeps it; --prefer-offline serves undici and
  // bottleneck from npm's cache, which `npm ci` filled.
  const installed = await npm(['install', '--prefer-offline', packed.path], consumer);
  expect(installed.code, installed.stderr).toBe(0);
  installWarnings = installed.stderr;
  service = await startTestService();
}, 300_000);

afterAll(async () => {
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs an ES module program with plain node inside the consumer project; its last stdout line is JSON. */
async function runProgram(program: string, env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  const out = await run(process.execPath, ['--input-type=module', '-e', program], consumer, {
    KEY: service.key,
    URL: service.url,
    TEXT: SAMPLE_TEXT,
    NODE_OPTIONS: '',
    ...env,
  });
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

async function typecheck(source: string): Promise<string> {
  await writeFile(join(consumer, 'use.ts'), source);
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
  const checked = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer], consumer);
  return `${checked.code} ${checked.stdout}${checked.stderr}`.trim();
}

describe('the packages/client manifest', () => {
  it('lists as dependencies exactly the packages the compiled client imports, at the root package ranges', () => {
    const manifest = readManifest(CLIENT_DIR);
    const root = readManifest(ROOT);
    const imported = new Set<string>();
    const walk = (folder: string): void => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js')) {
          // Without comments: the doc comments quote imports (`import … from 'textdetect'`).
          const code = readFileSync(path, 'utf8')
            .replace(/\/\*[\s\S]*?\*\//g, '')
            .replace(/^\s*\/\/.*$/gm, '');
          for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)['"]([^'".][^'"]*)['"]/g)) {
            const specifier = match[1]!;
            if (specifier.startsWith('node:')) continue;
            imported.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
          }
        }
      }
    };
    walk(join(CLIENT_DIR, 'dist'));
    expect([...imported].sort()).toEqual(['bottleneck', 'undici']);
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['bottleneck', 'undici']);
    for (const name of imported) expect(manifest.dependencies?.[name]).toBe(root.dependencies?.[name]);
    // ioredis is loaded on demand (src/client/redis.ts), so it is an optional peer, not a dependency.
    expect(manifest.peerDependencies).toEqual({ ioredis: root.dependencies?.ioredis });
    expect(manifest.peerDependenciesMeta?.ioredis?.optional).toBe(true);
    expect(manifest.version).toBe(root.version);
  });
});

describe('the packed textdetect-client', () => {
  it('ships the compiled client, the contract, the licence and nothing of the server', () => {
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/contract.js',
      'dist/contract.d.ts',
    ]) {
      expect(packed.files).toContain(path);
    }
    const stray = packed.files.filter(
      (path) =>
        !['package.json', 'README.md', 'LICENSE'].includes(path) &&
        !/^dist\/(client\/[a-z0-9-]+|contract|version)\.(js|js\.map|d\.ts)$/.test(path),
    );
    expect(stray).toEqual([]);
  });

  it('installs 3 packages (itself, undici, bottleneck) in under 5 MB, with no install script', async () => {
    const lock = JSON.parse(await readFile(join(consumer, 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    expect(Object.keys(lock.packages).sort()).toEqual(['node_modules/bottleneck', 'node_modules/textdetect-client', 'node_modules/undici']);
    const du = await run('du', ['-sk', join(consumer, 'node_modules')], consumer);
    const kilobytes = Number(du.stdout.split(/\s/)[0]);
    expect(kilobytes).toBeGreaterThan(0);
    expect(kilobytes).toBeLessThan(5 * 1024);

    const installed = readManifest(join(consumer, 'node_modules', 'textdetect-client'));
    expect(Object.keys(installed.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
    expect(installed.scripts).toBeUndefined();
    expect(installWarnings).not.toMatch(/install scripts|allowScripts|prepare|peer dep/i);
  });

  it('scores a text against a real service with plain node, without ioredis installed', async () => {
    expect(existsSync(join(consumer, 'node_modules', 'ioredis'))).toBe(false);
    const program = `
      import { createServer } from 'node:http';
      import { DetectClient, AuthenticationError, InvalidRequestError, MODES } from 'textdetect-client';
      import { ERROR_CODES } from 'textdetect-client/contract';
      const client = new DetectClient({ apiKey: process.env.KEY, baseUrl: process.env.URL });
      const result = await client.detect({ text: process.env.TEXT, mode: 'academic', segments: true });
      let rejected = '';
      const bad = new DetectClient({ apiKey: 'sk_test_not_a_key', baseUrl: process.env.URL, maxRetries: 0 });
      try { await bad.detect({ text: process.env.TEXT }); } catch (err) { rejected = err instanceof AuthenticationError ? err.code : String(err); }
      // The User-Agent names the installed package's version; a loopback listener reads it.
      let userAgent = '';
      const listener = createServer((req, res) => {
        userAgent = req.headers['user-agent'] ?? '';
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'authentication_error', code: 'invalid_api_key', message: 'no' } }));
      });
      await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const probe = new DetectClient({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:' + listener.address().port, maxRetries: 0 });
      await probe.detect({ text: 'x' }).catch(() => undefined);
      listener.close();
      let redisError = {};
      try { new DetectClient({ apiKey: 'sk_test_x', baseUrl: process.env.URL, redis: 'redis://127.0.0.1:1' }); }
      catch (err) { redisError = { invalid: err instanceof InvalidRequestError, code: err.code, param: err.param, message: err.message }; }
      await Promise.all([client.close(), bad.close(), probe.close()]);
      console.log(JSON.stringify({ result, rejected, userAgent, redisError, modes: MODES, codes: ERROR_CODES.length }));
    `;
    const out = await runProgram(program);
    const result = out.result as {
      request_id: string;
      mode: string;
      segments: { start: number; end: number; text: string }[];
      ai_probability: number;
    };
    expect(result.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(result.mode).toBe('academic');
    expect(result.ai_probability).toBeGreaterThanOrEqual(0);
    expect(result.ai_probability).toBeLessThanOrEqual(1);
    for (const segment of result.segments) expect(SAMPLE_TEXT.slice(segment.start, segment.end)).toBe(segment.text);
    expect(out.rejected).toBe('invalid_api_key');
    expect(out.userAgent).toMatch(new RegExp(`^textdetect-client/${readManifest(ROOT).version.replaceAll('.', '\\.')} node/`));
    expect(out.redisError).toMatchObject({ invalid: true, code: 'ioredis_not_installed', param: 'redis' });
    expect((out.redisError as { message: string }).message).toContain('npm install ioredis');
    expect(out.modes).toEqual(['academic', 'financial', 'legal', 'general']);
    expect(out.codes).toBeGreaterThan(10);
  });

  it('gives a TypeScript consumer without ioredis full declarations', async () => {
    const result = await typecheck(
      `import { DetectClient, RateLimitError, type DetectResponse, type Mode, type RedisClient } from 'textdetect-client';
       import type { ErrorEnvelope } from 'textdetect-client/contract';
       const mode: Mode = 'legal';
       const client = new DetectClient({ apiKey: 'sk_test_x', limiter: { max: 10, intervalMs: 5_000 } });
       export async function check(text: string): Promise<DetectResponse['verdict'] | number> {
         try { return (await client.detect({ text, mode })).verdict; }
         catch (err) { if (err instanceof RateLimitError) return err.retryAfterMs; throw err; }
       }
       export const envelope: ErrorEnvelope = { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'wait' } };
       export const shared = (redis: RedisClient): DetectClient => new DetectClient({ apiKey: 'sk_test_x', redis });
       // @ts-expect-error the contract knows the modes
       export const wrong: Mode = 'poetry';
      `,
    );
    expect(result).toBe('0');
  }, 120_000);

  it('shares the budget through a real Redis once ioredis is installed next to it', async () => {
    const root = readManifest(ROOT);
    const ioredisVersion = readManifest(join(ROOT, 'node_modules', 'ioredis')).version;
    const added = await npm(['install', '--prefer-offline', `ioredis@${ioredisVersion}`], consumer);
    expect(added.code, added.stderr).toBe(0);
    expect(root.dependencies?.ioredis).toBeDefined();

    const program = `
      import { Redis } from 'ioredis';
      import { DetectClient } from 'textdetect-client';
      const id = 'textdetect-client-package-test:' + process.pid;
      const byUrl = new DetectClient({ apiKey: process.env.KEY, baseUrl: process.env.URL, redis: process.env.REDIS, limiter: { id, max: 50, intervalMs: 60000 } });
      const own = new Redis(process.env.REDIS);
      const byClient = new DetectClient({ apiKey: process.env.KEY, baseUrl: process.env.URL, redis: own, limiter: { id, max: 50, intervalMs: 60000 } });
      const [a, b] = await Promise.all([byUrl.detect({ text: process.env.TEXT }), byClient.detect({ text: process.env.TEXT })]);
      const keys = await own.keys('b_' + id + '*');
      const limits = [byUrl.limits().clustered, byClient.limits().clustered];
      await Promise.all([byUrl.close(), byClient.close()]);
      // The caller's own client outlives the SDK's duplicate.
      const ping = await own.ping();
      await own.del(...keys);
      own.disconnect();
      console.log(JSON.stringify({ ids: [a.request_id, b.request_id], limits, sharedKeys: keys.length, ping }));
    `;
    const out = await runProgram(program, { REDIS: process.env.REDIS_URL });
    expect(out.ids).toEqual([expect.stringMatching(/^req_/), expect.stringMatching(/^req_/)]);
    expect(out.limits).toEqual([true, true]);
    // bottleneck keeps the shared budget in Redis keys named after the limiter id.
    expect(out.sharedKeys).toBeGreaterThan(0);
    expect(out.ping).toBe('PONG');

    const typed = await typecheck(
      `import { Redis } from 'ioredis';
       import { DetectClient } from 'textdetect-client';
       export const client = new DetectClient({ apiKey: 'sk_test_x', redis: new Redis({ lazyConnect: true }) });
      `,
    );
    expect(typed).toBe('0');
  }, 180_000);
});
