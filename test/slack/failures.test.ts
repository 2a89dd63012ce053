/**
 * Failures a moderator must be able to act on, produced by the real service: rate limited, and the
 * service going down. Separate from app.test.ts because it needs a service with a tiny rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import { LONG_TEXT, postToApp, slashCommandBody, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ rateLimitMax: 1 });
});

afterAll(async () => {
  await h?.close();
});

async function runCommand(text: string): Promise<RecordedCall> {
  const cmd = slashCommandBody(h, text);
  const res = await postToApp(h, cmd.body);
  expect(res.status).toBe(200);
  const id = cmd.responseUrl.split('/').pop();
  return h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
}

describe('failures', () => {
  it('says how long to wait when the service rate-limits the bot, and audits the failure', async () => {
    const first = await runCommand(LONG_TEXT);
    expect(JSON.stringify(first.args.blocks)).toMatch(/Request id: `req_/);
    const second = await runCommand(LONG_TEXT);
    const text = JSON.stringify(second.args.blocks);
    expect(text).toMatch(/rate limit reached\)\. Try again in \d+ s\./);
    expect(validateBlockKit(second.args.blocks as unknown[])).toEqual([]);
    const audit = await h.slack.waitFor((c) => c.method === 'chat.postMessage' && String(c.args.text).includes('rate_limited'));
    expect(String(audit.args.text)).toMatch(/failed: `rate_limited` \(general mode\) · request id `[^`]+`$/);
  });

  it('says the service is down when it is, instead of staying silent', async () => {
    // A fresh app: the first one's client rightly holds calls back after the 429 above.
    await h.close();
    h = await startHarness();
    await h.service.close();
    const reply = await runCommand(LONG_TEXT);
    expect(JSON.stringify(reply.args.blocks)).toMatch(/down or failing right now|unreachable right now/);
    expect(reply.args.response_type).toBe('ephemeral');
  });
});

describe('operations', () => {
  it('answers GET /healthz for load balancers', async () => {
    const res = await fetch(h.eventsUrl.replace('/slack/events', '/healthz'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('lets an acknowledged check post its reply when the app stops', async () => {
    await h.close();
    h = await startHarness();
    h.proxy.delayMs = 1500;
    const cmd = slashCommandBody(h, LONG_TEXT);
    const res = await postToApp(h, cmd.body);
    expect(res.status).toBe(200);
    await h.app.stop();
    const id = cmd.responseUrl.split('/').pop();
    // Already there once stop() resolved: no waiting needed.
    const reply = h.slack.calls.find((c) => c.method === 'response_url' && c.responseId === id);
    expect(JSON.stringify(reply?.args.blocks)).toMatch(/Request id: `req_/);
  });
});

describe('per-workspace settings', () => {
  it('applies the workspace default mode to commands without a mode and to the shortcut, and its own audit channel', async () => {
    await h.close();
    h = await startHarness({
      env: { SLACK_DEFAULT_MODE: 'academic', SLACK_DEFAULT_MODE_T0TEST: 'financial', SLACK_AUDIT_CHANNEL_T0TEST: 'C0TEAMAUDIT' },
    });
    const reply = await runCommand(LONG_TEXT);
    expect(JSON.stringify(reply.args.blocks)).toContain('Mode: *financial*');
    expect(h.proxy.detectBodies.at(-1)?.mode).toBe('financial');
    const audit = await h.slack.waitFor((c) => c.method === 'chat.postMessage');
    expect(audit.args.channel).toBe('C0TEAMAUDIT');
    // Help shows the workspace's default.
    const help = await postToApp(h, slashCommandBody(h, 'help').body);
    expect(help.body).toContain('default mode (financial)');
    // Another workspace gets the app-wide default.
    const other = slashCommandBody(h, LONG_TEXT, { team_id: 'T0OTHER' });
    await postToApp(h, other.body);
    const id = other.responseUrl.split('/').pop();
    const otherReply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
    expect(JSON.stringify(otherReply.args.blocks)).toContain('Mode: *academic*');
  });
});
