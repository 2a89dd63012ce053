/**
 * The process guards in a real child process: an uncaught exception and an unhandled rejection are
 * logged (with what the bot was doing) and the process keeps running, where Node would exit.
 */
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';

const SCRIPT = `
import pino from 'pino';
import { installProcessGuards } from './adapters/chat/process-guard.ts';
const logger = pino({ level: 'info' });
installProcessGuards(logger, () => ({ lastInteractionId: '786008729715212338' }));
setTimeout(() => { throw new TypeError("Cannot read properties of undefined (reading 'reduce')"); }, 10);
setTimeout(() => { Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })); }, 20);
setTimeout(() => { process.stdout.write('still running\\n'); process.exit(0); }, 300);
`;

function run(script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', (code) => resolve({ code, out }));
  });
}

it('logs an uncaught exception and an unhandled rejection with the interaction id, and keeps running', async () => {
  const { code, out } = await run(SCRIPT);
  expect(out).toContain('still running');
  expect(code).toBe(0);
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  expect(lines.find((l) => l.msg.startsWith('uncaught exception'))).toMatchObject({
    level: 50,
    lastInteractionId: '786008729715212338',
    origin: 'uncaughtException',
    err: { name: 'TypeError' },
  });
  expect(lines.find((l) => l.msg.startsWith('unhandled promise rejection'))).toMatchObject({
    level: 50,
    err: { name: 'Error', code: 'ECONNRESET' },
  });
});

it('without the guards the same exception ends the process (what the guards prevent)', async () => {
  const { code, out } = await run(SCRIPT.replace(/installProcessGuards\([^;]*;/, ''));
  expect(out).not.toContain('still running');
  expect(code).not.toBe(0);
});
