/**
 * The one error envelope: every non-2xx answer is `{"error": {type, code, message, request_id, …}}`,
 * with `type` fixed per status so clients can branch on it (see src/contract.ts).
 */
import { errorTypeFor, type ErrorEnvelope } from '../contract.ts';

export { errorTypeFor };

export interface ApiErrorOptions {
  /** The offending request field (body field name, or a header name such as `X-Request-Id`). */
  param?: string;
  /** Seconds to wait (429, 503). */
  retryAfter?: number;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Allow`. */
  headers?: Record<string, string>;
  /** Extra machine-readable fields merged into `error` (e.g. `detected_language`). */
  details?: Record<string, unknown>;
}

/** An error answered as-is to the caller: status, machine code and a sentence a person can act on. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  readonly code: string;
  readonly options: ApiErrorOptions;
  constructor(statusCode: number, code: string, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.options = options;
  }
}

export type ErrorBody = ErrorEnvelope['error'] & Record<string, unknown>;

export function envelope(error: ApiError, requestId: string): { error: ErrorBody } {
  const body: ErrorBody = {
    type: errorTypeFor(error.statusCode),
    code: error.code,
    message: error.message,
    request_id: requestId,
  };
  if (error.options.param !== undefined) body.param = error.options.param;
  if (error.options.retryAfter !== undefined) body.retry_after = error.options.retryAfter;
  if (error.options.details) Object.assign(body, error.options.details);
  return { error: body };
}

/** Generic answers for statuses that have no more specific code. */
export const GENERIC: Record<number, { code: string; message: string }> = {
  400: { code: 'invalid_request', message: 'The request is malformed.' },
  404: {
    code: 'not_found',
    message:
      'There is no such endpoint; the API is POST /v1/detect, POST /v1/detect/file and POST /v1/detect/author (see GET /v1/openapi.json).',
  },
  405: { code: 'method_not_allowed', message: 'This endpoint does not accept that HTTP method.' },
  408: { code: 'request_timeout', message: 'The request body did not arrive in time; send it again.' },
  413: { code: 'payload_too_large', message: 'The request body is too large.' },
  414: { code: 'uri_too_long', message: 'The request URL is too long.' },
  415: { code: 'unsupported_media_type', message: 'Send the body as JSON with Content-Type: application/json.' },
  431: { code: 'headers_too_large', message: 'The request headers are too large.' },
  500: { code: 'internal_error', message: 'Something went wrong on our side; try again, and quote the request_id if it keeps happening.' },
  503: { code: 'not_ready', message: 'The service is starting or shutting down; try again shortly.' },
};

export function genericError(status: number): ApiError {
  const known = GENERIC[status] ?? (status >= 500 ? GENERIC[500]! : GENERIC[400]!);
  return new ApiError(status, known.code, known.message);
}
