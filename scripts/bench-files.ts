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
 *   - reading order: the share of the source's words found in order in the extracted text;
 *   - whole documents (`--only long`, issue 39): a 100-page report made by LibreOffice (10-point
 *     type, narrow margins: the densest the document limit is set for; built here when soffice is
 *     absent) as PDF and DOCX, and its text on /v1/detect: time per answer, the service's peak and
 *     settled RSS (with its readers), and another key's /v1/detect latency while three keys keep
 *     sending the report;
 *   - a DOCX far over the document limit (`--only over-limit`, issue 40 item 3): 61.7 million
 *     characters in a 365 KB file, time to its 413 (the reader is busy that long) and the RSS before,
 *     at its peak and after (with FILE_TIMEOUT_MS=120000, so a build that reads it all is not cut off).
 *
 *   npm run bench:files -- --runs 15 --load-seconds 8
 *   npm run bench:files -- --bombs       the bombs alone
 *   npm run bench:files -- --only long --baseline df6e934        beside an older build (side by side)
 *   npm run bench:files -- --only over-limit --baseline df6e934
 *
 * `--baseline REV` builds that revision (scripts/lib/build-revision.ts) and runs the long-document
 * and over-limit parts on it too, one build after the other, with the same settings: the long part
 * with MAX_TEXT_CHARS=750000 on both (the old code scores a text in one piece up to that limit), the
 * over-limit part with each build's own document limit.
 *
 * Prints the machine's load average with the figures: on a shared machine they are noisy.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { countChars, DEFAULT_MAX_TEXT_CHARS, fileRequestCost } from '../src/contract.ts';
import { extractDocument } from '../src/documents/extract.ts';
import { buildDocx, buildDocxBomb, buildPdf, buildPdfBomb, inOrderShare, paragraphs } from '../test/helpers/documents.ts';
import { buildFodt, convertWithLibreOffice, SOFFICE } from '../test/helpers/libreoffice.ts';
import { buildRevision } from './lib/build-revision.ts';
import { scriptArgs } from './lib/options.mjs';
import { ROOT, rssBytes, type Service, startService } from './lib/service-process.ts';

/** What the bench reads of `/v1/detect/file`'s answer: the file's size, or the error's code. */
type UploadBody = { file: { characters: number }; error?: { code: string } };

