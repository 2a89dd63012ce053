import { Ajv2020 } from 'ajv/dist/2020.js';
import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORIGINS } from '../../src/contract.ts';
import type { AuthorDetectionResult, DetectionResult } from '../../src/detector/index.ts';
import { originOf } from '../../src/detector/origin.ts';
import { detectAnswer } from '../../src/service/routes/common.ts';
import { detectAuthorResponseSchema, detectResponseSchema } from '../../src/service/schemas.ts';
import { call, detect, startTestService, type TestService } from './helpers.ts';

const HUMAN =
  'ok so i finally tried that ramen place on 5th that everyone keeps talking about. honestly the broth was kinda salty for me but my friend loved it. ' +
  'we waited like 40 min to get a table which was annoying, and parking was a nightmare. probably wont go back unless someone drags me there lol.';
const GENERATED =
  'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
  'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
  'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
  'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';

let service: TestService;
let key: string;
let validate: {
  detect: (body: unknown) => boolean;
  author: (body: unknown) => boolean;
  file: (body: unknown) => boolean;
  errors: () => string;
};

beforeAll(async () => {
  service = await startTestService();
  key = await service.newKey();
  const doc = (await call(service, '/v1/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false });
  for (const [name, schema] of Object.entries<object>(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
  const detectSchema = ajv.compile(doc.components.schemas.DetectResponse);
  const authorSchema = ajv.compile(doc.components.schemas.DetectAuthorResponse);
  const fileSchema = ajv.compile(doc.components.schemas.DetectFileResponse);
  validate = {
    detect: (body) => detectSchema(body),
    author: (body) => authorSchema(body),
    file: (body) => fileSchema(body),
    errors: () => JSON.stringify([detectSchema.errors, authorSchema.errors, fileSchema.errors]),
  };
});
afterAll(async () => service?.stop());

describe('origin and polished_probability in the answers', () => {
  it('headlines a post with a generated paragraph as partly AI-written, only with sentence scores', async () => {
    const text = `${HUMAN}\n\n${GENERATED}`;
    const withSegments = await detect(service, key, { text, segments: true });
    expect(withSegments.status).toBe(200);
    expect(validate.detect(withSegments.body), validate.errors()).toBe(true);
    expect(withSegments.body.composition).toBe('partly_ai');
    expect(withSegments.body.origin).toBe('partly_ai');
    expect(withSegments.body.origin).toBe(originOf(withSegments.body));
    expect(withSegments.body.polished_probability === null || typeof withSegments.body.polished_probability === 'number').toBe(true);
    const plain = await detect(service, key, { text });
    expect(validate.detect(plain.body), validate.errors()).toBe(true);
    expect(plain.body.composition).toBeNull();
    expect(plain.body.origin).not.toBe('partly_ai');
    expect(plain.body.origin).toBe(originOf(plain.body));
  });

  it('headlines a generated paragraph as AI-written or polished, and a short line as uncertain', async () => {
    const ai = await detect(service, key, { text: GENERATED, segments: true });
    expect(ai.body.verdict).toBe('likely_ai');
    expect(['ai_written', 'ai_polished']).toContain(ai.body.origin);
    expect(ai.body.origin).toBe(originOf(ai.body));
    const short = await detect(service, key, { text: 'see you all at eight then' });
    expect(short.body.warnings).toContain('too_little_evidence');
    expect(short.body.origin).toBe('uncertain');
    expect(short.body.polished_probability).toBeNull();
    expect(validate.detect(short.body), validate.errors()).toBe(true);
  });

  it('gives authors and files the headline too', async () => {
    const author = await call(service, '/v1/detect/author', { key, body: { messages: [GENERATED, HUMAN] } });
    expect(author.status).toBe(200);
    expect(validate.author(author.body), validate.errors()).toBe(true);
    expect(ORIGINS).toContain(author.body.origin);
    expect(author.body.origin).not.toBe('partly_ai');
    expect(author.body.origin).toBe(originOf(author.body));
    const form = new FormData();
    form.append('file', new Blob([`${HUMAN}\n\n${GENERATED}`]), 'post.txt');
    form.append('segments', 'true');
    const response = await fetch(`${service.url}/v1/detect/file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const file = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(200);
    expect(validate.file(file), validate.errors()).toBe(true);
    expect(file.origin).toBe('partly_ai');
  });

  // The engine's polished_probability can be any number in 0..1: the answer the routes build, and
  // the serialiser the routes use, carry it as it is, and the document accepts it.
  it('carries a polished_probability number through the answer, its serialiser and the schema', () => {
    const result: DetectionResult = {
      ai_probability: 0.97,
      mode: 'general',
      language: 'en',
      verdict: 'likely_ai',
      confidence: 'high',
      segments: [],
      warnings: [],
      model: 'td1-test',
      generated_spans: [],
      generated_share: null,
      composition: null,
      polished_probability: 0.8125,
      origin: 'uncertain',
      windows: [],
    };
    result.origin = originOf(result);
    expect(result.origin).toBe('ai_polished');
    const body = detectAnswer(result, 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O');
    const sent = JSON.parse(fastJson(detectResponseSchema as never)(body));
    expect(sent).toMatchObject({ origin: 'ai_polished', polished_probability: 0.8125 });
    expect(validate.detect(sent), validate.errors()).toBe(true);
    const written = JSON.parse(fastJson(detectResponseSchema as never)({ ...body, polished_probability: 0.12, origin: 'ai_written' }));
    expect(written).toMatchObject({ origin: 'ai_written', polished_probability: 0.12 });
    expect(validate.detect(written), validate.errors()).toBe(true);
    expect(validate.detect({ ...body, origin: 'ai_assisted' })).toBe(false);
    expect(validate.detect({ ...body, polished_probability: 1.5 })).toBe(false);

    const author: Omit<AuthorDetectionResult, 'author_model'> & { request_id: string } = {
      ai_probability: 0.99,
      mode: 'general',
      language: 'en',
      verdict: 'likely_ai',
      confidence: 'high',
      warnings: [],
      messages_used: 12,
      words_used: 600,
      evidence_needed: null,
      messages: [{ index: 0, words: 600, ai_probability: 0.99, skipped: null }],
      model: 'td1-test',
      request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O',
      polished_probability: 0.64,
      origin: 'ai_polished',
    };
    const authorSent = JSON.parse(fastJson(detectAuthorResponseSchema as never)(author));
    expect(authorSent).toMatchObject({ origin: 'ai_polished', polished_probability: 0.64 });
    expect(validate.author(authorSent), validate.errors()).toBe(true);
  });
});
