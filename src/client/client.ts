/**
 * DetectClient: the one way bots, batch jobs and customers call POST /v1/detect and
 * POST /v1/detect/author.
 *
 * Each logical call gets one X-Request-Id (kept across retries so the server's logs tie the attempts
 * together), passes through a bottleneck limiter sized to the key's budget, and retries what can
 * succeed later (429 after the server's Retry-After, 5xx/timeouts/connection errors with backoff)
 * while failing at once on what cannot (other 4xx).
 */
import { packageVersion } from '../version.ts';
import { createHash, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { FormData, Pool } from 'undici';
import type { Dispatcher } from 'undici';
import {
  AbortedError,
  AuthenticationError,
  ConnectionError,
  DetectError,
  FileTooLargeError,
  FileUnreadableError,
  InvalidRequestError,
  NoTextInFileError,
  PermissionError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnsupportedFileTypeError,
} from './errors.ts';
import { RequestLimiter, type LimiterOptions, type ResolvedLimiterConfig } from './limiter.ts';
import { silentLogger, type ClientLogger } from './logger.ts';
import type { RedisClient } from './redis.ts';
import { backoffDelay, sleep } from './timing.ts';
import { AUTHOR_MAX_MESSAGES, authorRequestCost, detectRequestCost } from '../contract.ts';
import type {
  DetectAuthorRequest,
  DetectAuthorResponse,
  DetectFileFields,
  DetectFileResponse,
  DetectRequest,
  DetectResponse,
  ErrorEnvelope,
  ErrorType,
} from '../contract.ts';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_MAX_CONCURRENT = 8;
const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_RETRY_BASE_MS = 500;
const DEFAULT_RETRY_MAX_DELAY_MS = 8_000;
const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 120_000;
// Read once from the installed package.json, so the User-Agent names the version actually running.
const VERSION = packageVersion();
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface DetectClientOptions {
  /** API key, sent as `Authorization: Bearer <key>`. Default: the `TEXTDETECT_API_KEY` environment variable. */
  apiKey?: string | undefined;
  /**
   * Where the service lives, e.g. `https://detect.example.com` (a path prefix is kept). Default: the
   * `TEXTDETECT_API_URL` environment variable, else `http://127.0.0.1:8080`.
   */
  baseUrl?: string | undefined;
  /** Deadline of one attempt (connect, headers and body) in ms. Default 30,000. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt, for 429, 5xx, timeouts and connection errors. Default 3. */
  maxRetries?: number | undefined;
  /** Pacing of calls (see LimiterOptions), or `false` for none; 429 pauses apply either way. */
  limiter?: LimiterOptions | false | undefined;
  /**
   * A Redis URL or an ioredis client: every process with the same key (and limiter id) then shares
   * one budget and one 429 pause. The client works on its own duplicate of a given ioredis client.
   * Needs the ioredis package (an optional peer dependency of `textdetect-client`).
   */
  redis?: string | RedisClient | undefined;
  /** pino-compatible logger; default silent. Never receives keys or submitted text. */
  logger?: ClientLogger | undefined;
  /** First backoff delay for 5xx, timeouts and connection errors, in ms (doubles each retry, with jitter). Default 500. */
  retryBaseMs?: number | undefined;
  /** Longest backoff delay in ms. Default 8,000. */
  retryMaxDelayMs?: number | undefined;
  /**
   * A Retry-After (or a spent budget announced by RateLimit-Remaining: 0) longer than this (ms) is not
   * waited out: the call fails with RateLimitError at once. A 5xx Retry-After is capped to it. Default 120,000.
   */
  maxRateLimitWaitMs?: number | undefined;
  /** Appended to the User-Agent header, e.g. `my-bot/1.2`. */
  userAgent?: string | undefined;
  /**
   * Called when a call got 429 and is about to wait `waitMs` before retrying, so an interactive tool
   * can say why it is quiet (the CLI prints "rate limited: waiting 58 s"). An exception thrown here
   * is logged and ignored.
   */
  onRateLimitWait?: ((event: RateLimitWaitEvent) => void) | undefined;
}

export interface RateLimitWaitEvent {
  /** How long the call (and every call sharing its budget) waits before its next attempt. */
  waitMs: number;
  /** Id of the call (its X-Request-Id). */
  requestId: string;
  /** The attempt that got the 429 (0 = first). */
  attempt: number;
}

export interface DetectCallOptions {
  /** Sent as X-Request-Id on every attempt of this call; must be a UUID. Default: a new UUID per call. */
  requestId?: string | undefined;
  /** Aborts the call wherever it is (queued, paused, on the wire, backing off); never retried. */
  signal?: AbortSignal | undefined;
}

/** What `detectFile` sends besides the bytes, and how the call runs. */
export interface DetectFileOptions extends DetectFileFields, DetectCallOptions {
  /**
   * The file's name, e.g. `essay.pdf` (required). Echoed in the answer's `file.name` and in error
   * messages; the server tells the format from the bytes, never from this name.
   */
  filename: string;
  /**
   * The declared media type sent with the file part, e.g. `application/pdf`. Informational only (the
   * server ignores it when telling the format). Default: a Blob's own `type`, else
   * `application/octet-stream`.
   */
  contentType?: string | undefined;
  /** Calibration to apply (`academic`, `financial`, `legal`, `general`); the server defaults to `general`. */
  mode?: DetectFileFields['mode'];
  /** `en` or `tr`; omit to let the server detect it from the extracted text. */
  language?: DetectFileFields['language'];
  /** Ask for a score per sentence; each segment carries its `text` and offsets into the extracted text. Default false. */
  segments?: boolean | undefined;
}

export type DetectManyResult =
  | { index: number; ok: true; response: DetectResponse; error?: undefined }
  | { index: number; ok: false; error: DetectError; response?: undefined };

export interface DetectManyProgress {
  /** Items finished so far (successfully or not). */
  done: number;
  total: number;
  succeeded: number;
  failed: number;
  /** The item that just finished. */
  result: DetectManyResult;
}

export interface DetectManyOptions {
  /** Called after each item finishes, in completion order; an exception thrown here is logged and ignored. */
  onProgress?: ((progress: DetectManyProgress) => void) | undefined;
  /** Stops the batch: items not finished yet end with AbortedError; finished ones are kept. */
  signal?: AbortSignal | undefined;
  /** Items handed to the limiter at once. Default twice the limiter's maxConcurrent. */
  concurrency?: number | undefined;
}

/** Counters since the client was created; useful for benchmarks and health pages. */
export interface ClientStats {
  /** HTTP attempts sent (including retries). */
  attempts: number;
  /** Calls that ended with a response. */
  succeeded: number;
  /** Calls that ended with an error thrown to the caller. */
  failed: number;
  /** Attempts that were retried. */
  retries: number;
  /** 429 answers received (absorbed by retries unless counted in rateLimitErrors too). */
  rateLimited: number;
  /** RateLimitError thrown to callers. */
  rateLimitErrors: number;
}

type AttemptOutcome<T> =
  | { kind: 'ok'; response: T }
  | { kind: 'fail'; error: DetectError; retry: 'none' | 'backoff' | 'rate_limit'; delayMs?: number | undefined };

/** One logical API call: where it goes, what it sends, what it costs and how its answer is read. */
interface CallSpec<T> {
  path: string;
  /** JSON text, or a multipart form (undici sets its content type with the boundary). */
  body: string | FormData;
  /** Units of the key's rate limit the server charges for it (see `authorRequestCost`). */
  cost: number;
  /** The 2xx body as the expected answer, or undefined when it is not one. */
  parse(text: string): T | undefined;
}

interface RateLimitHeaders {
  limit: number | undefined;
  remaining: number | undefined;
  resetMs: number | undefined;
  windowMs: number | undefined;
}

export class DetectClient {
  private readonly apiKey: string;
  private readonly origin: string;
  private readonly path: string;
  private readonly authorPath: string;
  private readonly filePath: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly maxRateLimitWaitMs: number;
  private readonly onRateLimitWait: DetectClientOptions['onRateLimitWait'];
  private readonly userAgent: string;
  private readonly logger: ClientLogger;
  private readonly pool: Pool;
  private readonly limiter: RequestLimiter;
  private readonly maxConcurrent: number;
  private readonly closing = new AbortController();
  private closed: Promise<void> | undefined;
  private readonly counters: ClientStats = { attempts: 0, succeeded: 0, failed: 0, retries: 0, rateLimited: 0, rateLimitErrors: 0 };

  constructor(options: DetectClientOptions = {}) {
    const apiKey = options.apiKey ?? process.env.TEXTDETECT_API_KEY;
    if (!apiKey) {
      throw new AuthenticationError('No API key: pass { apiKey } to DetectClient or set TEXTDETECT_API_KEY.', {
        code: 'missing_api_key',
      });
    }
    this.apiKey = apiKey;
    const rawUrl = options.baseUrl ?? process.env.TEXTDETECT_API_URL ?? DEFAULT_BASE_URL;
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new InvalidRequestError(`The API URL "${rawUrl}" is not a valid URL; expected e.g. https://detect.example.com.`, {
        code: 'invalid_base_url',
        param: 'baseUrl',
      });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new InvalidRequestError(`The API URL must start with http:// or https://, got "${url.protocol}".`, {
        code: 'invalid_base_url',
        param: 'baseUrl',
      });
    }
    this.origin = url.origin;
    this.path = `${url.pathname.replace(/\/+$/, '')}/v1/detect`;
    this.authorPath = `${this.path}/author`;
    this.filePath = `${this.path}/file`;
    this.timeoutMs = positive(options.timeoutMs, 'timeoutMs') ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = nonNegativeInt(options.maxRetries, 'maxRetries') ?? DEFAULT_MAX_RETRIES;
    this.retryBaseMs = positive(options.retryBaseMs, 'retryBaseMs') ?? DEFAULT_RETRY_BASE_MS;
    this.retryMaxDelayMs = positive(options.retryMaxDelayMs, 'retryMaxDelayMs') ?? DEFAULT_RETRY_MAX_DELAY_MS;
    this.maxRateLimitWaitMs = positive(options.maxRateLimitWaitMs, 'maxRateLimitWaitMs') ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
    this.onRateLimitWait = options.onRateLimitWait;
    this.userAgent = `textdetect-client/${VERSION} node/${process.versions.node}${options.userAgent ? ` ${options.userAgent}` : ''}`;
    this.logger = options.logger ?? silentLogger;
    // Every pending call listens for close(); hundreds may be queued at once.
    setMaxListeners(0, this.closing.signal);

    const limiterOptions = options.limiter === false ? undefined : (options.limiter ?? {});
    this.maxConcurrent = nonNegativeInt(limiterOptions?.maxConcurrent, 'limiter.maxConcurrent') || DEFAULT_MAX_CONCURRENT;
    const config: ResolvedLimiterConfig | undefined = limiterOptions
      ? {
          maxConcurrent: this.maxConcurrent,
          max: positive(limiterOptions.max, 'limiter.max'),
          intervalMs: positive(limiterOptions.intervalMs, 'limiter.intervalMs') ?? DEFAULT_INTERVAL_MS,
          // The key is hashed so it never reaches Redis; origin is included because budgets are per server.
          id:
            limiterOptions.id ??
            `textdetect:${createHash('sha256').update(`${this.origin}${this.path}\n${apiKey}`).digest('hex').slice(0, 24)}`,
          idleExpiryMs: positive(limiterOptions.idleExpiryMs, 'limiter.idleExpiryMs') ?? 600_000,
          redisWaitMs: positive(limiterOptions.redisWaitMs, 'limiter.redisWaitMs') ?? 10_000,
        }
      : undefined;
    this.limiter = new RequestLimiter(config, options.redis, this.logger, this.maxRateLimitWaitMs);
    this.pool = new Pool(this.origin, {
      connections: this.maxConcurrent,
      // undici's own timers are inactivity timers; the per-attempt deadline below bounds the whole attempt.
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: Math.min(this.timeoutMs, 10_000) },
      keepAliveTimeout: 10_000,
    });
  }

  /** Scores one text. Throws a DetectError subclass when it cannot (see errors.ts). */
  async detect(request: DetectRequest, options: DetectCallOptions = {}): Promise<DetectResponse> {
    return this.counted(options, (requestId) => this.run(request, requestId, options.signal));
  }

  /**
   * Judges one author across 1 to AUTHOR_MAX_MESSAGES of their messages (POST /v1/detect/author).
   * Paced as the server charges it: `authorRequestCost(messages)` units of the key's budget (one per started 5,000 characters).
   * Throws a DetectError subclass when it cannot (see errors.ts).
   */
  async detectAuthor(request: DetectAuthorRequest, options: DetectCallOptions = {}): Promise<DetectAuthorResponse> {
    return this.counted(options, (requestId) => {
      this.assertOpen(requestId);
      const messages = checkMessages(request, requestId);
      const body = JSON.stringify({
        messages,
        ...(request.mode !== undefined ? { mode: request.mode } : {}),
        ...(request.language !== undefined ? { language: request.language } : {}),
      });
      return this.call(
        { path: this.authorPath, body, cost: authorRequestCost(messages), parse: parseAuthorResponse },
        requestId,
        options.signal,
      );
    });
  }

  /**
   * Scores the text of a document (POST /v1/detect/file): a PDF with a text layer, a DOCX, plain
   * text, Markdown or HTML, sent as multipart/form-data. The server reads the text out of it; the
   * answer is the `/v1/detect` answer for that text plus `file` (name, type, pages, characters).
   *
   * Bad files throw a FileError subclass (UnsupportedFileTypeError, FileTooLargeError,
   * FileUnreadableError, NoTextInFileError); the extracted text can still be refused like a
   * `/v1/detect` text (InvalidRequestError `text_too_long` or `unsupported_language`). The limiter
   * paces it as one unit: the server charges `fileRequestCost(characters)` once it knows the length,
   * and the client then follows the budget the server reports.
   */
  async detectFile(data: Uint8Array | Blob, options: DetectFileOptions): Promise<DetectFileResponse> {
    return this.counted(options ?? ({} as DetectFileOptions), (requestId) => {
      this.assertOpen(requestId);
      const invalid = (message: string, param: string) => new InvalidRequestError(message, { code: 'invalid_request', param, requestId });
      if (!(data instanceof Uint8Array) && !(data instanceof Blob)) {
        throw invalid('detectFile needs the file as a Uint8Array (e.g. a Buffer) or a Blob.', 'data');
      }
      const filename = options?.filename;
      if (typeof filename !== 'string' || filename.trim() === '') {
        throw invalid('detectFile needs { filename }, e.g. "essay.pdf"; it names the file in the answer.', 'filename');
      }
      const form = new FormData();
      // Fields before the file, so the server knows them before the bytes arrive.
      if (options.mode !== undefined) form.append('mode', options.mode);
      if (options.language !== undefined) form.append('language', options.language);
      if (options.segments !== undefined) form.append('segments', String(options.segments));
      const type = options.contentType ?? (data instanceof Blob && data.type ? data.type : 'application/octet-stream');
      const blob = data instanceof Blob && !options.contentType ? data : new Blob([data as Uint8Array<ArrayBuffer>], { type });
      form.append('file', blob, filename);
      return this.call({ path: this.filePath, body: form, cost: 1, parse: parseFileResponse }, requestId, options.signal);
    });
  }

  /** Checks the caller's request id, runs one public call with it, and counts how it ended (`stats`). */
  private async counted<T>(options: DetectCallOptions, run: (requestId: string) => Promise<T>): Promise<T> {
    const requestId = options.requestId ?? randomUUID();
    try {
      if (!UUID_PATTERN.test(requestId)) {
        // The service rejects any other X-Request-Id with 400; saying so here is clearer.
        throw new InvalidRequestError(`requestId must be a UUID such as ${randomUUID()}; got "${requestId}".`, {
          code: 'invalid_request_id',
          param: 'requestId',
        });
      }
      const response = await run(requestId);
      this.counters.succeeded++;
      return response;
    } catch (err) {
      this.counters.failed++;
      if (err instanceof RateLimitError) this.counters.rateLimitErrors++;
      throw err;
    }
  }

  /**
   * Scores many texts through the same limiter. Resolves (never rejects) with one result per item in
   * input order; a failed item carries its error and does not disturb the others.
   */
  async detectMany(items: readonly DetectRequest[], options: DetectManyOptions = {}): Promise<DetectManyResult[]> {
    const total = items.length;
    const results = new Array<DetectManyResult | undefined>(total);
    const concurrency = Math.max(1, nonNegativeInt(options.concurrency, 'concurrency') || this.maxConcurrent * 2);
    // One listener on the caller's signal, however many items are pending.
    const batch = new AbortController();
    setMaxListeners(0, batch.signal);
    const onAbort = (): void => batch.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    let next = 0;
    let succeeded = 0;
    let failed = 0;
    const finish = (result: DetectManyResult): void => {
      results[result.index] = result;
      if (result.ok) succeeded++;
      else failed++;
      if (!options.onProgress) return;
      try {
        options.onProgress({ done: succeeded + failed, total, succeeded, failed, result });
      } catch (err) {
        this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'textdetect client: onProgress threw');
      }
    };
    const worker = async (): Promise<void> => {
      while (next < total && !batch.signal.aborted) {
        const index = next++;
        const item = items[index] as DetectRequest;
        try {
          finish({ index, ok: true, response: await this.detect(item, { signal: batch.signal }) });
        } catch (err) {
          finish({ index, ok: false, error: toDetectError(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
    options.signal?.removeEventListener('abort', onAbort);
    for (let index = 0; index < total; index++) {
      if (results[index] === undefined) {
        finish({
          index,
          ok: false,
          error: new AbortedError('The batch was cancelled before this item was sent.', { code: 'aborted' }),
        });
      }
    }
    return results as DetectManyResult[];
  }

  /** Counters since creation (a copy). */
  stats(): ClientStats {
    return { ...this.counters };
  }

  /** Pacing in force: the budget (fixed or learned from the server) and whether it is shared through Redis. */
  limits(): ReturnType<RequestLimiter['describe']> {
    return this.limiter.describe();
  }

  /**
   * Cancels calls still queued, paused or in flight (they reject with AbortedError, code
   * `client_closed`), then releases the connection pool and Redis connections. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing.abort(new AbortedError('The client was closed.', { code: 'client_closed' }));
      await this.limiter.close();
      await this.pool.close();
    })();
    return this.closed;
  }

  private assertOpen(requestId: string): void {
    if (this.closing.signal.aborted) {
      throw new AbortedError('The client was closed; create a new DetectClient.', { code: 'client_closed', requestId });
    }
  }

  private async run(request: DetectRequest, requestId: string, callerSignal: AbortSignal | undefined): Promise<DetectResponse> {
    this.assertOpen(requestId);
    if (request === null || typeof request !== 'object' || typeof request.text !== 'string') {
      throw new InvalidRequestError('The request needs a "text" string.', { code: 'invalid_request', param: 'text', requestId });
    }
    const body = JSON.stringify({
      text: request.text,
      ...(request.mode !== undefined ? { mode: request.mode } : {}),
      ...(request.language !== undefined ? { language: request.language } : {}),
      ...(request.segments !== undefined ? { segments: request.segments } : {}),
    });
    // Paced as the server charges it: one unit per started 5,000 characters.
    return this.call({ path: this.path, body, cost: detectRequestCost(request.text), parse: parseResponse }, requestId, callerSignal);
  }

  /** Sends one call through the limiter, retrying what can succeed later. */
  private async call<T>(spec: CallSpec<T>, requestId: string, callerSignal: AbortSignal | undefined): Promise<T> {
    const signal = callerSignal ? AbortSignal.any([callerSignal, this.closing.signal]) : this.closing.signal;
    setMaxListeners(0, signal);
    for (let attempt = 0; ; attempt++) {
      let outcome: AttemptOutcome<T>;
      try {
        outcome = await this.limiter.schedule(() => this.attempt(spec, requestId, signal, attempt), {
          // Retries jump ahead of fresh calls so a batch drains in order instead of starving them.
          priority: attempt === 0 ? 5 : 4,
          signal,
          cost: spec.cost,
        });
      } catch (err) {
        throw this.failure(err, signal, requestId);
      }
      if (outcome.kind === 'ok') return outcome.response;
      const { error } = outcome;
      if (outcome.retry === 'none' || attempt >= this.maxRetries) {
        this.logger.debug({ requestId, attempt, code: error.code, status: error.status }, 'textdetect client: call failed');
        throw error;
      }
      this.counters.retries++;
      if (outcome.retry === 'backoff') {
        const delay = outcome.delayMs ?? backoffDelay(attempt + 1, this.retryBaseMs, this.retryMaxDelayMs);
        this.logger.warn(
          { requestId, attempt, code: error.code, status: error.status, delayMs: Math.round(delay) },
          'textdetect client: retrying',
        );
        try {
          await sleep(delay, signal);
        } catch (err) {
          throw this.failure(err, signal, requestId);
        }
      } else {
        // The pause itself was set inside the failed job; the next attempt waits for it in the limiter.
        this.logger.info({ requestId, attempt, delayMs: outcome.delayMs }, 'textdetect client: rate limited, retrying after the pause');
        try {
          this.onRateLimitWait?.({ waitMs: outcome.delayMs ?? 0, requestId, attempt });
        } catch (err) {
          this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'textdetect client: onRateLimitWait threw');
        }
      }
    }
  }

  /** One HTTP attempt, run inside a limiter slot. Never throws for HTTP or network failures. */
  private async attempt<T>(spec: CallSpec<T>, requestId: string, signal: AbortSignal, attempt: number): Promise<AttemptOutcome<T>> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new TimeoutError('timeout', { code: 'timeout', requestId })), this.timeoutMs);
    const attemptSignal = AbortSignal.any([signal, deadline.signal]);
    const started = performance.now();
    this.counters.attempts++;
    try {
      let res: Dispatcher.ResponseData;
      let text: string;
      try {
        res = await this.pool.request({
          method: 'POST',
          path: spec.path,
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            ...(typeof spec.body === 'string' ? { 'content-type': 'application/json' } : {}),
            accept: 'application/json',
            'user-agent': this.userAgent,
            'x-request-id': requestId,
          },
          body: spec.body,
          signal: attemptSignal,
        });
        text = await res.body.text();
      } catch (err) {
        if (signal.aborted) throw err;
        return { kind: 'fail', error: this.transportError(err, deadline.signal.aborted, requestId, attempt), retry: 'backoff' };
      }
      const ms = Math.round(performance.now() - started);
      const rate = parseRateLimitHeaders(res.headers);
      if (rate.limit !== undefined) this.limiter.learn(rate.limit, rate.windowMs);
      this.logger.debug({ requestId, attempt, status: res.statusCode, ms, remaining: rate.remaining }, 'textdetect client: attempt done');

      if (res.statusCode >= 200 && res.statusCode < 300) {
        if (rate.remaining === 0 && rate.resetMs !== undefined) {
          // The budget is spent until the window resets: hold everyone back rather than collect 429s.
          await this.limiter.pauseFor(rate.resetMs);
        }
        const parsed = spec.parse(text);
        if (!parsed) {
          return {
            kind: 'fail',
            error: new ServerError(`The server at ${this.origin} answered ${res.statusCode} with a body that is not a detection result.`, {
              status: res.statusCode,
              code: 'invalid_response',
              requestId: headerValue(res.headers, 'x-request-id') ?? requestId,
            }),
            retry: 'none',
          };
        }
        return { kind: 'ok', response: parsed };
      }

      const envelope = parseEnvelope(text);
      const serverRequestId =
        envelope?.error.request_id ?? headerValue(res.headers, 'request-id') ?? headerValue(res.headers, 'x-request-id') ?? requestId;
      if (res.statusCode === 429) {
        this.counters.rateLimited++;
        const waitMs = retryAfterMs(res.headers, envelope) ?? backoffDelay(attempt + 1, this.retryBaseMs, this.retryMaxDelayMs);
        const error = errorFor(res.statusCode, envelope, serverRequestId, waitMs, this.origin);
        // Set while still holding the slot, so no queued job can slip in before the pause is visible.
        await this.limiter.pauseFor(waitMs);
        if (waitMs > this.maxRateLimitWaitMs) return { kind: 'fail', error, retry: 'none' };
        return { kind: 'fail', error, retry: 'rate_limit', delayMs: Math.round(waitMs) };
      }
      const error = errorFor(res.statusCode, envelope, serverRequestId, undefined, this.origin);
      if (res.statusCode >= 500) {
        const serverWait = retryAfterMs(res.headers, envelope);
        return {
          kind: 'fail',
          error,
          retry: 'backoff',
          delayMs: serverWait !== undefined ? Math.min(serverWait, this.maxRateLimitWaitMs) : undefined,
        };
      }
      return { kind: 'fail', error, retry: 'none' };
    } finally {
      clearTimeout(timer);
    }
  }

  private transportError(err: unknown, deadlineHit: boolean, requestId: string, attempt: number): DetectError {
    const code = errorCode(err);
    const tries = `${attempt + 1} attempt${attempt === 0 ? '' : 's'}`;
    if (deadlineHit || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new TimeoutError(
        `No complete answer from ${this.origin} within ${this.timeoutMs} ms (${tries}); the service may be overloaded — try again later or raise timeoutMs.`,
        { code: 'timeout', requestId, cause: err },
      );
    }
    const detail = code ?? (err instanceof Error ? err.message : String(err));
    return new ConnectionError(
      `Could not reach ${this.origin} (${detail}) after ${tries}; check the API URL and that the service is running.`,
      { code: 'connection_error', requestId, cause: err },
    );
  }

  /** Turns whatever stopped a call outside an HTTP attempt (abort, limiter failure) into a DetectError. */
  private failure(err: unknown, signal: AbortSignal, requestId: string): DetectError {
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      if (reason instanceof AbortedError) return new AbortedError(reason.message, { code: reason.code, requestId, cause: reason });
      return new AbortedError('The call was cancelled by its AbortSignal.', { code: 'aborted', requestId, cause: reason });
    }
    if (err instanceof RateLimitError)
      return new RateLimitError(err.message, { code: err.code, retryAfterMs: err.retryAfterMs, requestId });
    if (err instanceof DetectError) return err;
    // The limiter only fails when its Redis is unusable.
    return new ConnectionError(
      `The shared rate limiter is unavailable (${err instanceof Error ? err.message : String(err)}); check the Redis connection.`,
      { code: 'limiter_unavailable', requestId, cause: err },
    );
  }
}

