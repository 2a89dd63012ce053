import { describe, expect, it } from 'vitest';
import { describeDetectError, EmptyTextError, errorCode, retryAfterSeconds, TextTooLongError } from '../../adapters/chat/errors.ts';
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

describe('describeDetectError', () => {
  it('tells how long to wait on a rate limit, rounded up to whole seconds', () => {
    const err = new RateLimitError('Too many requests', { status: 429, code: 'rate_limited', requestId: 'req_1', retryAfterMs: 41_200 });
    expect(describeDetectError(err)).toBe('The detection service is busy (rate limit reached). Try again in 42 s. (request id: req_1)');
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(Number.NaN)).toBe(1);
    expect(retryAfterSeconds(999)).toBe(1);
  });

  it('words each invalid-request code for someone who can only change the text', () => {
    const tooLong = new InvalidRequestError('x', { status: 413, code: 'text_too_long', param: 'text' });
    expect(describeDetectError(tooLong)).toMatch(/^This text is too long to check/);
    const blank = new InvalidRequestError('The field "text" must contain at least one non-whitespace character.', {
      status: 400,
      code: 'invalid_request',
      param: 'text',
    });
    expect(describeDetectError(blank)).toMatch(/^There is no text to check/);
    const lang = new InvalidRequestError('x', { status: 422, code: 'unsupported_language' });
    expect(describeDetectError(lang)).toContain('only English and Turkish');
    const other = new InvalidRequestError('Something\n  odd   happened.', { status: 400, code: 'invalid_request', requestId: 'req_2' });
    expect(describeDetectError(other)).toBe('The detection service refused this text: Something odd happened. (request id: req_2)');
  });

  it('covers auth, permission, timeouts, outages and cancellation without internals', () => {
    const cases: [DetectError, RegExp][] = [
      [new AuthenticationError('bad key sk_test_secret', { status: 401, code: 'invalid_api_key' }), /DETECT_API_KEY/],
      [new PermissionError('x', { status: 403, code: 'wrong_environment' }), /not allowed on this detection server/],
      [new TimeoutError('x', { code: 'timeout' }), /took too long/],
      [new ConnectionError('connect ECONNREFUSED 127.0.0.1:1', { code: 'connection_error' }), /unreachable/],
      [new ServerError('x', { status: 503, code: 'not_ready', requestId: 'req_3' }), /down or failing.*req_3/],
      [new AbortedError('x', { code: 'aborted' }), /cancelled/],
      [new DetectError('x', { code: 'weird' }), /failed \(weird\)/],
    ];
    for (const [err, pattern] of cases) {
      const sentence = describeDetectError(err);
      expect(sentence).toMatch(pattern);
      expect(sentence).not.toContain('sk_test_');
      expect(sentence).not.toContain('ECONNREFUSED');
    }
  });

  it('shows only request ids the service gave, never the id the client made up for a call that got no answer', () => {
    const local = '3f2c9a6e-8d1b-4c5e-9f7a-2b6d8e0c1a4f';
    expect(describeDetectError(new TimeoutError('timeout', { code: 'timeout', requestId: local }))).toBe(
      'The detection service took too long to answer. Try again in a minute.',
    );
    expect(describeDetectError(new DetectError('x', { code: 'limiter_unavailable', requestId: local }))).not.toContain(local);
    expect(
      describeDetectError(new ServerError('x', { status: 502, code: 'bad_gateway', requestId: 'req_01J0000000000000000000000A' })),
    ).toContain('(request id: req_01J0000000000000000000000A)');
  });

  it('never exposes an unknown error', () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(describeDetectError(err)).toBe(
      'Something went wrong inside the bot while checking this text. Try again; if it persists, tell the bot admin.',
    );
    expect(describeDetectError('a string')).toMatch(/went wrong inside the bot/);
    expect(errorCode(err)).toBe('internal_error');
  });

  it('passes the adapter’s own input errors through', () => {
    expect(describeDetectError(new EmptyTextError())).toMatch(/^There is no text to check/);
    const long = new TextTooLongError(60_000, 50_000);
    expect(describeDetectError(long)).toBe(
      'This text is too long to check (60,000 characters; the limit is 50,000). Shorten it or check it in parts.',
    );
    expect(errorCode(long)).toBe('text_too_long');
  });
});
