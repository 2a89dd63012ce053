/**
 * Service configuration: one typed object, built from defaults, environment variables
 * (`loadConfigFromEnv`) and explicit overrides (`startService(config)`).
 */
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_MAX_TEXT_CHARS, unitsForChars } from '../contract.ts';
import type { KeyEnvironment } from './keys.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface ServiceConfig {
  /** Interface to listen on. Env `HOST`; default `127.0.0.1` (use `0.0.0.0` in a container). */
  host: string;
  /** TCP port; 0 picks a free ephemeral port (see `RunningService.url`). Env `PORT`; default 8080. */
  port: number;
  /**
   * Which keys the server accepts: `sandbox` accepts only `sk_test_` keys, `production` only
   * `sk_live_` keys. Env `ENVIRONMENT`; default `sandbox`.
   */
  environment: KeyEnvironment;
  /** JSON key file holding SHA-256 digests of the accepted keys. Env `API_KEYS_FILE`; default `defaultApiKeysFile()`. */
  apiKeysFile: string;
  /** How often (ms) the key file is checked for changes, so CLI edits apply without a restart. Env `API_KEYS_REFRESH_MS`; default 1000. */
  apiKeysRefreshMs: number;
  /**
   * Units per window per API key (keys may override it), and per client address for unauthenticated
   * requests; a call costs one unit per started 5,000 characters (`CHARS_PER_UNIT`). Env
   * `RATE_LIMIT_MAX`; default 150, the cost of one text at the default document limit
   * (`DEFAULT_MAX_TEXT_CHARS`), so a key can have the longest document judged.
   */
  rateLimitMax: number;
  /** Rate-limit window: milliseconds, or a duration string such as `5 seconds`, `1 minute`. Env `RATE_LIMIT_WINDOW`; default `1 minute`. */
  rateLimitWindow: number | string;
  /**
   * Redis URL (`redis://host:port/db`) for rate-limit counters shared by every instance; unset keeps
   * counters in this process. Env `REDIS_URL`; default unset.
   */
  redisUrl: string | undefined;
  /** Prefix of the Redis keys holding rate-limit counters. Env `REDIS_KEY_PREFIX`; default `textdetect:ratelimit:`. */
  redisKeyPrefix: string;
  /**
   * The document limit: the most characters one text may hold, pasted (`POST /v1/detect`) or read
   * out of a file (`POST /v1/detect/file`), counted as `countChars` does (code points, a whitespace
   * run as one). A longer file is not read past it. Env `MAX_TEXT_CHARS`; default 750000
   * (`DEFAULT_MAX_TEXT_CHARS`: more than 100 dense pages hold).
   */
  maxTextChars: number;
  /**
   * Longest message of a `POST /v1/detect/author` request, in Unicode characters. Env
   * `AUTHOR_MAX_MESSAGE_CHARS`; default 10000: well above chat messages (Discord allows 4,000
   * characters, Slack advises staying under 4,000); a longer text is a document for /v1/detect.
   */
  authorMaxMessageChars: number;
  /** Most characters all messages of one `POST /v1/detect/author` request may hold together. Env `AUTHOR_MAX_TOTAL_CHARS`; default 50000. */
  authorMaxTotalChars: number;
  /**
   * Largest accepted request body in bytes. Default (env `BODY_LIMIT_BYTES`): room for the larger of
   * `maxTextChars` and `authorMaxTotalChars` characters even if every one is sent as JSON escapes, a
   * character outside the BMP taking two (`\ud83d\ude00`, 12 bytes, as Python's default
   * `json.dumps` writes emoji), plus 16 KiB (which also covers the quotes and commas of 200 messages).
   */
  bodyLimit: number | undefined;
  /** A request body must arrive completely within this many ms, else 408. Env `BODY_TIMEOUT_MS`; default 10000. */
  bodyTimeoutMs: number;
  /** Model artifact passed to `createDetector({ model })`; unset uses the engine's default. Env `MODEL_PATH`. */
  modelPath: string | undefined;
  /**
   * Scoring runs in this many worker threads, so HTTP handling and scoring use separate cores and
   * a long text does not stall other requests; 0 scores on the main thread (cheapest to start,
   * best for tests and embedding). Default 0 for `startService()`; `loadConfigFromEnv()` (npm start)
   * uses env `DETECT_WORKERS`, defaulting to the number of available CPUs, at most 4.
   */
  workers: number;
  /**
   * When true (default), `startService` resolves only after the engine has loaded and rejects if it
   * cannot load. When false it listens at once and answers 503 `not_ready` until the engine is
   * loaded (or forever, logging why, if it fails to load).
   */
  waitForEngine: boolean;
  /** pino level of the built-in logger. Env `LOG_LEVEL`; default `info`. Ignored when `logger` is given. */
  logLevel: LogLevel;
  /** A pino logger to use instead of the built-in one (which writes JSON lines to stdout). */
  logger: Logger | undefined;
  /** On shutdown, in-flight requests get this many ms to finish before connections are cut. Env `SHUTDOWN_TIMEOUT_MS`; default 10000. */
  shutdownTimeoutMs: number;
  /** Trust `X-Forwarded-For` from a proxy in front (for per-address limits). Env `TRUST_PROXY` (`true`/`false`/hop count/addresses); default false. */
  trustProxy: boolean | number | string;
  /**
   * A rate-limit command Redis has not answered within this many ms counts as failed (that request
   * is counted per instance). Env `REDIS_TIMEOUT_MS`; default 250.
   */
  redisTimeoutMs: number;
  /** This many consecutive failed or slow Redis commands trip the circuit breaker (per-instance counting). Env `REDIS_TRIP_FAILURES`; default 3. */
  redisTripFailures: number;
  /**
   * Service instances sharing `redisUrl`: while Redis is unavailable, each instance allows this
   * share of what was left of a key's budget. Env `RATE_LIMIT_INSTANCES`; default 1.
   */
  rateLimitInstances: number;
  /** After a trip, per-instance counting lasts at least this long, until Redis answers a background probe. Env `REDIS_COOL_DOWN_MS`; default 5000. */
  redisCoolDownMs: number;
  /** Serve Prometheus metrics at `GET /metrics` on the API port. Env `METRICS=1`; default off. */
  metrics: boolean;
  /** Serve `GET /metrics` on this separate port instead (on `host`), keeping it off the API port. Env `METRICS_PORT`; default unset. */
  metricsPort: number | undefined;
  /**
   * Serve the web page that checks a text (`GET /`, see docs/playground.md). Default false for
   * `startService()` (an embedded service, such as the bots', has no use for a page);
   * `loadConfigFromEnv()` (npm start, Docker) turns it on unless env `PLAYGROUND` is `0`/`false`.
   */
  playground: boolean;
  /** `POST /v1/detect/file`: largest accepted file in bytes; larger gets 413 `file_too_large`. Env `MAX_FILE_BYTES`; default 10 MB (10485760). */
  maxFileBytes: number;
  /** `POST /v1/detect/file`: most pages of a PDF; more gets 413 `too_many_pages`. Env `MAX_FILE_PAGES`; default 100. */
  maxFilePages: number;
  /**
   * `POST /v1/detect/file`: most bytes a DOCX may unpack to (all its parts); more gets 422
   * `file_unreadable`, told from the zip's directory before anything is inflated. Env
   * `MAX_FILE_UNPACKED_BYTES`; default 64 MB (67108864).
   */
  maxFileUnpackedBytes: number;
  /** Reader processes reading files (PDF, DOCX…) off the event loop. Env `FILE_WORKERS`; default 1. */
  fileWorkers: number;
  /**
   * Most resident memory of one reader process in MB, everything included (a PDF's inflated streams
   * too); a file needing more gets 422 `file_unreadable` and the reader is replaced. Env
   * `FILE_WORKER_MEMORY_MB`; default 512.
   */
  fileWorkerMemoryMb: number;
  /** Most ms reading one file may take once a worker has it; slower gets 422 `file_unreadable`. Env `FILE_TIMEOUT_MS`; default 10000. */
  fileTimeoutMs: number;
  /**
   * Start the file workers with the service (pdf.js takes a second or more to warm up) instead of
   * on the first file. Default false for `startService()`; true for `loadConfigFromEnv()` (npm start).
   */
  fileWorkersAtStart: boolean;
}

