/**
 * Whole documents on the real service (issue 39 item 1; issue 40 items 3 and 5): a long text judged
 * window by window on /v1/detect and /v1/detect/file, the same answer as the engine's in one piece,
 * its cost, other keys' texts scored between a document's windows (order, not time), the document
 * limit counting what is judged (whitespace runs as one), and a file over it refused without its
 * text (where reading stops: test/documents/reader.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countChars, unitsForChars } from '../../src/contract.ts';
import { createDetector } from '../../src/detector/index.ts';
import { FairQueue } from '../../src/service/fair-queue.ts';
import { buildDocx, paragraphs } from '../helpers/documents.ts';
import { AI_PARAGRAPHS } from '../helpers/libreoffice.ts';
import { type Answer, detect, expectEnvelope, startTestService, type TestService, uploadFile } from './helpers.ts';

const REPORT = [...paragraphs(4000, 120, 700), ...AI_PARAGRAPHS, ...paragraphs(2000, 120, 12_000)].join('\n\n');

/** Until `check` holds, looking every 5 ms (at most `ms`). */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('POST /v1/detect: a long text', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService({ rateLimitMax: 1000 });
    key = await service.newKey();
  });
  afterAll(async () => service?.stop());

  it('is judged window by window: the engine in one piece gives the same answer, and it costs its characters', async () => {
    const answer = await detect(service, key, { text: REPORT, segments: true });
    expect(answer.status).toBe(200);
    const body = answer.body;
    expect(body.windows.length).toBeGreaterThan(5);
    const expected = (await createDetector()).detect(REPORT, { segments: true });
    expect(body).toMatchObject({
      ai_probability: expected.ai_probability,
      verdict: expected.verdict,
      origin: expected.origin,
      generated_share: expected.generated_share,
      composition: expected.composition,
      warnings: expected.warnings,
      windows: expected.windows,
      generated_spans: expected.generated_spans,
    });
    for (const s of body.segments) expect(REPORT.slice(s.start, s.end)).toBe(s.text);
    for (const w of body.windows) expect(w.pages).toBeNull();
    // One unit per started 5,000 characters, however many windows: 1 on arrival plus the rest.
    expect(Number(answer.headers.get('ratelimit-remaining'))).toBe(1000 - unitsForChars(countChars(REPORT)));
  });

  it('gives the same answer from worker threads', async () => {
    const pooled = await startTestService({ workers: 2 });
    try {
      const poolKey = await pooled.newKey();
      const [one, other] = await Promise.all([detect(pooled, poolKey, { text: REPORT }), detect(service, key, { text: REPORT })]);
      const { request_id: _a, ...a } = one.body;
      const { request_id: _b, ...b } = other.body;
      expect(a).toEqual(b);
    } finally {
      await pooled.stop();
    }
  });
});

/**
 * The owners of the service's scoring jobs in the order they finish, until the test's mocks are
 * restored: what was scored before what, whatever the machine's speed (the queue's depth when an
 * answer reaches the test is not: a busy machine may score every window in between).
 */
function recordCompletions(): string[] {
  const done: string[] = [];
  const run = FairQueue.prototype.run;
  vi.spyOn(FairQueue.prototype, 'run').mockImplementation(function <T>(
    this: FairQueue,
    owner: string,
    job: () => Promise<T>,
    weight?: number,
  ): Promise<T> {
    return run.call(this, owner, () => job().finally(() => done.push(owner)), weight) as Promise<T>;
  });
  return done;
}

/** How many of `many`'s jobs finished after the last of `few`'s. */
function finishedAfter(done: readonly string[], few: string, many: string): number {
  return done.slice(done.lastIndexOf(few) + 1).filter((owner) => owner === many).length;
}

