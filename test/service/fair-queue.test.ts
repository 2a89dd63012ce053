/** The order in which the fair queue hands calls to the engine (src/service/fair-queue.ts). */
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/service/fair-queue.ts';

/** A job that records when it started and finishes when `release` is called. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => {
    release = r;
  });
  return { done, release };
}

describe('FairQueue', () => {
  it("gives a freed place to another key's call before the rest of one key's burst", async () => {
    const queue = new FairQueue(0);
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const job = (name: string) => () => {
      started.push(name);
      const g = gate();
      gates.set(name, g);
      return g.done;
    };
    const all = [1, 2, 3, 4].map((i) => queue.run('heavy', job(`heavy${i}`)));
    all.push(queue.run('light', job('light1')));
    expect(started).toEqual(['heavy1']);
    expect(queue.waiting).toBe(4);
    for (let step = 0; step < 5; step++) {
      const last = started[started.length - 1]!;
      gates.get(last)!.release();
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(started).toEqual(['heavy1', 'light1', 'heavy2', 'heavy3', 'heavy4']);
  });

  it('with two keys active, keeps heavy calls off one of two workers; a key alone uses both', async () => {
    const alone = new FairQueue(2);
    const running = { count: 0 };
    const pending: Array<() => void> = [];
    const heavy = () =>
      new Promise<void>((resolve) => {
        running.count++;
        pending.push(() => {
          running.count--;
          resolve();
        });
      });
    const a = [1, 2, 3].map(() => alone.run('a', heavy, 10));
    // Alone, a key's heavy calls fill both workers and queue one deep at each.
    expect(running.count).toBe(3);
    for (const finish of pending.splice(0)) finish();
    await Promise.all(a);

    const shared = new FairQueue(2);
    await shared.run('b', async () => undefined);
    running.count = 0;
    const b = [1, 2, 3].map(() => shared.run('a', heavy, 10));
    // Another key called within the minute: one worker stays free of heavy calls.
    expect(running.count).toBe(1);
    let light = false;
    await shared.run('b', async () => {
      light = true;
    });
    expect(light).toBe(true);
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(b);
  });
});
