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
 *
 * `--baseline REV` compares this checkout with git revision REV side by side: REV is unpacked
 * (`git archive`) into a folder under the system's temp folder with this checkout's node_modules
 * linked in, and each of `--rounds N` rounds (default 3) runs the benchmark once per build, each
 * in a fresh process, alternating which goes first; both score the same texts (this checkout's
 * choice of them) with their own code and committed models. Printed: each build's median over the
 * rounds and, per figure, the median of the rounds' new/old ratios (the machine is shared, and a
 * ratio of two runs a few seconds apart is steadier than either run). Each run also reports the
 * CPU time per call (user + system over the measured calls), which waiting for a busy core does
 * not inflate as it does wall time.
 *
 * `--baseline REV --in-process` compares the two builds' 300-word `detect()` CPU time in one process
 * instead, without and with segments: both detectors are loaded side by side and blocks of
 * `--block N` calls (default 150) alternate between them, `--blocks N` pairs (default 30), each
 * block timed by its CPU time, so both see the same load at the same moment (on a shared machine
 * the separate runs above swing by tens of percent). It runs twice, in two processes, loading
 * either build first (the one loaded second ran a few percent faster in a check of one build
 * against itself); printed: each process's median new/old of the block pairs and their geometric
 * mean. Both detectors' tables share the core's caches here, which each run alone does not.
 * `--words N` (default 300) cuts its texts to N words instead (25: texts under the evidence floor).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Detector } from '../src/detector/index.ts';
import { benchTexts, MissingDataError, type BenchTexts } from './bench-texts.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const ITER = Number(arg('--iterations') ?? 3000);
const modelPath = arg('--model');
const baseline = arg('--baseline');

/** One run's figures (milliseconds, MB/s, MB). */
interface Figures {
  model: string;
  loadMs: number;
  plainP50: number;
  plainP99: number;
  segP50: number;
  segP99: number;
  authorP50: number;
  authorP99: number;
  /** CPU time per call (user + system, mean over the measured calls): steadier than wall time on a busy machine. */
  plainCpu: number;
  segCpu: number;
  authorCpu: number;
  mbPerSec: number;
  rssMb: number;
}

function loadTexts(): BenchTexts {
  try {
    return benchTexts({ dataDir: arg('--data'), texts: arg('--texts') });
  } catch (err) {
    if (!(err instanceof MissingDataError)) throw err;
    process.stderr.write(`bench:detector: ${err.message}\n`);
    process.exit(2);
  }
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Runs the benchmark on the detector of the checkout at `root` (its code and committed models). */
async function measure(root: string, texts: BenchTexts): Promise<{ figures: Figures; texts300: number }> {
  const rows = texts.rows;
  const { createDetector } = (await import(pathToFileURL(join(root, 'src/detector/index.ts')).href)) as {
    createDetector: (options: { model?: string }) => Promise<Detector>;
  };
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

  function latency(segments: boolean, n: number): { p50: number; p99: number; cpu: number } {
    for (let i = 0; i < 200; i++) detector.detect(texts300[i % texts300.length]!, { mode: 'academic', segments });
    const times: number[] = [];
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const text = texts300[i % texts300.length]!;
      const s = performance.now();
      detector.detect(text, { mode: 'academic', segments });
      times.push(performance.now() - s);
    }
    const used = process.cpuUsage(cpu);
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), cpu: (used.user + used.system) / 1000 / n };
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
  function authorLatency(n: number): { p50: number; p99: number; cpu: number } {
    for (let i = 0; i < 20; i++) detector.detectAuthor(authors[i % authors.length]!);
    const times: number[] = [];
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      detector.detectAuthor(authors[i % authors.length]!);
      times.push(performance.now() - s);
    }
    const used = process.cpuUsage(cpu);
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), cpu: (used.user + used.system) / 1000 / n };
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
  return {
    figures: {
      model: detector.model,
      loadMs,
      plainP50: plain.p50,
      plainP99: plain.p99,
      segP50: withSeg.p50,
      segP99: withSeg.p99,
      authorP50: author.p50,
      authorP99: author.p99,
      plainCpu: plain.cpu,
      segCpu: withSeg.cpu,
      authorCpu: author.cpu,
      mbPerSec: bytes / 1e6 / secs,
      rssMb: process.resourceUsage().maxRSS / 1024,
    },
    texts300: texts300.length,
  };
}

