/** `npm start` as a real process: first-run key, request logs on stdout, graceful SIGTERM. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/service/keys.ts';
import { ENGLISH_TEXT, call, detect } from './helpers.ts';
import { WAIT_MS } from '../helpers/load.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'textdetect-main-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startMain(env: Record<string, string>): Promise<Started> {
  const childEnv: Record<string, string | undefined> = { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env };
  delete childEnv.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/service/main.ts'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${stderr}`)), WAIT_MS);
    child.stdout!.on('data', (d) => {
      stdout += d;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`service exited with ${code}: ${stderr}`)));
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr, exited };
}

describe('npm start (src/service/main.ts)', () => {
  it('creates and prints a sandbox key on first run, then serves it; a second run creates none', async () => {
    const keysFile = join(dir, 'first-run', 'api-keys.json');
    const first = await startMain({ API_KEYS_FILE: keysFile });
    try {
      const key = /(sk_test_[0-9A-Za-z]{32})/.exec(first.stderr())?.[1];
      expect(key, first.stderr()).toBeDefined();
      const answer = await detect(first, key!, { text: ENGLISH_TEXT });
      expect(answer.status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      // JSON request logs on stdout, with ids and sizes but without the key or the text.
      const line = first
        .stdout()
        .split('\n')
        .find((l) => l.includes(answer.body.request_id) && l.includes('"msg":"request"'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ status: 200, text_length: ENGLISH_TEXT.length, path: '/v1/detect' });
      expect(first.stdout()).not.toContain(key!);
      expect(first.stdout()).not.toContain('committee met');
      // The start-up banner gives the web page's address (issue 25, item 18), after the key.
      expect(first.stderr()).toContain(`Web page: ${first.url}/  (open it in a browser`);
      expect(first.stderr().indexOf('Web page:')).toBeGreaterThan(first.stderr().indexOf(key!));
      expect(first.stderr()).toContain(`API:      POST ${first.url}/v1/detect`);
      // The curl line it prints sends a text the service judges without a warning (issue 40, item
      // 10: "Paste a paragraph here." was too short to judge and its language uncertain).
      const printed = /-d '(\{.*\})'/.exec(first.stderr())?.[1];
      expect(printed, first.stderr()).toBeDefined();
      const tried = await detect(first, key!, JSON.parse(printed!));
      expect(tried.status).toBe(200);
      expect(tried.body.warnings).toEqual([]);
      expect(tried.body.composition).not.toBe('uncertain');
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
    expect(await listApiKeys(keysFile)).toHaveLength(1);
    const second = await startMain({ API_KEYS_FILE: keysFile });
    try {
      expect(second.stderr()).not.toMatch(/sk_test_/);
      // Later starts say where the keys are and how to make one, outside the JSON logs.
      expect(second.stderr()).toContain(`API keys are read from ${keysFile} (1 active sandbox key)`);
      expect(second.stderr()).toContain(`npx textdetect keys create --name NAME --file ${keysFile}`);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    expect(await listApiKeys(keysFile)).toHaveLength(1);
  });

  it('a production server says where its key file goes and how to make a live key', async () => {
    const keysFile = join(dir, 'production', 'api-keys.json');
    const started = await startMain({ API_KEYS_FILE: keysFile, ENVIRONMENT: 'production' });
    try {
      expect(started.stderr()).toContain(`No API key file at ${keysFile}: every request is refused until you make a key:`);
      expect(started.stderr()).toContain(`npx textdetect keys create --name NAME --env production --file ${keysFile}`);
      expect(await listApiKeys(keysFile)).toEqual([]);
    } finally {
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    }
  });

  it('on SIGTERM stops accepting, finishes the request in flight and exits 0', async () => {
    const keysFile = join(dir, 'shutdown', 'api-keys.json');
    const started = await startMain({ API_KEYS_FILE: keysFile });
    const key = /(sk_test_[0-9A-Za-z]{32})/.exec(started.stderr())![1]!;
    const port = Number(new URL(started.url).port);
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    // A request whose body is still arriving when SIGTERM comes.
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (d) => (response += d));
    const closed = new Promise((r) => socket.once('close', r));
    // A first request on the same connection, answered: the service has taken the connection (no number
    // of ms to wait for that, which a busy machine may not keep to).
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!response.includes('{"status":"ok"}')) await new Promise((r) => setTimeout(r, 10));
    response = '';
    socket.write(
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 40)}`,
    );
    // Time for the head to arrive (a lower bound: more is harmless); the body is held back.
    await new Promise((r) => setTimeout(r, 1_000));
    started.child.kill('SIGTERM');
    // Its "shutting down" line, rather than a number of ms, says the signal was taken.
    while (!started.stdout().includes('"msg":"shutting down"')) await new Promise((r) => setTimeout(r, 20));
    // New connections are refused while the old one is still being served (its answer not yet sent).
    let refused = false;
    for (let i = 0; i < 200 && !refused; i++) {
      refused = await call(started, '/healthz').then(
        () => false,
        () => true,
      );
      if (!refused) await new Promise((r) => setTimeout(r, 50));
    }
    expect(refused).toBe(true);
    expect(response).toBe('');
    socket.write(body.slice(40));
    expect(await started.exited).toBe(0);
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response).toContain('"ai_probability"');
    expect(started.stdout()).toContain('textdetect service stopped');
  });

  /** `npm start` (from the sources) on loopback that is expected to stop: its exit code and stderr. */
  async function failedStart(env: Record<string, string>): Promise<{ code: unknown; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/service/main.ts'], {
      env: { ...process.env, HOST: '127.0.0.1', REDIS_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('exit', r));
    return { code, stderr };
  }

  it('a second start on a port in use names PORT in one sentence (issue 32, item 25)', async () => {
    const keysFile = join(dir, 'port-in-use', 'api-keys.json');
    const first = await startMain({ API_KEYS_FILE: keysFile });
    try {
      const port = new URL(first.url).port;
      const { code, stderr } = await failedStart({ PORT: port, API_KEYS_FILE: keysFile });
      expect(code).toBe(1);
      expect(stderr).toContain(
        `textdetect: 127.0.0.1:${port} is already in use (another textdetect service, or another program, listens there). Stop that one, or start this one on another port with PORT, e.g. PORT=${Number(port) + 1} npm start.\n`,
      );
      expect(stderr).not.toMatch(/\n\s+at /);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
  });

  it('a metrics port in use names METRICS_PORT, not PORT (issue 40, item 7)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { code, stderr } = await failedStart({
        PORT: '0',
        METRICS_PORT: String(port),
        API_KEYS_FILE: join(dir, 'metrics-port-in-use', 'api-keys.json'),
      });
      expect(code).toBe(1);
      expect(stderr).toContain(
        `textdetect: 127.0.0.1:${port} is already in use (another textdetect service, or another program, listens there). Stop that one, or start this one on another port with METRICS_PORT, e.g. METRICS_PORT=${port + 1} npm start.\n`,
      );
      expect(stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses to start on a bad setting, naming it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/service/main.ts'], {
      env: { ...process.env, RATE_LIMIT_WINDOW: 'soon', API_KEYS_FILE: join(dir, 'x.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(2);
    expect(stderr).toContain('RATE_LIMIT_WINDOW');
  });
});
