/**
 * The envelope every answer shares: request ids, the error envelope and handler, strict JSON
 * bodies, body deadlines, the request log line, and the answers given on a bare socket to what
 * never becomes a fastify request. Its `open` hook runs first on every request; `envelopeGate`
 * (registered after `auth` and `limits`) raises what those let through to be counted first.
 */
import { isUtf8 } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Language, Mode } from '../../detector/types.ts';
import { ApiError, envelope, genericError } from '../errors.ts';
import { CALLER_REQUEST_ID_PATTERN, newRequestId } from '../ids.ts';

/** What the request log line carries, filled in as the request goes along. */
export interface RequestContext {
  callerRequestId: string | undefined;
  keyId: string | undefined;
  mode: Mode | undefined;
  language: Language | undefined;
  textLength: number | undefined;
  errorCode: string | undefined;
  /** POST /v1/detect/author: messages in the request, units of the rate limit charged, and what the engine used. */
  messageCount?: number;
  costUnits?: number;
  messagesUsed?: number;
  wordsUsed?: number;
  /** POST /v1/detect/file: what may be logged of a file (never its name or contents). */
  fileType?: string;
  fileBytes?: number;
  filePages?: number | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  interface FastifyContextConfig {
    /** The route needs an API key (the `auth` plugin checks it). */
    apiKey?: boolean;
    /** Never refused for the rate limit (probes, metrics, the contract); answers still report the budget. */
    unlimited?: boolean;
  }
}

export interface EnvelopeOptions {
  config: { bodyLimitBytes: number; bodyTimeoutMs: number };
  /** True once shutdown has begun: new requests get 503 and `Connection: close`. */
  isClosing(): boolean;
}

/** How long the rest of a refused request's body may take to arrive before the connection is cut. */
const REFUSED_BODY_GRACE_MS = 250;

export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && !/^"?utf-8"?$/i.test(value?.trim() ?? '')) return false;
  }
  return true;
}

/** True when the request announced a body that nobody has read yet. */
function hasUnreadBody(request: FastifyRequest): boolean {
  const headers = request.headers;
  const announced =
    headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced && !request.raw.complete;
}

/**
 * For a request refused before its body was read (401, 404, 429…): after the answer Node drains the
 * body to reuse the connection, and would keep reading whatever a slow client trickles until its
 * own timeouts fire (about a minute). A body that is already here or arrives at once keeps the
 * keep-alive connection (an SDK retrying after a 429 should not pay a reconnect); one still
 * trickling in after a short grace gets the connection closed.
 */
function closeIfBodyLingers(request: FastifyRequest, reply: FastifyReply): void {
  const req = request.raw;
  reply.raw.once('finish', () => {
    if (req.complete) return;
    const timer = setTimeout(() => {
      if (!req.complete) req.socket.destroy();
    }, REFUSED_BODY_GRACE_MS);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
  });
}

function setIdHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('Request-Id', request.id);
  reply.header('X-Request-Id', request.ctx?.callerRequestId ?? request.id);
}

/** Answers with `error` in the envelope. */
export async function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): Promise<FastifyReply> {
  if (request.ctx) request.ctx.errorCode = error.code;
  setIdHeaders(request, reply);
  if (error.options.headers) reply.headers(error.options.headers);
  // The rest of an oversized or stalled body is not worth reading: close instead of draining it.
  if (error.code === 'payload_too_large' || error.code === 'request_timeout') reply.header('Connection', 'close');
  else if (hasUnreadBody(request)) closeIfBodyLingers(request, reply);
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(envelope(error, request.id));
}

/**
 * Maps every error fastify or our code raises to an ApiError; anything unexpected becomes 500.
 * Routes with a body schema turn their own validation failures into errors that name their fields.
 */
export function toApiError(error: FastifyError | ApiError | Error, bodyLimitBytes: number): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError;
  if (fe.validation) return new ApiError(400, 'invalid_request', 'The request body does not match the API schema.');
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with the header Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', `The request body is larger than ${bodyLimitBytes} bytes.`, {
        details: { max_bytes: bodyLimitBytes },
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_request', 'The body length does not match the Content-Length header.', { param: 'Content-Length' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_json', 'The request body is empty; send a JSON object such as {"text": "..."}.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(400, 'invalid_request', 'The request URL is malformed.');
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return genericError(500);
    default:
      break;
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  // Client-side stream failures (aborted uploads and the like) are 4xx; keep their status, not their text.
  if (status >= 400 && status < 500) return genericError(status);
  return genericError(500);
}

/**
 * The answers given on a bare socket, for what never becomes a fastify request (parser errors,
 * CONNECT), then the connection is closed. Made before the fastify instance, whose
 * `clientErrorHandler` option needs it.
 */