function errorFor(
  status: number,
  envelope: ErrorEnvelope | undefined,
  requestId: string,
  waitMs: number | undefined,
  origin: string,
): DetectError {
  const code = envelope?.error.code ?? `http_${status}`;
  const message = envelope?.error.message ?? `The server at ${origin} answered HTTP ${status} without an error description.`;
  const init = { status, code, requestId };
  const type: ErrorType | undefined = envelope?.error.type ?? typeForStatus(status);
  switch (type) {
    case 'authentication_error':
      return new AuthenticationError(message, init);
    case 'permission_error':
      return new PermissionError(message, init);
    case 'rate_limit_error':
      return new RateLimitError(message, { ...init, retryAfterMs: Math.round(waitMs ?? 0) });
    case 'invalid_request_error': {
      const withParam = { ...init, param: envelope?.error.param };
      switch (code) {
        case 'unsupported_file_type':
          return new UnsupportedFileTypeError(message, withParam);
        case 'file_too_large':
        case 'too_many_pages':
          return new FileTooLargeError(message, withParam);
        case 'file_unreadable':
          return new FileUnreadableError(message, withParam);
        case 'no_text_in_file':
          return new NoTextInFileError(message, withParam);
        default:
          return new InvalidRequestError(message, withParam);
      }
    }
    case 'api_error':
      return new ServerError(message, init);
    default:
      return new DetectError(message, init);
  }
}

