/**
 * `npm run bench`: load-tests POST /v1/detect with autocannon and compares it with a bare fastify
 * route returning fixed JSON, measured in the same run on the same machine. The service runs twice
 * side by side: compiled (`dist/`, what `npm start` and the image run; `npm run bench` builds it
 * first) and from its sources through tsx, and the ratio compiled/tsx is printed per row, along with
 * both start-up times and the `textdetect --help` start-up of each.
 *
 *   npm run bench                         # starts both servers itself, 5 s per measurement
 *   npm run bench -- --duration 10 --workers 2
 *   npm run bench -- --url http://127.0.0.1:8080 --key sk_test_…   # an already running service
 *   npm run bench -- --baseline 6c4d590   # against an older build instead of tsx (see below)
 *
 * `--baseline REV` builds that git revision (`git archive` into a folder under the system's temp
 * folder, this checkout's node_modules linked in, its own scripts/build.mjs) and runs it in place of
 * the tsx server: every row then alternates the two compiled servers and prints new/old, and the
 * geometric mean of the rows' ratios is printed last. `--rounds N` measures each pair N times
 * (alternating which goes first) and shows the round with the median ratio: the machine is shared.
 *
 * Fairness (issue 25): one key sends `--fairness N` (default 60) maximal author calls at once (10
 * messages of 5,000 characters of corpus prose) while a second key sends 300-word
 * texts to /v1/detect one after the other; the second key's p50/p99/max latency is printed per
 * server (target: p99 under 250 ms). It runs last, as an old build may still be working through the
 * burst when the measurement gives up (`--fairness-cap S` seconds after the burst's first answer,
 * default 60). `--only throughput` or `--only fairness` runs one part.
 *
 * Texts of 50, 300 and 3,000 words are built from real sentences of the corpus
 * (../shared/data/corpus-dev.jsonl, read now), with many different texts per size so no cache or
 * branch predictor sees the same input twice in a row.
 *
 * The servers run in child processes so autocannon (this process) does not share their event loop.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchTexts } from './bench-texts.ts';
import { buildRevision } from './lib/build-revision.ts';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}
interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  requests?: AutocannonRequest[];
  method?: string;
}) => Promise<AutocannonResult>;

const require = createRequire(import.meta.url);
// autocannon ships no type declarations; the shape used here is declared above.
const autocannon = require('autocannon') as Autocannon;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '1,16,64' },
    words: { type: 'string', default: '50,300,3000' },
    // Default: whatever `npm start` uses (DETECT_WORKERS from the environment, else one per CPU, at most 4).
    workers: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    texts: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '1' },
    baseline: { type: 'string' },
    fairness: { type: 'string', default: '60' },
    'fairness-cap': { type: 'string', default: '60' },
    // `throughput` or `fairness`: run only that part.
    only: { type: 'string' },
    // Internal: the child process that serves the bare fastify route.
    'serve-bare': { type: 'boolean', default: false },
  },
});
const duration = Number(args.duration);
const connectionCounts = args.connections!.split(',').map(Number);
const wordCounts = args.words!.split(',').map(Number);
const textsPerSize = Number(args.texts);
const rounds = Math.max(1, Number(args.rounds));

/** English sentences of the dev set, or of Brown corpus texts without it (scripts/bench-texts.ts). */
async function corpusSentences(): Promise<string[]> {
  const corpus = benchTexts();
  console.log(`texts: ${corpus.source}`);
  const sentences: string[] = [];
  for (const record of corpus.rows) {
    if (record.language !== 'en') continue;
    for (const sentence of record.text.split(/(?<=[.!?])\s+/)) {
      const words = sentence.split(/\s+/).length;
      if (words >= 5 && words <= 60) sentences.push(sentence);
    }
  }
  return sentences;
}

