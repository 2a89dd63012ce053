/**
 * Prometheus metrics (`GET /metrics`, text exposition format via prom-client).
 *
 * Off by default: the API port is public, and request counts per route and status are not for
 * everyone. `metrics: true` (env `METRICS=1`) serves them on the API port; `metricsPort` (env
 * `METRICS_PORT`) serves them on a port of their own instead, which is what a deployment behind a
 * load balancer wants (scrape the pod port, never route it publicly).
 *
 * Each service instance has its own registry, so several services in one process (tests, the bots
 * embedding the service) never mix or double-register their series.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineHost } from './engine.ts';
import { listenUrl } from './listen-url.ts';
import type { RedisCounters } from './ratelimit.ts';

export interface MetricsOptions {
  /** Serve `/metrics` on the API port. */
  enabled: boolean;
  /** Serve `/metrics` on this port (of `host`) instead; 0 picks a free one (see `metricsUrl`). */
  port: number | undefined;
  host: string;
  engine: EngineHost;
  counters: RedisCounters | undefined;
  /** Calls waiting in front of the engine (the fair queue), counted in the queue depth too. */
  waiting?: () => number;
  /** Files waiting for a document reader, and files being read. */
  files?: () => { waiting: number; reading: number };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** URL of the separate metrics listener, when `metricsPort` is set. */
    metricsUrl: string | undefined;
  }
}

const REDIS_STATES = ['ok', 'degraded', 'disabled'] as const;

function createMetrics(options: MetricsOptions): Registry {
  const { engine, counters } = options;
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'textdetect' });
  collectDefaultMetrics({ register: registry, prefix: 'textdetect_' });

  new Gauge({
    name: 'textdetect_redis_state',
    help: 'Rate-limit counter backend: 1 for the current state (ok = shared in Redis, degraded = per instance after a Redis failure, disabled = no REDIS_URL).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const current = counters ? counters.health() : 'disabled';
      for (const state of REDIS_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  new Gauge({
    name: 'textdetect_file_queue_depth',
    help: 'POST /v1/detect/file: files waiting for a document reader (state="waiting") and files being read (state="reading").',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const files = options.files?.() ?? { waiting: 0, reading: 0 };
      this.set({ state: 'waiting' }, files.waiting);
      this.set({ state: 'reading' }, files.reading);
    },
  });
  new Gauge({
    name: 'textdetect_detect_queue_depth',
    help: "Scoring calls not answered yet: waiting in the fair queue between keys (each of a document's windows, those waiting for the file lane too), or with the engine (its worker threads).",
    registers: [registry],
    collect() {
      this.set(engine.pending + (options.waiting?.() ?? 0));
    },
  });
  new Gauge({
    name: 'textdetect_model_info',
    help: 'Version of the loaded detection model (value 1; no series until the engine has loaded).',
    labelNames: ['model'],
    registers: [registry],
    collect() {
      this.reset();
      if (engine.model) this.set({ model: engine.model }, 1);
    },
  });
  return registry;
}

function metricsServer(registry: Registry): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served on this port.\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected.\n'),
    );
  });
}

const plugin: FastifyPluginAsync<MetricsOptions> = async (app: FastifyInstance, options) => {
  app.decorate('metricsUrl', undefined);
  if (!options.enabled && options.port === undefined) return;
  const registry = createMetrics(options);
  const requests = new Counter({
    name: 'textdetect_http_requests_total',
    help: 'HTTP answers by route (the route pattern; "unmatched" for unknown paths), method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const detectSeconds = new Histogram({
    name: 'textdetect_detect_duration_seconds',
    help: 'Time to answer a successful POST /v1/detect (body read, queue and scoring), by mode.',
    labelNames: ['mode'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'textdetect_rate_limited_total',
    help: 'Requests refused with 429, by whose budget was spent (key = an API key, address = unauthenticated requests from one address).',
    labelNames: ['scope'],
    registers: [registry],
  });
  for (const scope of ['key', 'address']) rateLimited.inc({ scope }, 0);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    if (reply.statusCode === 429) rateLimited.inc({ scope: request.ctx?.keyId ? 'key' : 'address' });
    if (route === '/v1/detect' && reply.statusCode === 200 && request.ctx?.mode) {
      detectSeconds.observe({ mode: request.ctx.mode }, reply.elapsedTime / 1000);
    }
  });

  const port = options.port;
  if (port === undefined) {
    app.get('/metrics', { config: { unlimited: true } }, async (_request, reply) => {
      reply.header('Content-Type', registry.contentType).header('Cache-Control', 'no-store');
      return registry.metrics();
    });
    return;
  }

  // A port of its own: opened with the API (a port already in use fails the start) and closed with it.
  const server = metricsServer(registry);
  app.addHook('onReady', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    app.metricsUrl = `${listenUrl(server, options.host, port)}/metrics`;
  });
  app.addHook('onClose', async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
};

// Not encapsulated: the onResponse hook must see every route.
export const metricsPlugin = fp(plugin, { name: 'metrics', dependencies: ['envelope'] });
