/**
 * One hierarchy for everything the client can throw, so callers can `instanceof` their way to a
 * reaction (re-auth, wait, fix the input, page someone) without reading status codes.
 */

export interface DetectErrorInit {
  status?: number | undefined;
  code: string;
  requestId?: string | undefined;
  cause?: unknown;
}

export class DetectError extends Error {
  override name = 'DetectError';
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** Machine-readable code: the server's `error.code`, or the client's own (`timeout`, `connection_error`, `aborted`). */
  readonly code: string;
  /** The `req_…` id of the failed call (or the X-Request-Id the client sent) to quote to support. */
  readonly requestId: string | undefined;

  constructor(message: string, init: DetectErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
  }
}

/** 401: the key is missing, unknown, revoked or expired. */
export class AuthenticationError extends DetectError {
  override name = 'AuthenticationError';
}

/** 403: the key is valid but not for this server (a live key on a sandbox server, or the reverse). */
export class PermissionError extends DetectError {
  override name = 'PermissionError';
}

/** 400/404/405/413/415/422: the request itself must change; retrying cannot help (file problems: FileError below). */
export class InvalidRequestError extends DetectError {
  override name = 'InvalidRequestError';
  /** The offending field, when the server named one. */
  readonly param: string | undefined;
  constructor(message: string, init: DetectErrorInit & { param?: string | undefined }) {
    super(message, init);
    this.param = init.param;
  }
}

/** 429 that outlasted every retry. */
export class RateLimitError extends DetectError {
  override name = 'RateLimitError';
  /** How long the server asked to wait before the next call. */
  readonly retryAfterMs: number;
  constructor(message: string, init: DetectErrorInit & { retryAfterMs: number }) {
    super(message, init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 5xx that outlasted every retry. */
export class ServerError extends DetectError {
  override name = 'ServerError';
}

/** No complete answer within `timeoutMs`, after every retry. */
export class TimeoutError extends DetectError {
  override name = 'TimeoutError';
}

/** The server could not be reached (refused, reset, DNS), after every retry. */
export class ConnectionError extends DetectError {
  override name = 'ConnectionError';
}

/** The caller's AbortSignal fired; never retried. */
export class AbortedError extends DetectError {
  override name = 'AbortedError';
}

/**
 * `POST /v1/detect/file`: the server could not score the document itself (status 413, 415 or 422);
 * sending the same file again cannot help. The subclasses tell why; `code` is the server's.
 */
export class FileError extends InvalidRequestError {
  override name = 'FileError';
}

/** 415 `unsupported_file_type`: the bytes are not a PDF, DOCX, plain text, Markdown or HTML file (told from the content, not the name). */
export class UnsupportedFileTypeError extends FileError {
  override name = 'UnsupportedFileTypeError';
}

/** 413 `file_too_large` (over the server's size limit) or `too_many_pages` (a PDF over its page limit). */
export class FileTooLargeError extends FileError {
  override name = 'FileTooLargeError';
}

/** 422 `file_unreadable`: encrypted (password-protected), corrupt, or unpacking to more than the server reads. */
export class FileUnreadableError extends FileError {
  override name = 'FileUnreadableError';
}

/** 422 `no_text_in_file`: nothing to read, e.g. a scanned PDF without a text layer (the server does no OCR). */
export class NoTextInFileError extends FileError {
  override name = 'NoTextInFileError';
}
