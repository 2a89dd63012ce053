/**
 * State that outlives one process: a result's buttons work after the app restarts (SQLite file and
 * Redis), two app instances on one Redis share results and retry claims, and `/detect-settings`
 * changes what later checks do. Real Bolt apps, real service, fake Slack on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import type { RecordedCall } from '../../demo/slack/fake-slack.ts';
import {
  buttonPayload,
  interactionBody,
  LONG_TEXT,
  messageShortcutPayload,
  postToApp,
  slashCommandBody,
  startHarness,
  type Harness,
} from './harness.ts';

// Over 2,000 characters: too long for a button to carry, so only the stored record can answer a click.
const TEXT_TOO_LONG_FOR_A_BUTTON = Array.from({ length: 5 }, () => LONG_TEXT).join(' ');

function responseFor(url: string) {
  const id = url.split('/').pop();
  return (c: RecordedCall) => c.method === 'response_url' && c.responseId === id;
}
function blockText(call: RecordedCall): string {
  return JSON.stringify(call.args.blocks ?? call.args.view ?? []);
}
function buttons(call: RecordedCall): { action_id: string; value: string }[] {
  const blocks = call.args.blocks as { type: string; elements?: { action_id: string; value: string }[] }[];
  return blocks.find((b) => b.type === 'actions')?.elements ?? [];
}
/** The same harness, pointed at another app instance. */
function via(h: Harness, app: RunningSlackApp): Harness {
  return { ...h, app, eventsUrl: app.eventsUrl! };
}
async function anotherInstance(h: Harness): Promise<RunningSlackApp> {
  return startSlackApp(h.config, { detector: h.backend.detector, logger: pino({ level: 'silent' }) });
}

describe.each([
  ['SQLite', false],
  ['Redis', true],
])('restart between a result and its button click (%s)', (_name, useRedis) => {
  let h: Harness;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slack-state-'));
    h = await startHarness({ env: { DATA_DIR: dataDir, REDIS_URL: useRedis ? process.env.REDIS_URL! : '' } });
  });
  afterAll(async () => {
    await h?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the restarted app still has the text and the result behind the buttons', async () => {
    expect(TEXT_TOO_LONG_FOR_A_BUTTON.length).toBeGreaterThan(2000);
    const cmd = slashCommandBody(h, TEXT_TOO_LONG_FOR_A_BUTTON);
    await postToApp(h, cmd.body);
    const reply = await h.slack.waitFor(responseFor(cmd.responseUrl));
    const details = buttons(reply).find((b) => b.action_id === 'show_details')!;
    expect(details).toBeDefined();
    const legal = buttons(reply).find((b) => b.action_id === 'recheck:legal')!;
    expect(JSON.parse(legal.value).t).toBeUndefined();

    await h.app.stop();
    const restarted = await anotherInstance(h);
    try {
      const after = via(h, restarted);
      const calls = h.proxy.detectCalls;
      const detailsClick = buttonPayload(after, details);
      expect((await postToApp(after, interactionBody(detailsClick.payload))).status).toBe(200);
      const modal = await h.slack.waitFor((c) => c.method === 'views.open' && c.args.trigger_id === detailsClick.triggerId);
      // Served from the stored result: the sentence scores, and no new detection.
      expect(blockText(modal)).not.toContain('too old');
      expect(blockText(modal)).toMatch(/\d{1,2}%/);
      expect(h.proxy.detectCalls).toBe(calls);
      const click = buttonPayload(after, legal);
      expect((await postToApp(after, interactionBody(click.payload))).status).toBe(200);
      const updated = await h.slack.waitFor(responseFor(click.responseUrl));
      expect(updated.args.replace_original).toBe(true);
      expect(blockText(updated)).toContain('Mode: *legal*');
      expect(blockText(updated)).toContain('Re-checked in *legal* mode (was general)');
      expect(h.proxy.detectCalls).toBe(calls + 1);
    } finally {
      await restarted.stop();
    }
  });
});

describe('two app instances on one Redis', () => {
  let h: Harness;
  let second: RunningSlackApp;
  beforeAll(async () => {
    h = await startHarness({ env: { REDIS_URL: process.env.REDIS_URL! } });
    second = await anotherInstance(h);
  });
  afterAll(async () => {
    await second?.stop();
    await h?.close();
  });

  it('a click reaching the other instance finds the result, and a retry reaching it runs no second detection', async () => {
    const cmd = slashCommandBody(h, TEXT_TOO_LONG_FOR_A_BUTTON);
    const calls = h.proxy.detectCalls;
    expect((await postToApp(h, cmd.body)).status).toBe(200);
    // Slack retries the same request; the load balancer sends the retry to the other instance.
    expect((await postToApp(via(h, second), cmd.body, { retryNum: 1 })).status).toBe(200);
    const reply = await h.slack.waitFor(responseFor(cmd.responseUrl));
    await new Promise((r) => setTimeout(r, 300));
    expect(h.proxy.detectCalls).toBe(calls + 1);
    expect(h.slack.calls.filter(responseFor(cmd.responseUrl))).toHaveLength(1);

    const financial = buttons(reply).find((b) => b.action_id === 'recheck:financial')!;
    const click = buttonPayload(via(h, second), financial);
    await postToApp(via(h, second), interactionBody(click.payload));
    const updated = await h.slack.waitFor(responseFor(click.responseUrl));
    expect(blockText(updated)).toContain('Re-checked in *financial* mode (was general)');
  });
});

