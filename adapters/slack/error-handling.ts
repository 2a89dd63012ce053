/**
 * What the Slack app does with a request it cannot handle: log it (type, ids, error name and code;
 * never a token or any text) and answer 200, so Slack neither shows the user "dispatch_failed" for a
 * payload that will never get better nor retries it. Where the request came with a response_url,
 * the person who clicked also gets an ephemeral sentence saying the request could not be read.
 *
 * Two layers: the receiver (a request no listener acknowledged, or middleware that threw before the
 * ack) and the app's error handler (a listener that threw after its ack). Requests that fail the
 * signature check still get 401: they are not from Slack. A signed body that is neither JSON nor a
 * form cannot be parsed at all and keeps Bolt's 400.
 */
import type { App, HTTPReceiverOptions, ReceiverEvent, SocketModeReceiverOptions } from '@slack/bolt';
import type { Logger } from 'pino';
import { missingScopeOf, missingScopeSentence } from './scopes.ts';

export const UNREADABLE_REQUEST_REPLY =
  'Sorry, the app could not read this request from Slack, so nothing was checked. Try again; if it keeps happening, tell the app admin.';

/**
 * Under Slack's 3 s: the receiver's last resort for a request nothing acknowledged. Requests that
 * reach the app are acknowledged as soon as its listeners are done (`acknowledgeUnhandled`); this
 * timer is left for those Bolt drops before them (no type it knows, authorization failed).
 */
export const UNHANDLED_REQUEST_ACK_MS = 2_500;

type Json = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function objectOf(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

/** The parsed payload of a request body: form fields, with interactivity's JSON `payload` unpacked. */
function payloadOf(body: unknown): Json | undefined {
  const b = objectOf(body);
  if (!b) return undefined;
  if (typeof b.payload === 'string') {
    try {
      return objectOf(JSON.parse(b.payload));
    } catch {
      return undefined;
    }
  }
  return b;
}

/** Log fields that identify a request without its tokens or text. */
export function requestFields(body: unknown): Record<string, unknown> {
  const p = payloadOf(body);
  if (!p) return { payload: 'unreadable' };
  const team = objectOf(p.team);
  const user = objectOf(p.user);
  const event = objectOf(p.event);
  return {
    type: str(p.type) ?? (str(p.command) ? 'slash_command' : undefined),
    command: str(p.command),
    callback_id: str(p.callback_id),
    event_type: str(event?.type),
    team: str(team?.id) ?? str(p.team_id),
    user: str(user?.id) ?? str(p.user_id),
  };
}

function errorFields(err: unknown): Record<string, unknown> {
  const e = err as { name?: unknown; code?: unknown; original?: { name?: unknown; message?: unknown } };
  return {
    err_name: typeof e?.name === 'string' ? e.name : typeof err,
    code: typeof e?.code === 'string' ? e.code : undefined,
    original: typeof e?.original?.name === 'string' ? e.original.name : undefined,
    reason: installationKeyReason(err),
  };
}

/**
 * The installation store's own sentence when a stored installation does not open with
 * SLACK_INSTALLATION_KEY (it names the variable, never a token), however deep Bolt wrapped it. Other
 * messages are left out of the log, since they could quote a request back.
 */
function installationKeyReason(err: unknown): string | undefined {
  let e = err as { name?: unknown; message?: unknown; original?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++, e = e.original as typeof e) {
    if (e.name === 'InstallationKeyError' && typeof e.message === 'string') return e.message;
  }
  return undefined;
}

/** Only Slack's own hosts (and, in tests, the configured API host) get our message. */
function isSlackResponseUrl(url: string, slackApiUrl: string): boolean {
  try {
    const u = new URL(url);
    const api = new URL(slackApiUrl);
    return (u.protocol === 'https:' && (u.hostname === 'hooks.slack.com' || u.hostname.endsWith('.slack.com'))) || u.host === api.host;
  } catch {
    return false;
  }
}

/** The scope Slack said was missing, however deep Bolt wrapped the error. */
function missingScopeReason(err: unknown): string | undefined {
  let e = err as { original?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++, e = e.original as typeof e) {
    const scope = missingScopeOf(e);
    if (scope) return scope;
  }
  return undefined;
}

async function tellUser(body: unknown, slackApiUrl: string, logger: Logger, text = UNREADABLE_REQUEST_REPLY): Promise<void> {
  const url = str(payloadOf(body)?.response_url);
  if (!url || !isSlackResponseUrl(url, slackApiUrl)) return;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer();
  } catch (err) {
    logger.warn({ ...errorFields(err) }, 'could not tell the user their request was unreadable');
  }
}

