/**
 * A burst of moderators against a small API key: 30 /detect commands at once, the key allowing 10
 * checks per 5 s. The real Bolt app, the real service (through the counting proxy), the shared queue
 * in Redis. Every check must be answered, none refused, in the order asked; acks stay immediate.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { LONG_TEXT, postToApp, slashCommandBody, startHarness, type Harness } from './harness.ts';
import { WAIT_MS } from '../helpers/load.ts';

let h: Harness;
let app: RunningSlackApp;
/** Check numbers in the order the app handed them to the queue. */
const taken: number[] = [];
const checkNumber = (text: string): number => Number(/^Check number (\d+)\./.exec(text)?.[1]);

beforeAll(async () => {
  h = await startHarness({ rateLimitMax: 10, rateLimitWindow: '5 seconds', env: { REDIS_URL: process.env.REDIS_URL! } });
  // The same app, with the queued detector observed on its way in.
  app = await startSlackApp(h.config, {
    detector: {
      detect: (request, options) => {
        taken.push(checkNumber(request.text));
        return h.backend.detector.detect(request, options);
      },
    },
    logger: pino({ level: 'silent' }),
  });
  h = { ...h, eventsUrl: app.eventsUrl! };
});

afterAll(async () => {
  await app?.stop();
  await h?.close();
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('burst of 30 checks against a key limited to 10 per 5 s', () => {
  it('acks at once, queues instead of refusing, answers all in order and reports the wait', async () => {
    const firstCall = h.proxy.detectBodies.length;
    const cmds = Array.from({ length: 30 }, (_, i) => slashCommandBody(h, `Check number ${i + 1}. ${LONG_TEXT}`));
    const sent = Date.now();
    const posts = await Promise.all(
      cmds.map(async (c, i) => {
        // 25 ms apart: each on its own connection, closer sends can overtake each other on the way in,
        // and the order asked must be defined. All 30 still arrive within 0.75 s, inside the first 5 s window.
        await new Promise((r) => setTimeout(r, i * 25));
        return postToApp(h, c.body);
      }),
    );
    expect(posts.every((p) => p.status === 200)).toBe(true);
    const acks = posts.map((p) => p.elapsedMs).sort((a, b) => a - b);
    expect(acks.at(-1)!).toBeLessThan(3000);

    const isFinal = (url: string) => {
      const id = url.split('/').pop();
      return (c: RecordedCall) => c.method === 'response_url' && c.responseId === id && !String(c.args.text).startsWith('⏳');
    };
    const replies = await Promise.all(cmds.map((c) => h.slack.waitFor(isFinal(c.responseUrl), WAIT_MS)));
    const total = Date.now() - sent;
    for (const r of replies) expect(JSON.stringify(r.args.blocks)).toMatch(/Request id: `req_/);
    expect(replies.every((r) => !/busy|Try again/.test(String(r.args.text)))).toBe(true);

    const notices = h.slack.calls.filter((c) => c.method === 'response_url' && String(c.args.text).startsWith('⏳ Queued (position '));
    expect(notices.length).toBeGreaterThan(0);
    const positions = notices.map((n) => Number(/position (\d+)/.exec(String(n.args.text))?.[1]));
    expect(Math.min(...positions)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...positions)).toBeLessThanOrEqual(30);

    // Order: each check first reached the service in the order the app queued it, up to the queue's
    // concurrency (8 on the wire at once, whose requests race each other).
    const firstSeen: number[] = [];
    for (const body of h.proxy.detectBodies.slice(firstCall)) {
      const n = checkNumber(body.text);
      if (!firstSeen.includes(n)) firstSeen.push(n);
    }
    expect(firstSeen).toHaveLength(30);
    expect(taken).toHaveLength(30);
    for (const [index, n] of firstSeen.entries()) expect(Math.abs(taken.indexOf(n) - index)).toBeLessThan(8);
    const queueDisplacement = Math.max(...firstSeen.map((n, i) => Math.abs(taken.indexOf(n) - i)));
    const askedDisplacement = Math.max(...taken.map((n, i) => Math.abs(n - 1 - i)));
    // 30 checks at 10 per 5 s need three windows: the last answers come after about 10 s, well within the 20 s bound.
    const waits = replies.map((r) => r.at - sent).sort((a, b) => a - b);
    expect(waits.at(-1)!).toBeGreaterThan(4_000);

    console.info(
      `[measure] Slack burst, 30 /detect, key 10/5 s: ack p50 ${percentile(acks, 50).toFixed(1)} ms, p99 ${percentile(acks, 99).toFixed(1)} ms; ` +
        `answer p50 ${percentile(waits, 50)} ms, p99 ${percentile(waits, 99)} ms, all 30 in ${total} ms; ` +
        `${notices.length} queued notices; queued at most ${askedDisplacement} places from the order sent, reached the service at most ${queueDisplacement} places from the order queued; 0 refused`,
    );
  });
});
