/**
 * `npm run bench:floods`: POST /v1/detect/file under the floods of issue 40, against the compiled
 * service (dist/, as `npm start` runs it) in a child process, side by side with an older build:
 *
 *   npm run bench:floods -- --baseline fe7fd19            # this checkout and fe7fd19, one after the other
 *   npm run bench:floods -- --only readers --readers 1    # one part, one reader count
 *
 * - `readers` (items 1 and 2): three keys keep the document readers busy with slow files (a PDF
 *   whose one content stream inflates to 128 MB of spaces: seconds of reading, then 422 no text),
 *   each with `--flood-loops` files in at all times (sent again as soon as one is answered, 250 ms
 *   after a refusal); a fourth key sends a 2-page PDF, waits for the answer, waits a second, and
 *   sends the next, `--files` times. Per build and per FILE_WORKERS value (`--readers`): the fourth
 *   key's answers and their time, the flooding keys' answers, and every 503 sentence with how long
 *   its file had waited when it was sent (the sentence must be true of that file).
 * - `multipart` (item 4): `--senders` connections (default 8, in a worker thread) send forms of one
 *   small file and 1.16M empty parts (10 MB) over and over for `--seconds`; another key's
 *   `/v1/detect` (60 words, one after the other, 50 ms apart) p50/p99/max alone and during the
 *   flood, and the peak resident memory of the service and its readers (sampled every 10 ms). For
 *   reference, the same with the same 10 MB sent as JSON to /v1/detect: refused 413 from its
 *   Content-Length before a byte is read, what any refused request of that size costs.
 *
 * `--baseline REV` builds that git revision (`git archive` under the system's temp folder; this
 * checkout's node_modules linked in, or its own `npm ci` when its package-lock.json differs) and
 * runs every part against it right after this checkout.
 * Prints the machine's load average with the figures: on a shared machine they are noisy.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildPdf, buildPdfBomb, paragraphs } from '../test/helpers/documents.ts';
import { buildRevision } from './lib/build-revision.ts';
import { scriptArgs } from './lib/options.mjs';
import { ROOT, rssBytes, startService } from './lib/service-process.ts';
import { table } from './lib/table.ts';

const args = scriptArgs(import.meta.url, {
  options: {
    baseline: { type: 'string' },
    only: { type: 'string' },
    readers: { type: 'string', default: '1,2' },
    files: { type: 'string', default: '12' },
    'flood-loops': { type: 'string', default: '2' },
    senders: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
  },
});

interface Answer {
  status: number;
  code: string;
  message: string;
  ms: number;
}

interface Build {
  label: string;
  root: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : '–');
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
function counts(answers: Answer[]): string {
  const by = new Map<string, number>();
  for (const answer of answers) {
    const label = answer.status === 200 ? '200' : `${answer.status} ${answer.code}`;
    by.set(label, (by.get(label) ?? 0) + 1);
  }
  return [...by].map(([label, n]) => `${n} × ${label}`).join(', ') || 'none';
}

async function upload(url: string, key: string, bytes: Buffer, name: string): Promise<Answer> {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  const started = performance.now();
  try {
    const response = await fetch(`${url}/v1/detect/file`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await response.json()) as { error?: { code: string; message: string } };
    return { status: response.status, code: body.error?.code ?? '', message: body.error?.message ?? '', ms: performance.now() - started };
  } catch (err) {
    return { status: 0, code: (err as Error).message, message: '', ms: performance.now() - started };
  }
}

/** Items 1 and 2: the fourth key's small files while three keys keep the readers busy. */
async function readersPart(build: Build, keysFile: string, keys: string[], workers: number): Promise<string[][]> {
  const [warmKey, a, b, c, fourth] = keys as [string, string, string, string, string];
  const slow = buildPdfBomb(128);
  const small = buildPdf({ paragraphs: paragraphs(600, 100), spreadOver: 2 });
  const service = await startService(keysFile, build.root, { FILE_WORKERS: String(workers) });
  try {
    // The readers are warm and have read one slow file: they know files take seconds here.
    await upload(service.url, warmKey, small, 'warm.pdf');
    const smallAlone = await upload(service.url, warmKey, small, 'note.pdf');
    const alone = await upload(service.url, warmKey, slow, 'slow.pdf');
    let flooding = true;
    const floodAnswers: Answer[] = [];
    const read = new Set<string>();
    const loop = async (key: string) => {
      while (flooding) {
        const answer = await upload(service.url, key, slow, 'slow.pdf');
        floodAnswers.push(answer);
        if (answer.status === 429 || answer.status === 503 || answer.status === 0) await sleep(250);
        else read.add(key);
      }
    };
    const loops = [a, b, c].flatMap((key) => Array.from({ length: Number(args['flood-loops']) }, () => loop(key)));
    // The flood runs alone until each flooding key has had a file read (a minute and a half at most).
    for (const end = performance.now() + 90_000; read.size < 3 && performance.now() < end; ) await sleep(100);
    const mine: Answer[] = [];
    for (let i = 0; i < Number(args.files); i++) {
      mine.push(await upload(service.url, fourth, small, 'note.pdf'));
      await sleep(1000);
    }
    flooding = false;
    await Promise.all(loops);
    const times = mine.map((answer) => answer.ms);
    const rows = [
      [`${build.label}, FILE_WORKERS=${workers}`, 'one slow file alone', `${alone.status} ${alone.code} in ${ms(alone.ms)}`],
      ['', 'one 2-page PDF alone', `${smallAlone.status} ${smallAlone.code} in ${ms(smallAlone.ms)}`],
      ['', `fourth key, ${mine.length} files one after the other`, counts(mine)],
      ['', 'its answer times', `${times.map((t) => (t / 1000).toFixed(1)).join(' ')} s`],
      ['', 'the flooding keys’ answers', counts(floodAnswers)],
    ];
    // Each 503 sentence (figures as N) with how long its file had waited: it must be true of that file.
    for (const [who, answers] of [
      ['fourth key', mine],
      ['flooding keys', floodAnswers],
    ] as const) {
      const sentences = new Map<string, number[]>();
      for (const answer of answers) {
        if (answer.status !== 503) continue;
        const shape = answer.message.replace(/\d+(\.\d+)?/g, 'N');
        sentences.set(shape, [...(sentences.get(shape) ?? []), answer.ms]);
      }
      for (const [shape, waits] of sentences) {
        rows.push(['', `${who}: ${waits.length} × 503 after ${ms(Math.min(...waits))}–${ms(Math.max(...waits))}`, shape]);
      }
    }
    rows.push(['', 'load average after', load()]);
    return rows;
  } finally {
    await service.stop();
  }
}

