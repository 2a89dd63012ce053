/**
 * A member check costs the service one unit per started ten messages; the bots' queue counts the
 * same weight against the key's budget, and never refuses to start a job heavier than its
 * concurrency or budget (Bottleneck would never run it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DetectionQueue } from '../../adapters/chat/queue.ts';

let queue: DetectionQueue | undefined;

afterEach(async () => {
  await queue?.close();
  queue = undefined;
});

describe('weighted calls', () => {
  it('counts a call’s weight against the budget', async () => {
    queue = new DetectionQueue({ id: `weight-${Date.now()}`, maxConcurrent: 10, rate: { max: 10, intervalMs: 1500 }, maxWaitMs: 10_000 });
    const started: number[] = [];
    const t0 = Date.now();
    const job = async (): Promise<void> => {
      started.push(Date.now() - t0);
    };
    // 6 + 4 units spend the window's 10; the next call waits for the budget to refill.
    await Promise.all([queue.run(job, { weight: 6 }), queue.run(job, { weight: 4 })]);
    await queue.run(job, { weight: 1 });
    expect(started[2]).toBeGreaterThanOrEqual(1_000);
  });

  it('takes a cost known only from the answer (a document’s length) from the budget after the call', async () => {
    queue = new DetectionQueue({ id: `charge-${Date.now()}`, maxConcurrent: 10, rate: { max: 10, intervalMs: 1500 }, maxWaitMs: 10_000 });
    const started: number[] = [];
    const t0 = Date.now();
    const job = async (): Promise<void> => {
      started.push(Date.now() - t0);
    };
    // One unit to start; the answer says the file cost 10, so 9 more are taken: the window is spent.
    await queue.run(job);
    await queue.charge(9);
    await queue.run(job);
    expect(started[1]).toBeGreaterThanOrEqual(1_000);
  });

  it('runs a call heavier than the concurrency or the budget instead of holding it forever', async () => {
    queue = new DetectionQueue({ id: `heavy-${Date.now()}`, maxConcurrent: 3, rate: { max: 5, intervalMs: 1000 }, maxWaitMs: 5_000 });
    const { value } = await queue.run(async () => 'done', { weight: 20 });
    expect(value).toBe('done');
  });
});
