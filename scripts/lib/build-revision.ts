/**
 * A bench's `--baseline REV`: builds that git revision of this repository (`git archive` into a new
 * folder under `parent`, this checkout's node_modules linked in, the revision's own
 * scripts/build.mjs) so its compiled service can run beside this checkout's.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Builds git revision `rev` into a new folder under `parent`; returns that folder (its service is `dist/src/service/main.js`). */
export function buildRevision(rev: string, parent: string): string {
  const dir = join(parent, `baseline-${rev.replace(/[^0-9A-Za-z._-]/g, '_')}`);
  const run = (command: string, argv: string[], cwd: string) => {
    const result = spawnSync(command, argv, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} ${argv.join(' ')} failed: ${result.stderr}`);
  };
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['archive', '--format=tar', rev], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${rev} failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  run(process.execPath, ['scripts/build.mjs'], dir);
  return dir;
}