function typeForStatus(status: number): ErrorType | undefined {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  if (status >= 400) return 'invalid_request_error';
  return undefined;
}

function toDetectError(err: unknown): DetectError {
  if (err instanceof DetectError) return err;
  return new DetectError(err instanceof Error ? err.message : String(err), { code: 'unexpected_error', cause: err });
}

function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) return value[0];
  return value ?? undefined;
}

function headerNumber(headers: Dispatcher.ResponseData['headers'], ...names: string[]): number | undefined {
  for (const name of names) {
    const raw = headerValue(headers, name);
    if (raw === undefined || raw.trim() === '') continue;
    const value = Number(raw);
    if (Number.isFinite(value)) return value;
  }
  return undefined;
}

function parseRateLimitHeaders(headers: Dispatcher.ResponseData['headers']): RateLimitHeaders {
  const reset = headerNumber(headers, 'ratelimit-reset', 'x-ratelimit-reset');
  // RateLimit-Policy: `600;w=60` names the window; without it the limiter keeps its intervalMs.
  const policy = headerValue(headers, 'ratelimit-policy');
  const windowMatch = policy ? /;\s*w=(\d+(?:\.\d+)?)/.exec(policy) : null;
  return {
    limit: headerNumber(headers, 'ratelimit-limit', 'x-ratelimit-limit'),
    remaining: headerNumber(headers, 'ratelimit-remaining', 'x-ratelimit-remaining'),
    resetMs: reset === undefined ? undefined : reset * 1000,
    windowMs: windowMatch?.[1] ? Number(windowMatch[1]) * 1000 : undefined,
  };
}

