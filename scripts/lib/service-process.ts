/**
 * What the bench scripts need to run the service as `npm start` runs it: the compiled service of
 * this checkout or of a baseline's folder (scripts/lib/build-revision.ts) in a child process, and the
 * resident memory of that process and the document readers it started.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Service {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The compiled service of `root` (this checkout, or a baseline's folder) in a child process, on a
 * free loopback port, keys from `keysFile`, a rate limit no bench reaches, in-memory counters, no
 * web page; `env` adds to or overrides that.
 */
export async function startService(keysFile: string, root = ROOT, env: Record<string, string> = {}): Promise<Service> {
  const child = spawn(process.execPath, ['dist/src/service/main.js'], {
    cwd: root,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEYS_FILE: keysFile,
      RATE_LIMIT_MAX: '1000000000',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      PLAYGROUND: '0',
      ...env,
    },
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
export function rssBytes(pid: number): number {
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