const args = scriptArgs(import.meta.url, {
  options: {
    runs: { type: 'string', default: '15' },
    'load-seconds': { type: 'string', default: '8' },
    words: { type: 'string', default: '8000' },
    bombs: { type: 'boolean', default: false },
    // `long` or `over-limit`: that part alone. Without it: the 20-page documents, load and bombs.
    only: { type: 'string' },
    baseline: { type: 'string' },
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

/** POST /v1/detect/file as `key`, timed from the request to the parsed answer. */
async function uploadTo(
  service: Service,
  key: string,
  bytes: Uint8Array,
  name: string,
  fields: Record<string, string> = {},
): Promise<{ ms: number; status: number; body: UploadBody & { windows?: unknown[] } }> {
  const form = new FormData();
  for (const [field, value] of Object.entries(fields)) form.append(field, value);
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  const started = performance.now();
  const response = await fetch(`${service.url}/v1/detect/file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = (await response.json()) as UploadBody & { windows?: unknown[] };
  return { ms: performance.now() - started, status: response.status, body };
}

/** POST /v1/detect as `key`, timed from the request to the answer read. */
async function detectOn(service: Service, key: string, text: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const response = await fetch(`${service.url}/v1/detect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  await response.arrayBuffer();
  return { ms: performance.now() - started, status: response.status };
}

/** Samples `pid`'s RSS (with its children) every 5 ms while `work` runs; the peak in bytes. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = rssBytes(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 5);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, rssBytes(pid)) };
  } finally {
    clearInterval(sampler);
  }
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

/** The builds to measure: this checkout's, and the baseline's when asked for (built once, in `dir`). */
function builds(dir: string): Array<{ name: string; root: string }> {
  const out = [{ name: 'new', root: ROOT }];
  if (args.baseline) out.push({ name: `old (${args.baseline})`, root: buildRevision(args.baseline, dir) });
  return out;
}

/**
 * The 100-page report: LibreOffice's PDF and DOCX of one source (10-point type, 1.5 cm margins),
 * or, without soffice, this repository's own writers' (the same words on 100 pages).
 */
async function hundredPages(): Promise<{ pdf: Buffer; docx: Buffer; text: string; source: string }> {
  const limits = { maxPages: 1000, maxUnpackedBytes: 1 << 30, maxChars: Number.MAX_SAFE_INTEGER };
  if (SOFFICE) {
    // 60,000 words filled 53 pages in this layout; the words are cut until the PDF has at most 100.
    for (let words = 112_000; words > 60_000; words -= 4000) {
      const body = paragraphs(words, 150);
      const sections = Array.from({ length: Math.ceil(body.length / 12) }, (_, i) => ({
        heading: `Section ${i + 1}`,
        paragraphs: body.slice(i * 12, i * 12 + 12),
      }));
      const fodt = buildFodt({
        sections,
        header: 'Regional Review, Annual Report',
        footer: 'Page {n} of {total}',
        fontSize: '10pt',
        margin: '1.5cm',
        hyphenate: true,
      });
      const office = await convertWithLibreOffice(fodt, ['pdf', 'docx']);
      const read = await extractDocument(office.pdf, limits);
      if ((read.pages ?? 0) <= 100)
        return { pdf: office.pdf, docx: office.docx, text: read.text, source: `LibreOffice, ${read.pages} pages` };
    }
  }
  const body = paragraphs(100_000, 150);
  const pdf = buildPdf({ paragraphs: body, spreadOver: 100, header: 'Regional Review, Annual Report', footer: 'Page {n} of {total}' });
  const read = await extractDocument(pdf, limits);
  return { pdf, docx: buildDocx({ paragraphs: body }), text: read.text, source: 'built here (no soffice), 100 pages' };
}

/** Whole documents: a 100-page report's time, the service's memory, and another key's latency meanwhile. */
async function benchLong(dir: string, keysFile: string, keys: { key: string; others: string[] }): Promise<void> {
  const report = await hundredPages();
  console.log(
    `100-page report (${report.source}): ${countChars(report.text).toLocaleString('en-US')} characters, ${report.text.split(/\s+/).length.toLocaleString('en-US')} words; PDF ${(report.pdf.length / 1024).toFixed(0)} KB, DOCX ${(report.docx.length / 1024).toFixed(0)} KB`,
  );
  const shortText = paragraphs(60, 60, 500).join(' ');
  for (const build of builds(dir)) {
    const service = await startService(keysFile, build.root, { MAX_TEXT_CHARS: '750000' });
    try {
      // Warm-up: pdf.js, the file lane and the engine's workers.
      for (let i = 0; i < 2; i++) {
        await uploadTo(service, keys.key, report.pdf, 'report.pdf');
        await detectOn(service, keys.key, shortText);
      }
      await new Promise((r) => setTimeout(r, 1000));
      const before = rssBytes(service.pid);
      const rows: string[] = [];
      const { peak } = await peakRss(service.pid, async () => {
        for (const [label, bytes, name, fields] of [
          ['PDF', report.pdf, 'report.pdf', {}],
          ['DOCX', report.docx, 'report.docx', {}],
          ['PDF, segments', report.pdf, 'report.pdf', { segments: 'true' }],
        ] as const) {
          const times: number[] = [];
          let last: Awaited<ReturnType<typeof uploadTo>> | undefined;
          for (let i = 0; i < Math.max(3, Math.round(RUNS / 3)); i++) {
            last = await uploadTo(service, keys.key, bytes, name, fields);
            times.push(last.ms);
          }
          rows.push(
            `${label}: ${last?.status}${last?.body.error ? ` ${last.body.error.code}` : `, ${last?.body.windows?.length ?? 0} windows`}, p50 ${ms(quantile(times, 0.5))}, max ${ms(Math.max(...times))} (${times.length} answers)`,
          );
        }
        const text: number[] = [];
        let status = 0;
        for (let i = 0; i < 3; i++) {
          const answer = await detectOn(service, keys.key, report.text);
          text.push(answer.ms);
          status = answer.status;
        }
        rows.push(`its text on /v1/detect: ${status}, p50 ${ms(quantile(text, 0.5))}, max ${ms(Math.max(...text))}`);
      });
      await new Promise((r) => setTimeout(r, 3000));
      const after = rssBytes(service.pid);

      // Another key's short texts alone, then while three keys keep sending the report.
      const detectFor = async (seconds: number): Promise<number[]> => {
        const times: number[] = [];
        const end = performance.now() + seconds * 1000;
        while (performance.now() < end) {
          times.push((await detectOn(service, keys.key, shortText)).ms);
          await new Promise((r) => setTimeout(r, 50));
        }
        return times;
      };
      const alone = await detectFor(LOAD_SECONDS / 2);
      let stop = false;
      let sent = 0;
      const statuses = new Map<number, number>();
      const loops = [
        async () => {
          while (!stop) {
            const a = await uploadTo(service, keys.others[0]!, report.pdf, 'report.pdf');
            statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
            sent++;
          }
        },
        async () => {
          while (!stop) {
            const a = await uploadTo(service, keys.others[1]!, report.docx, 'report.docx');
            statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
            sent++;
          }
        },
        async () => {
          while (!stop) {
            const a = await detectOn(service, keys.others[2]!, report.text);
            statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
            sent++;
          }
        },
      ].map((loop) => loop());
      await new Promise((r) => setTimeout(r, 500));
      const { result: loaded, peak: loadPeak } = await peakRss(service.pid, () => detectFor(LOAD_SECONDS));
      stop = true;
      await Promise.all(loops);
      console.log(`${build.name}: ${rows.join('; ')}`);
      console.log(
        `${build.name}: service and readers' RSS ${mb(before)} before, peak ${mb(Math.max(peak, loadPeak))}, ${mb(after)} 3 s after the reports; another key's /v1/detect (60 words, ~20/s): alone p50 ${ms(quantile(alone, 0.5))} p99 ${ms(quantile(alone, 0.99))}; while 3 keys send the report (PDF, DOCX, its text; ${sent} answered: ${[...statuses].map(([code, n]) => `${n}× ${code}`).join(', ')}): p50 ${ms(quantile(loaded, 0.5))} p99 ${ms(quantile(loaded, 0.99))} max ${ms(Math.max(...loaded))} (${loaded.length} calls); load ${load()}`,
      );
    } finally {
      await service.stop();
    }
  }
}

/** A DOCX far over the document limit (issue 40 item 3): its 413's time, and memory before, at peak and after. */
async function benchOverLimit(dir: string, keysFile: string, key: string): Promise<void> {
  // 61.7 million characters in 33,560 paragraphs of prose (18 KB of it repeated, so it deflates to
  // under 500 KB; 61 MB of XML, under the 64 MB a DOCX may unpack to), like the issue's 365 KB file.
  const block = paragraphs(3000, 300, 1000);
  const all: string[] = [];
  while (all.reduce((sum, p) => sum + p.length, 0) < 61_650_000) all.push(...block);
  const docx = buildDocx({ paragraphs: all });
  console.log(
    `DOCX over the limit: ${(docx.length / 1024).toFixed(0)} KB holding ${all.reduce((sum, p) => sum + p.length, 0).toLocaleString('en-US')} characters in ${all.length.toLocaleString('en-US')} paragraphs`,
  );
  for (const build of builds(dir)) {
    // A reading time limit long enough for a build that reads the whole file to answer as it would
    // on a quiet machine (413), instead of being cut off at 10 s on a loaded one (422).
    const service = await startService(keysFile, build.root, { FILE_TIMEOUT_MS: '120000' });
    try {
      await uploadTo(service, key, Buffer.from('A short note read first, so the reader has started.'), 'note.txt');
      await new Promise((r) => setTimeout(r, 1000));
      const before = rssBytes(service.pid);
      const times: number[] = [];
      let code = '';
      const { peak } = await peakRss(service.pid, async () => {
        for (let i = 0; i < 3; i++) {
          const answer = await uploadTo(service, key, docx, 'huge.docx');
          times.push(answer.ms);
          code = `${answer.status} ${answer.body.error?.code ?? ''}`;
        }
      });
      await new Promise((r) => setTimeout(r, 3000));
      const after = rssBytes(service.pid);
      console.log(
        `${build.name}: ${code} in p50 ${ms(quantile(times, 0.5))}, max ${ms(Math.max(...times))} (3 in a row; the reader is busy that long); service and readers' RSS ${mb(before)} before, peak ${mb(peak)}, ${mb(after)} 3 s after; load ${load()}`,
      );
    } finally {
      await service.stop();
    }
  }
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js'))) throw new Error('no compiled build: run `npm run build` first');
  if (args.only === 'long' || args.only === 'over-limit') {
    const dir = await mkdtemp(join(tmpdir(), 'textdetect-bench-files-'));
    try {
      const { createApiKey } = await import('../src/service/keys.ts');
      const keysFile = join(dir, 'api-keys.json');
      const key = (await createApiKey(keysFile, { name: 'bench' })).key;
      const others: string[] = [];
      for (let i = 0; i < 3; i++) others.push((await createApiKey(keysFile, { name: `bench document caller ${i}` })).key);
      console.log(`textdetect file bench (${args.only}) — ${cpus().length} CPUs (available ${availableParallelism()}), load ${load()}`);
      if (args.only === 'long') await benchLong(dir, keysFile, { key, others });
      else await benchOverLimit(dir, keysFile, key);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return;
  }
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
    const upload = (bytes: Buffer, name: string, callerKey = key) => uploadTo(service, callerKey, bytes, name);
    const shortText = source[5]!.split(' ').slice(0, 60).join(' ');
    const detect = async (): Promise<number> => {
      const answer = await detectOn(service, key, shortText);
      if (answer.status !== 200) throw new Error(`/v1/detect answered ${answer.status}`);
      return answer.ms;
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
