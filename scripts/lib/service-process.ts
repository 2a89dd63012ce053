/**
 * What the bench scripts need to run the service as `npm start` runs it: an older revision built
 * beside this checkout (`--baseline REV`), the compiled service in a child process, and the resident
 * memory of that process and the document readers it started.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Builds git revision `rev` of this repository into a new folder under `parent`; returns that folder. */
export function buildRevision(rev: string, parent: string): string {
  const dir = join(parent, `baseline-${rev.replace(/[^0-9A-Za-z._-]/g, '_')}`);
  const run = (command: string, argv: string[], cwd: string) => {
    const result = spawnSync(command, argv, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} ${argv.join(' ')} failed: ${result.stderr}`);
  };
  spawnSync('mkdir', ['-p', dir]);
  const archive = spawnSync('git', ['archive', '--format=tar', rev], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${rev} failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  run(process.execPath, ['scripts/build.mjs'], dir);
  return dir;
}

export interface ServiceProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the compiled service of the checkout at `root` (`dist/`) on a free loopback port, in-memory
 * rate limits, no web page; `env` adds to or overrides that (API_KEYS_FILE at least).
 */
export async function startCompiledService(root: string, env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [join(root, 'dist/src/service/main.js')], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', PLAYGROUND: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
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
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Resident bytes of a process and of every process under it (the service's document readers). */
export function treeRssBytes(pid: number): number {
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
