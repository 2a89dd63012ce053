/**
 * The loopback guard (demo/loopback-guard.ts) that the demo test relies on: preloaded through
 * NODE_OPTIONS into a node process that tries every way out (a name lookup, DNS queries, fetch by
 * name and by address, net.connect, an HTTPS request), it refuses each and logs it, and lets loopback
 * through. Without this, an empty log in demo.test.ts could mean a guard that saw nothing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback } from '../../demo/loopback-guard.ts';
import { ROOT } from '../package/helpers.ts';

const GUARD = join(ROOT, 'dist', 'demo', 'loopback-guard.js');

// Every attempt reports how it ended, one line each; a loopback server must still answer.
const SCRIPT = `
import dns from 'node:dns';
import { Resolver } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
const results = {};
const settle = (name, promise) => promise.then(() => { results[name] = 'reached'; }, (e) => { results[name] = e.cause?.code ?? e.code ?? e.message; });
await settle('lookup', new Promise((ok, no) => dns.lookup('discord.com', (e) => (e ? no(e) : ok()))));
await settle('promises.lookup', dns.promises.lookup('slack.com'));
await settle('resolve4', dns.promises.resolve4('cdn.discordapp.com'));
await settle('Resolver', new Resolver().resolveTxt('example.com'));
await settle('fetch by name', fetch('https://discord.com/api/v10/gateway'));
await settle('fetch by address', fetch('http://162.159.128.233/'));
await settle('net.connect', new Promise((ok, no) => { const s = net.connect(443, '1.1.1.1'); s.on('connect', () => { s.destroy(); ok(); }); s.on('error', no); }));
await settle('https.get', new Promise((ok, no) => https.get('https://slack.com/api/api.test', ok).on('error', no)));
const server = http.createServer((q, r) => r.end('here')).listen(0, '127.0.0.1');
await new Promise((ok) => server.on('listening', ok));
const port = server.address().port;
results['loopback by address'] = await (await fetch('http://127.0.0.1:' + port + '/')).text();
results['loopback by name'] = await (await fetch('http://localhost:' + port + '/')).text();
server.close();
console.log(JSON.stringify(results));
`;

let dir: string;

beforeAll(async () => {
  if (!existsSync(GUARD)) throw new Error('dist/demo is missing: run `npm run build` (npm test does) before this test.');
  dir = await mkdtemp(join(tmpdir(), 'loopback-guard-test-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the loopback guard', () => {
  it('tells loopback from everything else', () => {
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '[::1]',
      'localhost',
      'LOCALHOST',
      'api.localhost',
      '::ffff:127.0.0.1',
      undefined,
      '',
    ]) {
      expect(isLoopback(host), String(host)).toBe(true);
    }
    for (const host of [
      'discord.com',
      '10.0.0.1',
      '192.168.1.1',
      '0.0.0.0',
      '::',
      '::ffff:10.0.0.1',
      'localhost.example.com',
      '128.0.0.1',
    ]) {
      expect(isLoopback(host), host).toBe(false);
    }
  });

  it('preloaded through NODE_OPTIONS, refuses and logs every way out of the machine, and lets loopback through', async () => {
    const log = join(dir, 'guard.log');
    const script = join(dir, 'try.mjs');
    await writeFile(script, SCRIPT);
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [script],
        { env: { ...process.env, NODE_OPTIONS: `--import=${pathToFileURL(GUARD).href}`, LOOPBACK_GUARD_LOG: log }, timeout: 60_000 },
        (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out)),
      );
    });
    const results = JSON.parse(stdout) as Record<string, string>;
    expect(results).toEqual({
      lookup: 'ENOTFOUND',
      'promises.lookup': 'ENOTFOUND',
      resolve4: 'ENOTFOUND',
      Resolver: 'ENOTFOUND',
      'fetch by name': 'ECONNREFUSED',
      'fetch by address': 'ECONNREFUSED',
      'net.connect': 'ECONNREFUSED',
      'https.get': 'ECONNREFUSED',
      'loopback by address': 'here',
      'loopback by name': 'here',
    });
    const lines = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; what?: string; target?: string; stack?: string[] });
    expect(lines[0]?.event).toBe('installed');
    expect(lines.filter((l) => l.event === 'refused').map((l) => `${l.what} ${l.target}`)).toEqual([
      'dns.lookup discord.com',
      'dns.promises.lookup slack.com',
      'dns.promises.resolve4 cdn.discordapp.com',
      'Resolver.resolveTxt example.com',
      'net.connect discord.com:443',
      'net.connect 162.159.128.233:80',
      'net.connect 1.1.1.1:443',
      'net.connect slack.com:443',
    ]);
    // Each refusal names who asked.
    expect(lines.find((l) => l.what === 'dns.lookup')?.stack?.some((frame) => frame.includes('try.mjs'))).toBe(true);
  });
});
