/**
 * The client learns the server's rate-limit window from RateLimit-Policy, so a key with a short
 * window is paced to it instead of to the 60-second default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DetectClient } from '../../src/client/index.ts';
import { SAMPLE_TEXT, startTestService, type TestService } from './helpers.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ rateLimitMax: 10, rateLimitWindow: '5 seconds' });
});
afterAll(async () => service?.close());

describe('RateLimit-Policy', () => {
  it('30 texts through a 10-per-5-seconds key finish in under 20 s, paced to the learned window', async () => {
    const client = new DetectClient({ apiKey: service.key, baseUrl: service.url });
    try {
      const started = performance.now();
      const results = await client.detectMany(Array.from({ length: 30 }, () => ({ text: SAMPLE_TEXT })));
      const elapsedMs = performance.now() - started;
      expect(results.filter((r) => !r.ok).map((r) => r.error?.code)).toEqual([]);
      expect(client.limits()).toMatchObject({ max: 10, intervalMs: 5000 });
      // 30 requests at 10 per 5 s need at least two full windows after the first.
      expect(client.stats().rateLimitErrors).toBe(0);
      expect(elapsedMs).toBeGreaterThan(9_000);
      // Paced by the learned window, not one a second (29 s), with room for a machine at load 10.
      expect(elapsedMs, `30 texts took ${Math.round(elapsedMs)} ms`).toBeLessThan(26_000);
    } finally {
      await client.close();
    }
  });
});