/**
 * Default key file: outside any checkout, so keys never end up committed:
 * `$XDG_CONFIG_HOME/textdetect/api-keys.json`, falling back to `~/.config/textdetect/api-keys.json`.
 */
export function defaultApiKeysFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'textdetect', 'api-keys.json');
}

export function defaultConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    host: '127.0.0.1',
    port: 8080,
    environment: 'sandbox',
    apiKeysFile: defaultApiKeysFile(env),
    apiKeysRefreshMs: 1000,
    rateLimitMax: unitsForChars(DEFAULT_MAX_TEXT_CHARS),
    rateLimitWindow: '1 minute',
    redisUrl: undefined,
    redisKeyPrefix: 'textdetect:ratelimit:',
    maxTextChars: DEFAULT_MAX_TEXT_CHARS,
    authorMaxMessageChars: 10_000,
    authorMaxTotalChars: 50_000,
    bodyLimit: undefined,
    bodyTimeoutMs: 10_000,
    modelPath: undefined,
    workers: 0,
    waitForEngine: true,
    logLevel: 'info',
    logger: undefined,
    shutdownTimeoutMs: 10_000,
    trustProxy: false,
    redisTimeoutMs: 250,
    redisTripFailures: 3,
    rateLimitInstances: 1,
    redisCoolDownMs: 5000,
    metrics: false,
    metricsPort: undefined,
    playground: false,
    maxFileBytes: 10 * 1024 * 1024,
    maxFilePages: 100,
    maxFileUnpackedBytes: 64 * 1024 * 1024,
    fileWorkers: 1,
    fileWorkerMemoryMb: 512,
    fileTimeoutMs: 10_000,
    fileWorkersAtStart: false,
  };
}

