/**
 * Bad-input sweep: hundreds of generated malformed requests, each of which must get the right 4xx
 * status and error envelope, with the server still answering normally afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGLISH_TEXT, call, rawHttp, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService({ bodyTimeoutMs: 1000, maxTextChars: 50_000 });
  key = await service.newKey();
});
afterAll(async () => service?.stop());

interface Case {
  name: string;
  status: number;
  code: string;
  param?: string;
  /** Answered before any hook runs (by the HTTP parser or URL decoding), so no rate-limit headers. */
  preRouting?: boolean;
  send(): Promise<{ status: number; body: any; headers: { get?(n: string): string | null } | Record<string, string> }>;
}

const TYPES = {
  invalid_request_error: [400, 404, 405, 408, 413, 415, 422, 431],
  authentication_error: [401],
} as Record<string, number[]>;

function json(
  raw: string | Uint8Array,
  contentType = 'application/json',
  auth: string | undefined = `Bearer KEY`,
  extra: Record<string, string> = {},
) {
  return () => {
    const headers: Record<string, string> = { 'content-type': contentType, ...extra };
    if (auth !== undefined) headers.authorization = auth.replace('KEY', key);
    return call(service, '/v1/detect', { method: 'POST', raw, headers });
  };
}

function rawRequest(head: string, body: Buffer | string = '', parts: Array<string | Buffer | { delayMs: number }> = []) {
  return () => rawHttp(service.port, [head.replace('KEY', key), body, ...parts]);
}

