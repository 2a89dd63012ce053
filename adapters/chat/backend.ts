/**
 * Where the bots send texts for detection. With `DETECT_API_URL` set they call that server with
 * `DETECT_API_KEY`; without it they start the detection service inside the bot's own process on a
 * loopback port, with a sandbox key of their own, so a workspace can try a bot with nothing but
 * chat-platform credentials.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { DetectClient, type DetectCallOptions, type DetectFileOptions } from '../../src/client/index.ts';
import {
  authorRequestCost,
  DEFAULT_MAX_TEXT_CHARS,
  detectRequestCost,
  fileRequestCost,
  type DetectAuthorRequest,
  type DetectAuthorResponse,
  type DetectFileResponse,
  type DetectRequest,
  type DetectResponse,
} from '../../src/contract.ts';
import { packageVersion } from '../../src/version.ts';
import { DetectionQueue, parseQueueRate, type QueueRate } from './queue.ts';

/** Options of one queued detection call. */
export interface QueuedCallOptions extends DetectCallOptions {
  /** Told the check's place in the queue while it waits (1 = next). */
  onQueued?: ((position: number) => unknown) | undefined;
  /** Told each time the check goes to the service (first attempt, and each try after a 429 pause). */
  onCall?: (() => void) | undefined;
  /** Told when a 429 pause holds the check back in the queue before it is tried (again). */
  onPause?: ((ms: number) => void) | undefined;
  /** Told, once the call has answered, how long the check waited for its turn (429 pauses included). */
  onStart?: ((waitedMs: number) => void) | undefined;
}

/** Options of one queued file check: the SDK's (`filename`, `mode`, …) plus the queue's notices. */
export type QueuedFileOptions = DetectFileOptions &
  Omit<QueuedCallOptions, keyof DetectCallOptions> & {
    /** A watched channel's document: behind every moderator's check, without the wait bound (see queue.ts). */
    background?: boolean | undefined;
  };

/** What the bots call: detection through the shared queue. */
export interface QueuedDetector {
  detect(request: DetectRequest, options?: QueuedCallOptions): Promise<DetectResponse>;
  /** One member's recent messages judged together (`POST /v1/detect/author`), through the same queue. */
  detectAuthor(request: DetectAuthorRequest, options?: QueuedCallOptions): Promise<DetectAuthorResponse>;
  /**
   * A document's text scored (`POST /v1/detect/file`), through the same queue. It starts as one unit
   * of the key's budget (its cost is unknown until the service has read the file); the rest of
   * `fileRequestCost(file.characters)` is taken from the queue's budget once the answer says it, as
   * the service charges it.
   */
  detectFile(data: Uint8Array, options: QueuedFileOptions): Promise<DetectFileResponse>;
}

export interface DetectionBackend {
  /** The bots' way in: every call waits its turn in `queue` (see adapters/chat/queue.ts). */
  detector: QueuedDetector;
  queue: DetectionQueue;
  /** The client underneath, unqueued (for tools and tests that want the raw service answers). */
  client: DetectClient;
  /** Base URL of the service being called (the in-process one's loopback address when it was started here). */
  apiUrl: string;
  /** True when the service runs inside this process. */
  embedded: boolean;
  /** Closes the queue, the client, and the in-process service and its temporary key file when there is one. */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** Structured logger for the client (and the in-process service); never given keys or texts. */
  logger?: Logger | undefined;
  /** Appended to the client's User-Agent (`botUserAgent`), so the service can tell the bots apart. */
  userAgent?: string | undefined;
}

/** What a bot adds to the client's User-Agent (`textdetect-discord/0.1.0`), so the service can tell the bots apart. */
export function botUserAgent(bot: 'slack' | 'discord'): string {
  return `textdetect-${bot}/${packageVersion()}`;
}

/** A DETECT_* setting the bots cannot start with: both bots exit 2 with its sentence, as for their own settings. */
export class BackendConfigError extends Error {
  override name = 'BackendConfigError';
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new BackendConfigError(`${name}="${raw}" must be a whole number ≥ 0.`);
  return value;
}

