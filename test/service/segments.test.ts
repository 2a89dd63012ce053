import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEGMENTS, MIN_SEGMENT_WORDS } from '../../src/detector/segments.ts';
import { call, detect, ENGLISH_TEXT, startTestService, type TestService } from './helpers.ts';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService();
  key = await service.newKey();
});
afterAll(async () => {
  await service?.stop();
});

const GENERATED =
  'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
  'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
  'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
  'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';

describe('POST /v1/detect with segments', () => {
  it('keeps the answer bounded for a text with a line break after every character', async () => {
    let text = '';
    for (let i = 0; text.length < 49_990; i++) text += `${'abcdefghijklmnopqrstuvwxyz'[i % 26]}\n`;
    const answer = await detect(service, key, { text, language: 'en', segments: true });
    expect(answer.status).toBe(200);
    const bytes = Buffer.byteLength(JSON.stringify(answer.body));
    // Before the cap: 25,000 one-letter segments and a 1.5 MB answer. Now at most MAX_SEGMENTS per
    // window (25,000 one-letter words are judged in windows of about 800), each of at least
    // MIN_SEGMENT_WORDS words, and the answer is the text itself (with every line break escaped)
    // plus a bounded overhead per segment and window.
    const windows = Math.max(1, answer.body.windows.length);
    expect(answer.body.segments.length).toBeLessThanOrEqual(MAX_SEGMENTS * windows);
    expect(answer.body.segments.length).toBeLessThanOrEqual(25_000 / MIN_SEGMENT_WORDS);
    expect(bytes).toBeLessThan(2 * text.length + answer.body.segments.length * 120 + windows * 200);
    for (const s of answer.body.segments) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it('answers the span fields with each span’s confidence, and the OpenAPI document describes them', async () => {
    const text = `${ENGLISH_TEXT}\n\n${GENERATED}`;
    const answer = await detect(service, key, { text, segments: true });
    expect(answer.status).toBe(200);
    expect(['human', 'ai', 'partly_ai', 'uncertain']).toContain(answer.body.composition);
    expect(answer.body.generated_share).toBeGreaterThanOrEqual(0);
    expect(answer.body.generated_spans.length).toBeGreaterThan(0);
    for (const span of answer.body.generated_spans) {
      expect(Object.keys(span).sort()).toEqual(['ai_probability', 'confidence', 'end', 'start']);
      expect(['low', 'medium', 'high']).toContain(span.confidence);
      // Never the opening sentence.
      expect(span.start).toBeGreaterThan(ENGLISH_TEXT.indexOf('. ') + 1);
      // A span the model is sure of reaches the end of the generated paragraph; the sentences read
      // with their neighbours can pull the human sentences just before the change into it. (With the
      // v3 models one human sentence of the minutes, 0.52 on its own, also makes a span of `low`
      // confidence of its own.)
      if (span.confidence !== 'low') expect(span.end).toBe(text.length);
    }
    expect(answer.body.generated_spans.at(-1).end).toBe(text.length);
    // The v4 models (td1-cfc9afcbf95f) give the last span 0.9935 with `medium`: it takes in the two
    // human sentences before the change, and that length's likely_ai threshold is stricter than
    // 0.9935 (the generated paragraph alone is likely_ai at 0.9951).
    expect(answer.body.generated_spans.at(-1).confidence).not.toBe('low');
    expect(answer.body.generated_spans.at(-1).ai_probability).toBeGreaterThan(0.95);
    const openapi = await call(service, '/v1/openapi.json');
    const spec = JSON.stringify(openapi.body);
    expect(spec).toContain('"confidence":{"type":"string","enum":["low","medium","high"]');
  });
});