export function socketAnswers(logger: FastifyBaseLogger) {
  function answerOnSocket(socket: Socket, apiError: ApiError, logFields: Record<string, unknown>, message: string): void {
    const requestId = newRequestId();
    const status = apiError.statusCode;
    const body = JSON.stringify(envelope(apiError, requestId));
    logger.info({ request_id: requestId, status, code: apiError.code, ...logFields }, message);
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const extra = Object.entries(apiError.options.headers ?? {})
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\n${extra}` +
        `Request-Id: ${requestId}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), 1000).unref();
  }

  function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const status =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? 431
          : err.code === 'HPE_URI_TOO_LONG'
            ? 414
            : 400;
    const apiError = status === 400 ? new ApiError(400, 'invalid_request', 'The HTTP request is malformed.') : genericError(status);
    answerOnSocket(socket, apiError, { parser_error: err.code }, 'client error');
  }

  return { answerOnSocket, clientErrorHandler };
}

/** Strict JSON in UTF-8 only: fastify's default parser would silently replace invalid bytes. */
function addJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (!isJsonContentType(request.headers['content-type'])) {
      done(
        new ApiError(
          415,
          'unsupported_media_type',
          'The body must be JSON encoded as UTF-8 (Content-Type: application/json; charset=utf-8).',
        ),
        undefined,
      );
      return;
    }
    if (body.length === 0) {
      const example = request.url.startsWith('/v1/detect/author') ? '{"messages": ["...", "..."]}' : '{"text": "..."}';
      done(new ApiError(400, 'invalid_json', `The request body is empty; send a JSON object such as ${example}.`), undefined);
      return;
    }
    if (!isUtf8(body)) {
      done(new ApiError(400, 'invalid_json', 'The request body is not valid UTF-8.'), undefined);
      return;
    }
    // A UTF-8 byte-order mark is not JSON, but some tools add one; it carries no meaning.
    const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
    try {
      done(null, JSON.parse(body.toString('utf8', start)));
    } catch (err) {
      const position = /position (\d+)/.exec((err as Error).message)?.[1];
      done(
        new ApiError(400, 'invalid_json', `The request body is not valid JSON${position ? ` (error at character ${position})` : ''}.`),
        undefined,
      );
    }
  });
}

function badCallerId(request: FastifyRequest): ApiError | undefined {
  if (request.headers['x-request-id'] === undefined || request.ctx.callerRequestId !== undefined) return undefined;
  return new ApiError(400, 'invalid_request', 'X-Request-Id must be a UUID such as 0b5f2a62-6f5c-4c1e-9d1e-2a3b4c5d6e7f.', {
    param: 'X-Request-Id',
  });
}

