/**
 * POST /v1/detect/file against hostile files and requests (issue 32, items 13 to 22), on the real
 * service: a loopback server, real reader processes, files built in the test. What is measured is
 * memory (the service's and its readers' resident sizes from /proc), order and counts; never
 * milliseconds.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf, buildPdfBomb, paragraphs } from '../helpers/documents.ts';
import { WAIT_MS } from '../helpers/load.ts';
import { createLogger } from '../../src/service/index.ts';
import { type Answer, expectEnvelope, startTestService, type TestService, uploadFile as upload } from './helpers.ts';

/** Resident KB of a process from /proc. */
function residentKb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Child processes of a process (every thread's), from /proc. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1').trim();
      if (text) found.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return found;
}

/** Resident MB of this process (the service runs in it) and of every process it started, each. */
function residentByProcess(): Map<number, number> {
  const out = new Map<number, number>([[process.pid, residentKb(process.pid) / 1024]]);
  const pending = childrenOf(process.pid);
  while (pending.length) {
    const pid = pending.pop() as number;
    out.set(pid, residentKb(pid) / 1024);
    pending.push(...childrenOf(pid));
  }
  return out;
}

const totalOf = (m: Map<number, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
const totalResidentMb = (): number => totalOf(residentByProcess());

/** Each process's MB, this one's first, for a failure to say which one kept the memory. */
const describeResident = (m: Map<number, number>): string =>
  [...m].map(([pid, mb]) => `${pid === process.pid ? 'test' : pid} ${Math.round(mb)}`).join(', ');

const onLinux = process.platform === 'linux';

describe.runIf(onLinux)('PDF decompression bombs (item 13)', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService({ fileTimeoutMs: 120_000, fileWorkerMemoryMb: 256, maxFilePages: 10 });
    key = await service.newKey();
  }, 60_000);
  afterAll(async () => service?.stop());

  it('a reader is killed past its memory limit, and the memory of the service and its readers is back within 50 MB after a run of bombs', async () => {
    const bombs = [buildPdfBomb(512), buildPdfBomb(512, { inFont: true }), buildPdfBomb(1024), buildPdfBomb(96)];
    const note = 'A short note, read once the readers are ready again, that says the service still reads files.';
    // Warmed up: the reader has read a file, as it has after the bombs.
    expect((await upload(service, key, note, 'note.txt')).status).toBe(200);
    const beforeEach = residentByProcess();
    const before = totalOf(beforeEach);
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, totalResidentMb());
    }, 10);
    try {
      for (let round = 0; round < 2; round++) {
        // One key sends two at a time, as in the issue's run.
        const answers = await Promise.all([
          upload(service, key, bombs[round * 2] as Buffer, 'bomb.pdf'),
          upload(service, key, bombs[round * 2 + 1] as Buffer, 'bomb.pdf'),
        ]);
        for (const answer of answers) {
          expectEnvelope(answer, 422, 'file_unreadable');
          expect(answer.body.error.message).toMatch(/more than 256 MB of memory/);
        }
      }
    } finally {
      clearInterval(sampler);
    }
    expect((await upload(service, key, note, 'note.txt')).status).toBe(200);
    // A killed reader's memory goes back when the system has ended the process, which on a busy
    // machine can come after its file's answer (one full run in five read 692 MB after, 571 before).
    // What is asserted is that it comes back: read until no more processes run than before and the
    // service's own share is back too, up to WAIT_MS; a failure names each process's share.
    const live = (m: Map<number, number>): number => [...m.values()].filter((mb) => mb > 0).length;
    const settled = (m: Map<number, number>): boolean =>
      live(m) <= live(beforeEach) && (m.get(process.pid) ?? 0) < (beforeEach.get(process.pid) ?? 0) + 50 && totalOf(m) < before + 50;
    const deadline = Date.now() + WAIT_MS;
    let afterEach = residentByProcess();
    while (!settled(afterEach) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      afterEach = residentByProcess();
    }
    const after = totalOf(afterEach);
    // The bombs inflate to 2 GB together; what the service and its reader held at any moment stayed
    // near the reader's limit over the service's own size, and all of it was given back.
    expect(peak, `peak ${Math.round(peak)} MB, before ${Math.round(before)} MB`).toBeLessThan(before + 2 * 256);
    const shares = `after ${Math.round(after)} MB (${describeResident(afterEach)}), before ${Math.round(before)} MB (${describeResident(beforeEach)})`;
    expect(after, shares).toBeLessThan(before + 50);
    // The service's own memory, on its own: the readers' turnover cannot hide what it kept.
    expect(afterEach.get(process.pid), shares).toBeLessThan((beforeEach.get(process.pid) ?? 0) + 50);
    expect(live(afterEach), shares).toBeLessThanOrEqual(live(beforeEach));
  }, 300_000);
});

