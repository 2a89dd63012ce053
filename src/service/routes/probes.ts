/** Health and readiness (`GET /healthz`, `GET /readyz`) and the contract (`GET /v1/openapi.json`): never rate limited. */
import type { FastifyInstance } from 'fastify';
import type { ResolvedConfig } from '../config.ts';
import type { EngineHost } from '../engine.ts';
import { ApiError } from '../errors.ts';
import type { KeyStore } from '../keys.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import { refuseOtherMethods } from '../plugins/envelope.ts';
import type { RedisCounters } from '../ratelimit.ts';
import { healthSchema, readySchema } from '../schemas.ts';

export interface ProbesOptions {
  config: ResolvedConfig;
  engine: EngineHost;
  keys: KeyStore;
  counters: RedisCounters | undefined;
  isClosing(): boolean;
}

export default async function probes(app: FastifyInstance, options: ProbesOptions): Promise<void> {
  const { config, engine, keys, counters, isClosing } = options;
  const unlimited = { unlimited: true };

  app.get('/healthz', { config: unlimited, schema: { response: { 200: healthSchema } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { config: unlimited, schema: { response: { 200: readySchema } } }, async () => {
    // Never waits on Redis (the breaker's state is in memory) and only stats the key file, so the
    // probe answers at once whatever Redis or the disk are doing.
    await keys.refresh().catch(() => undefined);
    const redis = counters ? counters.health() : ('disabled' as const);
    // A degraded Redis or stale keys still serve requests (per-instance limits, last good keys):
    // reported, not "not ready", or a load balancer would take every instance out at once.
    if (engine.state === 'ready' && !isClosing()) {
      return { status: 'ready' as const, model: engine.model ?? '', redis, keys: keys.status };
    }
    const reasons: string[] = [];
    if (engine.state !== 'ready') reasons.push(engine.state === 'failed' ? 'the engine failed to load' : `the engine is ${engine.state}`);
    if (isClosing()) reasons.push('the service is shutting down');
    throw new ApiError(503, 'not_ready', `Not ready: ${reasons.join(', ')}.`, {
      retryAfter: 5,
      headers: { 'Retry-After': '5' },
      details: { checks: { engine: engine.state, redis, keys: keys.status } },
    });
  });

  const openapi = buildOpenApiDocument(config);
  app.get('/v1/openapi.json', { config: unlimited }, async () => openapi);

  for (const url of ['/healthz', '/readyz', '/v1/openapi.json']) refuseOtherMethods(app, url, ['GET', 'HEAD'], true);
}
