/** The package bin run in a child process, as a user runs it; shared by the CLI test files. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/textdetect.mjs', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `textdetect <args>` with `input` on stdin. The environment is ours with `env` over it,
 * `undefined` meaning unset; NO_COLOR is set and FORCE_COLOR (set by the test runner) removed,
 * as Node 22 warns on stderr when both are present, even when FORCE_COLOR is empty.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, input = ''): Promise<CliResult> {
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, ...env };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined)),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