describe('a form of many tiny parts (item 15)', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService();
    key = await service.newKey();
  }, 60_000);
  afterAll(async () => service?.stop());

  it('is answered 400 at the part limit and the rest of it is not parsed: the answer closes the connection', async () => {
    const boundary = 'b';
    const file = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nA short note to check.\r\n`;
    // 0.9 MB of empty parts after the file (116,000 of them in the issue's 1 MB), sent at once.
    const body = Buffer.from(`${file}${`--${boundary}\r\n\r\n\r\n`.repeat(100_000)}--${boundary}--\r\n`);
    const socket = connect(service.port, '127.0.0.1');
    let received = '';
    socket.on('data', (data) => {
      received += data.toString('utf8');
    });
    socket.on('error', () => {
      // The server closing while the body is still being sent: what is expected.
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `POST /v1/detect/file HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 400/);
    expect(received).toMatch(/more than 4 parts/);
    // Closed by the server as it answered: the parts after the limit were never parsed (a
    // keep-alive answer would mean the whole body was read first).
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
  }, 60_000);

  it('a form that stops arriving is answered 408, and the file route goes on reading forms', async () => {
    const slow = await startTestService({ bodyTimeoutMs: 500 });
    try {
      const slowKey = await slow.newKey();
      const part = '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nThe first half of a note';
      const socket = connect(slow.port, '127.0.0.1');
      let received = '';
      socket.on('data', (data) => {
        received += data.toString('utf8');
      });
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `POST /v1/detect/file HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${slowKey}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${part.length + 1000}\r\n\r\n${part}`,
      );
      await closed;
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(received).toMatch(/"code":"request_timeout"/);
      expect((await upload(slow, slowKey, 'A note sent whole, after the one that stopped halfway.', 'note.txt')).status).toBe(200);
    } finally {
      await slow.stop();
    }
  }, 60_000);
});

/** Waits (without a time bound of its own) until `ready()` holds, looking every 20 ms. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A PDF of about 700 pages: seconds of reading for one reader. */
function slowPdf(): Buffer {
  const text = paragraphs(250_000, 110);
  return buildPdf({ paragraphs: [...text, ...text], linesPerPage: 60 });
}

