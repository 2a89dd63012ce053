/**
 * The fastify application: routes, the error envelope, authentication, rate limiting and request
 * logs. `index.ts` wires it to the engine, the key store and Redis, and owns the lifecycle.
 */
import { isUtf8 } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import Fastify, { LogController } from 'fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AUTHOR_MAX_MESSAGES, AUTHOR_MESSAGES_PER_UNIT, authorRequestCost } from '../contract.ts';
import type { AuthorDetectOptions, DetectOptions, Language, Mode } from '../detector/types.ts';
import { UnsupportedLanguageError } from '../detector/types.ts';
import type { ServiceConfig } from './config.ts';
import type { EngineHost } from './engine.ts';
import { ApiError, envelope, genericError } from './errors.ts';
import { CALLER_REQUEST_ID_PATTERN, newRequestId } from './ids.ts';
import type { KeyCheck, KeyStore, StoredApiKey } from './keys.ts';
import type { KeyFileError } from './keys.ts';
import { metricsPlugin } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import playground from './playground/index.ts';
import type { RedisCounters } from './ratelimit.ts';
import {
  detectAuthorRequestSchema,
  detectAuthorResponseSchema,
  detectRequestSchema,
  detectResponseSchema,
  healthSchema,
  readySchema,
} from './schemas.ts';

export interface AppDependencies {
  config: ServiceConfig & { rateLimitWindowMs: number; bodyLimitBytes: number };
  logger: Logger;
  engine: EngineHost;
  keys: KeyStore;
  /** Present when `redisUrl` is configured. */
  counters: RedisCounters | undefined;
  /** True once shutdown has begun: new requests get 503 and `Connection: close`. */
  isClosing(): boolean;
}

/** What the request log line carries, filled in as the request goes along. */
interface RequestContext {
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
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

interface DetectBody {
  text: string;
  mode?: Mode;
  language?: Language;
  segments?: boolean;
}

interface DetectAuthorBody {
  messages: string[];
  mode?: Mode;
  language?: Language;
}

/** Paths that are never refused for the rate limit (probes, metrics and the contract must stay reachable); their answers still report the budget. */
const UNLIMITED = new Set(['/healthz', '/readyz', '/v1/openapi.json', '/metrics']);

/** Every path the API serves, with the methods it accepts (for 405 + Allow). */
const ROUTES: Record<string, string[]> = {
  '/v1/detect': ['POST'],
  '/v1/detect/author': ['POST'],
  '/v1/openapi.json': ['GET', 'HEAD'],
  '/healthz': ['GET', 'HEAD'],
  '/readyz': ['GET', 'HEAD'],
};
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const FIELD_NAMES = new Set(['text', 'mode', 'language', 'segments']);

/** Turns an ajv validation failure into a message that names the field and says what is expected. */
function validationError(error: FastifyError, maxTextChars: number): ApiError {
  const first = error.validation?.[0];
  if (!first) return new ApiError(400, 'invalid_request', 'The request body does not match the API schema.');
  const path = first.instancePath.replace(/^\//, '');
  const params = first.params as Record<string, unknown>;
  const field = path.split('/')[0] || undefined;
  switch (first.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      return new ApiError(
        400,
        'invalid_request',
        `Unknown field "${name.slice(0, 100)}"; accepted fields are text, mode, language and segments.`,
        { param: name.slice(0, 100) },
      );
    }
    case 'required': {
      const name = String(params.missingProperty);
      return new ApiError(400, 'invalid_request', `The field "${name}" is required.`, { param: name });
    }
    case 'type': {
      if (!field) return new ApiError(400, 'invalid_request', 'The request body must be a JSON object such as {"text": "..."}.');
      const expected = String(params.type);
      return new ApiError(400, 'invalid_request', `The field "${field}" must be a ${expected}.`, { param: field });
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined)?.join(', ') ?? '';
      return new ApiError(400, 'invalid_request', `The field "${field}" must be one of: ${allowed}.`, { param: field ?? '' });
    }
    case 'maxLength':
      return new ApiError(
        413,
        'text_too_long',
        `The text is longer than ${maxTextChars} characters; split it and send the parts separately.`,
        { param: 'text', details: { max_chars: maxTextChars } },
      );
    case 'minLength':
    case 'pattern':
      return new ApiError(400, 'invalid_request', 'The field "text" must contain at least one non-whitespace character.', {
        param: 'text',
      });
    default:
      return new ApiError(
        400,
        'invalid_request',
        `The field "${field ?? 'body'}" is invalid: ${first.message ?? 'does not match the schema'}.`,
        field && FIELD_NAMES.has(field) ? { param: field } : {},
      );
  }
}