function buildCases(): Case[] {
  const cases: Case[] = [];
  const bad = (name: string, body: string | Uint8Array, status: number, code: string, param?: string) =>
    cases.push({ name, status, code, send: json(body), ...(param !== undefined ? { param } : {}) });

  // Wrong types for every field.
  const values: Record<string, unknown> = {
    null: null,
    zero: 0,
    negative: -1,
    float: 3.14,
    big: 1e308,
    true: true,
    false: false,
    emptyArray: [],
    array: ['a'],
    emptyObject: {},
    object: { a: 1 },
    nestedArray: [[['x']]],
  };
  for (const [label, value] of Object.entries(values)) {
    bad(`text=${label}`, JSON.stringify({ text: value }), 400, 'invalid_request', 'text');
    bad(`mode=${label}`, JSON.stringify({ text: ENGLISH_TEXT, mode: value }), 400, 'invalid_request', 'mode');
    bad(`language=${label}`, JSON.stringify({ text: ENGLISH_TEXT, language: value }), 400, 'invalid_request', 'language');
    if (typeof value !== 'boolean')
      bad(`segments=${label}`, JSON.stringify({ text: ENGLISH_TEXT, segments: value }), 400, 'invalid_request', 'segments');
  }
  for (const mode of ['', 'GENERAL', 'general ', 'poetry', 'academic\u0000', 'légal', '0']) {
    bad(`mode="${mode}"`, JSON.stringify({ text: ENGLISH_TEXT, mode }), 400, 'invalid_request', 'mode');
  }
  for (const language of ['', 'EN', 'english', 'de', 'tr-TR', 'en ']) {
    bad(`language="${language}"`, JSON.stringify({ text: ENGLISH_TEXT, language }), 400, 'invalid_request', 'language');
  }
  for (const segments of ['"true"', '"false"', '1', '0', '"yes"']) {
    bad(`segments=${segments}`, `{"text": ${JSON.stringify(ENGLISH_TEXT)}, "segments": ${segments}}`, 400, 'invalid_request', 'segments');
  }
  for (const field of ['Text', 'TEXT', 'texts', 'model', 'lang', 'segment', '__proto__', 'constructor', 'prototype', '', ' text']) {
    bad(
      `unknown field "${field}"`,
      `{"text": ${JSON.stringify(ENGLISH_TEXT)}, ${JSON.stringify(field)}: 1}`,
      400,
      'invalid_request',
      field,
    );
  }
  bad('__proto__ pollution', '{"text": "hello there", "__proto__": {"admin": true}}', 400, 'invalid_request', '__proto__');
  bad(
    'constructor pollution',
    '{"text": "hello there", "constructor": {"prototype": {"admin": true}}}',
    400,
    'invalid_request',
    'constructor',
  );

  // Huge and odd numbers.
  for (const n of ['1e999', '-1e999', '123456789012345678901234567890', '1e-999', '-0', '0.0000000000000000000001', '9007199254740993']) {
    bad(`text=${n}`, `{"text": ${n}}`, 400, 'invalid_request', 'text');
    bad(`segments=${n}`, `{"text": "some words here", "segments": ${n}}`, 400, 'invalid_request', 'segments');
  }

  // Deep nesting, inside a field and as the whole body.
  for (const depth of [10, 1000, 50_000]) {
    bad(`mode nested ${depth}`, `{"text": "a b c", "mode": ${'['.repeat(depth)}${']'.repeat(depth)}}`, 400, 'invalid_request', 'mode');
    bad(`unknown nested ${depth}`, `{"text": "a b c", "x": ${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`, 400, 'invalid_request', 'x');
    bad(`body array nested ${depth}`, `${'['.repeat(depth)}${']'.repeat(depth)}`, 400, 'invalid_request');
    bad(`unbalanced nesting ${depth}`, `{"text": "a", "mode": ${'['.repeat(depth)}}`, 400, 'invalid_json');
  }
  bad('nesting beyond the body limit', `{"text": "a", "mode": ${'['.repeat(400_000)}${']'.repeat(400_000)}}`, 413, 'payload_too_large');

  // Bodies that are not a JSON object, or not JSON at all.
  for (const body of ['null', '[]', '"text"', '123', 'true', '[{"text": "a"}]']) bad(`body ${body}`, body, 400, 'invalid_request');
  for (const body of [
    '{',
    '}',
    '{"text": "a",}',
    "{'text': 'a'}",
    '{"text": "a" /* c */}',
    '{"text": NaN}',
    '{"text": undefined}',
    '{"text": "a"} {"text": "b"}',
    '{"text": "a"} trailing',
    '{text: "a"}',
    '{"text": "a\\x41"}',
    '{"text": "a\\u12"}',
    '{"text": "line\nbreak"}',
    '{"text": "tab\there"}',
    ' ',
    '\n\n',
    'text=hello',
    '<xml/>',
    '{"text": "a"',
    '\u0000',
  ]) {
    bad(`syntax ${JSON.stringify(body).slice(0, 30)}`, body, 400, 'invalid_json');
  }
  bad('empty body', '', 400, 'invalid_json');

  // Invalid UTF-8, encoded surrogates and NUL bytes.
  const utf8Breakers: Array<[string, number[]]> = [
    ['0xff', [0xff]],
    ['0xfe', [0xfe]],
    ['overlong slash', [0xc0, 0xaf]],
    ['overlong NUL', [0xc0, 0x80]],
    ['encoded surrogate', [0xed, 0xa0, 0x80]],
    ['truncated 3-byte', [0xe2, 0x82]],
    ['truncated 4-byte', [0xf0, 0x9f, 0x98]],
    ['lone continuation', [0x80]],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['latin-1 e-acute', [0xe9]],
  ];
  for (const [label, bytes] of utf8Breakers) {
    const prefix = Buffer.from('{"text": "caf');
    const suffix = Buffer.from(' and more words"}');
    bad(`invalid UTF-8 ${label}`, Buffer.concat([prefix, Buffer.from(bytes), suffix]), 400, 'invalid_json');
    bad(
      `invalid UTF-8 ${label} in key`,
      Buffer.concat([Buffer.from('{"te'), Buffer.from(bytes), Buffer.from('xt": "a"}')]),
      400,
      'invalid_json',
    );
  }
  for (const surrogate of ['\\ud800', '\\udfff', '\\udbff\\u0041', 'abc\\udc00def', '\\ude00\\ud83d']) {
    bad(`lone surrogate ${surrogate}`, `{"text": "Some text ${surrogate} here"}`, 400, 'invalid_request', 'text');
  }
  for (const place of ['start', 'middle', 'end']) {
    const text = place === 'start' ? '\\u0000hello world' : place === 'middle' ? 'hello\\u0000world' : 'hello world\\u0000';
    bad(`escaped NUL at ${place}`, `{"text": "${text}"}`, 400, 'invalid_request', 'text');
  }
  bad('raw NUL byte in string', Buffer.from('{"text": "hello\u0000world"}'), 400, 'invalid_json');
  bad('raw NUL byte between tokens', Buffer.from('{"text":\u0000"hello"}'), 400, 'invalid_json');
  bad('NUL in mode', '{"text": "hello", "mode": "general\\u0000"}', 400, 'invalid_request', 'mode');

  // Texts that are blank or too long.
  for (const blank of ['', ' ', '\\n\\t', '\\u00a0\\u2003', '\\u3000']) {
    bad(`blank text "${blank}"`, `{"text": "${blank}"}`, 400, 'invalid_request', 'text');
  }
  bad('text 50,001 chars', JSON.stringify({ text: 'a'.repeat(50_001) }), 413, 'text_too_long', 'text');
  bad('text 50,001 emoji', JSON.stringify({ text: '😀'.repeat(50_001) }), 413, 'text_too_long', 'text');
  bad('text 50,001 escaped chars', JSON.stringify({ text: 'é'.repeat(50_001) }).replace(/é/g, '\\u00e9'), 413, 'text_too_long', 'text');

  // Media types.
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'text/json',
    'application/xml',
  ]) {
    cases.push({
      name: `content-type ${type}`,
      status: 415,
      code: 'unsupported_media_type',
      send: json(JSON.stringify({ text: ENGLISH_TEXT }), type),
    });
  }
  cases.push({
    name: 'no content-type, no body',
    status: 415,
    code: 'unsupported_media_type',
    send: () => call(service, '/v1/detect', { method: 'POST', key }),
  });

  // Authentication junk (each counted against the address, so the limit must be high here).
  for (const auth of [
    '',
    'Bearer',
    'Bearer ',
    'Token KEY',
    'Basic a2V5Og==',
    'Bearer KEYx',
    'Bearer sk_test_',
    'Bearer sk_test_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
    `Bearer sk_test_${'a'.repeat(5000)}`,
    'Bearer KEY KEY',
    'BearerKEY',
  ]) {
    const expected = auth === '' ? 'missing_api_key' : 'invalid_api_key';
    cases.push({
      name: `authorization "${auth.slice(0, 30)}"`,
      status: 401,
      code: expected,
      send: json(JSON.stringify({ text: ENGLISH_TEXT }), 'application/json', auth),
    });
  }
  for (const id of ['abc', '123', 'req_01H', '0b5f2a62-6f5c-4c1e-9d1e', '0b5f2a62-6f5c-4c1e-9d1e-2a3b4c5d6e7fz', "'; DROP TABLE", '{}']) {
    cases.push({
      name: `x-request-id "${id}"`,
      status: 400,
      code: 'invalid_request',
      param: 'X-Request-Id',
      send: json(JSON.stringify({ text: ENGLISH_TEXT }), 'application/json', 'Bearer KEY', { 'x-request-id': id }),
    });
  }

  // 10 MB bodies: declared and chunked.
  const tenMb = Buffer.alloc(10 * 1024 * 1024, 'a');
  cases.push({
    name: '10 MB JSON body',
    status: 413,
    code: 'payload_too_large',
    send: json(Buffer.concat([Buffer.from('{"text": "'), tenMb, Buffer.from('"}')])),
  });
  cases.push({ name: '10 MB garbage body', status: 413, code: 'payload_too_large', send: json(tenMb) });
  cases.push({
    name: '10 MB chunked body',
    status: 413,
    code: 'payload_too_large',
    send: rawRequest(
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      Buffer.concat(
        Array.from({ length: 10 }, () => Buffer.concat([Buffer.from(`100000\r\n`), Buffer.alloc(0x100000, 'a'), Buffer.from('\r\n')])),
      ),
    ),
  });
  cases.push({
    name: '10 MB declared, nothing sent',
    status: 413,
    code: 'payload_too_large',
    send: rawRequest(
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n`,
    ),
  });

  // Slow bodies: stalled or trickling past the deadline.
  const body = JSON.stringify({ text: ENGLISH_TEXT });
  const head = `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  cases.push({
    name: 'stalled body',
    status: 408,
    code: 'request_timeout',
    send: rawRequest(head, body.slice(0, 10), [{ delayMs: 2500 }]),
  });
  cases.push({ name: 'headers only, no body', status: 408, code: 'request_timeout', send: rawRequest(head, '', [{ delayMs: 2500 }]) });
  const trickle: Array<string | { delayMs: number }> = [];
  for (let i = 0; i < 12; i++) trickle.push(body.slice(i * 5, i * 5 + 5), { delayMs: 150 });
  cases.push({ name: 'trickled body', status: 408, code: 'request_timeout', send: rawRequest(head, '', trickle) });

  // Protocol-level garbage answered by the connection error handler.
  cases.push({ name: 'garbage request line', preRouting: true, status: 400, code: 'invalid_request', send: rawRequest('GARBAGE\r\n\r\n') });
  cases.push({
    name: 'bad header line',
    preRouting: true,
    status: 400,
    code: 'invalid_request',
    send: rawRequest('POST /v1/detect HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
  });
  cases.push({
    name: 'header overflow',
    preRouting: true,
    status: 431,
    code: 'headers_too_large',
    send: rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`),
  });
  cases.push({
    name: 'bad content-length',
    preRouting: true,
    status: 400,
    code: 'invalid_request',
    send: rawRequest('POST /v1/detect HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'),
  });
  cases.push({
    name: 'both length and chunked',
    preRouting: true,
    status: 400,
    code: 'invalid_request',
    send: rawRequest('POST /v1/detect HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n'),
  });
  cases.push({
    name: 'bad percent-encoding',
    preRouting: true,
    status: 400,
    code: 'invalid_request',
    send: rawRequest('GET /v1/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n'),
  });
  for (const path of ['/v1/detect/', '/V1/DETECT', '/v1/detect/x', '/v1', '/detect', '/v1/detect%00', '/..%2f..%2fetc/passwd']) {
    cases.push({
      name: `path ${path}`,
      status: 404,
      code: 'not_found',
      send: () => call(service, path, { method: 'POST', key, body: { text: ENGLISH_TEXT } }),
    });
  }
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    cases.push({
      name: `method ${method}`,
      status: 405,
      code: 'method_not_allowed',
      send: () =>
        call(service, '/v1/detect', {
          method,
          key,
          ...(method === 'GET' ? {} : { raw: '{}', headers: { 'content-type': 'application/json' } }),
        }),
    });
  }
  return cases;
}

function header(answer: { headers: any }, name: string): string | null | undefined {
  return typeof answer.headers.get === 'function' ? answer.headers.get(name) : answer.headers[name];
}

describe('bad-input sweep', () => {
  it('answers at least 200 malformed requests with the right 4xx envelope and stays up', async () => {
    const cases = buildCases();
    expect(cases.length).toBeGreaterThanOrEqual(200);
    const failures: string[] = [];
    const queue = [...cases];
    const runOne = async (c: Case) => {
      let answer;
      try {
        answer = await c.send();
      } catch (err) {
        failures.push(`${c.name}: request failed: ${(err as Error).message}`);
        return;
      }
      const error = answer.body?.error;
      const problems: string[] = [];
      if (answer.status !== c.status) problems.push(`status ${answer.status}, expected ${c.status}`);
      if (!error) problems.push(`no envelope: ${String(JSON.stringify(answer.body)).slice(0, 120)}`);
      else {
        if (error.code !== c.code) problems.push(`code ${error.code}, expected ${c.code}`);
        if (!TYPES[error.type]?.includes(c.status)) problems.push(`type ${error.type}`);
        if (typeof error.message !== 'string' || error.message.length < 10) problems.push('no message');
        if (!/^req_[0-9A-Z]{26}$/.test(error.request_id)) problems.push('no request_id');
        if (header(answer, 'request-id') !== error.request_id) problems.push('Request-Id header missing');
        if (c.param !== undefined && error.param !== c.param) problems.push(`param ${error.param}, expected ${c.param}`);
        if (JSON.stringify(error).includes('    at ')) problems.push('stack trace');
        if (!c.preRouting && !/^\d+$/.test(String(header(answer, 'ratelimit-remaining')))) problems.push('no RateLimit-* headers');
      }
      if (problems.length) failures.push(`${c.name}: ${problems.join('; ')}`);
    };
    // A few at a time: enough to overlap the slow cases without starving the 2-core machine.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) await runOne(c);
      }),
    );
    expect(failures).toEqual([]);

    const health = await call(service, '/healthz');
    expect(health.status).toBe(200);
    const ok = await call(service, '/v1/detect', { key, body: { text: ENGLISH_TEXT } });
    expect(ok.status).toBe(200);
    expect(service.logs.filter((l) => l.level === 50)).toEqual([]);
    console.log(`sweep: ${cases.length} malformed requests, all answered correctly`);
  });
});