describe('the readers are shared between keys, and waits are bounded (items 17 and 20)', () => {
  const slow = slowPdf();
  const note = 'A short note from another caller, which should not wait behind the first caller’s second file.';

  it('another key’s file goes before the first key’s second file', async () => {
    const service = await startTestService({ fileWorkers: 1, fileTimeoutMs: 120_000, maxFilePages: 5000, maxFileBytes: 8 * 1024 * 1024 });
    try {
      const [a, b] = [await service.newKey(), await service.newKey()];
      const order: string[] = [];
      const first = upload(service, a, slow, 'first.pdf').then((answer) => {
        order.push('A1');
        return answer;
      });
      await until(() => (service.app.fileQueue?.reading ?? 0) === 1);
      const second = upload(service, a, slow, 'second.pdf').then((answer) => {
        order.push('A2');
        return answer;
      });
      await until(() => (service.app.fileQueue?.waiting ?? 0) >= 1);
      const other = await upload(service, b, note, 'note.txt');
      order.push('B');
      expect(other.status).toBe(200);
      // Read, then refused as too long to score (413 text_too_long): what matters is the order.
      expect((await first).status).toBe(413);
      expect((await second).status).toBe(413);
      expect(order).toEqual(['A1', 'B', 'A2']);
    } finally {
      await service.stop();
    }
  }, 120_000);

  it('a file that would wait longer than the reading time limit gets 503 and Retry-After at once; on shutdown, waiting files get 503', async () => {
    const service = await startTestService({
      fileWorkers: 1,
      fileTimeoutMs: 3000,
      maxFilePages: 5000,
      maxFileBytes: 8 * 1024 * 1024,
      metrics: true,
    });
    const queue = () => service.app.fileQueue as NonNullable<TestService['app']['fileQueue']>;
    try {
      const [a, b, c, d] = [await service.newKey(), await service.newKey(), await service.newKey(), await service.newKey()];
      // One slow file read first: the readers now know files take seconds here.
      expect([413, 422]).toContain((await upload(service, a, slow, 'slow.pdf')).status);
      const order: string[] = [];
      const running = upload(service, a, slow, 'slow.pdf').then((answer) => {
        order.push('A');
        return answer;
      });
      await until(() => queue().reading === 1);
      const waiting = upload(service, b, note, 'note.txt').then((answer) => {
        order.push('B');
        return answer;
      });
      await until(() => queue().waiting === 1);
      // A third key's file: queued when two reads fit in the limit here, else refused already.
      let third: Answer | undefined;
      const thirdDone = upload(service, d, note, 'note.txt').then((answer) => {
        third = answer;
        order.push('D');
        return answer;
      });
      await until(() => queue().waiting === 2 || third !== undefined);
      if (third) expectEnvelope(third, 503, 'not_ready');
      // Two or three files before it, each taking seconds: refused now, not after waiting.
      const refused = await upload(service, c, note, 'note.txt');
      order.push('C');
      expectEnvelope(refused, 503, 'not_ready');
      expect(refused.body.error.message).toMatch(/readers are busy/);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(order.filter((name) => name !== 'D')).toEqual(['C']);
      await running;
      await waiting;
      await thirdDone;
      // Shutdown while a file is read and another waits: the waiting one is answered 503 at once.
      const reading = upload(service, a, slow, 'slow.pdf');
      await until(() => queue().reading === 1);
      const queued = upload(service, b, note, 'note.txt');
      await until(() => queue().waiting === 1);
      // What an operator sees meanwhile.
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(metrics).toMatch(/^textdetect_file_queue_depth\{state="waiting",service="textdetect"\} 1$/m);
      expect(metrics).toMatch(/^textdetect_file_queue_depth\{state="reading",service="textdetect"\} 1$/m);
      const closing = service.close();
      const shutOut = await queued;
      expectEnvelope(shutOut, 503, 'not_ready');
      expect(shutOut.body.error.message).toMatch(/shutting down/);
      expect([413, 422]).toContain((await reading).status);
      await closing;
    } finally {
      await service.stop();
    }
  }, 120_000);
});