/** Index of an item in `messages` from an ajv instance path such as `/messages/3`. */
function messageIndex(instancePath: string): number | undefined {
  const match = /^\/messages\/(\d+)/.exec(instancePath);
  return match ? Number(match[1]) : undefined;
}

/** The same as `validationError`, for the fields of POST /v1/detect/author. */
function authorValidationError(error: FastifyError, body: unknown, config: AppDependencies['config']): ApiError {
  const first = error.validation?.[0];
  if (!first) return new ApiError(400, 'invalid_request', 'The request body does not match the API schema.');
  // A single text sent here by mistake: say where it belongs rather than only that "messages" is missing.
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'text' in body) {
    return new ApiError(
      400,
      'invalid_request',
      'Unknown field "text": this endpoint takes one author\'s "messages" (an array of strings); to check one text, send it to POST /v1/detect.',
      { param: 'text' },
    );
  }
  const params = first.params as Record<string, unknown>;
  const field = first.instancePath.replace(/^\//, '').split('/')[0] || undefined;
  const index = messageIndex(first.instancePath);
  const shape = `an array of 1 to ${AUTHOR_MAX_MESSAGES} strings, such as {"messages": ["first message", "second message"]}`;
  switch (first.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty).slice(0, 100);
      return new ApiError(400, 'invalid_request', `Unknown field "${name}"; accepted fields are messages, mode and language.`, {
        param: name,
      });
    }
    case 'required':
      return new ApiError(400, 'invalid_request', `The field "messages" is required: ${shape}.`, { param: 'messages' });
    case 'type':
      if (!field) return new ApiError(400, 'invalid_request', `The request body must be a JSON object whose "messages" is ${shape}.`);
      if (index !== undefined) {
        return new ApiError(400, 'invalid_request', `Message ${index} (counting from 0) is not a string; every message must be a string.`, {
          param: `messages[${index}]`,
        });
      }
      if (field === 'messages')
        return new ApiError(400, 'invalid_request', `The field "messages" must be ${shape}.`, { param: 'messages' });
      return new ApiError(400, 'invalid_request', `The field "${field}" must be a ${String(params.type)}.`, { param: field });
    case 'minItems':
      return new ApiError(400, 'invalid_request', 'The field "messages" is empty; send at least one message.', { param: 'messages' });
    case 'maxItems':
      return new ApiError(
        400,
        'invalid_request',
        `The field "messages" holds more than ${AUTHOR_MAX_MESSAGES} messages; send the ${AUTHOR_MAX_MESSAGES} most recent ones.`,
        { param: 'messages', details: { max_messages: AUTHOR_MAX_MESSAGES } },
      );
    case 'maxLength':
      return new ApiError(
        413,
        'text_too_long',
        `Message ${index ?? '?'} (counting from 0) is longer than ${config.authorMaxMessageChars} characters; shorten it, leave it out, or check it alone with POST /v1/detect.`,
        { param: `messages[${index ?? ''}]`, details: { max_chars: config.authorMaxMessageChars } },
      );
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined)?.join(', ') ?? '';
      return new ApiError(400, 'invalid_request', `The field "${field}" must be one of: ${allowed}.`, { param: field ?? '' });
    }
    default:
      return new ApiError(
        400,
        'invalid_request',
        `The field "${field ?? 'body'}" is invalid: ${first.message ?? 'does not match the schema'}.`,
        field === 'messages' || field === 'mode' || field === 'language' ? { param: field } : {},
      );
  }
}

/** Length in Unicode code points, as JSON Schema's `maxLength` counts (the text has no lone surrogates). */
function codePointLength(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** Maps every error fastify or our code raises to an ApiError; anything unexpected becomes 500. */
function toApiError(error: FastifyError | ApiError | Error, config: AppDependencies['config']): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError;
  if (fe.validation) return validationError(fe, config.maxTextChars);
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with the header Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', `The request body is larger than ${config.bodyLimitBytes} bytes.`, {
        details: { max_bytes: config.bodyLimitBytes },
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

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && !/^"?utf-8"?$/i.test(value?.trim() ?? '')) return false;
  }
  return true;
}

