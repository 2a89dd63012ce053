/**
 * Who gets a document reader, and who is refused (src/service/file-queue.ts), with readers whose
 * time the test sets: each file takes as long as its label says, on a fake clock. What is asserted
 * is order and counts, and that every 503's sentence says what happened to that file.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ExtractedDocument } from '../../src/documents/index.ts';
import type { ApiError } from '../../src/service/errors.ts';
import { FileQueue, type Readers } from '../../src/service/file-queue.ts';

const LIMIT_MS = 10_000;

/** Readers that take `durationOf(label)` ms (fake time) per file, and log which file started when. */
class TimedReaders implements Readers {
  readonly started: Array<{ label: string; at: number }> = [];
  active = 0;
  mostActive = 0;
  constructor(
    readonly workers: number,
    readonly durationOf: (label: string) => number,
  ) {}

  read(bytes: Uint8Array): Promise<ExtractedDocument> {
    const label = Buffer.from(bytes).toString();
    this.started.push({ label, at: performance.now() });
    this.active++;
    this.mostActive = Math.max(this.mostActive, this.active);
    return new Promise((resolve) =>
      setTimeout(() => {
        this.active--;
        resolve({ type: 'text', pages: null, pageStarts: null, text: label });
      }, this.durationOf(label)),
    );
  }
}

interface Outcome {
  label: string;
  owner: string;
  sent: number;
  /** Files the readers had started when it was sent. */
  startedBefore: number;
  answered: number;
  status: number;
  message?: string;
  retryAfter?: number;
}

