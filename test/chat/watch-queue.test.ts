/**
 * Watched messages share the bots' one detection queue with moderators' checks, behind them: the
 * real queue through connectDetectionBackend, against the real service behind the slowing proxy.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend } from '../../adapters/chat/backend.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { DetectProxy } from '../slack/proxy.ts';

const WATCHED = (i: number) =>
  `Watched message number ${i}: the harbour master kept a logbook of every boat that came in late, and by October it was mostly our names.`;
const INTERACTIVE =
  'A moderator checks this one: the cafeteria still serves that awful soup on Tuesdays, which honestly made everyone laugh.';

let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let key: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-queue-'));
  const file = join(dir, 'keys.json');
  key = (await createApiKey(file, { name: 'watch-queue', rateLimitMax: 10_000 })).key;
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile: file, logger: pino({ level: 'silent' }) });
  proxy = new DetectProxy(service.url);
  await proxy.start();
});

afterAll(async () => {
  await proxy?.stop();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('background (watched) calls in the detection queue', () => {
  it('an interactive check queued after watched messages starts before them, and its position ignores them', async () => {
    const backend = await connectDetectionBackend({ DETECT_API_URL: proxy.url, DETECT_API_KEY: key, DETECT_QUEUE_CONCURRENCY: '1' });
    const watch = watchDetectorFor(backend);
    proxy.delayMs = 150;
    try {
      const sent = proxy.detectBodies.length;
      expect(await backend.queue.roomForBackground()).toBe(true);
      const watched = Array.from({ length: 4 }, (_, i) => watch.detect({ text: WATCHED(i), mode: 'general' }));
      await new Promise((r) => setTimeout(r, 20));
      // The only place on the wire is taken and other watched calls wait: no room for more.
      expect(await backend.queue.roomForBackground()).toBe(false);
      const positions: number[] = [];
      const interactive = backend.detector.detect({ text: INTERACTIVE, mode: 'general' }, { onQueued: (p) => positions.push(p) });
      await new Promise((r) => setTimeout(r, 20));
      // A moderator is waiting: the watcher must not start more background work now.
      expect(await backend.queue.roomForBackground()).toBe(false);
      await Promise.all([interactive, ...watched]);
      const order = proxy.detectBodies.slice(sent).map((b) => b.text);
      // One watched call was already on the wire; the moderator's is next, before the other three.
      expect(order).toEqual([WATCHED(0), INTERACTIVE, WATCHED(1), WATCHED(2), WATCHED(3)]);
      expect(positions.every((p) => p === 1)).toBe(true);
    } finally {
      proxy.delayMs = 0;
      await backend.close();
    }
  });

  it('with the calls paced, a watcher that waits for room lets at most one watched call start before an interactive check', async () => {
    // 20 calls a second: one start every 50 ms. With pacing, Bottleneck gives a call its start time
    // when it is scheduled, so a watched call scheduled before the check keeps its turn: at most one
    // (the watcher schedules the next only when the queue has room) starts between the moderator's
    // ask and the check's own start. A watcher that scheduled its calls in advance would put each of
    // its four in flight ahead of the check. Counted in starts, not milliseconds: a loaded runner
    // stretches every pace (236 ms against two paces was seen in a full run), but not the order.
    const backend = await connectDetectionBackend({ DETECT_API_URL: proxy.url, DETECT_API_KEY: key, DETECT_QUEUE_RATE: '20/1s' });
    // The order in which the queue hands calls to the client: 'w' for watched, 'i' for interactive.
    const starts: Array<'w' | 'i'> = [];
    const client = Object.create(backend.client) as typeof backend.client;
    client.detect = (request, options) => {
      starts.push('w');
      return backend.client.detect(request, options);
    };
    const watch = watchDetectorFor({ queue: backend.queue, client });
    let pumping = true;
    const inFlight = new Set<Promise<unknown>>();
    // What the watcher does: start a watched call only when the queue has room, up to 4 at once.
    const pump = (async () => {
      for (let i = 0; pumping; i++) {
        if (inFlight.size < 4 && (await backend.queue.roomForBackground())) {
          const call = watch.detect({ text: WATCHED(i), mode: 'general' }).finally(() => inFlight.delete(call));
          inFlight.add(call);
        } else {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 600));
      const ahead: number[] = [];
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) {
        const asked = starts.length;
        let before = -1;
        await backend.detector.detect(
          { text: INTERACTIVE, mode: 'general' },
          {
            onCall: () => {
              if (before < 0) before = starts.length - asked;
              starts.push('i');
            },
            onStart: (ms) => waits.push(ms),
          },
        );
        ahead.push(before);
      }
      const summary = `watched calls started ahead of each check: ${ahead.join(', ')}; waits (ms): ${waits.map((w) => Math.round(w)).join(', ')}; watched calls started in all: ${starts.filter((s) => s === 'w').length}`;
      console.log(summary);
      // The watcher kept the queue busy meanwhile, or the count would mean nothing.
      expect(starts.filter((s) => s === 'w').length, summary).toBeGreaterThan(5);
      expect(Math.max(...ahead), summary).toBeLessThanOrEqual(1);
    } finally {
      pumping = false;
      await pump;
      await Promise.allSettled([...inFlight]);
      await backend.close();
    }
  });

  it('leaves a quarter of the key’s budget to interactive checks, and a weighted author call still runs', async () => {
    const backend = await connectDetectionBackend({
      DETECT_API_URL: proxy.url,
      DETECT_API_KEY: key,
      // Paced at one call per 500 ms; the budget is refilled after 4 s, well after the calls below.
      DETECT_QUEUE_RATE: '8/4s',
      DETECT_QUEUE_CONCURRENCY: '2',
    });
    const watch = watchDetectorFor(backend);
    try {
      // 20 messages of 500 characters (10,000) cost 2 units; weighted above the concurrency (2) or not, it must start.
      const long = (i: number) => `${WATCHED(i)} `.repeat(50).slice(0, 500);
      const author = await watch.detectAuthor({ messages: Array.from({ length: 20 }, (_, i) => long(i)), mode: 'general' });
      expect(author.messages).toHaveLength(20);
      for (let i = 0; i < 4; i++) await watch.detect({ text: WATCHED(i), mode: 'general' });
      // 2 + 4 of 8 spent: 2 left, which is the reserve (a quarter of 8).
      expect(await backend.queue.roomForBackground()).toBe(false);
      const answer = await backend.detector.detect({ text: INTERACTIVE, mode: 'general' });
      expect(answer.request_id).toMatch(/^req_/);
    } finally {
      await backend.close();
    }
  });
});