/** The server's requested wait: Retry-After-Ms (precise), else Retry-After (seconds or date), else the envelope. */
function retryAfterMs(headers: Dispatcher.ResponseData['headers'], envelope: ErrorEnvelope | undefined): number | undefined {
  const precise = headerNumber(headers, 'retry-after-ms');
  if (precise !== undefined && precise >= 0) return precise;
  const raw = headerValue(headers, 'retry-after');
  if (raw !== undefined) {
    const seconds = Number(raw);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(raw);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  const fromBody = envelope?.error.retry_after;
  if (typeof fromBody === 'number' && fromBody >= 0) return fromBody * 1000;
  return undefined;
}

function parseEnvelope(text: string): ErrorEnvelope | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && 'error' in value) {
      const error = (value as { error: unknown }).error;
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
        return value as ErrorEnvelope;
      }
    }
  } catch {
    // Not JSON (e.g. a proxy's HTML page): the status alone decides.
  }
  return undefined;
}

function parseResponse(text: string): DetectResponse | undefined {
  try {
    const value = JSON.parse(text) as Partial<DetectResponse> | null;
    if (value && typeof value.ai_probability === 'number' && typeof value.request_id === 'string' && typeof value.verdict === 'string') {
      return { ...value, segments: value.segments ?? [], warnings: value.warnings ?? [] } as DetectResponse;
    }
  } catch {
    // Falls through to "not a detection result".
  }
  return undefined;
}

