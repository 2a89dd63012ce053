/**
 * `npm run bench` (last part) / `npm run bench:files`: POST /v1/detect/file against the compiled
 * service (dist/, as `npm start` runs it) in a child process, with documents built here:
 *
 *   - a 20-page text PDF of ~8,000 words (running header and page numbers on every page) and a DOCX
 *     of the same text: p50/p90 of the whole answer (upload, extraction, scoring);
 *   - other callers' POST /v1/detect latency (p50/p99) alone, then while 4 such PDFs are being
 *     processed at all times;
 *   - DOCX zip bombs (honest sizes, and sizes that lie): time to the refusal and the RSS growth of
 *     the service and its document readers together (sampled from /proc every 2 ms while the
 *     request runs);
 *   - PDF decompression bombs (a content stream inflating to 512 MB and 1 GB, one in a font): the
 *     answer, the peak RSS of the service and its readers, and that RSS after the run against before;
 *   - reading order: the share of the source's words found in order in the extracted text.
 *
 *   npm run bench:files -- --runs 15 --load-seconds 8
 *   npm run bench:files -- --bombs       the bombs alone
 *
 * Prints the machine's load average with the figures: on a shared machine they are noisy.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_TEXT_CHARS, fileRequestCost } from '../src/contract.ts';
import { extractDocument } from '../src/documents/extract.ts';
import { buildDocx, buildDocxBomb, buildPdf, buildPdfBomb, inOrderShare, paragraphs } from '../test/helpers/documents.ts';

/** What the bench reads of `/v1/detect/file`'s answer: the file's size, or the error's code. */
type UploadBody = { file: { characters: number }; error?: { code: string } };

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    'load-seconds': { type: 'string', default: '8' },
    words: { type: 'string', default: '8000' },
    bombs: { type: 'boolean', default: false },
  },
});
const RUNS = Number(args.runs);
const LOAD_SECONDS = Number(args['load-seconds']);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
const ms = (n: number) => `${n.toFixed(0)} ms`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function startService(keysFile: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['dist/src/service/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEYS_FILE: keysFile,
      RATE_LIMIT_MAX: '1000000000',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      PLAYGROUND: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolvePromise, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (output.length < 20_000) output += d;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) resolvePromise(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Resident bytes of a process and of every process under it (the service's document readers). */
function rssBytes(pid: number): number {
  let bytes = 0;
  const pending = [pid];
  while (pending.length) {
    const next = pending.pop() as number;
    try {
      bytes += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${next}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      for (const task of readdirSync(`/proc/${next}/task`)) {
        const children = readFileSync(`/proc/${next}/task/${task}/children`, 'utf8').trim();
        if (children) pending.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return bytes;
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js'))) throw new Error('no compiled build: run `npm run build` first');
  const words = Number(args.words);
  const source = paragraphs(words, 110);
  const sourceText = source.join('\n\n');
  const pdf = buildPdf({ paragraphs: source, spreadOver: 20, header: 'Regional Review, Annual Report', footer: 'Page {n} of {total}' });
  const docx = buildDocx({
    paragraphs: source,
    table: {
      after: 3,
      rows: [
        ['Item', 'Figure'],
        ['Households surveyed', 'Twelve hundred'],
      ],
    },
    footnotes: [{ after: 1, text: 'Survey figures from the county clerk.' }],
  });

  console.log(`textdetect file bench — ${cpus().length} CPUs (available ${availableParallelism()}), load ${load()}`);
  // Reading order, in this process (the same code the workers run).
  const limits = { maxPages: 100, maxUnpackedBytes: 64 * 1024 * 1024, maxChars: DEFAULT_MAX_TEXT_CHARS };
  const pdfText = await extractDocument(pdf, limits);
  const docxText = await extractDocument(docx, limits);
  console.log(
    `documents: PDF ${pdfText.pages} pages, ${words} words, ${(pdf.length / 1024).toFixed(0)} KB, ${pdfText.text.length} characters read; DOCX ${(docx.length / 1024).toFixed(0)} KB, ${docxText.text.length} characters read`,
  );
  console.log(
    `reading order (source words found in order): PDF ${(inOrderShare(sourceText, pdfText.text) * 100).toFixed(2)}%, DOCX ${(inOrderShare(sourceText, docxText.text) * 100).toFixed(2)}% (target ≥ 98%); running header/page numbers left in PDF text: ${/Regional Review|Page \d+ of/.test(pdfText.text) ? 'YES' : 'none'}`,
  );

  const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-files-'));
  const { createApiKey } = await import('../src/service/keys.ts');
  const keysFile = join(dir, 'api-keys.json');
  const key = (await createApiKey(keysFile, { name: 'bench' })).key;
  // The 4 PDFs come from 4 callers: one key may have only 2 files being read at once.
  const fileKeys: string[] = [];
  for (let i = 0; i < 4; i++) fileKeys.push((await createApiKey(keysFile, { name: `bench file caller ${i}` })).key);
  const service = await startService(keysFile);
  try {
    const upload = async (bytes: Buffer, name: string, callerKey = key): Promise<{ ms: number; status: number; body: UploadBody }> => {
      const form = new FormData();
      form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
      const started = performance.now();
      const response = await fetch(`${service.url}/v1/detect/file`, {
        method: 'POST',
        headers: { authorization: `Bearer ${callerKey}` },
        body: form,
      });
      const body = (await response.json()) as UploadBody;
      return { ms: performance.now() - started, status: response.status, body };
    };
    const shortText = source[5]!.split(' ').slice(0, 60).join(' ');
    const detect = async (): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${service.url}/v1/detect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: shortText }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`/v1/detect answered ${response.status}`);
      return performance.now() - started;
    };

    // Warm-up: pdf.js and the engine's workers compile on first use.
    for (let i = 0; i < 3; i++) {
      const warm = await upload(pdf, 'warm.pdf');
      if (warm.status !== 200) throw new Error(`warm-up answered ${warm.status}: ${JSON.stringify(warm.body)}`);
      await upload(docx, 'warm.docx');
      await detect();
    }

    if (!args.bombs) {
      for (const [name, bytes] of [
        ['20-page PDF', pdf],
        ['DOCX, same text', docx],
      ] as const) {
        const times: number[] = [];
        let cost = 0;
        for (let i = 0; i < RUNS; i++) {
          const answer = await upload(bytes, name.startsWith('DOCX') ? 'report.docx' : 'report.pdf');
          if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
          cost = fileRequestCost(answer.body.file.characters);
          times.push(answer.ms);
        }
        console.log(
          `${name}: p50 ${ms(quantile(times, 0.5))}, p90 ${ms(quantile(times, 0.9))}, max ${ms(Math.max(...times))} over ${RUNS} sequential answers (target p50 < 1000 ms); costs ${cost} units; load ${load()}`,
        );
      }

      // Other callers alone, then while 4 PDFs are in the service at all times.
      const detectFor = async (seconds: number): Promise<number[]> => {
        const times: number[] = [];
        const end = performance.now() + seconds * 1000;
        while (performance.now() < end) {
          times.push(await detect());
          // About 20 calls a second: another caller's steady traffic, not a flood.
          await new Promise((r) => setTimeout(r, 50));
        }
        return times;
      };
      const alone = await detectFor(LOAD_SECONDS / 2);
      let stop = false;
      let filesDone = 0;
      const fileLatencies: number[] = [];
      const fileLoop = async (_: unknown, caller: number) => {
        while (!stop) {
          const answer = await upload(pdf, 'report.pdf', fileKeys[caller]);
          if (answer.status !== 200) throw new Error(`under load: ${answer.status} ${JSON.stringify(answer.body)}`);
          fileLatencies.push(answer.ms);
          filesDone++;
        }
      };
      const loops = Array.from({ length: 4 }, fileLoop);
      await new Promise((r) => setTimeout(r, 300));
      const loaded = await detectFor(LOAD_SECONDS);
      stop = true;
      await Promise.all(loops);
      console.log(
        `other callers' /v1/detect (60 words, ~20/s): alone p50 ${ms(quantile(alone, 0.5))} p99 ${ms(quantile(alone, 0.99))} (${alone.length} calls); while 4 PDFs are processed: p50 ${ms(quantile(loaded, 0.5))} p99 ${ms(quantile(loaded, 0.99))} max ${ms(Math.max(...loaded))} (${loaded.length} calls; target p99 < 50 ms); the PDFs meanwhile: ${filesDone} answered, p50 ${ms(quantile(fileLatencies, 0.5))}; load ${load()}`,
      );
    }

    for (const [label, bomb] of [
      ['zip bomb, 256 MB of XML declared', buildDocxBomb(256)],
      ['zip bomb, 1 GB of XML declared', buildDocxBomb(1024)],
      ['zip bomb, 256 MB of XML declared as 4 KB (lies)', buildDocxBomb(256, true)],
    ] as const) {
      const times: number[] = [];
      let growth = 0;
      let code = '';
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const before = rssBytes(service.pid);
        let peak = before;
        const sampler = setInterval(() => {
          peak = Math.max(peak, rssBytes(service.pid));
        }, 2);
        const answer = await upload(bomb, 'bomb.docx');
        clearInterval(sampler);
        peak = Math.max(peak, rssBytes(service.pid));
        times.push(answer.ms);
        growth = Math.max(growth, peak - before);
        code = `${answer.status} ${answer.body.error?.code}`;
      }
      console.log(
        `${label} (${(bomb.length / 1024).toFixed(0)} KB file): ${code}, answered in p50 ${ms(quantile(times, 0.5))} max ${ms(Math.max(...times))} over 5 (target < 200 ms); service and readers' RSS growth at most +${(growth / 1048576).toFixed(1)} MB (target < 50 MB); load ${load()}`,
      );
    }

    // PDF bombs: pdf.js inflates streams into buffers outside the JavaScript heap; the reader process
    // is killed past FILE_WORKER_MEMORY_MB and replaced, and its memory goes back to the system.
    await new Promise((r) => setTimeout(r, 1000));
    const start = rssBytes(service.pid);
    let peak = start;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(service.pid));
    }, 2);
    for (const [label, bomb] of [
      ['PDF bomb, a content stream inflating to 512 MB', buildPdfBomb(512)],
      ['PDF bomb, a content stream inflating to 1 GB', buildPdfBomb(1024)],
      ['PDF bomb, a font inflating to 512 MB', buildPdfBomb(512, { inFont: true })],
    ] as const) {
      const answers = await Promise.all([upload(bomb, 'bomb.pdf'), upload(bomb, 'bomb.pdf')]);
      console.log(
        `${label} (${(bomb.length / 1024).toFixed(0)} KB file), two at once: ${answers.map((a) => `${a.status} ${a.body.error?.code ?? ''} in ${ms(a.ms)}`).join(', ')}; load ${load()}`,
      );
    }
    clearInterval(sampler);
    // The reader replaced after the last bomb has started and read a file, as before the run.
    await upload(pdf, 'report.pdf');
    await new Promise((r) => setTimeout(r, 1000));
    const end = rssBytes(service.pid);
    console.log(
      `PDF bombs: service and readers' RSS ${(start / 1048576).toFixed(0)} MB before, peak ${(peak / 1048576).toFixed(0)} MB (limit ${process.env.FILE_WORKER_MEMORY_MB ?? 512} MB per reader), ${(end / 1048576).toFixed(0)} MB after (target: within 50 MB of before)`,
    );
  } finally {
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