/**
 * Environment read:
 * - `DETECT_API_URL`: base URL of a running detection service; unset → start one in-process.
 * - `DETECT_API_KEY`: key for that service; required when `DETECT_API_URL` is set.
 * - `DETECT_TIMEOUT_MS` (default 10000): per-attempt timeout of a detection call.
 * - `DETECT_FILE_TIMEOUT_MS` (default 30000, and never below `DETECT_TIMEOUT_MS`): the same for a
 *   document. The service may let a file wait for a reader and then read it for up to its own
 *   FILE_TIMEOUT_MS (10 s) before scoring, so a text's deadline would give up on answers still coming.
 * - `DETECT_MAX_RETRIES` (default 2): retries of 429/5xx/network failures. Chat replies wait on
 *   them, so the default is modest.
 * - `DETECT_MAX_RATE_LIMIT_WAIT_MS` (default 10000): a 429 asking to wait longer than this fails at
 *   once with "try again in N s" instead of keeping a moderator waiting.
 * - `DETECT_MAX_TEXT_CHARS` (default 750000, the service's), `MODEL_PATH` (engine default): passed to the
 *   in-process service only.
 * - `DETECT_QUEUE_MAX_WAIT_MS` (default 20000): longest a check waits in the queue for its turn
 *   before the moderator is told to try again.
 * - `DETECT_QUEUE_CONCURRENCY` (default 8): checks on the wire at once, across instances.
 * - `DETECT_QUEUE_RATE` (e.g. `600/1m`): the API key's budget, to pace calls to it; unset → the
 *   in-process service's own limit, or (remote) pacing by the service's 429 answers alone.
 * - `REDIS_URL` (unset): shares the queue (budget, positions, 429 pauses) between bot instances,
 *   and is passed to the in-process service.
 */