/** Sends one file and records what became of it. */
async function send(queue: FileQueue, owner: string, label: string, outcomes: Outcome[], readers?: TimedReaders): Promise<Outcome> {
  const sent = performance.now();
  const startedBefore = readers?.started.length ?? 0;
  let outcome: Outcome;
  try {
    await queue.read(owner, Buffer.from(label));
    outcome = { label, owner, sent, startedBefore, answered: performance.now(), status: 200 };
  } catch (err) {
    const error = err as ApiError;
    outcome = { label, owner, sent, startedBefore, answered: performance.now(), status: error.statusCode, message: error.message };
    if (error.options.retryAfter !== undefined) outcome.retryAfter = error.options.retryAfter;
  }
  outcomes.push(outcome);
  return outcome;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Moves the fake clock on in small steps until `done()`. */
async function runUntil(done: () => boolean): Promise<void> {
  for (let step = 0; !done(); step++) {
    if (step > 20_000) throw new Error('the simulation did not finish');
    await vi.advanceTimersByTimeAsync(50);
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe.each([1, 2])('FileQueue with %i reader(s), three keys flooding it with 4 s files', (workers) => {
  it('serves the fourth key’s small files at the next free reader, every time; the 503s go to the flooding keys', async () => {
    const readers = new TimedReaders(workers, (label) => (label.startsWith('D') ? 100 : 4000));
    const queue = new FileQueue(readers, LIMIT_MS);
    const outcomes: Outcome[] = [];
    let flooding = true;
    let sentByFlooders = 0;
    // Each flooding key keeps its 2 files in the queue: a file answered or refused is sent again
    // (after 200 ms when refused, as a client honouring no Retry-After would).
    const flood = async (owner: string): Promise<void> => {
      while (flooding) {
        const outcome = await send(queue, owner, `${owner}${++sentByFlooders}`, outcomes);
        if (outcome.status !== 200) await sleep(200);
      }
    };
    const flooders = ['A', 'B', 'C'].flatMap((owner) => [flood(owner), flood(owner)]);
    // The flood runs alone for a minute: the readers have a history, the flooders used them.
    await vi.advanceTimersByTimeAsync(60_000);
    // The fourth key: one small file, then another a second after the answer, 20 times.
    let small = 0;
    const fourth = (async () => {
      for (let i = 1; i <= 20; i++) {
        await send(queue, 'D', `D${i}`, outcomes, readers);
        small++;
        await sleep(1000);
      }
    })();
    await runUntil(() => small === 20);
    flooding = false;
    await runUntil(() => queue.waiting === 0 && queue.reading === 0);
    await Promise.all([fourth, ...flooders]);

    const mine = outcomes.filter((outcome) => outcome.owner === 'D');
    expect(mine.map((outcome) => outcome.status)).toEqual(Array(20).fill(200));
    for (const outcome of mine) {
      // The first file started after it arrived is its own: no flooding key's file went first.
      expect(readers.started[outcome.startedBefore]?.label).toBe(outcome.label);
      // It waited for one 4 s file at most, then was read in 100 ms: answered within the limit.
      expect(outcome.answered - outcome.sent).toBeLessThanOrEqual(4000 + 100);
    }
    const refused = outcomes.filter((outcome) => outcome.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((outcome) => ['A', 'B', 'C'].includes(outcome.owner) && outcome.status === 503)).toBe(true);
    // Every 503 says what happened to that file: refused at once, or after waiting the whole limit.
    for (const outcome of refused) {
      const waited = outcome.answered - outcome.sent;
      if (waited === 0) expect(outcome.message).toMatch(/this one would wait about \d+(\.\d)? s for a reader, more than the 10 s/);
      else {
        expect(waited).toBe(LIMIT_MS);
        expect(outcome.message).toMatch(/this one waited 10 s for a reader, the most a file may wait/);
      }
    }
    // The flooding keys shared what the fourth key left: each had files read.
    for (const owner of ['A', 'B', 'C']) {
      expect(outcomes.filter((outcome) => outcome.owner === owner && outcome.status === 200).length).toBeGreaterThan(0);
    }
    expect(readers.mostActive).toBe(workers);
  });
});

describe('FileQueue order and refusals', () => {
  it('a key’s first file goes before another key’s second file, even when the first key used the readers more', async () => {
    const readers = new TimedReaders(2, (label) => (label === 'L1' ? 5000 : 1000));
    const queue = new FileQueue(readers, LIMIT_MS);
    const outcomes: Outcome[] = [];
    // A key that used the readers for 2 s, with nothing in the queue now.
    await Promise.all([send(queue, 'heavy', 'H1', outcomes), send(queue, 'heavy', 'H2', outcomes), runUntil(() => outcomes.length === 2)]);
    // Both readers busy: a long file of a light key's, and another key's short one.
    const files = [send(queue, 'light', 'L1', outcomes), send(queue, 'other', 'X1', outcomes)];
    // The light key's second file, then the heavy key's first: the heavy key's goes first.
    files.push(send(queue, 'light', 'L2', outcomes), send(queue, 'heavy', 'H3', outcomes));
    await runUntil(() => outcomes.length === 6);
    await Promise.all(files);
    expect(readers.started.map((start) => start.label)).toEqual(['H1', 'H2', 'L1', 'X1', 'H3', 'L2']);
  });

  it('says "would wait about N s" when refusing at once, and "waited 10 s" when the limit ran out in the queue, each with Retry-After', async () => {
    const readers = new TimedReaders(1, () => 4000);
    const queue = new FileQueue(readers, LIMIT_MS);
    const outcomes: Outcome[] = [];
    const wait = async (count: number) => runUntil(() => outcomes.length >= count);
    // History: a 4 s file of A's and one of C's (the typical time is now 4 s).
    await Promise.all([send(queue, 'A', 'A0', outcomes), wait(1)]);
    await Promise.all([send(queue, 'C', 'C0', outcomes), wait(2)]);
    const pending = [send(queue, 'A', 'A1', outcomes), send(queue, 'B', 'B1', outcomes), send(queue, 'C', 'C1', outcomes)];
    // A1 is being read; B1 goes next (B never used a reader), then C1: 8 s, within the limit.
    expect([queue.reading, queue.waiting]).toEqual([1, 2]);
    // A new key waits behind B1 (same use, earlier) and before C1 (C used a reader): 4 + 4 = 8 s.
    pending.push(send(queue, 'F', 'F1', outcomes));
    expect(queue.waiting).toBe(3);
    // One more new key: A1's 4 s, then B1 and F1 before it: about 12 s, refused at once.
    const refused = await send(queue, 'G', 'G1', outcomes);
    expect(refused.status).toBe(503);
    expect(refused.answered - refused.sent).toBe(0);
    expect(refused.message).toContain('this one would wait about 12 s for a reader, more than the 10 s a file may wait on this server');
    expect(refused.retryAfter).toBe(12);
    // C1 was admitted at 8 s, then F1 went before it: still waiting when its 10 s run out.
    await wait(7);
    await Promise.all(pending);
    const expired = outcomes.find((outcome) => outcome.label === 'C1')!;
    expect(expired.status).toBe(503);
    expect(expired.answered - expired.sent).toBe(LIMIT_MS);
    expect(expired.message).toMatch(
      /^The document readers are busy with other files: this one waited 10 s for a reader, the most a file may wait on this server, and was not read\. Retry in \d+ s\.$/,
    );
    expect(expired.retryAfter).toBeGreaterThanOrEqual(1);
    expect(readers.started.map((start) => start.label)).toEqual(['A0', 'C0', 'A1', 'B1', 'F1']);
  });

  it('a third file of a key gets 429; on shutdown waiting files get 503 and the file being read finishes', async () => {
    const readers = new TimedReaders(1, () => 1000);
    const queue = new FileQueue(readers, LIMIT_MS);
    const outcomes: Outcome[] = [];
    const first = send(queue, 'A', 'A1', outcomes);
    const second = send(queue, 'A', 'A2', outcomes);
    expect((await send(queue, 'A', 'A3', outcomes)).status).toBe(429);
    queue.close();
    expect((await second).message).toMatch(/shutting down/);
    await runUntil(() => outcomes.length === 3);
    expect((await first).status).toBe(200);
    expect((await send(queue, 'B', 'B1', outcomes)).status).toBe(503);
  });
});
