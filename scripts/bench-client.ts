/**
 * `npm run bench:client`: pushes N detections through DetectClient against a service whose key is
 * limited to L requests per window, and checks that the client surfaces no 429 and keeps the
 * throughput within 10% of the limit.
 *
 *   npm run bench:client                                   # 2,000 detections at 600/min (≈ 3.5 min)
 *   npm run bench:client -- --requests 300 --limit 600 --window-ms 10000   # a quick run
 *   npm run bench:client -- --redis redis://127.0.0.1:6379                # clustered limiter
 *   npm run bench:client -- --url http://127.0.0.1:8080 --key sk_test_…    # a running service
 *
 * Without --url the service is started in a child process on a free loopback port with a fresh
 * key file in a temporary directory. The client runs with its defaults: it learns the key's limit
 * from the RateLimit-Limit header (only --window-ms is passed when it differs from the default).
 * Texts are real documents from ../shared/data/corpus-dev.jsonl (first 1,500 characters each, sent
 * with the corpus's mode and language).
 *
 * Prints a human summary on stderr and one JSON line on stdout; exits 1 if a criterion fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DetectClient, RateLimitError, type DetectRequest } from '../src/client/index.ts';
import { benchTexts } from './bench-texts.ts';
import { scriptArgs } from './lib/options.mjs';

const values = scriptArgs(import.meta.url, {
  options: {
    requests: { type: 'string', default: '2000' },
    limit: { type: 'string', default: '600' },
    'window-ms': { type: 'string', default: '60000' },
    url: { type: 'string' },
    key: { type: 'string' },
    redis: { type: 'string' },
    tolerance: { type: 'string', default: '0.10' },
  },
});

const requests = positiveInt(values.requests, '--requests');
const limit = positiveInt(values.limit, '--limit');
const windowMs = positiveInt(values['window-ms'], '--window-ms');
const tolerance = Number(values.tolerance);
const root = fileURLToPath(new URL('..', import.meta.url));

function positiveInt(raw: string | undefined, flag: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench-client: ${flag} must be a whole number ≥ 1, got "${raw}".\n`);
    process.exit(2);
  }
  return n;
}

/** The dev set's texts, or Brown corpus texts without it (scripts/bench-texts.ts). */
async function loadTexts(): Promise<DetectRequest[]> {
  const corpus = benchTexts();
  console.log(`texts: ${corpus.source}`);
  const texts: DetectRequest[] = [];
  for (const entry of corpus.rows) {
    // The corpus labels mode and language; sending them keeps a cut-off text from being misjudged
    // as another language (a 422 that says nothing about the client).
    if (typeof entry.text === 'string' && entry.text.trim().length > 200) {
      texts.push({ text: entry.text.slice(0, 1_500), mode: entry.mode, language: entry.language });
    }
  }
  if (texts.length === 0) throw new Error('The benchmark texts hold no usable text.');
  return texts;
}

/** Starts `npm start`'s service in a child process with a private key file; resolves its URL and key. */
async function startService(): Promise<{ url: string; key: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-client-'));
  const keysFile = join(dir, 'api-keys.json');
  const { createApiKey } = await import('../src/service/keys.ts');
  const { key } = await createApiKey(keysFile, { name: 'bench-client' });
  const program = `
    const { startService } = await import(${JSON.stringify(join(root, 'src/service/index.ts'))});
    const { pino } = await import('pino');
    const svc = await startService({ port: 0, apiKeysFile: ${JSON.stringify(keysFile)}, rateLimitMax: ${limit},
      rateLimitWindow: ${windowMs}, logger: pino({ level: 'warn' }, pino.destination(2)) });
    process.stdout.write(svc.url + '\\n');
    process.on('SIGTERM', async () => { await svc.close(); process.exit(0); });
  `;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`the service exited (code ${code}) before listening`)));
  });
  return {
    url,
    key,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const texts = await loadTexts();
const service = values.url ? undefined : await startService();
const baseUrl = values.url ?? service?.url;
const apiKey = values.key ?? service?.key ?? process.env.TEXTDETECT_API_KEY;

const client = new DetectClient({
  apiKey,
  baseUrl,
  redis: values.redis,
  ...(windowMs !== 60_000 ? { limiter: { intervalMs: windowMs } } : {}),
});
const items: DetectRequest[] = Array.from({ length: requests }, (_, i) => texts[i % texts.length] as DetectRequest);

process.stderr.write(
  `bench-client: ${requests} detections, server limit ${limit} per ${windowMs / 1000} s, ${baseUrl}` +
    `${values.redis ? ' (clustered limiter)' : ''}; expected ≈ ${(((requests / limit) * windowMs) / 60_000).toFixed(1)} min\n`,
);
const started = performance.now();
const results = await client.detectMany(items, {
  onProgress: ({ done, total, failed }) => {
    if (done % 100 === 0 || done === total) {
      const s = (performance.now() - started) / 1000;
      process.stderr.write(
        `  ${done}/${total} in ${s.toFixed(1)} s (${((done / s) * 60).toFixed(0)}/min)${failed ? `, ${failed} failed` : ''}\n`,
      );
    }
  },
});
const elapsedMs = performance.now() - started;
const stats = client.stats();
const limits = client.limits();
await client.close();
await service?.stop();

const failures = results.filter((r) => !r.ok);
const surfaced429 = failures.filter((r) => r.error instanceof RateLimitError).length;
const limitPerMinute = (limit / windowMs) * 60_000;
const throughputPerMinute = (requests / elapsedMs) * 60_000;
const deviation = (throughputPerMinute - limitPerMinute) / limitPerMinute;
const errorCounts: Record<string, number> = {};
for (const f of failures) errorCounts[`${f.error?.name}:${f.error?.code}`] = (errorCounts[`${f.error?.name}:${f.error?.code}`] ?? 0) + 1;

const summary = {
  requests,
  limit,
  windowMs,
  clustered: limits.clustered,
  elapsedSeconds: Number((elapsedMs / 1000).toFixed(1)),
  throughputPerMinute: Number(throughputPerMinute.toFixed(1)),
  limitPerMinute,
  deviationPercent: Number((deviation * 100).toFixed(2)),
  succeeded: stats.succeeded,
  failed: failures.length,
  surfaced429,
  absorbed429: stats.rateLimited,
  attempts: stats.attempts,
  retries: stats.retries,
  errors: errorCounts,
  pass: surfaced429 === 0 && failures.length === 0 && Math.abs(deviation) <= tolerance,
};
process.stderr.write(
  `bench-client: ${summary.succeeded}/${requests} ok in ${summary.elapsedSeconds} s → ${summary.throughputPerMinute}/min ` +
    `(limit ${limitPerMinute}/min, ${summary.deviationPercent >= 0 ? '+' : ''}${summary.deviationPercent}%); ` +
    `429 surfaced: ${surfaced429}, absorbed by retries: ${summary.absorbed429}; failures: ${failures.length} → ${summary.pass ? 'PASS' : 'FAIL'}\n`,
);
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exitCode = summary.pass ? 0 : 1;
