/**
 * Shared by the package tests: run a command, run npm quietly, and make the tarballs the way a
 * release does (`scripts/pack.mjs`, the script behind `npm run package`).
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeout = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: err && code === 1 && !stderr ? String(err.message) : stderr });
    });
  });
}

export function npm(args: string[], cwd: string): Promise<Run> {
  return run('npm', args, cwd, { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' });
}

export interface Packed {
  /** Absolute path of the tarball. */
  path: string;
  /** Paths inside the package, as npm lists them. */
  files: string[];
}

/** Packs one package with scripts/pack.mjs into `destination` (needs the build). */
export async function packPackage(name: 'textdetect' | 'textdetect-client', destination: string): Promise<Packed> {
  const packed = await run(
    process.execPath,
    [join(ROOT, 'scripts', 'pack.mjs'), '--only', name, '--json', '--destination', destination],
    ROOT,
  );
  if (packed.code !== 0) throw new Error(`scripts/pack.mjs failed: ${packed.stderr}`);
  const [info] = JSON.parse(packed.stdout) as [{ path: string; files: { path: string }[] }];
  return { path: info.path, files: info.files.map((f) => f.path) };
}

/** An empty ES-module project to install into. */
export async function emptyProject(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  return dir;
}

/** Lifecycle scripts npm runs (or, since npm 11, warns about) when a package is installed. */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];
