/**
 * What a moderator is told on Slack when a request cannot be served as asked (issue 32): button
 * values Slack would never send (item 12). Real Bolt app, real service, the fake Slack on loopback,
 * payloads in Slack's published `block_actions` shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTION_RECHECK_PREFIX, ACTION_SHOW_DETAILS } from '../../adapters/slack/blocks.ts';
import { buttonPayload, interactionBody, postToApp, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('button values Slack would never send', () => {
  it('a garbled re-check value is answered with a sentence, without replacing the result', async () => {
    const { payload, responseUrl } = buttonPayload(h, { action_id: `${ACTION_RECHECK_PREFIX}academic`, value: '{"c":' });
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const reply = await h.slack.waitFor((c) => c.method === 'response_url' && c.responseId === responseUrl.split('/').pop());
    expect(reply.args.replace_original).toBe(false);
    expect(reply.args.text).toMatch(/^This button could not be read: it does not carry a check the bot made/);
    expect(h.proxy.detectBodies).toHaveLength(0);
  });

  it('`{}` as the details value opens a modal with the sentence', async () => {
    const before = h.slack.callsOf('views.open').length;
    const { payload, triggerId } = buttonPayload(h, { action_id: ACTION_SHOW_DETAILS, value: '{}' });
    const res = await postToApp(h, interactionBody(payload));
    expect(res.status).toBe(200);
    const open = await h.slack.waitFor((c) => c.method === 'views.open' && c.args.trigger_id === triggerId);
    expect(h.slack.callsOf('views.open').length - before).toBe(1);
    expect(JSON.stringify(open.args.view)).toContain('This button could not be read');
    expect(h.proxy.detectBodies).toHaveLength(0);
  });
});