describe("other keys are served between a document's windows", () => {
  it('a short text of another key is answered before a long document that was already being scored', async () => {
    const service = await startTestService({ workers: 1 });
    try {
      const [a, b] = [await service.newKey(), await service.newKey()];
      const done = recordCompletions();
      const long = paragraphs(40_000, 120).join('\n\n');
      const order: string[] = [];
      const document = detect(service, a, { text: long }).then((answer) => {
        order.push('document');
        return answer;
      });
      // The document's windows are queued (it started, and many wait their turn).
      await until(() => service.app.scoringQueue.waiting > 10);
      const short = await detect(service, b, { text: AI_PARAGRAPHS[0] });
      order.push('short');
      expect(short.status).toBe(200);
      expect((await document).status).toBe(200);
      expect((await document).body.windows.length).toBeGreaterThan(40);
      expect(order).toEqual(['short', 'document']);
      // When the short text was scored, most of the document's windows were still to come.
      const [docOwner, shortOwner] = [...new Set(done)].sort(
        (x, y) => done.filter((o) => o === y).length - done.filter((o) => o === x).length,
      );
      expect(finishedAfter(done, shortOwner!, docOwner!)).toBeGreaterThan(10);
    } finally {
      vi.restoreAllMocks();
      await service.stop();
    }
  }, 120_000);

  it("in the file lane too: a second key's short document is answered before a first key's long one", async () => {
    const service = await startTestService({ workers: 1, fileWorkers: 1, fileTimeoutMs: 60_000 });
    try {
      const [a, b, c] = [await service.newKey(), await service.newKey(), await service.newKey()];
      const lane = service.app.fileScoringQueue!;
      // Only the lane's own turns are watched. A file that comes while the lane's thread is still
      // loading is scored on the shared engine instead (routes/file.ts): on a busy machine the long
      // document could go there and the short one to the lane, two threads racing, and test
      // nothing. So the lane is loaded first, by a third key's file, until one is scored on it.
      let onLane = 0;
      const run = FairQueue.prototype.run;
      let first: string | undefined;
      let held = false;
      const done: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let watching = false;
      const spy = vi.spyOn(FairQueue.prototype, 'run').mockImplementation(function <T>(
        this: FairQueue,
        owner: string,
        job: () => Promise<T>,
        weight?: number,
      ): Promise<T> {
        if (this !== lane) return run.call(this, owner, job, weight) as Promise<T>;
        onLane++;
        if (!watching) return run.call(this, owner, job, weight) as Promise<T>;
        // The long document's first job waits until the short one's first has joined the lane:
        // reading the short file (in a reader process at a lower priority) could otherwise take
        // longer on a busy machine than scoring all of the long one. From there on the order is
        // the lane's turns' own.
        first ??= owner;
        if (owner !== first) release();
        const counted = (): Promise<T> => job().finally(() => done.push(owner));
        if (held || owner !== first) return run.call(this, owner, counted, weight) as Promise<T>;
        held = true;
        return run.call(this, owner, () => gate.then(counted), weight) as Promise<T>;
      });
      for (let tries = 0; onLane === 0; tries++) {
        if (tries === 10) throw new Error('no file was scored on the file lane in 10 tries');
        expect((await uploadFile(service, c, AI_PARAGRAPHS[0]!, 'warm.txt')).status).toBe(200);
      }
      watching = true;
      const order: string[] = [];
      const long = uploadFile(service, a, paragraphs(40_000, 120).join('\n\n'), 'long.txt').then((answer: Answer) => {
        order.push('long');
        return answer;
      });
      await until(() => held, 60_000);
      const short = await uploadFile(service, b, paragraphs(1600, 120, 5000).join('\n\n'), 'short.txt');
      order.push('short');
      expect(short.status).toBe(200);
      expect(short.body.windows.length).toBe(2);
      expect((await long).status).toBe(200);
      expect(order).toEqual(['short', 'long']);
      spy.mockRestore();
      // When the short document's windows were scored, more than a few of the long one's were still to come.
      const shortOwner = done.find((owner) => owner !== first)!;
      expect(done.filter((owner) => owner === shortOwner).length).toBeGreaterThanOrEqual(short.body.windows.length);
      expect(finishedAfter(done, shortOwner, first!)).toBeGreaterThan(5);
    } finally {
      vi.restoreAllMocks();
      await service.stop();
    }
  }, 120_000);
});

describe('the document limit counts what is judged (issue 40 item 5)', () => {
  let service: TestService;
  let key: string;
  beforeAll(async () => {
    service = await startTestService({ maxTextChars: 1000, rateLimitMax: 100 });
    key = await service.newKey();
  });
  afterAll(async () => service?.stop());

  it('100,000 spaces around two words are two words: accepted, and they cost one unit', async () => {
    const text = `${' '.repeat(50_000)}Two words${' '.repeat(50_000)}`;
    expect(countChars(text)).toBe(9);
    const answer = await detect(service, key, { text });
    expect(answer.status).toBe(200);
    expect(Number(answer.headers.get('ratelimit-remaining'))).toBe(99);
    const spaced = await uploadFile(service, key, `Two${'\n'.repeat(30_000)}words`, 'spaces.txt');
    expect(spaced.status).toBe(200);
  });

  it('a text over the limit is refused with the characters as counted, whitespace runs as one', async () => {
    const text = `${'a'.repeat(600)}${' \n\t '.repeat(10_000)}${'b'.repeat(401)}`;
    const answer = await detect(service, key, { text });
    expectEnvelope(answer, 413, 'text_too_long');
    expect(answer.body.error).toMatchObject({ param: 'text', max_chars: 1000, characters: 1002 });
    expect(answer.body.error.message).toContain('1,002 characters');
    expect(answer.body.error.message).toContain('whitespace count as one');
  });
});

describe('a file over the document limit (issue 40 item 3)', () => {
  it('through the service: 413 text_too_long naming the file, and the reader reads the next file', async () => {
    const service = await startTestService({ maxTextChars: 50_000, fileTimeoutMs: 20_000 });
    try {
      const key = await service.newKey();
      const answer = await uploadFile(service, key, buildDocx({ paragraphs: ['word '.repeat(600_000)] }), 'huge.docx');
      expectEnvelope(answer, 413, 'text_too_long');
      expect(answer.body.error).toMatchObject({ param: 'file', max_chars: 50_000 });
      expect(answer.body.error.message).toContain('reading stopped there');
      const html = await uploadFile(service, key, `<!DOCTYPE html><p>${'word '.repeat(20_000)}</p>`, 'long.html');
      expectEnvelope(html, 413, 'text_too_long');
      const next = await uploadFile(service, key, REPORT.slice(0, 3000), 'note.txt');
      expect(next.status).toBe(200);
    } finally {
      await service.stop();
    }
  }, 60_000);
});