function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return ms === 1000 ? 'second' : `${ms / 1000} seconds`;
  return `${ms} ms`;
}

/** True when the request announced a body that nobody has read yet. */
function hasUnreadBody(request: FastifyRequest): boolean {
  const headers = request.headers;
  const announced =
    headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced && !request.raw.complete;
}

/** How long the rest of a refused request's body may take to arrive before the connection is cut. */
const REFUSED_BODY_GRACE_MS = 250;

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

function hasLoneSurrogate(text: string): boolean {
  return !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, logger, engine, keys, counters } = deps;

  /**
   * Answers in the envelope on a bare socket, for what never becomes a fastify request (parser
   * errors, CONNECT), then closes the connection.
   */
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

  const clientErrorHandler = function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
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
  };

  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => newRequestId(),
    // Our ids are generated, never taken from a header: the caller's id is validated and kept apart.
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy as boolean,
    // fastify's own 503-on-close answer is not our envelope; the onRequest hook answers instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Backstop for requests whose headers never finish (node answers through clientErrorHandler).
    requestTimeout: config.bodyTimeoutMs + 5000,
    ajv: {
      customOptions: {
        // The contract is strict JSON: "true" is not a boolean, 1 is not a string, unknown fields are errors.
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: true,
        allErrors: false,
      },
    },
    clientErrorHandler,
    // Node would answer an HTTP/1.1 request without Host with a bare 400 and no body; let it
    // through so the onRequest hook answers it in the envelope.
    http: { requireHostHeader: false },
    frameworkErrors: (error, request, reply) => {
      void sendError(request, reply, toApiError(error, config));
    },
  });

  app.decorateRequest('ctx', null as unknown as RequestContext);
  // Node answers an Expect it does not know with a bare 417 unless someone listens; route such
  // requests through fastify so the onRequest hook answers in the envelope.
  app.server.on('checkExpectation', (req, res) => app.routing(req, res));
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

  keys.onError = (err, status) => {
    // The message names the file and what is wrong with it, never a key (the file holds digests only).
    logger.error(
      { err: { message: err.message, code: (err as KeyFileError).code }, keys: status },
      status === 'stale' ? 'API key file unreadable; serving with the last good keys until it is fixed' : 'API key file unreadable',
    );
  };
  keys.onStatusChange = (status, previous) => {
    // Once per change, not per request: a deleted file otherwise only shows as a stream of 401s.
    if (status === 'missing') {
      logger.warn({ keys_file: keys.file, keys: status }, 'API key file is missing: every API key is refused until it is back');
    } else if (previous === 'missing') {
      logger.info({ keys_file: keys.file, keys: status, count: keys.size }, 'API key file found: its keys are in force');
    }
  };

  // Rate limiting: the plugin supplies the counting (memory or Redis); the hook below decides the
  // key (API key id, else client address) so that failed authentications are counted per address.
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    ...(counters ? { store: counters.Store as never } : { cache: 10_000 }),
  });
  const keyLimits = new WeakMap<FastifyRequest, number>();
  const limiter = app.createRateLimit({
    timeWindow: config.rateLimitWindowMs,
    // IPv6 addresses count per /64, as the plugin does by default: one host usually owns a whole
    // /64 and could otherwise rotate addresses to escape the per-address limit.
    keyGenerator: (req) => (req.ctx.keyId ? `key:${req.ctx.keyId}` : `ip:${normalizeIP(req.ip)}`),
    max: (req) => keyLimits.get(req) ?? config.rateLimitMax,
  });

  async function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): Promise<FastifyReply> {
    if (request.ctx) request.ctx.errorCode = error.code;
    setIdHeaders(request, reply);
    if (error.options.headers) reply.headers(error.options.headers);
    // The rest of an oversized or stalled body is not worth reading: close instead of draining it.
    if (error.code === 'payload_too_large' || error.code === 'request_timeout') reply.header('Connection', 'close');
    else if (hasUnreadBody(request)) closeIfBodyLingers(request, reply);
    return reply.code(error.statusCode).type('application/json; charset=utf-8').send(envelope(error, request.id));
  }

  const windowSeconds = Math.max(1, Math.ceil(config.rateLimitWindowMs / 1000));
  function setRateLimitHeaders(reply: FastifyReply, max: number, remaining: number, resetSeconds: number): void {
    reply.header('RateLimit-Limit', max);
    // draft-ietf-httpapi-ratelimit-headers-06: "quota;w=window-seconds", so clients learn the window
    // and do not have to assume one (a 5-second window paced as a minute is 12 times too slow).
    reply.header('RateLimit-Policy', `${max};w=${windowSeconds}`);
    reply.header('RateLimit-Remaining', remaining);
    // A fresh counter has no window yet: it would start now and last a full window.
    reply.header('RateLimit-Reset', resetSeconds > 0 ? resetSeconds : windowSeconds);
  }

  function setIdHeaders(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('Request-Id', request.id);
    reply.header('X-Request-Id', request.ctx?.callerRequestId ?? request.id);
  }

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, config);
    if (apiError.statusCode >= 500 && !(error instanceof ApiError)) {
      request.log.error({ err: error }, 'unhandled error');
    }
    return sendError(request, reply, apiError);
  });

  app.setNotFoundHandler(async (request, reply) => sendError(request, reply, genericError(404)));

  app.addHook('onRequest', async (request, reply) => {
    const caller = request.headers['x-request-id'];
    const validCaller = typeof caller === 'string' && CALLER_REQUEST_ID_PATTERN.test(caller) ? caller : undefined;
    request.ctx = {
      callerRequestId: validCaller,
      keyId: undefined,
      mode: undefined,
      language: undefined,
      textLength: undefined,
      errorCode: undefined,
    };
    setIdHeaders(request, reply);
    if (deps.isClosing()) {
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
    const badCallerId =
      caller !== undefined && validCaller === undefined
        ? new ApiError(400, 'invalid_request', 'X-Request-Id must be a UUID such as 0b5f2a62-6f5c-4c1e-9d1e-2a3b4c5d6e7f.', {
            param: 'X-Request-Id',
          })
        : undefined;
    const url = request.routeOptions.url ?? '';
    if (!request.is404 && UNLIMITED.has(url)) {
      // Not limited (probes must always answer), but the answer still reports the address's budget.
      const budget = await limiter(request, { increment: false });
      if (!budget.isAllowed) setRateLimitHeaders(reply, budget.max, budget.remaining, budget.ttlInSeconds);
      if (badCallerId) throw badCallerId;
      return;
    }

    let authFailure: ApiError | undefined;
    let key: StoredApiKey | undefined;
    if (!request.is404 && (url === '/v1/detect' || url === '/v1/detect/author') && request.method === 'POST') {
      const outcome = await authenticate(request);
      authFailure = outcome.failure;
      key = outcome.key;
    }
    if (key) {
      request.ctx.keyId = key.id;
      if (key.rate_limit_max !== null) keyLimits.set(request, key.rate_limit_max);
    }
    // Everything but the probes counts: scanning unknown paths or guessing keys uses up the
    // address's budget, and every such answer carries the RateLimit-* headers.
    const limit = await limiter(request);
    if (!limit.isAllowed) {
      setRateLimitHeaders(reply, limit.max, limit.remaining, limit.ttlInSeconds);
      if (limit.isExceeded) {
        const seconds = Math.max(1, limit.ttlInSeconds);
        throw new ApiError(
          429,
          'rate_limited',
          `Too many requests: the limit is ${limit.max} per ${formatWindow(config.rateLimitWindowMs)}${key ? ' for this key' : ' for unauthenticated requests from this address'}; retry in ${seconds} s.`,
          {
            retryAfter: seconds,
            headers: { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.max(0, limit.ttl)) },
          },
        );
      }
    }
    if (authFailure) throw authFailure;
    if (badCallerId) throw badCallerId;
    // Answer unknown paths before any body is read, so e.g. a bad Content-Type cannot turn a 404 into a 415.
    if (request.is404) throw genericError(404);
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity' && encoding.trim() !== '') {
      // A compressed body would otherwise reach the JSON parser as bytes and read as "invalid JSON".
      throw new ApiError(
        415,
        'unsupported_encoding',
        `The request body must not be compressed (Content-Encoding: ${encoding.slice(0, 40)}); send it as plain JSON without a Content-Encoding header.`,
        {
          param: 'Content-Encoding',
          headers: { 'Accept-Encoding': 'identity' },
        },
      );
    }
  });

  async function authenticate(request: FastifyRequest): Promise<{ key?: StoredApiKey; failure?: ApiError }> {
    const header = request.headers.authorization;
    const challenge = { 'WWW-Authenticate': 'Bearer realm="textdetect"' };
    if (header === undefined || header.trim() === '') {
      return {
        failure: new ApiError(401, 'missing_api_key', 'Send your API key in the header Authorization: Bearer <key>.', {
          headers: challenge,
        }),
      };
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) {
      return {
        failure: new ApiError(401, 'invalid_api_key', 'The Authorization header must be "Bearer <key>".', {
          headers: { 'WWW-Authenticate': 'Bearer realm="textdetect", error="invalid_request"' },
        }),
      };
    }
    let result: KeyCheck;
    try {
      await keys.refresh();
      result = keys.check(match[1]!);
      if (!result.ok && result.reason === 'unknown') {
        // A key created since the last check (`keys create` then a request at once) is in the file
        // already: look again (a stat, plus a read if the file changed) before refusing it.
        await keys.refresh(true);
        result = keys.check(match[1]!);
      }
    } catch (err) {
      // Without a readable key file we cannot tell revoked keys from good ones: refuse, loudly.
      request.log.error({ err: { message: (err as Error).message, code: (err as KeyFileError).code } }, 'API key file unreadable');
      throw new ApiError(500, 'internal_error', 'The server cannot check API keys right now; try again later and quote the request_id.');
    }
    const invalid = (message: string) =>
      new ApiError(401, 'invalid_api_key', message, {
        headers: { 'WWW-Authenticate': 'Bearer realm="textdetect", error="invalid_token"' },
      });
    if (result.ok) return { key: result.key };
    switch (result.reason) {
      case 'wrong_environment': {
        const accepted = config.environment === 'sandbox' ? 'sk_test_' : 'sk_live_';
        const given = result.keyEnvironment === 'production' ? 'a live (sk_live_)' : 'a test (sk_test_)';
        return {
          failure: new ApiError(
            403,
            'wrong_environment',
            `This is a ${config.environment} server and only accepts ${accepted} keys; you sent ${given} key.`,
          ),
        };
      }
      case 'revoked':
        return { failure: invalid('This API key has been revoked.') };
      case 'expired':
        return { failure: invalid('This API key has expired.') };
      case 'malformed':
        return {
          failure: invalid('This is not a textdetect API key: keys look like sk_test_ or sk_live_ followed by 32 letters and digits.'),
        };
      default:
        return { failure: invalid('This API key is not valid.') };
    }
  }

  // Strict JSON in UTF-8 only: fastify's default parser would silently replace invalid bytes.
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
    if (deps.isClosing()) reply.header('Connection', 'close');
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
        status: reply.statusCode,
        error_code: ctx?.errorCode,
        latency_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });

  /** Both scoring routes take JSON only. */
  const requireJsonBody = async (request: FastifyRequest): Promise<void> => {
    if (!isJsonContentType(request.headers['content-type'])) {
      throw new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with the header Content-Type: application/json.');
    }
  };

  const assertEngineReady = (): void => {
    if (engine.state !== 'ready') {
      throw new ApiError(503, 'not_ready', 'The detection engine is not loaded yet; retry in a few seconds.', {
        retryAfter: 5,
        headers: { 'Retry-After': '5' },
      });
    }
  };

  const detectBodySchema = detectRequestSchema(config.maxTextChars);

  app.post<{ Body: DetectBody }>(
    '/v1/detect',
    {
      schema: {
        body: detectBodySchema,
        response: { 200: detectResponseSchema },
      },
      preValidation: requireJsonBody,
    },
    async (request) => {
      const { text, segments = false } = request.body;
      const mode: Mode = request.body.mode ?? 'general';
      request.ctx.mode = mode;
      request.ctx.textLength = text.length;
      if (text.includes('\u0000')) {
        throw new ApiError(400, 'invalid_request', 'The field "text" must not contain NUL (\\u0000) characters.', { param: 'text' });
      }
      if (hasLoneSurrogate(text)) {
        throw new ApiError(400, 'invalid_request', 'The field "text" contains an unpaired UTF-16 surrogate, which is not valid Unicode.', {
          param: 'text',
        });
      }
      assertEngineReady();
      const options: DetectOptions = { mode, segments };
      if (request.body.language !== undefined) options.language = request.body.language;
      let result;
      try {
        result = await engine.detect(text, options);
      } catch (err) {
        if (err instanceof UnsupportedLanguageError || (err as Error).name === 'UnsupportedLanguageError') {
          const detected = (err as UnsupportedLanguageError).detected ?? 'unknown';
          throw new ApiError(
            422,
            'unsupported_language',
            `The text appears to be in "${detected}"; only English (en) and Turkish (tr) are supported. If it is one of them, say so with "language".`,
            {
              param: 'language',
              details: { detected_language: detected },
            },
          );
        }
        throw err;
      }
      request.ctx.language = result.language;
      return {
        ai_probability: result.ai_probability,
        mode: result.mode,
        language: result.language,
        segments: segments ? result.segments : [],
        request_id: request.id,
        model: result.model,
        verdict: result.verdict,
        confidence: result.confidence,
        warnings: result.warnings,
        generated_spans: segments ? result.generated_spans : [],
        generated_share: segments ? result.generated_share : null,
        composition: segments ? result.composition : null,
      };
    },
  );

  const authorBodySchema = detectAuthorRequestSchema(config.authorMaxMessageChars, config.authorMaxTotalChars);

  /**
   * Charges the units of an author request beyond the one every request pays in onRequest. The
   * remaining budget is read first, so a request the budget cannot cover is refused having cost one
   * unit (like any refused request) instead of draining the rest of the window.
   */
  async function chargeExtraUnits(request: FastifyRequest, reply: FastifyReply, cost: number): Promise<void> {
    const extra = cost - 1;
    if (extra <= 0) return;
    const budget = await limiter(request, { increment: false });
    if (budget.isAllowed) return;
    const costSentence = `this request costs ${cost} units of the rate limit (one per ${AUTHOR_MESSAGES_PER_UNIT} messages)`;
    if (cost > budget.max) {
      throw new ApiError(
        400,
        'invalid_request',
        `The key's whole budget is ${budget.max} units per ${formatWindow(config.rateLimitWindowMs)}, and ${costSentence}; send at most ${budget.max * AUTHOR_MESSAGES_PER_UNIT} messages per request.`,
        { param: 'messages', details: { cost_units: cost } },
      );
    }
    const refuse = (remaining: number, ttlMs: number) => {
      const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
      return new ApiError(
        429,
        'rate_limited',
        `Too many requests: ${costSentence}, and ${remaining} of this key's ${budget.max} per ${formatWindow(config.rateLimitWindowMs)} are left; retry in ${seconds} s or send fewer messages.`,
        {
          retryAfter: seconds,
          headers: { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.max(0, ttlMs)) },
          details: { cost_units: cost },
        },
      );
    };
    if (budget.remaining < extra) throw refuse(budget.remaining, budget.ttl);
    const charges = await Promise.all(Array.from({ length: extra }, () => limiter(request)));
    // Concurrent requests of the same key may have taken the units meanwhile: the last count decides.
    let last = charges[0]!;
    for (const charge of charges) if (!charge.isAllowed && !last.isAllowed && charge.remaining < last.remaining) last = charge;
    if (last.isAllowed) return;
    setRateLimitHeaders(reply, last.max, last.remaining, last.ttlInSeconds);
    if (last.isExceeded) throw refuse(last.remaining, last.ttl);
  }

  app.post<{ Body: DetectAuthorBody }>(
    '/v1/detect/author',
    {
      // Validation errors are answered by the handler, in terms of this route's fields.
      attachValidation: true,
      schema: {
        body: authorBodySchema,
        response: { 200: detectAuthorResponseSchema },
      },
      preValidation: requireJsonBody,
    },
    async (request, reply) => {
      if (request.validationError) throw authorValidationError(request.validationError as FastifyError, request.body, config);
      const { messages } = request.body;
      const mode: Mode = request.body.mode ?? 'general';
      request.ctx.mode = mode;
      request.ctx.messageCount = messages.length;
      let totalChars = 0;
      for (const [index, message] of messages.entries()) {
        if (message.includes('\u0000')) {
          throw new ApiError(
            400,
            'invalid_request',
            `Message ${index} (counting from 0) contains a NUL (\\u0000) character, which is not allowed.`,
            {
              param: `messages[${index}]`,
            },
          );
        }
        if (hasLoneSurrogate(message)) {
          throw new ApiError(
            400,
            'invalid_request',
            `Message ${index} (counting from 0) contains an unpaired UTF-16 surrogate, which is not valid Unicode.`,
            { param: `messages[${index}]` },
          );
        }
        totalChars += codePointLength(message);
      }
      request.ctx.textLength = totalChars;
      if (totalChars > config.authorMaxTotalChars) {
        throw new ApiError(
          413,
          'text_too_long',
          `The messages hold ${totalChars} characters together, more than ${config.authorMaxTotalChars}; send fewer or shorter messages (the most recent ones).`,
          { param: 'messages', details: { max_total_chars: config.authorMaxTotalChars } },
        );
      }
      assertEngineReady();
      const cost = authorRequestCost(messages.length);
      request.ctx.costUnits = cost;
      await chargeExtraUnits(request, reply, cost);
      const options: AuthorDetectOptions = { mode };
      if (request.body.language !== undefined) options.language = request.body.language;
      const result = await engine.detectAuthor(messages, options);
      request.ctx.language = result.language;
      request.ctx.messagesUsed = result.messages_used;
      request.ctx.wordsUsed = result.words_used;
      return {
        ai_probability: result.ai_probability,
        mode: result.mode,
        language: result.language,
        verdict: result.verdict,
        confidence: result.confidence,
        warnings: result.warnings,
        messages_used: result.messages_used,
        words_used: result.words_used,
        evidence_needed: result.evidence_needed,
        messages: result.messages,
        request_id: request.id,
        model: result.model,
      };
    },
  );

  app.get('/healthz', { schema: { response: { 200: healthSchema } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { response: { 200: readySchema } } }, async (request, reply) => {
    // Never waits on Redis (the breaker's state is in memory) and only stats the key file, so the
    // probe answers at once whatever Redis or the disk are doing.
    await keys.refresh().catch(() => undefined);
    const redis = counters ? counters.health() : ('disabled' as const);
    // A degraded Redis or stale keys still serve requests (per-instance limits, last good keys):
    // reported, not "not ready", or a load balancer would take every instance out at once.
    if (engine.state === 'ready' && !deps.isClosing()) {
      return { status: 'ready' as const, model: engine.model ?? '', redis, keys: keys.status };
    }
    const reasons: string[] = [];
    if (engine.state !== 'ready') reasons.push(engine.state === 'failed' ? 'the engine failed to load' : `the engine is ${engine.state}`);
    if (deps.isClosing()) reasons.push('the service is shutting down');
    return sendError(
      request,
      reply,
      new ApiError(503, 'not_ready', `Not ready: ${reasons.join(', ')}.`, {
        retryAfter: 5,
        headers: { 'Retry-After': '5' },
        details: { checks: { engine: engine.state, redis, keys: keys.status } },
      }),
    );
  });

  await app.register(metricsPlugin, { enabled: config.metrics, port: config.metricsPort, host: config.host, engine, counters });

  const openapi = buildOpenApiDocument(config);
  app.get('/v1/openapi.json', async () => openapi);

  if (config.playground) await app.register(playground, { config });

  // Known paths answer other methods with 405 and Allow, rather than a misleading 404.
  for (const [url, methods] of Object.entries(ROUTES)) {
    const others = ALL_METHODS.filter((m) => !methods.includes(m));
    app.route({
      method: others,
      url,
      exposeHeadRoute: false,
      onRequest: async () => {
        throw new ApiError(405, 'method_not_allowed', `${url} accepts ${methods.filter((m) => m !== 'HEAD').join(', ')} only.`, {
          headers: { Allow: methods.join(', ') },
        });
      },
      handler: async () => undefined,
    });
  }

  return app as unknown as FastifyInstance;
}
