import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGLISH_TEXT, call, detect, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let service: TestService;
let key: string;
let doc: any;

beforeAll(async () => {
  service = await startTestService({ maxTextChars: 1234, authorMaxMessageChars: 321, authorMaxTotalChars: 999 });
  key = await service.newKey();
  const answer = await call(service, '/v1/openapi.json');
  expect(answer.status).toBe(200);
  doc = answer.body;
});
afterAll(async () => service?.stop());

async function uploadText(text: string, field = 'file'): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append(field, new Blob([text]), 'essay.txt');
  const response = await fetch(`${service.url}/v1/detect/file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: response.status, body: await response.json() };
}

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents exactly the routes the server serves', async () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/healthz',
      '/readyz',
      '/v1/detect',
      '/v1/detect/author',
      '/v1/detect/file',
      '/v1/openapi.json',
    ]);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of Object.keys(item)) {
        const body = path === '/v1/detect/author' ? { messages: [ENGLISH_TEXT.slice(0, 300)] } : { text: ENGLISH_TEXT };
        const answer =
          path === '/v1/detect/file'
            ? await uploadText(ENGLISH_TEXT)
            : await call(service, path, method === 'post' ? { method: 'POST', key, body } : { method: method.toUpperCase() });
        expect(answer.status, `${method} ${path}`).toBeLessThan(300);
        expect(Object.keys(item[method].responses), `${method} ${path}`).toContain(String(answer.status));
      }
      // Methods it does not document are refused with 405, not served.
      const other = path.startsWith('/v1/detect') ? 'GET' : 'POST';
      expect((await call(service, path, { method: other, key })).status).toBe(405);
    }
  });

  it("carries the schemas that validate requests (with this server's MAX_TEXT_CHARS)", async () => {
    const request = doc.components.schemas.DetectRequest;
    // The limit counts characters as they are judged (a whitespace run as one), which JSON Schema
    // cannot say: the description states it and the server enforces it.
    expect(request.properties.text.maxLength).toBeUndefined();
    expect(request.properties.text.description).toContain('at most 1234 characters');
    expect(request.properties.text.description).toContain('every run of whitespace counted as one');
    expect(request.additionalProperties).toBe(false);
    expect(request.properties.mode.enum).toEqual(['academic', 'financial', 'legal', 'general']);
    const ajv = new Ajv2020({ strict: false });
    const validRequest = ajv.compile(request);
    // What the schema accepts, the server accepts, and what it rejects the server rejects with 400/413.
    const samples: Array<[unknown, boolean]> = [
      [{ text: ENGLISH_TEXT }, true],
      [{ text: ENGLISH_TEXT, mode: 'legal', language: 'en', segments: true }, true],
      [{ text: ENGLISH_TEXT, extra: 1 }, false],
      [{ text: 42 }, false],
      [{ text: '   ' }, false],
      [{ mode: 'general' }, false],
    ];
    for (const [body, valid] of samples) {
      expect(validRequest(body)).toBe(valid);
      const answer = await detect(service, key, body);
      if (valid) expect(answer.status).toBe(200);
      else expect([400, 413]).toContain(answer.status);
    }
    expect((await detect(service, key, { text: 'x'.repeat(1235) })).status).toBe(413);
    expect((await detect(service, key, { text: `${' '.repeat(5000)}${'x'.repeat(1234)}${'\n'.repeat(5000)}` })).status).toBe(200);
  });

  it("carries the author request's schema with this server's limits, and the cost", async () => {
    const request = doc.components.schemas.DetectAuthorRequest;
    expect(request.additionalProperties).toBe(false);
    expect(request.required).toEqual(['messages']);
    expect(request.properties.messages).toMatchObject({ minItems: 1, maxItems: 200, items: { type: 'string' } });
    expect(request.properties.messages.items.description).toContain('at most 321 characters');
    expect(request.properties.messages.description).toContain('at most 999 characters together');
    const operation = doc.paths['/v1/detect/author'].post;
    expect(operation.description).toContain('Cost: ceil(characters of all messages / 5000) units');
    expect(operation.description).toContain('321 characters per message and 999 for all messages together');
    expect(doc.info.description).toContain('cost one unit per started 5000 characters of submitted text');
    const ajv = new Ajv2020({ strict: false });
    const validRequest = ajv.compile(request);
    const samples: Array<[unknown, boolean]> = [
      [{ messages: ['one', 'two'] }, true],
      [{ messages: ['one'], mode: 'legal', language: 'en' }, true],
      [{ messages: [] }, false],
      [{ messages: 'one' }, false],
      [{ messages: ['one', 2] }, false],
      [{ messages: Array.from({ length: 201 }, () => 'x') }, false],
      [{ messages: ['one'], segments: true }, false],
    ];
    for (const [body, valid] of samples) {
      expect(validRequest(body), JSON.stringify(body).slice(0, 80)).toBe(valid);
      const answer = await call(service, '/v1/detect/author', { key, body });
      if (valid) expect(answer.status).toBe(200);
      else expect([400, 413]).toContain(answer.status);
    }
    // A message's limit counts characters as judged, as the description says; the server enforces it.
    const over = await call(service, '/v1/detect/author', { key, body: { messages: ['x'.repeat(322)] } });
    expect(over.status).toBe(413);
    expect(over.body.error.param).toBe('messages[0]');
    const spaced = await call(service, '/v1/detect/author', {
      key,
      body: { messages: [`${'x'.repeat(100)}${' '.repeat(1000)}${'y'.repeat(100)}`] },
    });
    expect(spaced.status).toBe(200);
  });

  it('describes the answers the server actually sends', async () => {
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries<object>(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    const response = ajv.compile(doc.components.schemas.DetectResponse);
    const error = ajv.compile(doc.components.schemas.Error);
    const ok = await detect(service, key, { text: ENGLISH_TEXT, segments: true });
    expect(response(ok.body), JSON.stringify(response.errors)).toBe(true);
    const authorResponse = ajv.compile(doc.components.schemas.DetectAuthorResponse);
    const few = await call(service, '/v1/detect/author', { key, body: { messages: ['', 'https://example.com', 'Short one.'] } });
    expect(few.body.evidence_needed).not.toBeNull();
    expect(authorResponse(few.body), JSON.stringify(authorResponse.errors)).toBe(true);
    const many = Array.from({ length: 12 }, (_, i) => `${ENGLISH_TEXT.slice(i * 20, i * 20 + 70)} ${i}`);
    const enough = await call(service, '/v1/detect/author', { key, body: { messages: many } });
    expect(enough.body.evidence_needed).toBeNull();
    expect(authorResponse(enough.body), JSON.stringify(authorResponse.errors)).toBe(true);
    for (const bad of [
      await detect(service, key, { text: 1 }),
      await call(service, '/v1/detect', { body: { text: ENGLISH_TEXT } }),
      await call(service, '/nowhere'),
      await call(service, '/v1/detect', { key, raw: 'not json', headers: { 'content-type': 'application/json' } }),
      await call(service, '/v1/detect/author', { key, body: { messages: [1] } }),
      await call(service, '/v1/detect/author', { key, body: { messages: ['x'.repeat(322)] } }),
    ]) {
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(error(bad.body), JSON.stringify(error.errors)).toBe(true);
    }
    const fileResponse = ajv.compile(doc.components.schemas.DetectFileResponse);
    const fileOk = await uploadText(ENGLISH_TEXT);
    expect(fileOk.body.file.type).toBe('text');
    expect(fileResponse(fileOk.body), JSON.stringify(fileResponse.errors)).toBe(true);
    for (const bad of [await uploadText('\u0000\u0001binary'), await uploadText(ENGLISH_TEXT, 'document')]) {
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(error(bad.body), JSON.stringify(error.errors)).toBe(true);
    }
    const fileOperation = doc.paths['/v1/detect/file'].post;
    expect(Object.keys(fileOperation.requestBody.content)).toEqual(['multipart/form-data']);
    expect(fileOperation.description).toContain("one unit of the key's rate limit per started 5000 characters of extracted text");
    const ready = ajv.compile(doc.components.schemas.Ready);
    expect(ready((await call(service, '/readyz')).body)).toBe(true);
  });
});
