/**
 * Issue 25, item 2: a call's units are checked and charged in one step, so concurrent calls of one
 * key pass as long as their units fit, no more and no fewer, with the counters in memory, in Redis,
 * and in the per-instance fallback while Redis is unreachable.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/redis.ts';
import { call, detect, startTestService } from './helpers.ts';
import type { Answer } from './helpers.ts';

const SHORT = 'A short text is enough to exercise the limiter, even if its score means little.';
/** 100 messages of 500 characters: 50,000 characters, 10 units (and 10 under the old rule of one per ten messages). */
const TEN_UNITS = Array.from({ length: 100 }, (_, i) =>
  `Message ${String(i).padStart(3, '0')} of a long thread about the bus timetable and the weather this week. `.repeat(6).slice(0, 500),
);

const backends = {
  memory: async () => ({}),
  redis: async () => ({ redisUrl: process.env.REDIS_URL, redisKeyPrefix: `textdetect-test:${randomBytes(6).toString('hex')}:` }),
  // The breaker's fallback: Redis never answers, so every charge is made in this process.
  'redis unreachable': async () => ({ redisUrl: `redis://127.0.0.1:${await freePort()}`, redisTimeoutMs: 100 }),
};

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort();

describe('charging is atomic', () => {
  for (const [backend, options] of Object.entries(backends)) {
    it(`65 concurrent /v1/detect calls on a fresh 60-per-minute key: 60 pass, 5 are refused (${backend})`, async () => {
      // A key the server has not seen yet (the case): the calls that find it unknown all wait
      // for one re-read of the key file, then go on together.
      const service = await startTestService({
        rateLimitMax: 60,
        rateLimitWindow: '1 minute',
        apiKeysRefreshMs: 60_000,
        ...(await options()),
      });
      try {
        // Open the connections first, so the 65 calls arrive together.
        await Promise.all(Array.from({ length: 65 }, () => call(service, '/healthz')));
        const key = await service.newKey();
        const answers = await Promise.all(Array.from({ length: 65 }, () => detect(service, key, { text: SHORT })));
        expect(statuses(answers).filter((s) => s === 200)).toHaveLength(60);
        expect(statuses(answers).filter((s) => s === 429)).toHaveLength(5);
      } finally {
        await service.stop();
      }
    });

    it(`4 concurrent calls of 10 units on a fresh 25-per-minute key: the 2 that fit pass, the others cost one unit each (${backend})`, async () => {
      const service = await startTestService({ rateLimitMax: 25, rateLimitWindow: '1 minute', ...(await options()) });
      try {
        const key = await service.newKey();
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => call(service, '/v1/detect/author', { key, body: { messages: TEN_UNITS } })),
        );
        // Every call pays one unit on arrival; 2 × 10 + 2 refused × 1 = 22 of 25. A third would need 9 more.
        expect(statuses(answers)).toEqual([200, 200, 429, 429]);
        for (const refused of answers.filter((a) => a.status === 429)) expect(refused.body.error.cost_units).toBe(10);
        // What is left is exactly what the docs say: 25 − 22 = 3, then this call's unit.
        const next = await detect(service, key, { text: SHORT });
        expect(next.status).toBe(200);
        expect(next.headers.get('ratelimit-remaining')).toBe('2');
      } finally {
        await service.stop();
      }
    }, 120_000);
  }
});

describe("a call costing more than the key's whole budget", () => {
  it('is refused with 400 naming the field its cost comes from (text, messages)', async () => {
    const service = await startTestService({ rateLimitMax: 5, rateLimitWindow: '1 minute' });
    try {
      const key = await service.newKey();
      // 30,000 characters: 6 units, over the 5 the key has in a whole window.
      const text = await detect(service, key, { text: TEN_UNITS.join(' ').slice(0, 30_000) });
      expect(text.status).toBe(400);
      expect(text.body.error).toMatchObject({ code: 'invalid_request', param: 'text', cost_units: 6 });
      const author = await call(service, '/v1/detect/author', { key, body: { messages: TEN_UNITS } });
      expect(author.status).toBe(400);
      expect(author.body.error).toMatchObject({ code: 'invalid_request', param: 'messages', cost_units: 10 });
    } finally {
      await service.stop();
    }
  });
});
