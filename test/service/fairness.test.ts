/**
 * Issue 25, item 1: one key's burst of the most expensive calls it is allowed must not stall
 * another key. Key A sends maximal author calls at once (10 messages of 5,000 characters of
 * letters with combining marks, the shape that made language identification slow); key B then
 * sends single texts one after the other and must be answered about as fast as without the burst.
 * Before the fix B waited behind A's whole queue (the issue measured p50 6.2 s, max 28.7 s with 60
 * calls); `npm run bench` measures the same with 60 calls and prints B's p99 (target 250 ms).
 */
import { describe, expect, it } from 'vitest';
import { ENGLISH_TEXT, call, detect, startTestService } from './helpers.ts';

const BURST = 24;
const MAXIMAL = { messages: Array.from({ length: 10 }, () => ('z' + '\u0336\u0337\u0338'.repeat(3)).repeat(500)) };
/** Loose for a loaded 2-core CI machine; without fairness B waits seconds. */
const BOUND_MS = 1500;

describe('fairness between keys', () => {
  it(`another key's /v1/detect stays fast while one key has ${BURST} maximal author calls in flight`, async () => {
    const service = await startTestService({ workers: 2, rateLimitMax: 100_000, shutdownTimeoutMs: 2000 });
    try {
      const heavy = await service.newKey({ name: 'heavy' });
      const light = await service.newKey({ name: 'light' });
      // Warm both workers and the light key's path.
      await Promise.all([detect(service, light, { text: ENGLISH_TEXT }), detect(service, light, { text: ENGLISH_TEXT })]);

      let heavyDone = 0;
      const burst = Array.from({ length: BURST }, () =>
        call(service, '/v1/detect/author', { key: heavy, body: MAXIMAL }).then(
          (answer) => {
            heavyDone++;
            return answer.status;
          },
          // Cut off when the service stops after a failed check.
          () => 0,
        ),
      );
      // Let the burst arrive and queue.
      await new Promise((r) => setTimeout(r, 300));
      const latencies: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const answer = await detect(service, light, { text: ENGLISH_TEXT });
        latencies.push(performance.now() - started);
        expect(answer.status).toBe(200);
        if (performance.now() - started > 4 * BOUND_MS) break;
      }
      const stillRunning = BURST - heavyDone;
      const sorted = [...latencies].sort((a, b) => a - b);
      const summary = `light key latencies (ms): ${sorted.map((l) => Math.round(l)).join(', ')}; heavy calls still running after them: ${stillRunning} of ${BURST}`;
      console.log(summary);
      // The measurement only means something while the burst is still being worked on.
      expect(stillRunning, summary).toBeGreaterThan(0);
      expect(sorted[sorted.length - 1], summary).toBeLessThan(BOUND_MS);
      expect((await Promise.all(burst)).every((status) => status === 200)).toBe(true);
    } finally {
      await service.stop();
    }
  }, 180_000);
});