describe('/detect-settings', () => {
  let h: Harness;
  let dataDir: string;
  const settings = async (text: string, userId: string): Promise<string> => {
    const cmd = slashCommandBody(h, text, { command: '/detect-settings', user_id: userId });
    const res = await postToApp(h, cmd.body);
    expect(res.status).toBe(200);
    expect(res.elapsedMs).toBeLessThan(3000);
    return String((await h.slack.waitFor(responseFor(cmd.responseUrl))).args.text);
  };
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slack-settings-'));
    h = await startHarness({
      env: { DATA_DIR: dataDir, REDIS_URL: '' },
      slack: {
        users: { U0AUTHOR: 'Ada Lovelace', U0MOD: 'Grace', U0ADMIN: 'Admin', U0NEW: 'Newcomer' },
        admins: ['U0ADMIN'],
        usergroups: { S0MODS: ['U0MOD'] },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('shows the settings to anyone and lets only admins change them', async () => {
    expect(await settings('', 'U0MOD')).toMatch(
      /Mode of checks that name none: \*general\* \(bot default\)[\s\S]*Audit channel: <#C0AUDIT> \(bot default\)/,
    );
    expect(await settings('mode legal', 'U0MOD')).toBe(
      'Only workspace admins and owners can change these settings. `/detect-settings` alone shows them.',
    );
    expect(await settings('mode legal', 'U0ADMIN')).toMatch(/^Checks that name no mode now use \*legal\*\./);
  });

  it('answers bad input with a sentence saying what to type', async () => {
    expect(await settings('mode poetry', 'U0ADMIN')).toBe(
      '“poetry” is not a mode. Use general, academic, financial or legal, or `default`.',
    );
    expect(await settings('audit mod-log', 'U0ADMIN')).toMatch(/^“mod-log” is not a channel\. Type # and pick the channel/);
    expect(await settings('checkers mods', 'U0ADMIN')).toMatch(/^“mods” is not a user group\. Type @ and pick a user group/);
    expect(await settings('colour blue', 'U0ADMIN')).toMatch(/^“colour” is not a setting\./);
  });

  it('the workspace mode and audit channel apply to later checks', async () => {
    expect(await settings('mode financial', 'U0ADMIN')).toContain('*financial*');
    expect(await settings('audit <#C0MODLOG|mod-log>', 'U0ADMIN')).toContain('Checks are now logged in <#C0MODLOG>');
    const cmd = slashCommandBody(h, LONG_TEXT);
    await postToApp(h, cmd.body);
    const reply = await h.slack.waitFor(responseFor(cmd.responseUrl));
    expect(blockText(reply)).toContain('Mode: *financial*');
    const audit = await h.slack.waitFor((c) => c.method === 'chat.postMessage' && c.args.channel === 'C0MODLOG');
    expect(String(audit.args.text)).not.toContain(LONG_TEXT.slice(0, 40));
    expect(await settings('audit default', 'U0ADMIN')).toContain('Audit channel: <#C0AUDIT> (bot default)');
  });

  it('with checkers set, only that user group (and admins) may run the message shortcut', async () => {
    expect(await settings('checkers <!subteam^S0MODS|@mods>', 'U0ADMIN')).toContain('Only members of <!subteam^S0MODS>');
    const message = { ts: '1700000900.000100', text: LONG_TEXT };
    const outsider = messageShortcutPayload(h, message);
    (outsider.payload.user as { id: string }).id = 'U0NEW';
    const calls = h.proxy.detectCalls;
    await postToApp(h, interactionBody(outsider.payload));
    const refusal = await h.slack.waitFor((c) => c.method === 'chat.postEphemeral' && c.args.user === 'U0NEW');
    expect(String(refusal.args.text)).toContain('only members of <!subteam^S0MODS> (and admins) may run “Check for AI text”');
    // The block is what Slack shows: the group as a mention it draws with its name, not escaped markup.
    expect(blockText(refusal)).toContain('only members of <!subteam^S0MODS> (and admins)');
    expect(blockText(refusal)).not.toContain('&lt;');
    expect(h.proxy.detectCalls).toBe(calls);

    const member = messageShortcutPayload(h, message);
    await postToApp(h, interactionBody(member.payload));
    const result = await h.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && c.args.user === 'U0MOD' && blockText(c).includes('Request id'),
    );
    expect(blockText(result)).toContain('Mode: *financial*');
    expect(await settings('checkers everyone', 'U0ADMIN')).toContain('Who may run “Check for AI text”: everyone');
  });
});
