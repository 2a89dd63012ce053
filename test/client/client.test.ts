/**
 * DetectClient against the real service on loopback: results, every error class the server
 * produces, and batches.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  DetectClient,
  type DetectError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  ServerError,
  type DetectManyProgress,
} from '../../src/client/index.ts';
import { SAMPLE_TEXT, startTestService, timed, type TestService } from './helpers.ts';

const GERMAN =
  'Der Ausschuss hat den Vorschlag ausführlich geprüft und ist zu dem Ergebnis gekommen, dass der Haushalt realistisch ist. ' +
  'Mehrere Mitglieder wünschten sich jedoch einen klareren Zeitplan vor der Abstimmung im nächsten Monat.';

describe('DetectClient against the real service', () => {
  let svc: TestService;
  const clients: DetectClient[] = [];
  const client = (options: ConstructorParameters<typeof DetectClient>[0] = {}): DetectClient => {
    const c = new DetectClient({ apiKey: svc.key, baseUrl: svc.url, ...options });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    svc = await startTestService({ rateLimitMax: 1000, maxTextChars: 2000 });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await svc?.close();
  });

  it('returns a typed result with per-sentence scores that index into the text', async () => {
    const c = client();
    const result = await c.detect({ text: SAMPLE_TEXT, mode: 'academic', segments: true });
    expect(result.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(result.mode).toBe('academic');
    expect(result.language).toBe('en');
    expect(['likely_human', 'mixed', 'likely_ai']).toContain(result.verdict);
    expect(['low', 'medium', 'high']).toContain(result.confidence);
    expect(result.ai_probability).toBeGreaterThanOrEqual(0);
    expect(result.ai_probability).toBeLessThanOrEqual(1);
    expect(result.model).not.toBe('');
    expect(result.segments.length).toBeGreaterThanOrEqual(3);
    for (const segment of result.segments) {
      expect(SAMPLE_TEXT.slice(segment.start, segment.end)).toBe(segment.text);
    }
    const plain = await c.detect({ text: SAMPLE_TEXT, language: 'en' });
    expect(plain.segments).toEqual([]);
    expect(plain.request_id).not.toBe(result.request_id);
    // The same text scores the same; the engine is deterministic.
    expect(plain.ai_probability).toBe((await c.detect({ text: SAMPLE_TEXT })).ai_probability);
    expect(c.stats()).toMatchObject({ attempts: 3, succeeded: 3, failed: 0, retries: 0 });
  });

  it('adopts the key limit announced in RateLimit-Limit', async () => {
    const c = client({ limiter: { intervalMs: 60_000 } });
    expect(c.limits().max).toBeUndefined();
    await c.detect({ text: SAMPLE_TEXT });
    expect(c.limits()).toMatchObject({ max: 1000, intervalMs: 60_000, clustered: false });
  });

  it('throws AuthenticationError for an unknown, a revoked and a missing key, without retrying', async () => {
    const unknown = client({ apiKey: `sk_test_${'a'.repeat(32)}` });
    const err = await unknown.detect({ text: SAMPLE_TEXT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect((err as DetectError).requestId).toMatch(/^req_/);
    expect(unknown.stats().attempts).toBe(1);

    const revokedKey = await svc.newKey();
    await svc.revoke(revokedKey);
    const revoked = await client({ apiKey: revokedKey })
      .detect({ text: SAMPLE_TEXT })
      .catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(AuthenticationError);
    expect((revoked as Error).message).toMatch(/revoked/);

    vi.stubEnv('TEXTDETECT_API_KEY', '');
    try {
      expect(() => new DetectClient({ baseUrl: svc.url })).toThrow(AuthenticationError);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('throws PermissionError for a live key on a sandbox server', async () => {
    const live = await svc.newKey({ environment: 'production' });
    const c = client({ apiKey: live });
    const err = await c.detect({ text: SAMPLE_TEXT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionError);
    expect(err).toMatchObject({ status: 403, code: 'wrong_environment' });
    expect((err as Error).message).toMatch(/sandbox/);
    expect(c.stats().attempts).toBe(1);
  });

  it('throws InvalidRequestError naming the field for each bad input, never retried', async () => {
    const c = client();
    const cases: Array<{ request: Parameters<DetectClient['detect']>[0]; status: number; param?: string }> = [
      { request: { text: '   ' }, status: 400, param: 'text' },
      { request: { text: 'x'.repeat(2001) }, status: 413 },
      { request: { text: SAMPLE_TEXT, mode: 'poetry' as never }, status: 400, param: 'mode' },
      { request: { text: SAMPLE_TEXT, language: 'fr' as never }, status: 400, param: 'language' },
      { request: { text: GERMAN }, status: 422, param: 'language' },
    ];
    for (const { request, status, param } of cases) {
      const err = await c.detect(request).catch((e: unknown) => e);
      expect(err, JSON.stringify(request).slice(0, 60)).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).status).toBe(status);
      if (param) expect((err as InvalidRequestError).param).toBe(param);
      expect((err as Error).message.length).toBeGreaterThan(10);
    }
    expect(c.stats()).toMatchObject({ attempts: cases.length, retries: 0, failed: cases.length });

    // Caught before sending: the service only accepts UUIDs as X-Request-Id.
    const badId = await c.detect({ text: SAMPLE_TEXT }, { requestId: 'my-id' }).catch((e: unknown) => e);
    expect(badId).toMatchObject({ name: 'InvalidRequestError', code: 'invalid_request_id', param: 'requestId' });
    expect(c.stats().attempts).toBe(cases.length);
  });

  it('throws RateLimitError with retryAfterMs only once retries run out', async () => {
    const limitedKey = await svc.newKey({ rateLimitMax: 1 });
    const first = client({ apiKey: limitedKey, maxRateLimitWaitMs: 5_000 });
    await first.detect({ text: SAMPLE_TEXT });

    // A second process (here: client) with no retries left meets the server's 429.
    const c = client({ apiKey: limitedKey, maxRetries: 0 });
    const err = await c.detect({ text: SAMPLE_TEXT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((err as RateLimitError).requestId).toMatch(/^req_/);
    const wait = (err as RateLimitError).retryAfterMs;
    expect(wait).toBeGreaterThan(50_000);
    expect(wait).toBeLessThanOrEqual(60_000);
    expect(c.stats()).toMatchObject({ attempts: 1, rateLimited: 1, rateLimitErrors: 1 });

    // With retries left but a Retry-After beyond maxRateLimitWaitMs, it fails at once rather than hang.
    const impatient = client({ apiKey: limitedKey, maxRetries: 3, maxRateLimitWaitMs: 30_000 });
    const outcome = await timed(impatient.detect({ text: SAMPLE_TEXT }));
    expect(outcome.error).toBeInstanceOf(RateLimitError);
    // Waiting up to maxRateLimitWaitMs would take 30 s.
    expect(outcome.ms).toBeLessThan(15_000);
    expect(impatient.stats().attempts).toBe(1);

    // The first client saw RateLimit-Remaining: 0 and paused itself: it fails fast without sending.
    const local = await timed(first.detect({ text: SAMPLE_TEXT }));
    expect(local.error).toBeInstanceOf(RateLimitError);
    expect((local.error as RateLimitError).retryAfterMs).toBeGreaterThan(50_000);
    // Its maxRateLimitWaitMs is 5 s; no attempt was sent, so it did not wait that out and retry.
    expect(local.ms).toBeLessThan(5_000);
    expect(first.stats().attempts).toBe(1);
  });

  it('detectMany keeps input order and reports each item error without losing the others', async () => {
    const c = client();
    const items = [
      { text: SAMPLE_TEXT },
      { text: '' },
      { text: SAMPLE_TEXT, mode: 'legal' as const },
      { text: GERMAN },
      { text: `${SAMPLE_TEXT} Another sentence closes it.`, segments: true },
    ];
    const progress: DetectManyProgress[] = [];
    const results = await c.detectMany(items, { onProgress: (p) => progress.push(p) });
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true, false, true]);
    expect(results[1]?.error).toBeInstanceOf(InvalidRequestError);
    expect(results[3]?.error).toMatchObject({ status: 422, code: 'unsupported_language' });
    expect(results[2]?.response?.mode).toBe('legal');
    expect(results[4]?.response?.segments.length).toBeGreaterThan(0);
    expect(progress.map((p) => p.done)).toEqual([1, 2, 3, 4, 5]);
    expect(progress.at(-1)).toMatchObject({ total: 5, succeeded: 3, failed: 2 });
  });
});

describe('ServerError from the real service', () => {
  it('surfaces 503 not_ready after honouring the server Retry-After up to maxRateLimitWaitMs', async () => {
    // An engine that cannot load leaves the service answering 503 to every detection.
    const svc = await startTestService({ waitForEngine: false, modelPath: 'no/such/model.bin' });
    const c = new DetectClient({ apiKey: svc.key, baseUrl: svc.url, maxRetries: 1, maxRateLimitWaitMs: 300 });
    try {
      const outcome = await timed(c.detect({ text: SAMPLE_TEXT }));
      expect(outcome.error).toBeInstanceOf(ServerError);
      expect(outcome.error).toMatchObject({ status: 503, code: 'not_ready' });
      expect((outcome.error as Error).message).toMatch(/engine/);
      expect(c.stats()).toMatchObject({ attempts: 2, retries: 1 });
      expect(outcome.ms).toBeGreaterThanOrEqual(295);
    } finally {
      await c.close();
      await svc.close();
    }
  });
});