function parseFileResponse(text: string): DetectFileResponse | undefined {
  const value = parseResponse(text) as (DetectResponse & { file?: unknown }) | undefined;
  const file = value?.file as Partial<DetectFileResponse['file']> | undefined;
  if (!value || !file || typeof file.type !== 'string' || typeof file.characters !== 'number') return undefined;
  return value as DetectFileResponse;
}

function parseAuthorResponse(text: string): DetectAuthorResponse | undefined {
  try {
    const value = JSON.parse(text) as Partial<DetectAuthorResponse> | null;
    if (
      value &&
      typeof value.ai_probability === 'number' &&
      typeof value.request_id === 'string' &&
      typeof value.verdict === 'string' &&
      Array.isArray(value.messages)
    ) {
      return { ...value, warnings: value.warnings ?? [] } as DetectAuthorResponse;
    }
  } catch {
    // Falls through to "not a detection result".
  }
  return undefined;
}

/** The request's messages, checked as the server would (sizes excepted: those are the server's settings). */
function checkMessages(request: DetectAuthorRequest, requestId: string): string[] {
  const messages: unknown = request !== null && typeof request === 'object' ? request.messages : undefined;
  const invalid = (message: string, param = 'messages') => new InvalidRequestError(message, { code: 'invalid_request', param, requestId });
  if (!Array.isArray(messages)) throw invalid(`The request needs "messages": an array of 1 to ${AUTHOR_MAX_MESSAGES} strings.`);
  if (messages.length === 0) throw invalid('The field "messages" is empty; send at least one message.');
  if (messages.length > AUTHOR_MAX_MESSAGES) {
    throw invalid(
      `The field "messages" holds ${messages.length} messages, more than ${AUTHOR_MAX_MESSAGES}; send the ${AUTHOR_MAX_MESSAGES} most recent ones.`,
    );
  }
  const bad = messages.findIndex((message) => typeof message !== 'string');
  if (bad >= 0) throw invalid(`Message ${bad} (counting from 0) is not a string; every message must be a string.`, `messages[${bad}]`);
  return messages as string[];
}

function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  // undici wraps socket errors; the errno code (ECONNREFUSED, ECONNRESET) is the useful part.
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('UND_ERR_SOCKET')) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return (err as { code?: string } | null)?.code;
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidRequestError(`DetectClient option ${name} must be a positive number, got ${String(value)}.`, {
      code: 'invalid_option',
      param: name,
    });
  }
  return value;
}

function nonNegativeInt(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidRequestError(`DetectClient option ${name} must be a whole number ≥ 0, got ${String(value)}.`, {
      code: 'invalid_option',
      param: name,
    });
  }
  return value;
}