/**
 * A request that no listener takes (an unknown command, shortcut, button or event type) is acknowledged
 * as soon as the app has run it through its listeners, in HTTP and Socket Mode alike, instead of when
 * the receiver's fallback timer fires. The app runs every listener before `processEvent` settles, and
 * ours ack first thing, so a request still unacknowledged then will never be.
 */
export function acknowledgeUnhandled(app: App, logger: Logger): void {
  const processEvent = app.processEvent.bind(app);
  app.processEvent = async (event: ReceiverEvent): Promise<void> => {
    let acked = false;
    const tracked: ReceiverEvent = {
      ...event,
      ack: (response?: unknown) => {
        acked = true;
        return event.ack(response);
      },
    };
    // A rejection goes to the receiver's processEventErrorHandler, which acknowledges it itself.
    await processEvent(tracked);
    if (acked) return;
    logger.warn(
      { ...requestFields(event.body) },
      'no listener acknowledged a Slack request; answered 200 at once so Slack does not retry it',
    );
    await event.ack();
  };
}

/** Receiver options: bad payloads are logged and acknowledged with 200 instead of 404/500. */
export function receiverErrorOptions(
  logger: Logger,
): Pick<HTTPReceiverOptions, 'processEventErrorHandler' | 'unhandledRequestHandler' | 'unhandledRequestTimeoutMillis'> {
  return {
    unhandledRequestTimeoutMillis: UNHANDLED_REQUEST_ACK_MS,
    unhandledRequestHandler: ({ request, response }) => {
      logger.warn({ path: request.url }, 'no listener acknowledged a Slack request; answered 200 so Slack does not retry it');
      if (!response.headersSent) response.writeHead(200).end();
    },
    processEventErrorHandler: async ({ error, response }) => {
      logger.error(
        { ...errorFields(error), acked: response.headersSent },
        'a Slack request failed before its listener answered; acknowledged with 200',
      );
      // true: Bolt sends the 200 (unless a listener already did).
      return true;
    },
  };
}

/**
 * Socket Mode: a request that failed before its listener acknowledged it is logged and its envelope
 * acknowledged (Bolt's default leaves it unacknowledged, so Slack retries it and shows an error).
 */
export function socketModeErrorOptions(logger: Logger): Pick<SocketModeReceiverOptions, 'processEventErrorHandler'> {
  return {
    processEventErrorHandler: async ({ error, event }) => {
      logger.error(
        { ...requestFields(event.body), ...errorFields(error) },
        'a Slack request failed before its listener answered; envelope acknowledged',
      );
      return true;
    },
  };
}

/** The app's error handler (`extendedErrorHandler: true`): a listener threw, usually after its ack. */
export function listenerErrorHandler(logger: Logger, slackApiUrl: string): (args: { error: Error; body: unknown }) => Promise<void> {
  return async ({ error, body }) => {
    const scope = missingScopeReason(error);
    if (scope) {
      // A listener met a scope the token lacks: the person is told which one, not that the request was unreadable.
      logger.warn({ ...requestFields(body), scope }, 'a Slack listener needs a scope the app lacks');
      await tellUser(body, slackApiUrl, logger, missingScopeSentence(scope));
      return;
    }
    logger.error({ ...requestFields(body), ...errorFields(error) }, 'unhandled error in a Slack listener');
    await tellUser(body, slackApiUrl, logger);
  };
}
