/**
 * DetectClient.detectAuthor against the real service on loopback (through the recording proxy where
 * the test needs to see or disturb the attempts): answers, errors, retries and the rate-limit cost.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTHOR_MAX_MESSAGES,
  DetectClient,
  type DetectClientOptions,
  type DetectError,
  InvalidRequestError,
  RateLimitError,
  authorRequestCost,
} from '../../src/client/index.ts';
import { SAMPLE_TEXT, startProxy, startTestService, type RecordingProxy, type TestService } from './helpers.ts';

const MESSAGES = [
  'Does anyone know if the pool is open on Sunday mornings this month?',
  'Our team finally shipped the release after two weeks of chasing one flaky test.',
  'I left my umbrella on the 42 bus again, third time this year.',
  'The new coffee place on Elm Street does a decent flat white, worth a try.',
  'Reminder: the meeting moved to Thursday because half of us are travelling.',
  'Got the garden beds ready, tomatoes and beans go in next weekend.',
];

/** `count` messages of 500 characters each: the service charges one unit per started ten of them (5,000 characters). */
function messages(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `Message number ${i} about nothing in particular. `.repeat(12).slice(0, 500));
}

describe('DetectClient.detectAuthor', () => {
  let svc: TestService;
  let proxy: RecordingProxy;
  const clients: DetectClient[] = [];
  const client = (options: DetectClientOptions = {}): DetectClient => {
    const c = new DetectClient({ apiKey: svc.key, baseUrl: proxy.url, retryBaseMs: 50, ...options });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    svc = await startTestService({ rateLimitMax: 1000, authorMaxMessageChars: 500, authorMaxTotalChars: 50_000 });
    proxy = await startProxy(svc.url);
  });
  afterEach(() => {
    proxy.setFaults(undefined);
    proxy.records.length = 0;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await proxy?.close();
    await svc?.close();
  });

  it("returns the author's typed answer, one entry per message in order", async () => {
    const c = client();
    const input = [...MESSAGES, '', 'https://example.com/x'];
    const result = await c.detectAuthor({ messages: input, mode: 'general', language: 'en' });
    expect(result.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(result.mode).toBe('general');
    expect(result.language).toBe('en');
    expect(['likely_human', 'mixed', 'likely_ai']).toContain(result.verdict);
    expect(['low', 'medium', 'high']).toContain(result.confidence);
    expect(Array.isArray(result.warnings)).toBe(true);
    expect(result.messages.map((m) => m.index)).toEqual(input.map((_, i) => i));
    expect(result.messages[6]?.skipped).toBe('empty');
    expect(result.messages[7]?.skipped).toBe('link_only');
    expect(result.messages_used).toBe(MESSAGES.length);
    expect(result.words_used).toBeGreaterThan(50);
    // Each message's score is its own: the same as /v1/detect for that text.
    expect(result.messages[2]?.ai_probability).toBe((await c.detect({ text: MESSAGES[2]!, language: 'en' })).ai_probability);
    expect(c.stats()).toMatchObject({ attempts: 2, succeeded: 2, failed: 0 });
    expect(proxy.records.map((r) => r.status)).toEqual([200, 200]);
  });

  it('refuses what cannot be a valid request without sending it', async () => {
    const c = client();
    const bad: Array<[unknown, string, RegExp]> = [
      [{ messages: 'one text' }, 'messages', /array of 1 to 200 strings/],
      [{}, 'messages', /array of 1 to 200 strings/],
      [{ messages: [] }, 'messages', /empty/],
      [{ messages: messages(AUTHOR_MAX_MESSAGES + 1) }, 'messages', /201 messages, more than 200/],
      [{ messages: ['fine', 3] }, 'messages[1]', /Message 1 .* not a string/],
    ];
    for (const [request, param, message] of bad) {
      const err = await c.detectAuthor(request as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err).toMatchObject({ code: 'invalid_request', param });
      expect((err as Error).message).toMatch(message);
    }
    const wrongId = await c.detectAuthor({ messages: ['hi'] }, { requestId: 'nope' }).catch((e: unknown) => e);
    expect(wrongId).toMatchObject({ code: 'invalid_request_id' });
    expect(proxy.records).toHaveLength(0);
    expect(c.stats()).toMatchObject({ attempts: 0, failed: bad.length + 1 });
  });

  it("passes the server's size refusals on as InvalidRequestError, without retrying", async () => {
    const c = client();
    const long = await c.detectAuthor({ messages: ['ok', 'x'.repeat(501)] }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(InvalidRequestError);
    expect(long).toMatchObject({ status: 413, code: 'text_too_long', param: 'messages[1]' });
    expect((long as DetectError).requestId).toMatch(/^req_/);
    const total = await c.detectAuthor({ messages: Array.from({ length: 120 }, () => 'y'.repeat(450)) }).catch((e: unknown) => e);
    expect(total).toMatchObject({ status: 413, code: 'text_too_long', param: 'messages' });
    const language = await c.detectAuthor({ messages: ['hi'], language: 'de' as never }).catch((e: unknown) => e);
    expect(language).toMatchObject({ status: 400, code: 'invalid_request', param: 'language' });
    expect(proxy.records).toHaveLength(3);
  });

  it('retries a 503 with the same X-Request-Id and then answers', async () => {
    const c = client();
    proxy.setFaults((n) => (n === 0 ? { kind: 'status', status: 503, headers: { 'retry-after': '0' } } : undefined));
    const result = await c.detectAuthor({ messages: MESSAGES });
    expect(result.messages).toHaveLength(MESSAGES.length);
    expect(proxy.records.map((r) => r.status)).toEqual([503, 200]);
    expect(proxy.records[0]?.requestId).toBe(proxy.records[1]?.requestId);
    expect(c.stats()).toMatchObject({ attempts: 2, retries: 1, succeeded: 1 });
  });

  for (const shared of [false, true]) {
    it(`paces an author call as the units it costs: the reservoir and the spacing count every unit${shared ? ' (budget shared through Redis)' : ''}`, async () => {
      // 10 units per 1.5 s, one unit every 150 ms. Three calls of 40 messages cost 4 units each: the
      // second may go once the first's 4 units are paced out, the third only after the reservoir
      // refills (4 + 4 + 4 > 10). Counted as one unit each, all three would leave within 300 ms.
      expect(authorRequestCost(messages(40))).toBe(4);
      const c = client({
        limiter: { max: 10, intervalMs: 1500, id: `textdetect-test:${randomUUID()}` },
        maxRetries: 0,
        ...(shared ? { redis: process.env.REDIS_URL } : {}),
      });
      expect(c.limits().clustered).toBe(shared);
      const started = Date.now();
      const results = await Promise.all([0, 1, 2].map(() => c.detectAuthor({ messages: messages(40) })));
      expect(results.map((r) => r.messages.length)).toEqual([40, 40, 40]);
      const sent = proxy.records.map((r) => r.at - started);
      expect(sent).toHaveLength(3);
      expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(4 * 150 - 50);
      expect(sent[2]! - sent[0]!).toBeGreaterThanOrEqual(1500 - 150);
    });
  }

  it('paces single texts after an author call by its units too', async () => {
    const c = client({ limiter: { max: 20, intervalMs: 2000 }, maxRetries: 0 });
    const started = Date.now();
    await Promise.all([c.detectAuthor({ messages: messages(50) }), c.detect({ text: SAMPLE_TEXT })]);
    const sent = proxy.records.map((r) => r.at - started);
    // 5 units at 100 ms each before the next call may leave.
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(5 * 100 - 50);
  });

  it('never waits for more units than the whole budget: the server refuses such a call at once', async () => {
    const key = await svc.newKey({ rateLimitMax: 3 });
    const c = client({ apiKey: key, limiter: { max: 3, intervalMs: 60_000 } });
    const started = Date.now();
    const err = await c.detectAuthor({ messages: messages(40) }).catch((e: unknown) => e);
    // At once: half the 60 s window it would otherwise wait.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', param: 'messages' });
    expect((err as Error).message).toMatch(/costs 4 units .* at most 15000 characters/);
  });

  it('surfaces a refusal for the cost as RateLimitError when the budget cannot cover it', async () => {
    const key = await svc.newKey({ rateLimitMax: 6 });
    const c = client({ apiKey: key, limiter: false, maxRetries: 0 });
    await c.detectAuthor({ messages: messages(50) });
    const err = await c.detectAuthor({ messages: messages(20) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((err as RateLimitError).retryAfterMs).toBeGreaterThan(0);
    expect((err as Error).message).toMatch(/costs 2 units/);
  });
});