/** Raised for a configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** `1500`, `'1500'`, `'5 seconds'`, `'1 minute'`, `'2h'` → milliseconds; undefined if unreadable. */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.round(value) : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? '').toLowerCase();
  const factor = unit === '' ? 1 : UNIT_MS[unit];
  if (factor === undefined) return undefined;
  const ms = Math.round(amount * factor);
  return ms > 0 ? ms : undefined;
}

function integer(env: NodeJS.ProcessEnv, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}".`);
  }
  return value;
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  // `docker --env-file` keeps quotes that a shell would strip; accept both spellings.
  const unquoted = /^(["'])(.*)\1$/.exec(raw)?.[2]?.trim() ?? raw;
  return unquoted === '' ? undefined : unquoted;
}

/** Builds a full config from environment variables; unset variables keep their defaults. */
export function loadConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const config = defaultConfig(env);
  config.host = text(env, 'HOST') ?? config.host;
  config.port = integer(env, 'PORT', 0, 65_535) ?? config.port;
  const environment = text(env, 'ENVIRONMENT');
  if (environment !== undefined) {
    if (environment !== 'sandbox' && environment !== 'production') {
      throw new ConfigError(`ENVIRONMENT must be "sandbox" or "production", got "${environment}".`);
    }
    config.environment = environment;
  }
  config.apiKeysFile = text(env, 'API_KEYS_FILE') ?? config.apiKeysFile;
  config.apiKeysRefreshMs = integer(env, 'API_KEYS_REFRESH_MS', 0) ?? config.apiKeysRefreshMs;
  config.rateLimitMax = integer(env, 'RATE_LIMIT_MAX', 1) ?? config.rateLimitMax;
  const window = text(env, 'RATE_LIMIT_WINDOW');
  if (window !== undefined) {
    if (parseDuration(window) === undefined) {
      throw new ConfigError(`RATE_LIMIT_WINDOW must be a duration such as "5 seconds", "1 minute" or a number of ms, got "${window}".`);
    }
    config.rateLimitWindow = window;
  }
  const redisUrl = text(env, 'REDIS_URL');
  // ioredis reads a bare word as a host name, so a typo would only show up as "Redis unreachable" later.
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s/]/.test(redisUrl)) {
    throw new ConfigError(`REDIS_URL must look like redis://host:port[/db] (or rediss:// for TLS), got "${redisUrl}".`);
  }
  config.redisUrl = redisUrl;
  config.redisKeyPrefix = text(env, 'REDIS_KEY_PREFIX') ?? config.redisKeyPrefix;
  config.maxTextChars = integer(env, 'MAX_TEXT_CHARS', 1, 10_000_000) ?? config.maxTextChars;
  config.authorMaxMessageChars = integer(env, 'AUTHOR_MAX_MESSAGE_CHARS', 1, 10_000_000) ?? config.authorMaxMessageChars;
  config.authorMaxTotalChars = integer(env, 'AUTHOR_MAX_TOTAL_CHARS', 1, 10_000_000) ?? config.authorMaxTotalChars;
  config.bodyLimit = integer(env, 'BODY_LIMIT_BYTES', 1024) ?? config.bodyLimit;
  config.bodyTimeoutMs = integer(env, 'BODY_TIMEOUT_MS', 100) ?? config.bodyTimeoutMs;
  config.modelPath = text(env, 'MODEL_PATH');
  config.workers = integer(env, 'DETECT_WORKERS', 0, 64) ?? Math.min(availableParallelism(), 4);
  const level = text(env, 'LOG_LEVEL');
  if (level !== undefined) {
    if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) {
      throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${level}".`);
    }
    config.logLevel = level as LogLevel;
  }
  config.shutdownTimeoutMs = integer(env, 'SHUTDOWN_TIMEOUT_MS', 0) ?? config.shutdownTimeoutMs;
  const trust = text(env, 'TRUST_PROXY');
  if (trust !== undefined) {
    if (trust === 'true' || trust === 'false') config.trustProxy = trust === 'true';
    else if (/^\d+$/.test(trust)) config.trustProxy = Number(trust);
    else config.trustProxy = trust;
  }
  config.redisTimeoutMs = integer(env, 'REDIS_TIMEOUT_MS', 1, 60_000) ?? config.redisTimeoutMs;
  config.redisCoolDownMs = integer(env, 'REDIS_COOL_DOWN_MS', 0, 3_600_000) ?? config.redisCoolDownMs;
  config.redisTripFailures = integer(env, 'REDIS_TRIP_FAILURES', 1, 1000) ?? config.redisTripFailures;
  config.rateLimitInstances = integer(env, 'RATE_LIMIT_INSTANCES', 1, 10_000) ?? config.rateLimitInstances;
  const metrics = text(env, 'METRICS');
  if (metrics !== undefined) {
    if (!['1', '0', 'true', 'false'].includes(metrics)) throw new ConfigError(`METRICS must be 1 (on) or 0 (off), got "${metrics}".`);
    config.metrics = metrics === '1' || metrics === 'true';
  }
  config.metricsPort = integer(env, 'METRICS_PORT', 1, 65_535) ?? config.metricsPort;
  const playground = text(env, 'PLAYGROUND')?.toLowerCase();
  if (playground !== undefined && !['0', '1', 'false', 'true', 'off', 'on', 'no', 'yes'].includes(playground)) {
    throw new ConfigError(`PLAYGROUND must be 1 or 0 (also true/false, on/off, yes/no), got "${playground}".`);
  }
  config.playground = playground === undefined ? true : ['1', 'true', 'on', 'yes'].includes(playground);
  config.maxFileBytes = integer(env, 'MAX_FILE_BYTES', 1024, 1024 * 1024 * 1024) ?? config.maxFileBytes;
  config.maxFilePages = integer(env, 'MAX_FILE_PAGES', 1, 100_000) ?? config.maxFilePages;
  config.maxFileUnpackedBytes = integer(env, 'MAX_FILE_UNPACKED_BYTES', 1024 * 1024, 4 * 1024 * 1024 * 1024) ?? config.maxFileUnpackedBytes;
  config.fileWorkers = integer(env, 'FILE_WORKERS', 1, 64) ?? config.fileWorkers;
  config.fileTimeoutMs = integer(env, 'FILE_TIMEOUT_MS', 100, 600_000) ?? config.fileTimeoutMs;
  config.fileWorkerMemoryMb = integer(env, 'FILE_WORKER_MEMORY_MB', 128, 65_536) ?? config.fileWorkerMemoryMb;
  config.fileWorkersAtStart = true;
  return config;
}

