/**
 * What Slack sends an app, shaped as Slack sends it: slash commands (form-encoded fields), interactivity
 * payloads (message shortcuts, button presses: one form field `payload` of JSON) and Events API
 * callbacks (JSON), each POSTed to the app signed with its signing secret (`v0` HMAC-SHA256). The
 * person acting defaults to the tests' moderator (U0MOD, `grace`).
 */
import { signSlackRequest, triggerId, type FakeSlack } from './fake-slack.ts';

/** Who presses, types or runs the shortcut. */
export interface SlackActor {
  id: string;
  name: string;
}

const MODERATOR: SlackActor = { id: 'U0MOD', name: 'grace' };

export interface SlackPost {
  status: number;
  body: string;
  /** Milliseconds from sending until the full response arrived. */
  elapsedMs: number;
}

/** POSTs `body` to the app's events URL as Slack does: signed with `secret` (unless `sign: false`), optionally as a retry. */
export async function postSigned(
  url: string,
  body: string,
  opts: { secret: string; sign?: boolean; timestampSec?: number; retryNum?: number; contentType?: string },
): Promise<SlackPost> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/x-www-form-urlencoded' };
  if (opts.sign !== false) Object.assign(headers, signSlackRequest(opts.secret, body, opts.timestampSec));
  if (opts.retryNum !== undefined) {
    headers['x-slack-retry-num'] = String(opts.retryNum);
    headers['x-slack-retry-reason'] = 'http_timeout';
  }
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text, elapsedMs: performance.now() - started };
}

/** A slash command's fields as Slack sends them (form-encoded over HTTP, a JSON payload in Socket Mode). */
export function slashCommandFields(
  h: { slack: FakeSlack },
  text: string,
  over: Record<string, string> = {},
): { fields: Record<string, string>; responseUrl: string; triggerId: string } {
  const responseUrl = h.slack.responseUrl();
  const trigger = triggerId();
  const fields = {
    token: 'verification-token-unused',
    team_id: h.slack.teamId,
    team_domain: 'test',
    channel_id: 'C0GENERAL',
    channel_name: 'general',
    user_id: MODERATOR.id,
    user_name: MODERATOR.name,
    command: '/detect',
    text,
    api_app_id: 'A0TEST',
    is_enterprise_install: 'false',
    response_url: responseUrl,
    trigger_id: trigger,
    ...over,
  };
  return { fields, responseUrl, triggerId: trigger };
}

/** A slash command as Slack sends it over HTTP: form-encoded fields. */
export function slashCommandBody(
  h: { slack: FakeSlack },
  text: string,
  over: Record<string, string> = {},
): { body: string; responseUrl: string; triggerId: string } {
  const { fields, responseUrl, triggerId: trigger } = slashCommandFields(h, text, over);
  return { body: new URLSearchParams(fields).toString(), responseUrl, triggerId: trigger };
}

/** An interactivity request as Slack sends it: one form field `payload` holding JSON. */
export function interactionBody(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** The message shortcut ("Check for AI text") run on `message`, by default one of U0AUTHOR's. */
export function messageShortcutPayload(
  h: { slack: FakeSlack },
  message: Record<string, unknown>,
  over: { channel?: string; channelName?: string; who?: SlackActor } = {},
): { payload: Record<string, unknown>; responseUrl: string } {
  const responseUrl = h.slack.responseUrl();
  const channel = over.channel ?? 'C0GENERAL';
  const who = over.who ?? MODERATOR;
  return {
    responseUrl,
    payload: {
      type: 'message_action',
      token: 'verification-token-unused',
      action_ts: `${Date.now() / 1000}`,
      team: { id: h.slack.teamId, domain: 'test' },
      user: { id: who.id, username: who.name, team_id: h.slack.teamId, name: who.name },
      channel: { id: channel, name: over.channelName ?? 'general' },
      is_enterprise_install: false,
      enterprise: null,
      callback_id: 'detect_message',
      trigger_id: triggerId(),
      response_url: responseUrl,
      message_ts: message.ts,
      message: { type: 'message', user: 'U0AUTHOR', team: h.slack.teamId, ...message },
    },
  };
}

/** A press on a button of the app's ephemeral reply (or, with `message`, of a message it posted). */
export function buttonPayload(
  h: { slack: FakeSlack },
  action: { action_id: string; value: string; text?: string },
  container: { channel?: string; channelName?: string; messageTs?: string; who?: SlackActor } = {},
): { payload: Record<string, unknown>; responseUrl: string; triggerId: string } {
  const responseUrl = h.slack.responseUrl();
  const trigger = triggerId();
  const channel = container.channel ?? 'C0GENERAL';
  const who = container.who ?? MODERATOR;
  return {
    responseUrl,
    triggerId: trigger,
    payload: {
      type: 'block_actions',
      user: { id: who.id, username: who.name, name: who.name, team_id: h.slack.teamId },
      api_app_id: 'A0TEST',
      token: 'verification-token-unused',
      container: { type: 'message', message_ts: container.messageTs ?? '1700000000.000100', channel_id: channel, is_ephemeral: true },
      trigger_id: trigger,
      team: { id: h.slack.teamId, domain: 'test' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: channel, name: container.channelName ?? 'general' },
      state: { values: {} },
      response_url: responseUrl,
      actions: [
        {
          action_id: action.action_id,
          block_id: 'result_actions',
          text: { type: 'plain_text', text: action.text ?? action.action_id, emoji: true },
          value: action.value,
          type: 'button',
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    },
  };
}

/** An Events API callback (JSON) carrying `event`, for an app installed in `teamId` (`message.channels` and the like). */
export function eventCallbackBody(teamId: string, event: Record<string, unknown>): string {
  return JSON.stringify({
    token: 'verification-token-unused',
    team_id: teamId,
    api_app_id: 'A0TEST',
    event,
    type: 'event_callback',
    event_id: `Ev${Date.now().toString(36).toUpperCase()}${Math.floor(Math.random() * 1e9)
      .toString(36)
      .toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  });
}
