/**
 * Redis holds only what may be lost (docs/architecture.md): while it is down, `/detect` is still
 * answered with its result (the shared detection queue falls back to the app's own, the buttons'
 * record is not kept). The real Bolt app, the real service, the fake Slack, and a private
 * redis-server that is stopped and started again (the run's shared one serves other suites).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { LONG_TEXT, postToApp, slashCommandBody, startHarness, type Harness } from './harness.ts';

let h: Harness;
let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
  // Both the state store and the detection queue on this Redis, as with REDIS_URL in production.
  h = await startHarness({ env: { REDIS_URL: redis.url }, backendEnv: { REDIS_URL: redis.url } });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

async function runCommand(text: string): Promise<RecordedCall> {
  const cmd = slashCommandBody(h, text);
  const res = await postToApp(h, cmd.body);
  expect(res.status).toBe(200);
  const id = cmd.responseUrl.split('/').pop();
  return h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id, 30_000);
}

describe('Redis down', () => {
  it('answers /detect with its result, and again once Redis is back', async () => {
    expect(JSON.stringify((await runCommand(LONG_TEXT)).args.blocks)).toMatch(/Request id: `req_/);
    await redis.stop();
    const during: RecordedCall[] = [];
    for (let i = 0; i < 3; i++) during.push(await runCommand(LONG_TEXT));
    for (const reply of during) {
      expect(JSON.stringify(reply.args.blocks)).not.toContain('Something went wrong');
      expect(JSON.stringify(reply.args.blocks)).toMatch(/Request id: `req_/);
    }
    await redis.start();
    const after = await runCommand(LONG_TEXT);
    expect(JSON.stringify(after.args.blocks)).toMatch(/Request id: `req_/);
  }, 90_000);
});
