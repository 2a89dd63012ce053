/**
 * Where the bots send texts for detection. With `DETECT_API_URL` set they call that server with
 * `DETECT_API_KEY`; without it they start the detection service inside the bot's own process on a
 * loopback port, with a sandbox key of their own, so a workspace can try a bot with nothing but
 * chat-platform credentials.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DetectClient } from '../../src/client/index.ts';

export interface DetectionBackend {
  client: DetectClient;
  /** Base URL of the service being called (the in-process one's loopback address when it was started here). */
  apiUrl: string;
  /** True when the service runs inside this process. */
  embedded: boolean;
  /** Closes the client, and the in-process service and its temporary key file when there is one. */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** Structured logger for the client (and the in-process service); never given keys or texts. */
  logger?: Logger | undefined;
  /** Appended to the client's User-Agent, e.g. `textdetect-slack/0.1`, so the service's logs tell bots apart. */
  userAgent?: string | undefined;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}="${raw}" must be a whole number ≥ 0.`);
  return value;
}

/**
 * Environment read:
 * - `DETECT_API_URL`: base URL of a running detection service; unset → start one in-process.
 * - `DETECT_API_KEY`: key for that service; required when `DETECT_API_URL` is set.
 * - `DETECT_TIMEOUT_MS` (default 10000): per-attempt timeout of a detection call.
 * - `DETECT_MAX_RETRIES` (default 2): retries of 429/5xx/network failures. Chat replies wait on
 *   them, so the default is modest.
 * - `DETECT_MAX_RATE_LIMIT_WAIT_MS` (default 10000): a 429 asking to wait longer than this fails at
 *   once with "try again in N s" instead of keeping a moderator waiting.
 * - `DETECT_MAX_TEXT_CHARS` (default 50000), `MODEL_PATH` (engine default), `REDIS_URL` (unset):
 *   passed to the in-process service only.
 */
export async function connectDetectionBackend(
  env: NodeJS.ProcessEnv = process.env,
  options: BackendOptions = {},
): Promise<DetectionBackend> {
  const timeoutMs = positiveInt(env, 'DETECT_TIMEOUT_MS', 10_000);
  const maxRetries = positiveInt(env, 'DETECT_MAX_RETRIES', 2);
  const maxRateLimitWaitMs = positiveInt(env, 'DETECT_MAX_RATE_LIMIT_WAIT_MS', 10_000);
  // No client-side pacing: a paced call would sit silently in a queue until the window reopens,
  // while a moderator is better served by an immediate "try again in N s" from the server's 429.
  const common = { timeoutMs, maxRetries, maxRateLimitWaitMs, limiter: false as const, logger: options.logger, userAgent: options.userAgent };
  const logger = options.logger;
  const apiUrl = env.DETECT_API_URL?.trim();

  if (apiUrl) {
    const apiKey = env.DETECT_API_KEY?.trim();
    if (!apiKey) {
      throw new Error('DETECT_API_URL is set but DETECT_API_KEY is not: set the key the detection service issued to this bot.');
    }
    try {
      new URL(apiUrl);
    } catch {
      throw new Error(`DETECT_API_URL="${apiUrl}" is not a valid URL (expected e.g. https://detect.example.com).`);
    }
    const client = new DetectClient({ ...common, apiKey, baseUrl: apiUrl });
    return {
      client,
      apiUrl,
      embedded: false,
      async close() {
        await client.close();
      },
    };
  }

  // Imported lazily: a bot pointed at a remote service never loads the engine and its model.
  const [{ startService }, { createApiKey }] = await Promise.all([
    import('../../src/service/index.ts'),
    import('../../src/service/keys.ts'),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-bot-'));
  const apiKeysFile = join(dir, 'keys.json');
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const { key } = await createApiKey(apiKeysFile, { name: 'chat-bot (in-process)', environment: 'sandbox' });
    service = await startService({
      host: '127.0.0.1',
      port: 0,
      environment: 'sandbox',
      apiKeysFile,
      maxTextChars: positiveInt(env, 'DETECT_MAX_TEXT_CHARS', 50_000),
      ...(env.MODEL_PATH?.trim() ? { modelPath: env.MODEL_PATH.trim() } : {}),
      ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
      ...(logger ? { logger } : {}),
    });
    const started = service;
    const client = new DetectClient({ ...common, apiKey: key, baseUrl: started.url });
    logger?.info({ apiUrl: started.url }, 'started the detection service in-process (DETECT_API_URL unset)');
    return {
      client,
      apiUrl: started.url,
      embedded: true,
      async close() {
        try {
          await client.close();
        } finally {
          try {
            await started.close();
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }
      },
    };
  } catch (err) {
    await service?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
