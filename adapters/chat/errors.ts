/**
 * Turns whatever a detection call threw into one sentence a moderator can act on. Both bots show
 * this text verbatim, so it never contains a stack, an API key or the submitted text.
 */
import {
  AbortedError,
  AuthenticationError,
  ConnectionError,
  DetectError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../../src/client/errors.ts';

/** Whole seconds to wait, never 0 (a moderator told "try again in 0 s" retries at once and fails again). */
export function retryAfterSeconds(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 1;
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * Adds the service's request id for support to look up. Only the service's own ids (`req_…`) are
 * shown: when no answer came, the client's error carries the id the bot made up for the call, which
 * the service may never have seen.
 */
function withRequestId(sentence: string, requestId: string | undefined): string {
  return requestId?.startsWith('req_') ? `${sentence} (request id: ${requestId})` : sentence;
}

/** Invalid-request codes the service sends, worded for someone who cannot change the API call, only the text. */
function describeInvalidRequest(err: InvalidRequestError): string {
  const tooLong = 'This text is too long to check. Shorten it (or check it in parts) and try again.';
  const empty = 'There is no text to check. Add some text (or pick a message that has text) and try again.';
  switch (err.code) {
    case 'text_too_long':
    case 'payload_too_large':
      return tooLong;
    case 'empty_text':
      return empty;
    case 'unsupported_language':
      return 'This text is in a language the detector does not support: only English and Turkish can be checked.';
    default:
      if (err.param === 'text' && /whitespace|empty|blank/i.test(err.message)) return empty;
      if (err.param === 'mode') return 'That mode is not known. Use one of: general, academic, financial, legal.';
      // The service's own message is written for people (see ErrorEnvelope); pass it through.
      return `The detection service refused this text: ${oneLine(err.message)}`;
  }
}

/** Keeps a message to one short line: chat replies with multi-line server messages read as crashes. */
function oneLine(message: string, max = 300): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat || 'no reason given.';
}

/**
 * One sentence a moderator can act on, for any error a detection attempt can throw: the client's
 * `DetectError` family, the adapter's own `EmptyTextError`/`TextTooLongError`, or anything else
 * (reported as an internal failure without detail, since arbitrary errors may carry internals).
 */
export function describeDetectError(err: unknown): string {
  if (err instanceof ChatInputError) return err.message;
  if (err instanceof RateLimitError) {
    return withRequestId(
      `The detection service is busy (rate limit reached). Try again in ${retryAfterSeconds(err.retryAfterMs)} s.`,
      err.requestId,
    );
  }
  if (err instanceof InvalidRequestError) return withRequestId(describeInvalidRequest(err), err.requestId);
  if (err instanceof AuthenticationError) {
    return withRequestId(
      'The bot could not sign in to the detection service (its API key is missing, revoked or expired). Ask the bot admin to set a valid DETECT_API_KEY.',
      err.requestId,
    );
  }
  if (err instanceof PermissionError) {
    return withRequestId(
      'The bot’s API key is not allowed on this detection server (sandbox key on a live server, or the reverse). Ask the bot admin to fix DETECT_API_KEY.',
      err.requestId,
    );
  }
  if (err instanceof TimeoutError) {
    return withRequestId('The detection service took too long to answer. Try again in a minute.', err.requestId);
  }
  if (err instanceof ConnectionError) {
    return 'The detection service is unreachable right now. Try again in a few minutes; if it persists, tell the bot admin.';
  }
  if (err instanceof ServerError) {
    return withRequestId(
      'The detection service is down or failing right now. Try again in a few minutes; if it persists, tell the bot admin and quote the request id.',
      err.requestId,
    );
  }
  if (err instanceof AbortedError) return 'The check was cancelled before it finished. Run it again.';
  if (err instanceof DetectError) {
    return withRequestId(`The check failed (${err.code}). Try again; if it persists, tell the bot admin.`, err.requestId);
  }
  return 'Something went wrong inside the bot while checking this text. Try again; if it persists, tell the bot admin.';
}

/** Problems with what the moderator asked for, found before any call to the service. */
export class ChatInputError extends Error {
  override name = 'ChatInputError';
  /** Machine-readable, for logs: `empty_text`, `text_too_long`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export class EmptyTextError extends ChatInputError {
  override name = 'EmptyTextError';
  constructor(message = 'There is no text to check. Add some text (or pick a message that has text) and try again.') {
    super('empty_text', message);
  }
}

export class TextTooLongError extends ChatInputError {
  override name = 'TextTooLongError';
  readonly maxChars: number;
  constructor(length: number, maxChars: number) {
    super(
      'text_too_long',
      `This text is too long to check (${length.toLocaleString('en-US')} characters; the limit is ${maxChars.toLocaleString('en-US')}). Shorten it or check it in parts.`,
    );
    this.maxChars = maxChars;
  }
}

/** A short machine-readable tag for logs and the audit channel: never the text, never a stack. */
export function errorCode(err: unknown): string {
  if (err instanceof ChatInputError) return err.code;
  if (err instanceof DetectError) return err.code;
  return 'internal_error';
}