/** The flood senders, in a worker thread so that writing 10 MB bodies does not slow the measuring loop. */
const SENDERS = `
const { connect } = require('node:net');
const { workerData, parentPort } = require('node:worker_threads');
const { port, key, senders, json } = workerData;
const body = Buffer.from('--b\\r\\nContent-Disposition: form-data; name="file"; filename="a.txt"\\r\\n\\r\\nA short note.\\r\\n' + '--b\\r\\n\\r\\n\\r\\n'.repeat(1160000) + '--b--\\r\\n');
const [path, type] = json ? ['/v1/detect', 'application/json'] : ['/v1/detect/file', 'multipart/form-data; boundary=b'];
const head = 'POST ' + path + ' HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nAuthorization: Bearer ' + key + '\\r\\nContent-Type: ' + type + '\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n';
let stop = false;
const statuses = {};
parentPort.on('message', () => { stop = true; });
function once() {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (data) => { if (received.length < 64) received += data; });
    socket.on('error', () => {});
    socket.on('close', () => {
      const status = received.slice(9, 12) || 'reset before an answer';
      statuses[status] = (statuses[status] || 0) + 1;
      resolve();
    });
    socket.write(head);
    socket.write(body);
  });
}
async function sender() { while (!stop) await once(); }
Promise.all(Array.from({ length: senders }, sender)).then(() => parentPort.postMessage(statuses));
`;

