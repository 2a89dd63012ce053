/**
 * Every answer carries the RateLimit-* headers (docs/service.md), whatever its status: each status
 * the OpenAPI document lists for any path, and the ones no route declares (404, 405, the 400 of a
 * request without Host, the 503 of a request arriving during shutdown), provoked over real HTTP
 * (issue 40, item 9: the 417, the no-Host 400 and the shutdown 503 used to come without them).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/service/keys.ts';
import { ENGLISH_TEXT, GERMAN_TEXT, call, detect, rawHttp, startTestService, type TestService } from './helpers.ts';

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];

let service: TestService;
let key: string;
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

beforeAll(async () => {
  service = await startTestService({ maxTextChars: 2000, bodyTimeoutMs: 500 });
  key = await service.newKey();
});
afterAll(async () => service?.stop());

describe('every status carries RateLimit-*', () => {
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
    const spy = vi.spyOn(service.engine, 'detect').mockRejectedValueOnce(new Error('injected failure'));
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
