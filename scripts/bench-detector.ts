/**
 * `npm run bench:detector`: load time, detect() latency (p50/p99) for 300-word texts with and
 * without segments, detectAuthor() latency for 50 messages of 25 words, throughput in MB of text
 * per second over the dev corpus, and peak RSS.
 * Single-threaded, so it measures one core.
 *
 * Options: --model PATH (default the committed artifact), --iterations N (default 3000),
 *          --data DIR (default ../shared/data relative to the repository root),
 *          --texts dev|brown (default: the dev set when ../shared/data has it, else Brown corpus texts;
 *          see scripts/bench-texts.ts for which figures compare).
 */
import { createDetector } from '../src/detector/index.ts';
import { benchTexts, MissingDataError, type BenchTexts } from './bench-texts.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const ITER = Number(arg('--iterations') ?? 3000);
const modelPath = arg('--model');

let texts: BenchTexts;
try {
  texts = benchTexts({ dataDir: arg('--data'), texts: arg('--texts') });
} catch (err) {
  if (!(err instanceof MissingDataError)) throw err;
  process.stderr.write(`bench:detector: ${err.message}\n`);
  process.exit(2);
}
const rows = texts.rows;

const t0 = performance.now();
const detector = await createDetector(modelPath ? { model: modelPath } : {});
const loadMs = performance.now() - t0;

// 300-word texts: English texts with at least 300 words, cut at the 300th word.
const texts300 = rows
  .filter((r) => r.language === 'en')
  .map((r) => r.text.split(/\s+/))
  .filter((w) => w.length >= 300)
  .map((w) => w.slice(0, 300).join(' '));
if (texts300.length === 0) throw new Error('No 300-word texts found among the texts.');

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function latency(segments: boolean, n: number): { p50: number; p99: number } {
  for (let i = 0; i < 200; i++) detector.detect(texts300[i % texts300.length]!, { mode: 'academic', segments });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const text = texts300[i % texts300.length]!;
    const s = performance.now();
    detector.detect(text, { mode: 'academic', segments });
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

const plain = latency(false, ITER);
const withSeg = latency(true, Math.max(200, Math.floor(ITER / 3)));

// One author's recent chat: 50 messages of 25 words each, cut from the dev texts' words (English,
// language identified per author as in the bots' use).
const words = texts300.join(' ').split(/\s+/);
const authors: string[][] = [];
for (let a = 0; a < 40; a++) {
  const msgs: string[] = [];
  for (let m = 0; m < 50; m++) {
    const start = ((a * 50 + m) * 25) % (words.length - 25);
    msgs.push(words.slice(start, start + 25).join(' '));
  }
  authors.push(msgs);
}
function authorLatency(n: number): { p50: number; p99: number } {
  for (let i = 0; i < 20; i++) detector.detectAuthor(authors[i % authors.length]!);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    detector.detectAuthor(authors[i % authors.length]!);
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}
const author = authorLatency(Math.max(100, Math.floor(ITER / 10)));

let bytes = 0;
const s = performance.now();
for (const r of rows) {
  try {
    detector.detect(r.text, { mode: r.mode });
  } catch {
    // unsupported-language lines still count as processed input
  }
  bytes += Buffer.byteLength(r.text, 'utf8');
}
const secs = (performance.now() - s) / 1000;
const rssMb = process.resourceUsage().maxRSS / 1024;

console.log(`model ${detector.model}`);
console.log(`texts                     ${texts.source}`);
console.log(`load time                 ${loadMs.toFixed(0)} ms`);
console.log(
  `detect 300 words          p50 ${plain.p50.toFixed(3)} ms   p99 ${plain.p99.toFixed(3)} ms   (${texts300.length} distinct texts, ${ITER} calls)`,
);
console.log(`detect 300 words+segments p50 ${withSeg.p50.toFixed(3)} ms   p99 ${withSeg.p99.toFixed(3)} ms`);
console.log(`detectAuthor 50 messages of 25 words p50 ${author.p50.toFixed(3)} ms   p99 ${author.p99.toFixed(3)} ms`);
console.log(
  `throughput (${texts.dev ? 'dev corpus' : 'Brown texts'})${texts.dev ? '   ' : '  '}${(bytes / 1e6 / secs).toFixed(2)} MB/s   (${rows.length} texts, ${(bytes / 1e6).toFixed(2)} MB in ${secs.toFixed(2)} s)`,
);
console.log(`peak RSS                  ${rssMb.toFixed(0)} MB`);
