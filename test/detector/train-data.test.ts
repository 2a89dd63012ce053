/** `npm run train` without its corpora says what it needs and where it comes from, instead of an ENOENT stack. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function train(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/train.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // It must stop before any training; a run that got that far is stopped here.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'textdetect-train-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run train without its data', () => {
  it('names every missing corpus file, says where they come from, and exits 2 without a stack', async () => {
    const missing = join(dir, 'no-such-folder');
    const result = await train(['--data', missing, '--dry-run']);
    expect(result.code, result.stderr).toBe(2);
    for (const file of ['corpus-train.jsonl', 'corpus-dev.jsonl', 'extra-train.jsonl', 'extra-dev.jsonl']) {
      expect(result.stderr).toContain(join(missing, file));
    }
    expect(result.stderr).toContain('../shared/data');
    expect(result.stderr).toContain('--data');
    expect(result.stderr).toContain('models/detector.bin');
    expect(result.stderr).not.toMatch(/ENOENT|\n\s+at /);
  });

  it('names only what is missing', async () => {
    await writeFile(join(dir, 'corpus-train.jsonl'), '');
    await writeFile(join(dir, 'corpus-dev.jsonl'), '');
    const result = await train(['--data', dir, '--corpora', 'corpus,other', '--dry-run']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(join(dir, 'other-train.jsonl'));
    expect(result.stderr).toContain(join(dir, 'other-dev.jsonl'));
    expect(result.stderr).not.toContain(join(dir, 'corpus-train.jsonl'));
  });
});