/**
 * Item 4: another key's /v1/detect while senders flood the file route with forms of empty parts, or
 * (`json`, for reference: what any refused 10 MB request costs) send the same bytes as a JSON body
 * to /v1/detect, refused 413 from its Content-Length before a byte of it is read.
 */
async function multipartPart(build: Build, keysFile: string, keys: string[], json: boolean): Promise<string[][]> {
  const [flooder, other] = keys as [string, string];
  const service = await startService(keysFile, build.root);
  try {
    const text = paragraphs(60, 60)[0]!;
    const detect = async (): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${service.url}/v1/detect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`/v1/detect answered ${response.status}`);
      return performance.now() - started;
    };
    const detectFor = async (seconds: number): Promise<number[]> => {
      const times: number[] = [];
      for (const end = performance.now() + seconds * 1000; performance.now() < end; ) {
        times.push(await detect());
        await sleep(50);
      }
      return times;
    };
    for (let i = 0; i < 10; i++) await detect();
    const alone = await detectFor(3);
    const before = rssBytes(service.pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(service.pid));
    }, 10);
    const senders = new Worker(SENDERS, {
      eval: true,
      workerData: { port: Number(new URL(service.url).port), key: flooder, senders: Number(args.senders), json },
    });
    const statuses = new Promise<Record<string, number>>((resolve) => senders.once('message', resolve));
    const during = await detectFor(Number(args.seconds));
    senders.postMessage('stop');
    const answered = await statuses;
    clearInterval(sampler);
    await senders.terminate();
    const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;
    return [
      [
        json ? `${build.label}, 10 MB JSON to /v1/detect` : `${build.label}, forms of empty parts`,
        'other key alone: p50 / p99',
        `${ms(quantile(alone, 0.5))} / ${ms(quantile(alone, 0.99))} (${alone.length} calls)`,
      ],
      [
        '',
        `during the flood: p50 / p99 / max`,
        `${ms(quantile(during, 0.5))} / ${ms(quantile(during, 0.99))} / ${ms(Math.max(...during))} (${during.length} calls; target p99 < 250 ms)`,
      ],
      [
        '',
        'flood requests answered',
        Object.entries(answered)
          .map(([status, n]) => `${n} × ${status}`)
          .join(', '),
      ],
      ['', 'service and readers’ RSS: before / peak', `${mb(before)} / ${mb(peak)}`],
      ['', 'load average after', load()],
    ];
  } finally {
    await service.stop();
  }
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js'))) throw new Error('no compiled build: run `npm run build` first');
  console.log(`textdetect flood bench — ${cpus().length} CPUs (available ${availableParallelism()}), load ${load()}`);
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-floods-'));
  try {
    const builds: Build[] = [{ label: 'this checkout', root: ROOT }];
    if (args.baseline) builds.push({ label: args.baseline, root: buildRevision(args.baseline, dir) });
    const { createApiKey } = await import('../src/service/keys.ts');
    const keysFile = join(dir, 'api-keys.json');
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await createApiKey(keysFile, { name: `bench ${i}` })).key);
    if (args.only !== 'multipart') {
      const rows: string[][] = [];
      for (const workers of args.readers!.split(',').map(Number)) {
        for (const build of builds) rows.push(...(await readersPart(build, keysFile, keys, workers)));
      }
      console.log(`\nA fourth key's small files while three keys keep the readers busy (items 1 and 2)\n`);
      console.log(table(['build', 'figure', 'measured'], rows, false, false));
    }
    if (args.only !== 'readers') {
      const rows: string[][] = [];
      for (const build of builds) rows.push(...(await multipartPart(build, keysFile, keys, false)));
      for (const build of builds) rows.push(...(await multipartPart(build, keysFile, keys, true)));
      console.log(
        `\nAnother key's /v1/detect while ${args.senders} senders flood the file route with 10 MB forms of 1.16M empty parts (item 4); for reference, the same bytes sent as JSON to /v1/detect, refused from their Content-Length unread\n`,
      );
      console.log(table(['build', 'figure', 'measured'], rows, false, false));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
