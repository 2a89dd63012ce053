/**
 * HTTP edges a plain client never hits but real ones do: bodies trickled after a refusal, odd
 * Expect headers, compressed bodies, Python's ASCII-only JSON, and the rate-limit headers on every status.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/service/keys.ts';
import { ENGLISH_TEXT, GERMAN_TEXT, call, detect, expectEnvelope, rawHttp, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService({ maxTextChars: 2000, rateLimitMax: 500, rateLimitWindow: '5 seconds' });
  key = await service.newKey();
});
afterAll(async () => service?.stop());

/**
 * Sends a request head announcing a 10 kB body, then trickles one byte every 100 ms. Resolves with
 * the answer and how long after it the server closed the connection (Infinity if it kept it open
 * past `watchMs`).
 */
async function trickleAfter(head: string, watchMs = 20_000): Promise<{ status: number; raw: string; closedAfterAnswerMs: number }> {
  return await new Promise((resolve, reject) => {
    const socket = connect(service.port, '127.0.0.1');
    let raw = '';
    let answeredAt: number | undefined;
    let settled = false;
    const trickle = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write('a');
    }, 100);
    const done = (closedAt: number) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(watchdog);
      socket.destroy();
      if (answeredAt === undefined) return reject(new Error(`no answer before the connection ended: ${raw.slice(0, 200)}`));
      resolve({ status: Number(raw.split(' ')[1]), raw, closedAfterAnswerMs: closedAt - answeredAt });
    };
    const watchdog = setTimeout(() => done(Number.POSITIVE_INFINITY), watchMs);
    socket.on('data', (chunk) => {
      raw += chunk.toString('utf8');
      if (answeredAt === undefined && raw.includes('\r\n\r\n')) answeredAt = performance.now();
    });
    socket.on('end', () => done(performance.now()));
    socket.on('close', () => done(performance.now()));
    socket.on('error', () => done(performance.now()));
    socket.write(`${head}Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"text": "`);
  });
}