/** Consecutive corpus sentences from a different starting point per text, cut at `words` words. */
function buildTexts(sentences: string[], words: number, count: number): string[] {
  const texts: string[] = [];
  const stride = Math.max(1, Math.floor(sentences.length / count));
  for (let t = 0; t < count; t++) {
    const parts: string[] = [];
    let total = 0;
    for (let i = t * stride; total < words; i++) {
      const sentence = sentences[i % sentences.length]!;
      parts.push(sentence);
      total += sentence.split(/\s+/).length;
    }
    texts.push(parts.join(' ').split(/\s+/).slice(0, words).join(' '));
  }
  return texts;
}

/** How a child runs: compiled JavaScript on plain node, or TypeScript sources through tsx. */
type Build = 'compiled' | 'tsx';

interface FairnessResult {
  lightMs: number[];
  heavyAnswered: number;
  heavyTotal: number;
  gaveUp: boolean;
}

/**
 * One key's burst of maximal author calls, and another key's /v1/detect latency meanwhile: its calls
 * are due every 100 ms from the burst's first answer (by then every call of the burst has arrived),
 * sent one after the other, each timed from when it was due (a server too busy to read a call is
 * slow too), until the burst is answered or `capMs` has passed.
 */
async function fairness(
  url: string,
  heavyKey: string,
  lightKey: string,
  calls: number,
  heavyMessages: string[],
  texts: string[],
  capMs: number,
): Promise<FairnessResult> {
  const abort = new AbortController();
  const body = JSON.stringify({ messages: heavyMessages });
  const headersFor = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
  // The second key is a customer in use, not one whose very first call lands in the burst: the
  // service keeps a worker free of heavy calls while more than one key called within a minute.
  await fetch(`${url}/v1/detect`, {
    method: 'POST',
    headers: headersFor(lightKey),
    body: JSON.stringify({ text: texts[0] }),
  }).then((answer) => answer.arrayBuffer());
  let heavyAnswered = 0;
  const burst = Array.from({ length: calls }, () =>
    fetch(`${url}/v1/detect/author`, { method: 'POST', headers: headersFor(heavyKey), body, signal: abort.signal })
      .then(async (answer) => {
        const text = await answer.text();
        if (answer.status === 200) heavyAnswered++;
        else if (process.env.BENCH_DEBUG) console.error(answer.status, text.slice(0, 300));
      })
      .catch(() => undefined),
  );
  const firstBy = performance.now() + capMs;
  while (heavyAnswered === 0 && performance.now() < firstBy) await new Promise((r) => setTimeout(r, 5));
  const first = performance.now();
  const giveUpAt = first + capMs;
  const lightMs: number[] = [];
  let gaveUp = false;
  for (let i = 0; heavyAnswered < calls; i++) {
    const due = first + i * 100;
    if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
    const left = giveUpAt - performance.now();
    if (left <= 0) {
      gaveUp = true;
      break;
    }
    try {
      const answer = await fetch(`${url}/v1/detect`, {
        method: 'POST',
        headers: headersFor(lightKey),
        body: JSON.stringify({ text: texts[i % texts.length] }),
        signal: AbortSignal.timeout(Math.ceil(left)),
      });
      await answer.arrayBuffer();
    } catch (err) {
      // Still waiting at the cap: its latency is at least this much.
      if (process.env.BENCH_DEBUG) console.error(err);
      gaveUp = true;
    }
    lightMs.push(performance.now() - due);
    if (gaveUp) break;
  }
  abort.abort();
  await Promise.all(burst);
  return { lightMs, heavyAnswered, heavyTotal: calls, gaveUp };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function startChild(
  argv: string[],
  env: Record<string, string | undefined>,
  pattern: RegExp,
  build: Build = 'tsx',
): Promise<{ child: ChildProcess; url: string; output: () => string; startupMs: number }> {
  const started = performance.now();
  const loader = build === 'tsx' ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...loader, ...argv], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolvePromise, reject) => {
    const onData = (d: Buffer) => {
      // Keep only the start of the output: the request logs that follow are discarded.
      if (output.length < 20_000) output += d;
      const match = pattern.exec(output);
      if (match) {
        resolvePromise({ child, url: match[1]!, output: () => output + stderr, startupMs: performance.now() - started });
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}: ${stderr}`)));
  });
}

/** The reference: what fastify alone costs per request on this machine, right now. */
async function serveBare(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  const fixed = {
    ai_probability: 0.5,
    mode: 'general',
    language: 'en',
    segments: [],
    request_id: 'req_00000000000000000000000000',
    model: 'bare',
    verdict: 'mixed',
    confidence: 'low',
    warnings: [],
  };
  app.post('/bare', async () => fixed);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`BARE_URL=http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
}

/** Median wall time of `runs` runs of the CLI's --help, compiled (the bin) or through tsx. */
function cliStartupMs(build: Build, runs: number): number {
  const argv = build === 'compiled' ? ['bin/textdetect.mjs', '--help'] : ['--import', 'tsx', 'src/cli/main.ts', '--help'];
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = spawnSync(process.execPath, argv, { cwd: ROOT, stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`textdetect --help (${build}) exited with ${result.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main(): Promise<void> {
  if (args['serve-bare']) {
    await serveBare();
    return;
  }
  const sentences = await corpusSentences();
  const cleanup: Array<() => Promise<void>> = [];
  try {
    let serviceUrl = args.url;
    let tsxUrl: string | undefined;
    let key = args.key;
    let lightKey: string | undefined;
    let baselineUrl: string | undefined;
    const startups: string[] = [];
    if (!serviceUrl) {
      if (!existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js'))) {
        throw new Error('no compiled build: run `npm run build` first (`npm run bench` does)');
      }
      const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-'));
      cleanup.push(() => rm(dir, { recursive: true, force: true }));
      const { createApiKey } = await import('../src/service/keys.ts');
      const keysFile = join(dir, 'api-keys.json');
      key = (await createApiKey(keysFile, { name: 'bench' })).key;
      lightKey = (await createApiKey(keysFile, { name: 'bench-light' })).key;
      const baselineDir = args.baseline ? buildRevision(args.baseline, dir) : undefined;
      const start = async (build: Build, root = ROOT, label: string = build) => {
        const service = await startChild(
          [build === 'compiled' ? join(root, 'dist/src/service/main.js') : 'src/service/main.ts'],
          {
            HOST: '127.0.0.1',
            PORT: '0',
            API_KEYS_FILE: keysFile,
            // The bench measures throughput, not the limiter's refusals.
            RATE_LIMIT_MAX: '1000000000',
            DETECT_WORKERS: args.workers ?? process.env.DETECT_WORKERS,
            LOG_LEVEL: 'info',
            REDIS_URL: undefined,
          },
          /"url":"(http:\/\/[^"]+)"/,
          build,
        );
        cleanup.push(async () => {
          service.child.kill('SIGTERM');
          await new Promise((r) => service.child.once('exit', r));
        });
        // Request logs go to stdout; read and drop them so the pipe never blocks the server.
        service.child.stdout!.resume();
        startups.push(`${label} ${fmt(service.startupMs)} ms`);
        return service.url;
      };
      // One after the other, so neither start-up competes with the other for the CPUs.
      serviceUrl = await start('compiled');
      if (baselineDir) baselineUrl = await start('compiled', baselineDir, `baseline ${args.baseline}`);
      else tsxUrl = await start('tsx');
    }
    if (!key) throw new Error('--key is required with --url');
    const bare = await startChild([fileURLToPath(import.meta.url), '--serve-bare'], {}, /BARE_URL=(\S+)/);
    cleanup.push(async () => {
      bare.child.kill('SIGTERM');
      await new Promise((r) => bare.child.once('exit', r));
    });

    console.log(
      `textdetect service bench — ${duration} s per run, ${textsPerSize} different texts per size, DETECT_WORKERS=${args.url ? '(external server)' : (args.workers ?? process.env.DETECT_WORKERS ?? `default (${Math.min(availableParallelism(), 4)})`)}, ${cpus().length} CPUs, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    // The server each row is compared with: the same build through tsx, or an older build.
    const otherUrl = tsxUrl ?? baselineUrl;
    const otherName = tsxUrl ? 'tsx' : `old (${args.baseline})`;
    const ratioName = tsxUrl ? 'compiled/tsx' : 'new/old';
    console.log(`service ${serviceUrl}${otherUrl ? ` (compiled), ${otherUrl} (${otherName})` : ''}, bare fastify ${bare.url}`);
    if (startups.length) console.log(`service start-up to listening (workers loaded): ${startups.join(', ')}`);
    if (!args.url) {
      const compiledCli = cliStartupMs('compiled', 5);
      const tsxCli = cliStartupMs('tsx', 5);
      console.log(
        `textdetect --help, median of 5: compiled ${fmt(compiledCli)} ms, tsx ${fmt(tsxCli)} ms (compiled/tsx time ${(compiledCli / tsxCli).toFixed(2)})`,
      );
    }
    console.log('');

    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
    const bareResults = new Map<number, AutocannonResult>();
    const rows: string[][] = [];
    for (const connections of args.only === 'fairness' ? [] : connectionCounts) {
      // Warm up the bare server (JIT) before measuring it.
      await autocannon({ url: `${bare.url}/bare`, connections, duration: 1, method: 'POST' });
      const result = await autocannon({
        url: `${bare.url}/bare`,
        connections,
        duration,
        requests: [{ method: 'POST', path: '/bare', headers, body: '{"text":"x"}' }],
      });
      bareResults.set(connections, result);
      rows.push([
        'bare fastify',
        String(connections),
        fmt(result.requests.average),
        fmt(result.latency.p50, 1),
        fmt(result.latency.p99, 1),
        '1.00',
        '',
        '',
        '',
        String(result.non2xx + result.errors + result.timeouts),
      ]);
    }
    const rowRatios: number[] = [];
    for (const words of args.only === 'fairness' ? [] : wordCounts) {
      const texts = buildTexts(sentences, words, textsPerSize);
      const requests = texts.map((text) => ({ method: 'POST', path: '/v1/detect', headers, body: JSON.stringify({ text }) }));
      await autocannon({ url: serviceUrl, connections: 4, duration: 1, requests });
      if (otherUrl) await autocannon({ url: otherUrl, connections: 4, duration: 1, requests });
      for (const [index, connections] of connectionCounts.entries()) {
        // Alternate which build goes first, so a drift in the machine's load does not favour one;
        // with --rounds N the pair is measured N times and the round with the median ratio is shown.
        const measure = (url: string) => autocannon({ url, connections, duration, requests });
        const pairs: Array<{ result: AutocannonResult; tsxResult: AutocannonResult | undefined }> = [];
        for (let round = 0; round < rounds; round++) {
          if (otherUrl && (index + round) % 2 === 1) {
            const tsxResult = await measure(otherUrl);
            pairs.push({ tsxResult, result: await measure(serviceUrl) });
          } else {
            const result = await measure(serviceUrl);
            pairs.push({ result, tsxResult: otherUrl ? await measure(otherUrl) : undefined });
          }
        }
        const pairRatio = (pair: (typeof pairs)[number]) =>
          pair.tsxResult ? pair.result.requests.average / pair.tsxResult.requests.average : pair.result.requests.average;
        pairs.sort((a, b) => pairRatio(a) - pairRatio(b));
        const { result, tsxResult } = pairs[Math.floor(pairs.length / 2)]!;
        if (tsxResult) rowRatios.push(result.requests.average / tsxResult.requests.average);
        const ratio = result.requests.average / (bareResults.get(connections)?.requests.average ?? Number.NaN);
        const errors =
          result.non2xx + result.errors + result.timeouts + (tsxResult ? tsxResult.non2xx + tsxResult.errors + tsxResult.timeouts : 0);
        rows.push([
          `detect ${words} words`,
          String(connections),
          fmt(result.requests.average),
          fmt(result.latency.p50, 1),
          fmt(result.latency.p99, 1),
          ratio.toFixed(3),
          tsxResult ? fmt(tsxResult.requests.average) : '–',
          tsxResult ? fmt(tsxResult.latency.p99, 1) : '–',
          tsxResult ? (result.requests.average / tsxResult.requests.average).toFixed(3) : '–',
          String(errors),
        ]);
      }
    }
    const short = tsxUrl ? 'tsx' : 'old';
    const ratioSummary =
      rowRatios.length > 0
        ? `${ratioName} over the ${rowRatios.length} detect rows: geometric mean ${Math.exp(rowRatios.reduce((sum, r) => sum + Math.log(r), 0) / rowRatios.length).toFixed(3)}, median ${[...rowRatios].sort((a, b) => a - b)[Math.floor(rowRatios.length / 2)]!.toFixed(3)}, range ${Math.min(...rowRatios).toFixed(3)}–${Math.max(...rowRatios).toFixed(3)}`
        : undefined;
    const header = [
      'route',
      'conns',
      'req/s',
      'p50 ms',
      'p99 ms',
      'vs bare',
      `${short} req/s`,
      `${short} p99 ms`,
      ratioName,
      'non-2xx/errors',
    ];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
    console.log(line(header));
    console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
    for (const row of rows) console.log(line(row));
    if (ratioSummary) console.log(`\n${ratioSummary}${rounds > 1 ? ` (each row: the round with the median ratio of ${rounds})` : ''}`);
    console.log(
      '\n"req/s", "p50/p99 ms", "vs bare": the compiled service (dist/, as npm start runs it); "vs bare" = its req/s / the bare fastify route\'s at the same connection count.',
    );
    if (otherUrl)
      console.log(
        tsxUrl
          ? '"tsx …": the same service from its sources through tsx, measured right after (or before) it; "compiled/tsx" = req/s ratio.'
          : `"old …": the build of ${args.baseline}, measured right after (or before) the new one, alternating; "new/old" = req/s ratio.`,
      );
    if (lightKey && Number(args.fairness) > 0 && args.only !== 'throughput') {
      const calls = Number(args.fairness);
      const capMs = Number(args['fairness-cap']) * 1000;
      const lightTexts = buildTexts(sentences, 300, textsPerSize);
      // 10 messages of 5,000 characters of corpus prose: the most the author route takes by default
      // (AUTHOR_MAX_TOTAL_CHARS 50,000), and since language identification is linear, more work for
      // the engine than the runs of combining marks the issue used.
      const heavyMessages = buildTexts(sentences, 1200, 10).map((text) => text.slice(0, 5000));
      console.log(
        `\nfairness: one key sends ${calls} maximal author calls at once; another key sends 300-word texts to /v1/detect one after the other meanwhile (target p99 < 250 ms)`,
      );
      const servers: Array<[string, string]> = [['new', serviceUrl]];
      if (baselineUrl) servers.push([`old (${args.baseline})`, baselineUrl]);
      for (const [name, url] of servers) {
        const result = await fairness(url, key, lightKey, calls, heavyMessages, lightTexts, capMs);
        const ms = result.lightMs;
        console.log(
          `  ${name}: other key ${ms.length} calls, p50 ${fmt(percentile(ms, 50), 1)} ms, p99 ${fmt(percentile(ms, 99), 1)} ms, max ${fmt(Math.max(...ms), 1)} ms; ` +
            `burst ${result.heavyAnswered}/${result.heavyTotal} answered${result.gaveUp ? ` (gave up ${args['fairness-cap']} s after the burst's first answer, with the other key's last call still waiting: its figure is a lower bound)` : ''}`,
        );
      }
    }
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

main().catch((err: Error) => {
  console.error(`bench failed: ${err.message}`);
  process.exit(1);
});