/** Checks a merged config and fills derived values; throws ConfigError naming the bad option. */
/** The configuration with what it implies worked out: the window in ms and the body limit in bytes. */
export type ResolvedConfig = ServiceConfig & { rateLimitWindowMs: number; bodyLimitBytes: number };

export function resolveConfig(config: ServiceConfig): ResolvedConfig {
  const windowMs = parseDuration(config.rateLimitWindow);
  if (windowMs === undefined) throw new ConfigError(`rateLimitWindow "${String(config.rateLimitWindow)}" is not a duration.`);
  if (!Number.isSafeInteger(config.rateLimitMax) || config.rateLimitMax < 1) {
    throw new ConfigError(`rateLimitMax must be a positive integer, got ${String(config.rateLimitMax)}.`);
  }
  if (!Number.isSafeInteger(config.rateLimitInstances) || config.rateLimitInstances < 1) {
    throw new ConfigError(`rateLimitInstances must be a positive integer, got ${String(config.rateLimitInstances)}.`);
  }
  if (!Number.isSafeInteger(config.redisTripFailures) || config.redisTripFailures < 1) {
    throw new ConfigError(`redisTripFailures must be a positive integer, got ${String(config.redisTripFailures)}.`);
  }
  if (!Number.isSafeInteger(config.maxTextChars) || config.maxTextChars < 1) {
    throw new ConfigError(`maxTextChars must be a positive integer, got ${String(config.maxTextChars)}.`);
  }
  for (const name of ['authorMaxMessageChars', 'authorMaxTotalChars'] as const) {
    if (!Number.isSafeInteger(config[name]) || config[name] < 1) {
      throw new ConfigError(`${name} must be a positive integer, got ${String(config[name])}.`);
    }
  }
  for (const name of [
    'maxFileBytes',
    'maxFilePages',
    'maxFileUnpackedBytes',
    'fileWorkers',
    'fileWorkerMemoryMb',
    'fileTimeoutMs',
  ] as const) {
    if (!Number.isSafeInteger(config[name]) || config[name] < 1) {
      throw new ConfigError(`${name} must be a positive integer, got ${String(config[name])}.`);
    }
  }
  if (!Number.isSafeInteger(config.port) || config.port < 0 || config.port > 65_535) {
    throw new ConfigError(`port must be 0..65535, got ${String(config.port)}.`);
  }
  if (config.environment !== 'sandbox' && config.environment !== 'production') {
    throw new ConfigError(`environment must be "sandbox" or "production", got "${String(config.environment)}".`);
  }
  const bodyLimitBytes = config.bodyLimit ?? Math.max(config.maxTextChars, config.authorMaxTotalChars) * 12 + 16 * 1024;
  return { ...config, rateLimitWindowMs: windowMs, bodyLimitBytes };
}
