/**
 * The fastify application, composed of plugins with one job each (see docs/service.md, "Layout"):
 * `envelope` (request ids, error envelope, strict JSON, socket-level answers, request logs), `auth`
 * (API keys), `limits` (rate limits and what a call costs), the routes, metrics and the web page.
 * `index.ts` wires it to the engine, the key store and Redis, and owns the lifecycle.
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ResolvedConfig } from './config.ts';
import type { EngineHost } from './engine.ts';
import type { FileQueue } from './file-queue.ts';
import type { FairQueue } from './fair-queue.ts';
import { newRequestId } from './ids.ts';
import type { KeyStore } from './keys.ts';
import { metricsPlugin } from './metrics.ts';
import playground from './playground/index.ts';
import { auth } from './plugins/auth.ts';
import { envelopeGate, envelopeHooks, sendError, socketAnswers, toApiError } from './plugins/envelope.ts';
import { limits } from './plugins/limits.ts';
import type { RedisCounters } from './ratelimit.ts';
import authorRoute from './routes/author.ts';
import detectRoute from './routes/detect.ts';
import fileRoute from './routes/file.ts';
import probes from './routes/probes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The queue in front of the document readers (POST /v1/detect/file). */
    readonly fileQueue: FileQueue | undefined;
    /** The turns between keys in front of the file route's scoring lane: documents' windows waiting (POST /v1/detect/file). */
    readonly fileScoringQueue: FairQueue | undefined;
  }
}

export interface AppDependencies {
  config: ResolvedConfig;
  logger: Logger;
  engine: EngineHost;
  keys: KeyStore;
  /** Present when `redisUrl` is configured. */
  counters: RedisCounters | undefined;
  /** True once shutdown has begun: new requests get 503 and `Connection: close`. */
  isClosing(): boolean;
}

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, logger, engine, keys, counters, isClosing } = deps;

  // Widened to fastify's logger type, so the instance is the plain FastifyInstance the plugins take.
  const baseLogger: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance: baseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => newRequestId(),
    // Our ids are generated, never taken from a header: the caller's id is validated and kept apart.
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy as boolean,
    // fastify's own 503-on-close answer is not our envelope; the envelope's onRequest hook answers instead.
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
    clientErrorHandler: socketAnswers(logger).clientErrorHandler,
    // Node would answer an HTTP/1.1 request without Host with a bare 400 and no body; let it
    // through so the envelope's onRequest hook answers it in the envelope.
    http: { requireHostHeader: false },
    frameworkErrors: (error, request, reply) => {
      void sendError(request, reply, toApiError(error, config.bodyLimitBytes));
    },
  });

  // Order matters: onRequest hooks run in registration order (ids first, then the key, then the
  // count, then the refusals that wait for the count).
  await app.register(envelopeHooks, { config, isClosing });
  await app.register(auth, { config, keys });
  await app.register(limits, { config, counters });
  await app.register(envelopeGate, { isClosing });

  await app.register(detectRoute, { config, engine });
  await app.register(authorRoute, { config, engine });
  let fileQueue: FileQueue | undefined;
  let fileScoringQueue: FairQueue | undefined;
  app.decorate('fileQueue', {
    getter: () => fileQueue,
  });
  app.decorate('fileScoringQueue', {
    getter: () => fileScoringQueue,
  });
  await app.register(fileRoute, {
    config,
    engine,
    onQueue: (queue, lane) => {
      fileQueue = queue;
      fileScoringQueue = lane;
    },
  });
  await app.register(probes, { config, engine, keys, counters, isClosing });
  await app.register(metricsPlugin, {
    enabled: config.metrics,
    port: config.metricsPort,
    host: config.host,
    engine,
    counters,
    waiting: () => app.scoringQueue.waiting + (fileScoringQueue?.waiting ?? 0),
    files: () => ({ waiting: fileQueue?.waiting ?? 0, reading: fileQueue?.reading ?? 0 }),
  });
  if (config.playground) await app.register(playground, { config });

  return app;
}
