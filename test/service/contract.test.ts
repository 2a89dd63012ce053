import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/service/keys.ts';
import { ENGLISH_TEXT, GERMAN_TEXT, TURKISH_TEXT, call, detect, expectEnvelope, rawHttp, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService({ bodyTimeoutMs: 800 });
  key = await service.newKey();
});
afterAll(async () => {
  await service?.stop();
});

describe('POST /v1/detect: success', () => {
  it('scores a text and answers the full contract', async () => {
    const answer = await detect(service, key, { text: ENGLISH_TEXT });
    expect(answer.status).toBe(200);
    const body = answer.body;
    expect(Object.keys(body).sort()).toEqual([
      'ai_probability',
      'composition',
      'confidence',
      'generated_share',
      'generated_spans',
      'language',
      'mode',
      'model',
      'origin',
      'polished_probability',
      'request_id',
      'segments',
      'verdict',
      'warnings',
      'windows',
    ]);
    expect(body.ai_probability).toBeGreaterThanOrEqual(0);
    expect(body.ai_probability).toBeLessThanOrEqual(1);
    expect(body.mode).toBe('general');
    expect(body.language).toBe('en');
    expect(body.segments).toEqual([]);
    expect(body.windows).toEqual([]);
    expect(['likely_human', 'mixed', 'likely_ai']).toContain(body.verdict);
    expect(['low', 'medium', 'high']).toContain(body.confidence);
    expect(Array.isArray(body.warnings)).toBe(true);
    expect(body.model).toBe(service.engine.model);
    expect(body.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(answer.headers.get('request-id')).toBe(body.request_id);
    expect(answer.headers.get('x-request-id')).toBe(body.request_id);
    expect(Number(answer.headers.get('ratelimit-limit'))).toBe(10_000);
    expect(answer.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(answer.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
  });

  it('applies mode, language and segments, with offsets into the submitted string', async () => {
    const text = `  ${ENGLISH_TEXT}\n\nA second paragraph follows here. It has two sentences.`;
    const answer = await detect(service, key, { text, mode: 'legal', language: 'en', segments: true });
    expect(answer.status).toBe(200);
    expect(answer.body.mode).toBe('legal');
    expect(answer.body.language).toBe('en');
    expect(answer.body.segments.length).toBeGreaterThan(3);
    for (const segment of answer.body.segments) {
      expect(text.slice(segment.start, segment.end)).toBe(segment.text);
      expect(segment.ai_probability).toBeGreaterThanOrEqual(0);
      expect(segment.ai_probability).toBeLessThanOrEqual(1);
    }
  });

  it('detects Turkish when no language is given', async () => {
    const answer = await detect(service, key, { text: TURKISH_TEXT, mode: 'financial' });
    expect(answer.status).toBe(200);
    expect(answer.body.language).toBe('tr');
    expect(answer.body.mode).toBe('financial');
  });

  it('warns about short texts', async () => {
    const answer = await detect(service, key, { text: 'This is a short sentence about the weather today.' });
    expect(answer.status).toBe(200);
    expect(answer.body.warnings).toContain('short_text');
  });

  it('echoes the caller X-Request-Id and logs both ids, never the key or the text', async () => {
    const callerId = randomUUID();
    const answer = await detect(service, key, { text: ENGLISH_TEXT }, { 'x-request-id': callerId, 'user-agent': 'contract-test/1.0' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toBe(callerId);
    expect(answer.headers.get('request-id')).toBe(answer.body.request_id);
    await new Promise((r) => setTimeout(r, 50));
    const line = service.logs.find((l) => l.request_id === answer.body.request_id && l.msg === 'request');
    expect(line).toMatchObject({
      caller_request_id: callerId,
      method: 'POST',
      path: '/v1/detect',
      mode: 'general',
      language: 'en',
      text_length: ENGLISH_TEXT.length,
      user_agent: 'contract-test/1.0',
      status: 200,
    });
    expect(String(line?.key_id)).toMatch(/^key_/);
    expect(typeof line?.latency_ms).toBe('number');
    const raw = service.rawLogs();
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(key.slice(8));
    expect(raw).not.toContain('The committee met on Tuesday');
  });
});

describe('POST /v1/detect: every error status', () => {
  it('400 invalid_json for a body that is not JSON', async () => {
    const answer = await call(service, '/v1/detect', {
      key,
      raw: '{"text": "unterminated',
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(answer, 400, 'invalid_json');
  });

  it('400 invalid_request naming the offending field', async () => {
    const unknown = await detect(service, key, { text: ENGLISH_TEXT, colour: 'red' });
    expectEnvelope(unknown, 400, 'invalid_request');
    expect(unknown.body.error.param).toBe('colour');
    const wrongType = await detect(service, key, { text: ENGLISH_TEXT, segments: 'yes' });
    expectEnvelope(wrongType, 400, 'invalid_request');
    expect(wrongType.body.error.param).toBe('segments');
    const badMode = await detect(service, key, { text: ENGLISH_TEXT, mode: 'poetry' });
    expectEnvelope(badMode, 400, 'invalid_request');
    expect(badMode.body.error.param).toBe('mode');
    expect(badMode.body.error.message).toContain('academic');
    const missing = await detect(service, key, { mode: 'general' });
    expectEnvelope(missing, 400, 'invalid_request');
    expect(missing.body.error.param).toBe('text');
    const blank = await detect(service, key, { text: ' \n\t ' });
    expectEnvelope(blank, 400, 'invalid_request');
    expect(blank.body.error.param).toBe('text');
    const badLanguage = await detect(service, key, { text: ENGLISH_TEXT, language: 'de' });
    expectEnvelope(badLanguage, 400, 'invalid_request');
    expect(badLanguage.body.error.param).toBe('language');
  });

  it('400 for an X-Request-Id that is not a UUID', async () => {
    const answer = await detect(service, key, { text: ENGLISH_TEXT }, { 'x-request-id': 'not a uuid' });
    expectEnvelope(answer, 400, 'invalid_request');
    expect(answer.body.error.param).toBe('X-Request-Id');
    expect(answer.headers.get('x-request-id')).toBe(answer.body.error.request_id);
  });

  it('401 missing_api_key and invalid_api_key, with WWW-Authenticate', async () => {
    const missing = await call(service, '/v1/detect', { body: { text: ENGLISH_TEXT } });
    expectEnvelope(missing, 401, 'missing_api_key');
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const unknown = await detect(service, `sk_test_${'A'.repeat(32)}`, { text: ENGLISH_TEXT });
    expectEnvelope(unknown, 401, 'invalid_api_key');
    expect(unknown.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const malformed = await detect(service, 'hunter2', { text: ENGLISH_TEXT });
    expectEnvelope(malformed, 401, 'invalid_api_key');
    const basic = await call(service, '/v1/detect', { body: { text: ENGLISH_TEXT }, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expectEnvelope(basic, 401, 'invalid_api_key');
  });

  it('401 for revoked and expired keys; creating and revoking take effect without a restart', async () => {
    const { id, key: fresh } = await createApiKey(service.keysFile, { name: 'to revoke' });
    expect((await detect(service, fresh, { text: ENGLISH_TEXT })).status).toBe(200);
    await revokeApiKey(service.keysFile, id);
    const revoked = await detect(service, fresh, { text: ENGLISH_TEXT });
    expectEnvelope(revoked, 401, 'invalid_api_key');
    expect(revoked.body.error.message).toMatch(/revoked/);

    const { key: shortLived } = await createApiKey(service.keysFile, {
      name: 'short',
      expiresAt: new Date(Date.now() + 2500).toISOString(),
    });
    expect((await detect(service, shortLived, { text: ENGLISH_TEXT })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2600));
    const expired = await detect(service, shortLived, { text: ENGLISH_TEXT });
    expectEnvelope(expired, 401, 'invalid_api_key');
    expect(expired.body.error.message).toMatch(/expired/);
  });

  it('403 wrong_environment for a live key on a sandbox server', async () => {
    const { key: live } = await createApiKey(service.keysFile, { name: 'live', environment: 'production' });
    const answer = await detect(service, live, { text: ENGLISH_TEXT });
    expectEnvelope(answer, 403, 'wrong_environment');
  });

  it('404 for unknown paths and 405 with Allow for wrong methods', async () => {
    const notFound = await call(service, '/v2/detect', { key, body: { text: 'x' } });
    expectEnvelope(notFound, 404, 'not_found');
    const notFoundGet = await call(service, '/');
    expectEnvelope(notFoundGet, 404, 'not_found');
    const wrongMethod = await call(service, '/v1/detect', { key });
    expectEnvelope(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const deleteHealth = await call(service, '/healthz', { method: 'DELETE' });
    expectEnvelope(deleteHealth, 405, 'method_not_allowed');
    expect(deleteHealth.headers.get('allow')).toContain('GET');
  });

  it('408 request_timeout for a body that stops arriving', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const answer = await rawHttp(service.port, [
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      body.slice(0, 20),
      { delayMs: 3000 },
    ]);
    expect(answer.status).toBe(408);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout' });
  });

  it('a slow body that completes in time is served normally', async () => {
    const body = JSON.stringify({ text: ENGLISH_TEXT });
    const parts: Array<string | { delayMs: number }> = [
      `POST /v1/detect HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
    ];
    const step = Math.ceil(body.length / 5);
    for (let i = 0; i < body.length; i += step) parts.push({ delayMs: 100 }, body.slice(i, i + step));
    const answer = await rawHttp(service.port, parts);
    expect(answer.status).toBe(200);
    expect(answer.body.language).toBe('en');
  });

  it('413 text_too_long and payload_too_large', async () => {
    // 750,004 characters as counted (the last space is not): over the default document limit of 750,000.
    const long = await detect(service, key, { text: 'word '.repeat(150_001) });
    expectEnvelope(long, 413, 'text_too_long');
    expect(long.body.error.param).toBe('text');
    expect(long.body.error).toMatchObject({ max_chars: 750_000, characters: 750_004 });
    const huge = await call(service, '/v1/detect', {
      key,
      raw: JSON.stringify({ text: 'a'.repeat(10 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(huge, 413, 'payload_too_large');
  });

  it('415 unsupported_media_type', async () => {
    const plain = await call(service, '/v1/detect', {
      key,
      raw: JSON.stringify({ text: ENGLISH_TEXT }),
      headers: { 'content-type': 'text/plain' },
    });
    expectEnvelope(plain, 415, 'unsupported_media_type');
    const none = await call(service, '/v1/detect', { key, method: 'POST' });
    expectEnvelope(none, 415, 'unsupported_media_type');
    const latin1 = await call(service, '/v1/detect', {
      key,
      raw: JSON.stringify({ text: ENGLISH_TEXT }),
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
    });
    expectEnvelope(latin1, 415, 'unsupported_media_type');
  });

  it('422 unsupported_language for text in neither English nor Turkish', async () => {
    const answer = await detect(service, key, { text: GERMAN_TEXT });
    expectEnvelope(answer, 422, 'unsupported_language');
    expect(typeof answer.body.error.detected_language).toBe('string');
  });

  it('200 with language_mismatch, never likely_ai, for a German text sent with language en; the OpenAPI document names the code', async () => {
    // The case: scored 0.82 mixed with only strict_threshold, as if an English text just under the bar.
    const answer = await detect(service, key, { text: GERMAN_TEXT, language: 'en' });
    expect(answer.status).toBe(200);
    expect(answer.body.language).toBe('en');
    expect(answer.body.warnings).toContain('language_mismatch');
    expect(answer.body.warnings).not.toContain('strict_threshold');
    expect(answer.body.verdict).not.toBe('likely_ai');
    expect(answer.body.confidence).toBe('low');
    const english = await detect(service, key, { text: ENGLISH_TEXT, language: 'en' });
    expect(english.body.warnings).not.toContain('language_mismatch');
    const openapi = await call(service, '/v1/openapi.json');
    expect(JSON.stringify(openapi.body)).toContain('`language_mismatch`');
  });

  it('200 with language_uncertain, not 422, when there is too little text to tell the language', async () => {
    // A mention and one word: the old language guess called this Indonesian and answered 422.
    const answer = await detect(service, key, { text: '@Ada test' });
    expect(answer.status).toBe(200);
    expect(answer.body.language).toBe('en');
    expect(answer.body.warnings).toEqual(expect.arrayContaining(['language_uncertain', 'short_text']));
    expect(answer.body.verdict).not.toBe('likely_ai');
    // The requested language is kept when the text cannot contradict it.
    const asTurkish = await detect(service, key, { text: '@Ada test', language: 'tr' });
    expect(asTurkish.status).toBe(200);
    expect(asTurkish.body.language).toBe('tr');
  });

  it('503 not_ready while the engine is not loaded; /readyz agrees', async () => {
    const notReady = await startTestService({ waitForEngine: false, modelPath: join(service.dir, 'no-such-model.bin') });
    try {
      const k = await notReady.newKey();
      await new Promise((r) => setTimeout(r, 100));
      const answer = await detect(notReady, k, { text: ENGLISH_TEXT });
      expectEnvelope(answer, 503, 'not_ready');
      expect(answer.headers.get('retry-after')).toBe('5');
      const ready = await call(notReady, '/readyz');
      expectEnvelope(ready, 503, 'not_ready');
      expect(ready.body.error.checks.engine).toBe('failed');
      expect((await call(notReady, '/healthz')).status).toBe(200);
    } finally {
      await notReady.stop();
    }
  });
});

describe('probes', () => {
  it('/healthz and /readyz answer 200 when ready', async () => {
    const health = await call(service, '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await call(service, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', model: service.engine.model, redis: 'disabled', keys: 'ok' });
  });
});

describe('production environment', () => {
  it('accepts live keys and refuses test keys with 403', async () => {
    const prod = await startTestService({ environment: 'production' });
    try {
      const live = await prod.newKey();
      expect(live).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
      expect((await detect(prod, live, { text: ENGLISH_TEXT })).status).toBe(200);
      const { key: test } = await createApiKey(prod.keysFile, { name: 'test', environment: 'sandbox' });
      expectEnvelope(await detect(prod, test, { text: ENGLISH_TEXT }), 403, 'wrong_environment');
    } finally {
      await prod.stop();
    }
  });
});

describe('scoring in worker threads', () => {
  it('gives the same answers as in-process scoring, including 422', async () => {
    const pooled = await startTestService({ workers: 2 });
    try {
      const k = await pooled.newKey();
      const body = { text: ENGLISH_TEXT, segments: true, mode: 'academic' };
      const [viaWorkers, inProcess] = await Promise.all([detect(pooled, k, body), detect(service, key, body)]);
      expect(viaWorkers.status).toBe(200);
      const { request_id: _a, ...a } = viaWorkers.body;
      const { request_id: _b, ...b } = inProcess.body;
      expect(a).toEqual(b);
      const answers = await Promise.all(Array.from({ length: 20 }, () => detect(pooled, k, { text: TURKISH_TEXT })));
      expect(answers.map((x) => x.status)).toEqual(new Array(20).fill(200));
      expectEnvelope(await detect(pooled, k, { text: GERMAN_TEXT }), 422, 'unsupported_language');
    } finally {
      await pooled.stop();
    }
  });
});