async function envelopePlugin(app: FastifyInstance, options: EnvelopeOptions): Promise<void> {
  const { config, isClosing } = options;
  const { answerOnSocket } = socketAnswers(app.log);

  app.decorateRequest('ctx', null as unknown as RequestContext);
  // Node answers an Expect it does not know with a bare 417 unless someone listens; route such
  // requests through fastify so the onRequest hook answers in the envelope.
  app.server.on('checkExpectation', (req, res) => app.routing(req, res));
  // Node answers `Expect: 100-continue` with 100 before anything looks at the request; routed here
  // instead, the 100 is sent by the gate's preParsing hook, once nothing will refuse the request
  // unread (a bad key, a file announced too large), so a refused caller never sends its body.
  app.server.on('checkContinue', (req, res) => app.routing(req, res));
  // Without a listener Node closes a CONNECT's connection without a word. This is not a proxy.
  app.server.on('connect', (req: { method?: string; url?: string }, socket: Socket) => {
    answerOnSocket(
      socket,
      new ApiError(405, 'method_not_allowed', 'CONNECT is not supported: this server is not a proxy. The API is POST /v1/detect.', {
        headers: { Allow: 'GET, HEAD, POST' },
      }),
      { method: req.method, path: String(req.url ?? '').slice(0, 200) },
      'CONNECT refused',
    );
  });

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, config.bodyLimitBytes);
    if (apiError.statusCode >= 500 && !(error instanceof ApiError)) {
      request.log.error({ err: error }, 'unhandled error');
    }
    return sendError(request, reply, apiError);
  });

  app.setNotFoundHandler(async (request, reply) => sendError(request, reply, genericError(404)));

  // First on every request: the ids (what no request may pass whoever sends it is the gate's, once counted).
  app.addHook('onRequest', async (request, reply) => {
    const caller = request.headers['x-request-id'];
    request.ctx = {
      callerRequestId: typeof caller === 'string' && CALLER_REQUEST_ID_PATTERN.test(caller) ? caller : undefined,
      keyId: undefined,
      mode: undefined,
      language: undefined,
      textLength: undefined,
      errorCode: undefined,
    };
    setIdHeaders(request, reply);
  });

  addJsonParser(app);

  // Bodies must arrive within bodyTimeoutMs: a client trickling bytes would otherwise hold a
  // connection and a buffer for as long as it likes.
  app.addHook('preParsing', async (request, reply, payload) => {
    if (request.raw.complete) return payload;
    const timer = setTimeout(() => {
      reply.header('Connection', 'close');
      payload.emit('error', new ApiError(408, 'request_timeout', `The request body did not arrive within ${config.bodyTimeoutMs} ms.`));
    }, config.bodyTimeoutMs);
    const clear = () => clearTimeout(timer);
    payload.once('end', clear);
    payload.once('close', clear);
    payload.once('error', clear);
    return payload;
  });

  // During shutdown, answers to requests already in flight close their connection, so the
  // server's close() does not wait for keep-alive sockets to time out.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (isClosing()) reply.header('Connection', 'close');
    // Answers echo the submitted text (segments) and carry per-key budgets: no cache may keep
    // them. The web page's files set their own caching.
    if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const ctx = request.ctx;
    const path = request.routeOptions.url ?? request.url.split('?')[0]?.slice(0, 200);
    request.log.info(
      {
        caller_request_id: ctx?.callerRequestId,
        key_id: ctx?.keyId,
        // Tells the bots, the CLI and other callers apart in the logs (capped: it is the caller's text).
        user_agent: request.headers['user-agent']?.slice(0, 200),
        method: request.method,
        path,
        mode: ctx?.mode,
        language: ctx?.language,
        text_length: ctx?.textLength,
        message_count: ctx?.messageCount,
        cost_units: ctx?.costUnits,
        messages_used: ctx?.messagesUsed,
        words_used: ctx?.wordsUsed,
        file_type: ctx?.fileType,
        file_bytes: ctx?.fileBytes,
        file_pages: ctx?.filePages,
        status: reply.statusCode,
        error_code: ctx?.errorCode,
        latency_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

/**
 * Registered after `auth` and `limits`: a request is counted against its budget before it is
 * refused (shutting down, no Host, an unknown Expect, a bad key, a bad X-Request-Id, an unknown
 * path: scanning and key guessing use up the address's budget), so every such answer carries the
 * RateLimit-* headers; unknown paths and compressed bodies are answered before any body is read, so
 * e.g. a bad Content-Type cannot turn a 404 into a 415.
 */
async function gatePlugin(app: FastifyInstance, { isClosing }: Pick<EnvelopeOptions, 'isClosing'>): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    // What no request may pass whoever sends it, probes included; after the count, so these answers
    // carry the RateLimit-* headers as every other does.
    if (isClosing()) {
      reply.header('Connection', 'close');
      throw new ApiError(503, 'not_ready', 'The service is shutting down; retry on another instance or in a moment.', {
        retryAfter: 1,
        headers: { 'Retry-After': '1' },
      });
    }
    const raw = request.raw;
    if (!request.headers.host && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) {
      throw new ApiError(400, 'invalid_request', 'The request has no Host header, which HTTP/1.1 requires; send Host: <server name>.', {
        param: 'Host',
      });
    }
    const expectation = request.headers.expect;
    if (expectation !== undefined && expectation.trim().toLowerCase() !== '100-continue') {
      throw new ApiError(
        417,
        'expectation_failed',
        `The server does not support "Expect: ${expectation.slice(0, 40)}"; only "Expect: 100-continue" is understood. Send the request without that header.`,
        { param: 'Expect' },
      );
    }
    if (request.authFailure) throw request.authFailure;
    const badId = badCallerId(request);
    if (badId) throw badId;
    if (!request.is404 && request.routeOptions.config?.unlimited) return;
    if (request.is404) throw genericError(404);
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity' && encoding.trim() !== '') {
      // A compressed body would otherwise reach the JSON parser as bytes and read as "invalid JSON".
      throw new ApiError(
        415,
        'unsupported_encoding',
        `The request body must not be compressed (Content-Encoding: ${encoding.slice(0, 40)}); send it as plain JSON without a Content-Encoding header.`,
        { param: 'Content-Encoding', headers: { 'Accept-Encoding': 'identity' } },
      );
    }
  });
  continueWhenRead(app);
}

/** The 100 Continue a client that sent `Expect: 100-continue` waits for, once its request will be read. */
function continueWhenRead(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    if (
      String(request.headers.expect ?? '')
        .trim()
        .toLowerCase() !== '100-continue' ||
      reply.raw.headersSent
    )
      return payload;
    const length = Number(request.headers['content-length']);
    const multipart = String(request.headers['content-type'] ?? '')
      .toLowerCase()
      .startsWith('multipart/');
    // A JSON body announced over the limit is refused by the parser before a byte is read: no 100.
    if (!multipart && Number.isFinite(length) && length > request.routeOptions.bodyLimit) return payload;
    reply.raw.writeContinue();
    return payload;
  });
}

export const envelopeHooks = fp(envelopePlugin, { name: 'envelope', fastify: '5.x' });
export const envelopeGate = fp(gatePlugin, { name: 'envelope-gate', dependencies: ['envelope', 'auth', 'limits'] });

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Answers the methods a known path does not serve with 405 and Allow, rather than a misleading 404. */
export function refuseOtherMethods(app: FastifyInstance, url: string, methods: string[], unlimited = false): void {
  app.route({
    method: ALL_METHODS.filter((m) => !methods.includes(m)),
    url,
    exposeHeadRoute: false,
    config: { unlimited },
    onRequest: async () => {
      throw new ApiError(405, 'method_not_allowed', `${url} accepts ${methods.filter((m) => m !== 'HEAD').join(', ')} only.`, {
        headers: { Allow: methods.join(', ') },
      });
    },
    handler: async () => undefined,
  });
}