/** Unpacks git revision `rev` of this repository into a new temp folder with this checkout's node_modules. */
function unpackRevision(rev: string): string {
  const dir = mkdtempSync(join(tmpdir(), `textdetect-bench-${rev.replace(/[^0-9A-Za-z._-]/g, '_')}-`));
  const archive = spawnSync('git', ['archive', '--format=tar', rev], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${rev} failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** Runs this script in a fresh process on the checkout at `root`; returns its figures. */
function runChild(root: string): Figures {
  const passOn = ['--iterations', '--data', '--texts', '--model'].flatMap((name) => {
    const value = arg(name);
    return value === undefined ? [] : [name, value];
  });
  const result = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--impl', root, '--json', ...passOn], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`the benchmark of ${root} exited with ${result.status}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Figures;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const ROWS: Array<[keyof Figures, string, number]> = [
  ['loadMs', 'load time (ms)', 0],
  ['plainP50', 'detect 300 words p50 (ms)', 3],
  ['plainP99', 'detect 300 words p99 (ms)', 3],
  ['segP50', 'detect 300 words+segments p50 (ms)', 3],
  ['segP99', 'detect 300 words+segments p99 (ms)', 3],
  ['authorP50', 'detectAuthor 50×25 words p50 (ms)', 3],
  ['authorP99', 'detectAuthor 50×25 words p99 (ms)', 3],
  ['plainCpu', 'detect 300 words CPU per call (ms)', 3],
  ['segCpu', 'detect 300 words+segments CPU (ms)', 3],
  ['authorCpu', 'detectAuthor 50×25 words CPU (ms)', 3],
  ['mbPerSec', 'throughput (MB/s)', 2],
  ['rssMb', 'peak RSS (MB)', 0],
];

async function compare(rev: string): Promise<void> {
  const rounds = Math.max(1, Number(arg('--rounds') ?? 3));
  const dir = unpackRevision(rev);
  try {
    const runs: Array<{ neu: Figures; old: Figures; load: number }> = [];
    for (let round = 0; round < rounds; round++) {
      const load = loadavg()[0]!;
      let neu: Figures;
      let old: Figures;
      if (round % 2 === 0) {
        neu = runChild(ROOT);
        old = runChild(dir);
      } else {
        old = runChild(dir);
        neu = runChild(ROOT);
      }
      runs.push({ neu, old, load });
      console.log(
        `round ${round + 1}/${rounds} (load ${load.toFixed(2)}): detect p50 new ${neu.plainP50.toFixed(3)} / old ${old.plainP50.toFixed(3)} ms, +segments new ${neu.segP50.toFixed(3)} / old ${old.segP50.toFixed(3)} ms`,
      );
    }
    console.log(`\nnew: this checkout (${runs[0]!.neu.model}); old: ${rev} (${runs[0]!.old.model}); ${rounds} rounds, alternating`);
    console.log(`${'figure'.padEnd(38)}${'new'.padStart(10)}${'old'.padStart(10)}   new/old (median of rounds; per round)`);
    for (const [key, name, digits] of ROWS) {
      const neu = median(runs.map((r) => r.neu[key] as number));
      const old = median(runs.map((r) => r.old[key] as number));
      const ratios = runs.map((r) => (r.neu[key] as number) / (r.old[key] as number));
      console.log(
        `${name.padEnd(38)}${neu.toFixed(digits).padStart(10)}${old.toFixed(digits).padStart(10)}   ${median(ratios).toFixed(3)}  (${ratios.map((x) => x.toFixed(2)).join(', ')})`,
      );
    }
    console.log('Latency and load time: new/old below 1 is faster; throughput: above 1 is faster.');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `--words`: the length the in-process comparison cuts its texts to. */
const AB_WORDS = Number(arg('--words') ?? 300);

/** One process of `--in-process`: both builds' detectors, blocks of calls alternating; prints JSON. */
async function abChild(newRoot: string, oldRoot: string, newFirst: boolean): Promise<void> {
  const texts = loadTexts();
  const cut = texts.rows
    .filter((r) => r.language === 'en')
    .map((r) => r.text.split(/\s+/))
    .filter((w) => w.length >= AB_WORDS)
    .map((w) => w.slice(0, AB_WORDS).join(' '));
  const load = async (root: string) =>
    (
      (await import(pathToFileURL(join(root, 'src/detector/index.ts')).href)) as {
        createDetector: (options: { model?: string }) => Promise<Detector>;
      }
    ).createDetector({});
  const first = await load(newFirst ? newRoot : oldRoot);
  const second = await load(newFirst ? oldRoot : newRoot);
  const [neu, old] = newFirst ? [first, second] : [second, first];
  // A few words of a text may read as no language the engine knows (it refuses them): left out.
  const abTexts = cut.filter((text) => {
    try {
      neu.detect(text, { mode: 'academic' });
      return true;
    } catch {
      return false;
    }
  });
  const block = Number(arg('--block') ?? 150);
  const blocks = Number(arg('--blocks') ?? 30);
  let at = 0;
  const run = (detector: Detector, segments: boolean): number => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < block; i++) detector.detect(abTexts[(at + i) % abTexts.length]!, { mode: 'academic', segments });
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1000 / block;
  };
  const out: Record<string, { ratio: number; neu: number; old: number }> = {};
  for (const segments of [false, true]) {
    for (let i = 0; i < 3; i++) {
      run(neu, segments);
      run(old, segments);
    }
    const ratios: number[] = [];
    const neuCpu: number[] = [];
    const oldCpu: number[] = [];
    for (let b = 0; b < blocks; b++) {
      // Which goes first alternates within the pairs too.
      let n: number;
      let o: number;
      if (b % 2) {
        n = run(neu, segments);
        o = run(old, segments);
      } else {
        o = run(old, segments);
        n = run(neu, segments);
      }
      at += block;
      ratios.push(n / o);
      neuCpu.push(n);
      oldCpu.push(o);
    }
    out[segments ? 'segments' : 'plain'] = { ratio: median(ratios), neu: median(neuCpu), old: median(oldCpu) };
  }
  console.log(JSON.stringify(out));
}

/** `--in-process`: the two orders of loading, each in its own process. */
function compareInProcess(rev: string): void {
  const dir = unpackRevision(rev);
  try {
    const passOn = ['--data', '--texts', '--block', '--blocks', '--words'].flatMap((name) => {
      const value = arg(name);
      return value === undefined ? [] : [name, value];
    });
    const results: Array<{ newFirst: boolean; load: number; out: Record<string, { ratio: number; neu: number; old: number }> }> = [];
    for (const newFirst of [false, true]) {
      const load = loadavg()[0]!;
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--ab-child', dir, ...(newFirst ? ['--new-first'] : []), ...passOn],
        { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      if (child.status !== 0) throw new Error(`the in-process comparison exited with ${child.status}`);
      results.push({ newFirst, load, out: JSON.parse(child.stdout.trim().split('\n').at(-1)!) });
    }
    console.log(`new: this checkout; old: ${rev}; ${AB_WORDS}-word detect() CPU time per call, blocks alternating in one process`);
    for (const key of ['plain', 'segments']) {
      const parts = results.map(
        (r) =>
          `${r.newFirst ? 'new' : 'old'} loaded first (load ${r.load.toFixed(2)}): new ${r.out[key]!.neu.toFixed(3)} ms, old ${r.out[key]!.old.toFixed(3)} ms, new/old ${r.out[key]!.ratio.toFixed(3)}`,
      );
      const mean = Math.sqrt(results[0]!.out[key]!.ratio * results[1]!.out[key]!.ratio);
      console.log(
        `detect ${AB_WORDS} words${key === 'plain' ? '' : '+segments'}: new/old ${mean.toFixed(3)} (geometric mean of the two orders)\n  ${parts.join('\n  ')}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (arg('--ab-child')) {
  await abChild(ROOT, arg('--ab-child')!, process.argv.includes('--new-first'));
} else if (baseline && process.argv.includes('--in-process')) {
  compareInProcess(baseline);
} else if (baseline) {
  await compare(baseline);
} else {
  const texts = loadTexts();
  const { figures: f, texts300 } = await measure(arg('--impl') ?? ROOT, texts);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(f));
  } else {
    console.log(`model ${f.model}`);
    console.log(`texts                     ${texts.source}`);
    console.log(`load time                 ${f.loadMs.toFixed(0)} ms`);
    console.log(
      `detect 300 words          p50 ${f.plainP50.toFixed(3)} ms   p99 ${f.plainP99.toFixed(3)} ms   (${texts300} distinct texts, ${ITER} calls)`,
    );
    console.log(`detect 300 words+segments p50 ${f.segP50.toFixed(3)} ms   p99 ${f.segP99.toFixed(3)} ms`);
    console.log(`detectAuthor 50 messages of 25 words p50 ${f.authorP50.toFixed(3)} ms   p99 ${f.authorP99.toFixed(3)} ms`);
    console.log(
      `CPU time per call         detect ${f.plainCpu.toFixed(3)} ms, +segments ${f.segCpu.toFixed(3)} ms, detectAuthor ${f.authorCpu.toFixed(3)} ms`,
    );
    console.log(
      `throughput (${texts.dev ? 'dev corpus' : 'Brown texts'})${texts.dev ? '   ' : '  '}${f.mbPerSec.toFixed(2)} MB/s   (${texts.rows.length} texts)`,
    );
    console.log(`peak RSS                  ${f.rssMb.toFixed(0)} MB`);
  }
}