describe('logs at trace level (item 18)', () => {
  it('hold no API key or bearer credential, whatever the route and outcome', async () => {
    const chunks: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    const service = await startTestService({ logger: createLogger('trace', sink) });
    try {
      const key = await service.newKey();
      const unknown = `sk_test_${'Q'.repeat(32)}`;
      expect((await upload(service, key, 'A short note read at trace level, with its key in the header.', 'note.txt')).status).toBe(200);
      expectEnvelope(await upload(service, unknown, 'A note sent with a key nobody issued.', 'note.txt'), 401, 'invalid_api_key');
      const answer = await fetch(`${service.url}/v1/detect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'A short text scored at trace level.' }),
      });
      expect(answer.status).toBe(200);
    } finally {
      await service.stop();
    }
    const logs = chunks.join('');
    // Every request was logged, the refused one included.
    expect(logs.match(/"msg":"request"/g)).toHaveLength(3);
    const key = /sk_test_[A-Za-z0-9]{32}/.exec(logs);
    expect(key?.[0]).toBeUndefined();
    expect(logs).not.toContain('Q'.repeat(32));
    expect(logs).not.toMatch(/Bearer (?!\[redacted\])/i);
  }, 60_000);
});

describe('names, small refusals and messages (items 19 and 22)', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService({ maxFilePages: 200 });
    key = await service.newKey();
  }, 60_000);
  afterAll(async () => service?.stop());
  const prose = 'The committee met on Tuesday to talk about the budget for the coming year and the repairs.';

  it('file.name is cut on whole characters and loses bidi controls and line separators', async () => {
    const long = await upload(service, key, prose, `${'😀'.repeat(300)}.txt`);
    expect(long.status).toBe(200);
    const name = long.body.file.name as string;
    expect(Array.from(name)).toHaveLength(255);
    expect(name).not.toMatch(/\p{Cs}/u);
    expect(name).toBe('😀'.repeat(255));
    const spoofed = await upload(service, key, prose, 'invoice\u202Efdp.exe\u2028second line\u2066.txt');
    expect(spoofed.body.file.name).toBe('invoicefdp.exesecond line.txt');
  });

  it('a PDF whose only text repeats on every page is not called images; /Count -5 is damaged', async () => {
    const repeated = await upload(service, key, buildPdf({ pages: 100, header: 'Quarterly report of the regional office' }), 'r.pdf');
    expectEnvelope(repeated, 422, 'no_text_in_file');
    expect(repeated.body.error.message).toMatch(/only text is what repeats/);
    expect(repeated.body.error.message).not.toMatch(/images/);
    const pdf = buildPdf({ paragraphs: [prose] })
      .toString('latin1')
      .replace('/Count 1', '/Count -5');
    const negative = await upload(service, key, Buffer.from(pdf, 'latin1'), 'n.pdf');
    expectEnvelope(negative, 422, 'file_unreadable');
    expect(negative.body.error.message).not.toMatch(/-5 pages/);
  });

  it('a NUL byte after the first 4 KB makes the file binary, not text', async () => {
    const bytes = Buffer.from(`${prose}\n`.repeat(100));
    bytes[6000] = 0;
    expectEnvelope(await upload(service, key, bytes, 'notes.txt'), 415, 'unsupported_file_type');
  });

  it('a field sent twice is refused naming it; the 404 names the file route', async () => {
    const twice = await upload(service, key, prose, 'notes.txt', { mode: 'academic' });
    expect(twice.status).toBe(200);
    const form = new FormData();
    form.append('mode', 'academic');
    form.append('mode', 'legal');
    form.append('file', new Blob([prose]), 'notes.txt');
    const response = await fetch(`${service.url}/v1/detect/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const answer: Answer = { status: response.status, headers: response.headers, body: await response.json() };
    expectEnvelope(answer, 400, 'invalid_request');
    expect(answer.body.error.param).toBe('mode');
    expect(answer.body.error.message).toMatch(/"mode" was sent twice/);
    const missing = await fetch(`${service.url}/v1/detect/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('POST /v1/detect/file');
  });
});

describe('Expect: 100-continue (item 21)', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService();
    key = await service.newKey();
  }, 60_000);
  afterAll(async () => service?.stop());

  /** Sends the head only, then the body once a 100 arrives; resolves with every status line received. */
  async function expectContinue(head: string, body: Buffer): Promise<string[]> {
    const socket = connect(service.port, '127.0.0.1');
    let received = '';
    return await new Promise<string[]>((resolve) => {
      let sentBody = false;
      const statuses = (): string[] => [...received.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => match[1] as string);
      socket.on('data', (data) => {
        received += data.toString('utf8');
        const seen = statuses();
        if (seen[0] === '100' && !sentBody) {
          sentBody = true;
          socket.write(body);
        }
        if (seen.some((status) => status !== '100') && /\r\n\r\n\{[\s\S]*\}$/.test(received)) {
          socket.destroy();
          resolve(statuses());
        }
      });
      socket.on('error', () => resolve(statuses()));
      socket.on('close', () => resolve(statuses()));
      socket.write(head);
    });
  }

  const form = (text: string): { type: string; body: Buffer } => {
    const body = Buffer.from(
      `--b\r\nContent-Disposition: form-data; name="file"; filename="note.txt"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--b--\r\n`,
    );
    return { type: 'multipart/form-data; boundary=b', body };
  };
  const headFor = (path: string, auth: string, type: string, length: number): string =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${auth}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

  it('is answered 401 or 413 without a 100 when the request will be refused, and 100 then 200 when it is read', async () => {
    const note = form('A short note sent after the server said to continue, as curl does with larger uploads.');
    const badKey = `sk_test_${'Z'.repeat(32)}`;
    expect(await expectContinue(headFor('/v1/detect/file', badKey, note.type, note.body.length), note.body)).toEqual(['401']);
    expect(await expectContinue(headFor('/v1/detect/file', key, note.type, 20 * 1024 * 1024), note.body)).toEqual(['413']);
    const json = Buffer.from(JSON.stringify({ text: 'x'.repeat(10) }));
    expect(await expectContinue(headFor('/v1/detect', badKey, 'application/json', json.length), json)).toEqual(['401']);
    expect(await expectContinue(headFor('/v1/detect', key, 'application/json', 50 * 1024 * 1024), json)).toEqual(['413']);
    expect(await expectContinue(headFor('/v1/detect/file', key, note.type, note.body.length), note.body)).toEqual(['100', '200']);
    const text = Buffer.from(JSON.stringify({ text: 'A short text, sent once the server said to continue.' }));
    expect(await expectContinue(headFor('/v1/detect', key, 'application/json', text.length), text)).toEqual(['100', '200']);
  }, 60_000);
});

describe('SIGTERM with a file waiting for a reader (item 20), npm start as a real process', () => {
  it('answers the waiting file 503 at once and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'textdetect-sigterm-'));
    const env: Record<string, string | undefined> = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      API_KEYS_FILE: join(dir, 'api-keys.json'),
      FILE_WORKERS: '1',
      FILE_TIMEOUT_MS: '120000',
      MAX_FILE_PAGES: '5000',
      MAX_FILE_BYTES: String(16 * 1024 * 1024),
      SHUTDOWN_TIMEOUT_MS: '60000',
      PLAYGROUND: '0',
      // The file queue's depth tells the test when the PDF is being read and the note waits.
      METRICS: '1',
    };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/service/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stdout = '';
      let stderr = '';
      child.stderr?.on('data', (data) => {
        stderr += data;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout?.on('data', (data) => {
          stdout += data;
          const match = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
          if (match) resolve(match[1] as string);
        });
        child.on('exit', (code) => reject(new Error(`the service exited with ${code}: ${stderr}`)));
      });
      const key = /(sk_test_[0-9A-Za-z]{32})/.exec(stderr)?.[1] as string;
      const target = { url } as TestService;
      const text = paragraphs(250_000, 110);
      // About 1,400 pages: many seconds of reading, so it is still being read when SIGTERM comes.
      const slowest = buildPdf({ paragraphs: [...text, ...text, ...text, ...text], linesPerPage: 60 });
      // Steps follow the service's own file-queue gauge, not the clock: the note is sent once the
      // PDF is being read, and SIGTERM once the note waits behind it for the only reader.
      const depth = async (state: 'reading' | 'waiting'): Promise<number> => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return Number(new RegExp(`textdetect_file_queue_depth\\{state="${state}"[^}]*\\} (\\d+)`).exec(text)?.[1] ?? 0);
      };
      const until = async (state: 'reading' | 'waiting'): Promise<void> => {
        const deadline = Date.now() + WAIT_MS;
        while ((await depth(state)) < 1) {
          if (Date.now() > deadline) throw new Error(`no file was ${state} within ${WAIT_MS} ms`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const reading = upload(target, key, slowest, 'long.pdf');
      await until('reading');
      const waiting = upload(target, key, 'A short note that waits for the only reader.', 'note.txt');
      await until('waiting');
      child.kill('SIGTERM');
      const refused = await waiting;
      expectEnvelope(refused, 503, 'not_ready');
      expect(refused.body.error.message).toMatch(/so this file was not read/);
      await reading.catch(() => undefined);
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
