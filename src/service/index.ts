/**
 * The detection service: `startService(config)` loads the engine, opens the key store, connects
 * Redis when configured and listens; `close()` shuts down gracefully.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { defaultConfig, resolveConfig } from './config.ts';
import type { ServiceConfig } from './config.ts';
import { createEngineHost } from './engine.ts';
import type { EngineHost } from './engine.ts';
import { createApiKey, KeyStore } from './keys.ts';
import { listenUrl } from './listen-url.ts';
import { createRedisCounters } from './ratelimit.ts';
import type { RedisCounters } from './ratelimit.ts';

export type { ServiceConfig, LogLevel } from './config.ts';
export { loadConfigFromEnv, defaultConfig, defaultApiKeysFile, parseDuration, ConfigError } from './config.ts';
export { createApiKey, listApiKeys, revokeApiKey } from './keys.ts';

export interface RunningService {
  /** Base URL, e.g. `http://127.0.0.1:8080` (the actual port when `port: 0` was asked for). */
  url: string;
  app: FastifyInstance;
  /** Graceful shutdown: stop accepting, let in-flight requests finish (up to `shutdownTimeoutMs`), release Redis and workers. Idempotent. */
  close(): Promise<void>;
  /** Engine state, for callers that started with `waitForEngine: false`. */
  engine: EngineHost;
  /** The key made by `startService(…, { sandboxKey })`; undefined otherwise. */
  sandboxKey: string | undefined;
}

export interface StartOptions {
  /**
   * For a service embedded in another program (the chat bots without DETECT_API_URL): issue a sandbox
   * key with this name in a temporary key file that lives as long as the service, and use that file
   * as `apiKeysFile`. The key is returned as `sandboxKey`.
   */
  sandboxKey?: { name: string } | undefined;
}

/**
 * Secrets as they look in any log line, at any depth, whoever wrote the line (a library's trace
 * line carried the Authorization header): API keys, bearer credentials, Slack tokens.
 */
const SECRETS: Array<[RegExp, string]> = [
  [/\b(sk_(?:test|live)_)[A-Za-z0-9]{8,}/g, '$1[redacted]'],
  [/\b(Bearer|Basic)\s+[^\s"\\]+/gi, '$1 [redacted]'],
  [/\b(xox[abpors]|xapp)-[A-Za-z0-9-]+/g, '$1-[redacted]'],
];

/** A log line with every secret in it replaced (see SECRETS). */
export function redactSecrets(line: string): string {
  let out = line;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/** The service's logger: JSON lines to `destination` (default stdout), secrets never written. */
export function createLogger(level: ServiceConfig['logLevel'], destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'textdetect' },
    // Belt and braces: the service never logs requests wholesale, but if anyone adds `req` to a
    // log line, the key must not follow it.
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.headers.authorization',
        'authorization',
        'text',
        'body.text',
        'messages',
        'body.messages',
      ],
      censor: '[redacted]',
    },
    // And whatever shape a line has (busboy's options at trace level hold the request's headers),
    // a key, token or bearer credential in it is replaced before it is written.
    hooks: { streamWrite: redactSecrets },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Starts the service. Options not given come from `defaultConfig()` (not from the environment;
 * use `startService(loadConfigFromEnv())` for that, as `npm start` does).
 */
export async function startService(config: Partial<ServiceConfig> = {}, options: StartOptions = {}): Promise<RunningService> {
  if (!options.sandboxKey) return start(config, undefined);
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-embedded-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const apiKeysFile = join(dir, 'keys.json');
    const { key } = await createApiKey(apiKeysFile, { name: options.sandboxKey.name, environment: 'sandbox' });
    const running = await start({ ...config, environment: 'sandbox', apiKeysFile }, key);
    const closeService = running.close;
    let closed: Promise<void> | undefined;
    return {
      ...running,
      close: () => (closed ??= closeService().finally(removeDir)),
    };
  } catch (err) {
    await removeDir();
    throw err;
  }
}

async function start(config: Partial<ServiceConfig>, sandboxKey: string | undefined): Promise<RunningService> {
  const merged: ServiceConfig = { ...defaultConfig(), ...stripUndefined(config) };
  const resolved = resolveConfig(merged);
  const logger = resolved.logger ?? createLogger(resolved.logLevel);

  const engine = createEngineHost(resolved.modelPath, resolved.workers, (err) =>
    logger.error({ err: { message: err.message } }, 'scoring worker died; texts it was scoring got 500, a new worker is starting'),
  );
  if (resolved.waitForEngine) {
    try {
      await engine.loaded;
    } catch (err) {
      await engine.close();
      throw err;
    }
  } else {
    engine.loaded.then(
      () => logger.info({ model: engine.model }, 'engine loaded'),
      (err: Error) => logger.error({ err: { message: err.message } }, 'engine failed to load; /readyz and /v1/detect answer 503'),
    );
  }

  const keys = new KeyStore(resolved.apiKeysFile, resolved.environment, resolved.apiKeysRefreshMs);
  try {
    await keys.refresh(true);
  } catch (err) {
    // With no good key file ever read there are no keys to fall back on: refuse to start.
    await engine.close();
    throw err;
  }

  let counters: RedisCounters | undefined;
  if (resolved.redisUrl)
    counters = createRedisCounters(resolved.redisUrl, resolved.redisKeyPrefix, logger, {
      slowMs: resolved.redisTimeoutMs,
      failuresToTrip: resolved.redisTripFailures,
      coolDownMs: resolved.redisCoolDownMs,
      instances: resolved.rateLimitInstances,
    });

  let closing = false;
  const app = await buildApp({ config: resolved, logger, engine, keys, counters, isClosing: () => closing });

  try {
    await app.listen({ host: resolved.host, port: resolved.port });
  } catch (err) {
    await counters?.close();
    await engine.close();
    throw err;
  }
  const url = listenUrl(app.server, resolved.host, resolved.port);
  logger.info(
    {
      url,
      environment: resolved.environment,
      keys_file: resolved.apiKeysFile,
      keys: keys.size,
      redis: Boolean(counters),
      model: engine.model,
      workers: resolved.workers,
    },
    'textdetect service listening',
  );

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing = true;
      // app.close() stops accepting and waits for in-flight requests; connections that stay busy
      // past the deadline are cut so shutdown always ends.
      const deadline = setTimeout(() => {
        logger.warn('shutdown deadline reached; closing remaining connections');
        app.server.closeAllConnections();
      }, resolved.shutdownTimeoutMs);
      deadline.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
        await counters?.close();
        await engine.close();
        logger.info('textdetect service stopped');
      }
    })();
    return closed;
  };

  return { url, app, close, engine, sandboxKey };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