describe('refused before the body is read', () => {
  it('401 closes the connection right after the answer while the client trickles the body', async () => {
    const result = await trickleAfter('POST /v1/detect HTTP/1.1\r\nHost: localhost\r\n');
    expect(result.status).toBe(401);
    expect(result.raw).toContain('"code":"missing_api_key"');
    // Closed, not kept open for the 10 kB body (1,000 s at this pace): any finite time is the server's close.
    expect(result.closedAfterAnswerMs).toBeLessThan(20_000);
  });

  it('404 closes the connection too', async () => {
    const result = await trickleAfter(`POST /v1/nowhere HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n`);
    expect(result.status).toBe(404);
    expect(result.closedAfterAnswerMs).toBeLessThan(20_000);
  });

  it('a refused request whose body has fully arrived keeps its keep-alive connection', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const answer = await rawHttp(service.port, [
      `POST /v1/detect HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    ]);
    expect(answer.status).toBe(401);
    expect(answer.headers.connection).toMatch(/keep-alive/i);
  });

  it('a request without a body keeps its keep-alive connection', async () => {
    const answer = await rawHttp(service.port, ['GET /nowhere HTTP/1.1\r\nHost: localhost\r\n\r\n']);
    expect(answer.status).toBe(404);
    expect(answer.headers.connection).toMatch(/keep-alive/i);
  });
});

describe('Expect', () => {
  it('anything but 100-continue gets 417 expectation_failed in the envelope', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const answer = await rawHttp(service.port, [
      `POST /v1/detect HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    ]);
    expect(answer.status).toBe(417);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'expectation_failed', param: 'Expect' });
    expect(answer.body.error.message).toMatch(/100-continue/);
    expect(answer.body.error.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(answer.headers['request-id']).toBe(answer.body.error.request_id);
  });

  it('100-continue still works', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const answer = await rawHttp(
      service.port,
      [
        `POST /v1/detect HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        { delayMs: 100 },
        body,
      ],
      1500,
    );
    expect(answer.raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    expect(answer.raw).toMatch(/HTTP\/1\.1 200 OK/);
  });
});

describe('Content-Encoding', () => {
  for (const encoding of ['gzip', 'br', 'deflate', 'zstd']) {
    it(`415 unsupported_encoding for ${encoding}`, async () => {
      const answer = await call(service, '/v1/detect', {
        key,
        raw: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]),
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      expectEnvelope(answer, 415, 'unsupported_encoding');
      expect(answer.body.error.param).toBe('Content-Encoding');
      expect(answer.body.error.message).toContain(encoding);
    });
  }

  it('identity is accepted', async () => {
    const answer = await call(service, '/v1/detect', { key, body: { text: ENGLISH_TEXT }, headers: { 'content-encoding': 'identity' } });
    expect(answer.status).toBe(200);
  });

  it('authentication is still checked first', async () => {
    const answer = await call(service, '/v1/detect', {
      raw: 'x',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expectEnvelope(answer, 401, 'missing_api_key');
  });
});

describe('JSON escapes', () => {
  it('accepts a text of MAX_TEXT_CHARS emoji sent as \\uXXXX surrogate pairs (12 bytes each, as Python json.dumps writes them)', async () => {
    const maxTextChars = 10_000;
    const wide = await startTestService({ maxTextChars });
    try {
      const wideKey = await wide.newKey();
      const emoji = '\u{1F600}';
      const text = `The committee met. ${emoji.repeat(maxTextChars - 19)}`;
      expect([...text].length).toBe(maxTextChars);
      // ensure_ascii: every non-ASCII character as \uXXXX escapes, surrogate pairs for emoji.
      const body = JSON.stringify({ text, language: 'en' }).replace(
        /[\u0080-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
      // More than room for six bytes per character (the old limit) allowed.
      expect(Buffer.byteLength(body)).toBeGreaterThan(maxTextChars * 6 + 16 * 1024);
      const answer = await call(wide, '/v1/detect', { key: wideKey, raw: body, headers: { 'content-type': 'application/json' } });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
      // One character more is refused for its length, not its bytes.
      const longer = body.replace('met.', 'met!!');
      expectEnvelope(
        await call(wide, '/v1/detect', { key: wideKey, raw: longer, headers: { 'content-type': 'application/json' } }),
        413,
        'text_too_long',
      );
    } finally {
      await wide.stop();
    }
  });
});

describe('RateLimit-Policy', () => {
  it("names the quota and the window on every answer, with the key's own limit", async () => {
    const answers = [
      await detect(service, key, { text: ENGLISH_TEXT }),
      await call(service, '/healthz'),
      await call(service, '/nowhere'),
      await detect(service, 'sk_test_bad', { text: ENGLISH_TEXT }),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('ratelimit-policy')).toBe('500;w=5');
      expect(answer.headers.get('ratelimit-limit')).toBe('500');
    }
    const ownLimit = await service.newKey({ rateLimitMax: 7 });
    expect((await detect(service, ownLimit, { text: ENGLISH_TEXT })).headers.get('ratelimit-policy')).toBe('7;w=5');
  });
});

describe('requests Node answers before fastify sees them', () => {
  it('an HTTP/1.1 request without Host gets 400 invalid_request in the envelope, with a request id', async () => {
    for (const head of [
      'GET /healthz HTTP/1.1\r\n\r\n',
      `POST /v1/detect HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nContent-Length: 0\r\n\r\n`,
    ]) {
      const answer = await rawHttp(service.port, [head], 5000);
      expect(answer.status, answer.raw.slice(0, 300)).toBe(400);
      expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'Host' });
      expect(answer.body.error.message).toMatch(/Host/);
      expect(answer.body.error.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
      expect(answer.headers['request-id']).toBe(answer.body.error.request_id);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('HTTP/1.0 without Host is still served (Host is only required from HTTP/1.1 on)', async () => {
    const answer = await rawHttp(service.port, ['GET /healthz HTTP/1.0\r\n\r\n'], 5000);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
  });

  it('CONNECT gets a well-formed 405 method_not_allowed in the envelope instead of a closed connection', async () => {
    for (const target of ['example.com:443', '127.0.0.1:6379']) {
      const answer = await rawHttp(service.port, [`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`], 5000);
      expect(answer.raw).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
      expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
      expect(answer.body.error.message).toMatch(/CONNECT/);
      expect(answer.headers['request-id']).toBe(answer.body.error.request_id);
      expect(answer.headers.allow).toBe('GET, HEAD, POST');
      expect(answer.headers.connection).toBe('close');
    }
    // The server is unharmed.
    expect((await call(service, '/healthz')).status).toBe(200);
  });
});

describe('Cache-Control', () => {
  it('is no-store on every API answer, errors included (answers echo the submitted text)', async () => {
    const limited = await startTestService({ rateLimitMax: 1 });
    try {
      const limitedKey = await limited.newKey();
      await detect(limited, limitedKey, { text: ENGLISH_TEXT });
      const answers = {
        'detect 200 with segments': await detect(service, key, { text: ENGLISH_TEXT, segments: true }),
        'detect 401': await detect(service, 'sk_test_bad', { text: ENGLISH_TEXT }),
        'detect 400': await call(service, '/v1/detect', { key, raw: '{', headers: { 'content-type': 'application/json' } }),
        'detect 415': await call(service, '/v1/detect', { key, raw: 'x', headers: { 'content-type': 'text/plain' } }),
        'detect 429': await detect(limited, limitedKey, { text: ENGLISH_TEXT }),
        '404': await call(service, '/nowhere'),
        '405': await call(service, '/v1/detect', { method: 'GET' }),
        healthz: await call(service, '/healthz'),
        readyz: await call(service, '/readyz'),
        openapi: await call(service, '/v1/openapi.json'),
      };
      const statuses = Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.status]));
      expect(statuses).toMatchObject({ 'detect 200 with segments': 200, 'detect 429': 429, healthz: 200, readyz: 200, openapi: 200 });
      const cacheControl = Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.headers.get('cache-control')]));
      expect(cacheControl).toEqual(Object.fromEntries(Object.keys(answers).map((name) => [name, 'no-store'])));
      const raw = {
        'malformed request line': await rawHttp(service.port, ['BLAH\r\n\r\n'], 5000),
        'no Host': await rawHttp(service.port, ['GET /healthz HTTP/1.1\r\n\r\n'], 5000),
        CONNECT: await rawHttp(service.port, ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'], 5000),
      };
      expect(Object.fromEntries(Object.entries(raw).map(([name, answer]) => [name, answer.headers['cache-control']]))).toEqual({
        'malformed request line': 'no-store',
        'no Host': 'no-store',
        CONNECT: 'no-store',
      });
    } finally {
      await limited.stop();
    }
  });
});

/**
 * Every answer carries the RateLimit-* headers (docs/service.md), whatever its status: each status
 * the OpenAPI document lists for any path, and the ones no route declares (404, 405, the 400 of a
 * request without Host, the 503 of a request arriving during shutdown), provoked over real HTTP
 * (the 417, the no-Host 400 and the shutdown 503 used to come without them).
 */
const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];

/** The statuses provoked below, each with the headers its answer carried. */
const seen = new Map<number, Record<string, string | null>[]>();

function record(status: number, header: (name: string) => string | null | undefined): void {
  const headers = Object.fromEntries(RATE_LIMIT_HEADERS.map((h) => [h, header(h) ?? null]));
  seen.set(status, [...(seen.get(status) ?? []), headers]);
  for (const h of RATE_LIMIT_HEADERS) expect(headers[h], `${status}: ${h}`).not.toBeNull();
  expect(headers['ratelimit-policy']).toMatch(/^\d+;w=\d+$/);
}
const fromFetch = (answer: { status: number; headers: Headers }) => record(answer.status, (h) => answer.headers.get(h));
const fromRaw = (answer: { status: number; headers: Record<string, string> }) => record(answer.status, (h) => answer.headers[h]);

describe('every status carries RateLimit-* (issue 40, item 9)', () => {
  // A service of its own: a short body timeout for the 408, and one this describe shuts down.
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService({ maxTextChars: 2000, bodyTimeoutMs: 500 });
    key = await service.newKey();
  });
  afterAll(async () => service?.stop());

  it('200: a score and the probes', async () => {
    const scored = await detect(service, key, { text: ENGLISH_TEXT });
    expect(scored.status).toBe(200);
    fromFetch(scored);
    for (const path of ['/healthz', '/readyz', '/v1/openapi.json']) {
      const probe = await call(service, path);
      expect(probe.status).toBe(200);
      fromFetch(probe);
    }
  });

  it('400: bad JSON, and a request without Host', async () => {
    const badJson = await call(service, '/v1/detect', { key, raw: '{', headers: { 'content-type': 'application/json' } });
    expect(badJson.body.error.code).toBe('invalid_json');
    fromFetch(badJson);
    const noHost = await rawHttp(service.port, ['GET /healthz HTTP/1.1\r\n\r\n']);
    expect(noHost.status).toBe(400);
    expect(noHost.body.error.param).toBe('Host');
    fromRaw(noHost);
  });

  it('401, 403', async () => {
    fromFetch(await detect(service, 'sk_test_nonsense', { text: ENGLISH_TEXT }));
    const { key: live } = await createApiKey(service.keysFile, { name: 'live', environment: 'production' });
    const wrongEnvironment = await detect(service, live, { text: ENGLISH_TEXT });
    expect(wrongEnvironment.status).toBe(403);
    fromFetch(wrongEnvironment);
  });

  it('404, 405', async () => {
    fromFetch(await call(service, '/nowhere', { key }));
    const wrongMethod = await call(service, '/v1/detect', { key });
    expect(wrongMethod.status).toBe(405);
    fromFetch(wrongMethod);
  });

  it('408: a body that stops arriving', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const answer = await rawHttp(service.port, [
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      body.slice(0, 20),
    ]);
    expect(answer.status).toBe(408);
    fromRaw(answer);
  });

  it('413, 415, 417, 422', async () => {
    const tooLong = await detect(service, key, { text: 'word '.repeat(500) });
    expect(tooLong.status).toBe(413);
    fromFetch(tooLong);
    const textPlain = await call(service, '/v1/detect', { key, raw: ENGLISH_TEXT, headers: { 'content-type': 'text/plain' } });
    expect(textPlain.status).toBe(415);
    fromFetch(textPlain);
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const expect200 = await rawHttp(service.port, [
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    ]);
    expect(expect200.status).toBe(417);
    fromRaw(expect200);
    const german = await detect(service, key, { text: GERMAN_TEXT });
    expect(german.status).toBe(422);
    fromFetch(german);
  });

  it('429', async () => {
    const { key: one } = await createApiKey(service.keysFile, { name: 'one-a-minute', environment: 'sandbox', rateLimitMax: 1 });
    expect((await detect(service, one, { text: 'Hello there.' })).status).toBe(200);
    const limited = await detect(service, one, { text: 'Hello there.' });
    expect(limited.status).toBe(429);
    fromFetch(limited);
  });

  it('500: an engine failure nobody foresaw', async () => {
    // The real engine, made to fail once: no request a caller can send provokes a 500 on purpose.
    const spy = vi.spyOn(service.engine, 'start').mockRejectedValueOnce(new Error('injected failure'));
    try {
      const failed = await detect(service, key, { text: ENGLISH_TEXT });
      expect(failed.status).toBe(500);
      expect(failed.body.error.code).toBe('internal_error');
      fromFetch(failed);
    } finally {
      spy.mockRestore();
    }
  });

  it('503: the engine not loaded, and a request arriving while the service shuts down', async () => {
    const notReady = await startTestService({ waitForEngine: false, modelPath: '/nonexistent/no-such-model.bin' });
    try {
      const k = await notReady.newKey();
      let answer = await detect(notReady, k, { text: ENGLISH_TEXT });
      // Loading fails at once, but may not have yet: the answer is 503 either way.
      expect(answer.status).toBe(503);
      fromFetch(answer);
      answer = await call(notReady, '/readyz');
      expect(answer.status).toBe(503);
      fromFetch(answer);
    } finally {
      await notReady.stop();
    }

    const closing = await startTestService();
    // One write holds a whole request and the first line of the next: once the first is answered,
    // the server has begun reading the second, so the connection is busy and shutdown waits for it.
    const socket = connect(closing.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    socket.on('data', (d) => (received += d));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\n');
    while (!received.includes('{"status":"ok"}')) await new Promise((r) => setTimeout(r, 10));
    received = '';
    const stopped = closing.stop();
    socket.write('Host: x\r\n\r\n');
    while (!received.includes('"not_ready"')) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    await stopped;
    const [head = ''] = received.split('\r\n\r\n');
    const headers = Object.fromEntries(
      head
        .split('\r\n')
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(received).toContain('shutting down');
    fromRaw({ status: 503, headers });
  });

  it('covers every status the OpenAPI document lists', async () => {
    const doc = (await call(service, '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const documented = new Set<number>();
    for (const methods of Object.values(doc.paths))
      for (const operation of Object.values(methods)) for (const status of Object.keys(operation.responses)) documented.add(Number(status));
    expect([...documented].filter((s) => !seen.has(s)).sort()).toEqual([]);
    // And the document says so: every answer's headers include them.
    for (const methods of Object.values(doc.paths))
      for (const operation of Object.values(methods))
        for (const [status, answer] of Object.entries(operation.responses))
          expect(Object.keys((answer as { headers?: object }).headers ?? {}), status).toEqual(
            expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy']),
          );
  });
});