export async function connectDetectionBackend(
  env: NodeJS.ProcessEnv = process.env,
  options: BackendOptions = {},
): Promise<DetectionBackend> {
  const timeoutMs = positiveInt(env, 'DETECT_TIMEOUT_MS', 10_000);
  const fileTimeoutMs = Math.max(timeoutMs, positiveInt(env, 'DETECT_FILE_TIMEOUT_MS', 30_000));
  const maxRetries = positiveInt(env, 'DETECT_MAX_RETRIES', 2);
  const maxRateLimitWaitMs = positiveInt(env, 'DETECT_MAX_RATE_LIMIT_WAIT_MS', 10_000);
  const queueMaxWaitMs = positiveInt(env, 'DETECT_QUEUE_MAX_WAIT_MS', 20_000);
  const queueConcurrency = Math.max(1, positiveInt(env, 'DETECT_QUEUE_CONCURRENCY', 8));
  let configuredRate: QueueRate | undefined;
  try {
    configuredRate = parseQueueRate(env.DETECT_QUEUE_RATE);
  } catch (err) {
    throw new BackendConfigError((err as Error).message);
  }
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  // The client's own limiter stays off: pacing, order and the wait bound belong to the bots' queue,
  // which knows each check's position; the client still honours a 429's pause within one call.
  const common = {
    timeoutMs,
    maxRetries,
    maxRateLimitWaitMs,
    limiter: false as const,
    logger: options.logger,
    userAgent: options.userAgent,
  };
  const logger = options.logger;
  const apiUrl = env.DETECT_API_URL?.trim();

  const queued = (
    client: DetectClient,
    fileClient: DetectClient,
    url: string,
    key: string,
    rate: QueueRate | undefined,
  ): Pick<DetectionBackend, 'detector' | 'queue'> => {
    const queue = new DetectionQueue({
      // Instances calling the same service with the same key share one budget; the key itself never reaches Redis.
      id: `textdetect:bots:queue:${createHash('sha256').update(`${url}\n${key}`).digest('hex').slice(0, 24)}`,
      maxConcurrent: queueConcurrency,
      rate,
      maxWaitMs: queueMaxWaitMs,
      redisUrl,
      logger,
    });
    const detector: QueuedDetector = {
      async detect(request, callOptions = {}) {
        const { onQueued, onStart, onCall, onPause, ...clientOptions } = callOptions;
        const { value, waitedMs } = await queue.run(() => client.detect(request, clientOptions), {
          // Weighted as the service charges it (one unit per started 5,000 characters).
          weight: detectRequestCost(typeof request.text === 'string' ? request.text : ''),
          onQueued,
          onCall,
          onPause,
          signal: clientOptions.signal,
        });
        onStart?.(waitedMs);
        return value;
      },
      async detectAuthor(request, callOptions = {}) {
        const { onQueued, onStart, ...clientOptions } = callOptions;
        const { value, waitedMs } = await queue.run(() => client.detectAuthor(request, clientOptions), {
          onQueued,
          signal: clientOptions.signal,
          // The service charges one unit per started 5,000 characters; the queue paces by the same count.
          weight: authorRequestCost(Array.isArray(request.messages) ? request.messages : []),
        });
        onStart?.(waitedMs);
        return value;
      },
      async detectFile(data, fileOptions) {
        const { onQueued, onStart, onCall, onPause, background, ...clientOptions } = fileOptions;
        const { value, waitedMs } = await queue.run(() => fileClient.detectFile(data, clientOptions), {
          onQueued,
          onCall,
          onPause,
          background,
          signal: clientOptions.signal,
        });
        await queue.charge(fileRequestCost(value.file.characters) - 1);
        onStart?.(waitedMs);
        return value;
      },
    };
    return { queue, detector };
  };

  if (apiUrl) {
    const apiKey = env.DETECT_API_KEY?.trim();
    if (!apiKey) {
      throw new BackendConfigError(
        'DETECT_API_URL is set but DETECT_API_KEY is not: set the key the detection service issued to this bot.',
      );
    }
    try {
      new URL(apiUrl);
    } catch {
      throw new BackendConfigError(`DETECT_API_URL="${apiUrl}" is not a valid URL (expected e.g. https://detect.example.com).`);
    }
    const client = new DetectClient({ ...common, apiKey, baseUrl: apiUrl });
    const fileClient = new DetectClient({ ...common, timeoutMs: fileTimeoutMs, apiKey, baseUrl: apiUrl });
    const { queue, detector } = queued(client, fileClient, apiUrl, apiKey, configuredRate);
    return {
      detector,
      queue,
      client,
      apiUrl,
      embedded: false,
      async close() {
        try {
          await queue.close();
        } finally {
          await Promise.all([client.close(), fileClient.close()]);
        }
      },
    };
  }

  // Imported lazily: a bot pointed at a remote service never loads the engine and its model.
  const { startService, defaultConfig, parseDuration } = await import('../../src/service/index.ts');
  const service = await startService(
    {
      host: '127.0.0.1',
      port: 0,
      maxTextChars: positiveInt(env, 'DETECT_MAX_TEXT_CHARS', DEFAULT_MAX_TEXT_CHARS),
      ...(env.MODEL_PATH?.trim() ? { modelPath: env.MODEL_PATH.trim() } : {}),
      ...(redisUrl ? { redisUrl } : {}),
      ...(logger ? { logger } : {}),
    },
    { sandboxKey: { name: 'chat-bot (in-process)' } },
  );
  try {
    const key = service.sandboxKey as string;
    const client = new DetectClient({ ...common, apiKey: key, baseUrl: service.url });
    const fileClient = new DetectClient({ ...common, timeoutMs: fileTimeoutMs, apiKey: key, baseUrl: service.url });
    // The in-process service's limit is known: its default per-key budget.
    const defaults = defaultConfig();
    const rate = configuredRate ?? { max: defaults.rateLimitMax, intervalMs: parseDuration(defaults.rateLimitWindow) ?? 60_000 };
    const { queue, detector } = queued(client, fileClient, service.url, key, rate);
    logger?.info({ apiUrl: service.url }, 'started the detection service in-process (DETECT_API_URL unset)');
    return {
      detector,
      queue,
      client,
      apiUrl: service.url,
      embedded: true,
      async close() {
        try {
          await queue.close();
          await Promise.all([client.close(), fileClient.close()]);
        } finally {
          await service.close();
        }
      },
    };
  } catch (err) {
    await service.close().catch(() => undefined);
    throw err;
  }
}
