/** GET /metrics in the Prometheus text format: off by default, on the API port, or on its own port. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFromEnv } from '../../src/service/config.ts';
import { freePort, startRedisServer, type RedisServerHandle } from '../helpers/redis.ts';
import { ENGLISH_TEXT, TURKISH_TEXT, call, detect, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

/** Parses the exposition text into `name{labels}` → value. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    samples.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return samples;
}

function sample(samples: Map<string, number>, name: string, labels: Record<string, string>): number | undefined {
  for (const [series, value] of samples) {
    if (!series.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) return value;
  }
  return undefined;
}

describe('metrics off by default', () => {
  it('answers 404 at /metrics unless METRICS=1, and reads METRICS / METRICS_PORT from the environment', async () => {
    const service = await startTestService();
    try {
      expect((await call(service, '/metrics')).status).toBe(404);
    } finally {
      await service.stop();
    }
    expect(loadConfigFromEnv({}).metrics).toBe(false);
    expect(loadConfigFromEnv({ METRICS: '1' }).metrics).toBe(true);
    expect(loadConfigFromEnv({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(() => loadConfigFromEnv({ METRICS: 'yes please' })).toThrow(/METRICS must be 1/);
  });
});

describe('metrics on the API port', () => {
  let service: TestService;
  let redisServer: RedisServerHandle;
  beforeAll(async () => {
    redisServer = await startRedisServer();
    service = await startTestService({
      metrics: true,
      rateLimitMax: 3,
      redisUrl: redisServer.url,
      redisKeyPrefix: 'textdetect-metrics-test:',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await redisServer?.stop();
  });

  it('counts requests by route and status, detection latency by mode, 429s, Redis state, queue depth and the model', async () => {
    const key = await service.newKey();
    expect((await detect(service, key, { text: ENGLISH_TEXT, mode: 'academic' })).status).toBe(200);
    expect((await detect(service, key, { text: TURKISH_TEXT })).status).toBe(200);
    expect((await detect(service, key, { text: ENGLISH_TEXT })).status).toBe(200);
    expect((await detect(service, key, { text: ENGLISH_TEXT })).status).toBe(429);
    expect((await call(service, '/no/such/path/123')).status).toBe(404);

    const scrape = await call(service, '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = String(scrape.body);
    expect(text).toContain('# TYPE textdetect_http_requests_total counter');
    expect(text).toContain('# TYPE textdetect_detect_duration_seconds histogram');
    const samples = parseMetrics(text);
    expect(sample(samples, 'textdetect_http_requests_total', { route: '/v1/detect', method: 'POST', status: '200' })).toBe(3);
    expect(sample(samples, 'textdetect_http_requests_total', { route: '/v1/detect', method: 'POST', status: '429' })).toBe(1);
    // Unknown paths share one series instead of one per path a scanner tries.
    expect(sample(samples, 'textdetect_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('/no/such/path');
    expect(sample(samples, 'textdetect_detect_duration_seconds_count', { mode: 'academic' })).toBe(1);
    expect(sample(samples, 'textdetect_detect_duration_seconds_count', { mode: 'general' })).toBe(2);
    expect(sample(samples, 'textdetect_detect_duration_seconds_sum', { mode: 'general' })).toBeGreaterThan(0);
    expect(sample(samples, 'textdetect_rate_limited_total', { scope: 'key' })).toBe(1);
    expect(sample(samples, 'textdetect_redis_state', { state: 'ok' })).toBe(1);
    expect(sample(samples, 'textdetect_redis_state', { state: 'degraded' })).toBe(0);
    expect(sample(samples, 'textdetect_detect_queue_depth', {})).toBe(0);
    expect(sample(samples, 'textdetect_model_info', { model: service.engine.model! })).toBe(1);
    expect(samples.has('textdetect_process_resident_memory_bytes{service="textdetect"}')).toBe(true);
    // Scrapes are not refused by the rate limit (this address has spent nothing, but keys never apply).
    for (let i = 0; i < 5; i++) expect((await call(service, '/metrics')).status).toBe(200);

    // Redis state follows the breaker.
    await redisServer.stop();
    await detect(service, key, { text: ENGLISH_TEXT });
    const after = parseMetrics(String((await call(service, '/metrics')).body));
    expect(sample(after, 'textdetect_redis_state', { state: 'degraded' })).toBe(1);
  });
});

describe('metrics on a separate port', () => {
  it('serves /metrics only there, not on the API port, and stops with the service', async () => {
    const metricsPort = await freePort();
    const service = await startTestService({ metricsPort, workers: 1 });
    try {
      expect(service.app.metricsUrl).toBe(`http://127.0.0.1:${metricsPort}/metrics`);
      expect((await call(service, '/metrics')).status).toBe(404);
      const key = await service.newKey();
      expect((await detect(service, key, { text: ENGLISH_TEXT })).status).toBe(200);
      const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scrape.status).toBe(200);
      const samples = parseMetrics(await scrape.text());
      expect(sample(samples, 'textdetect_http_requests_total', { route: '/v1/detect', status: '200' })).toBe(1);
      expect(sample(samples, 'textdetect_redis_state', { state: 'disabled' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
      // Texts waiting for the scoring worker show as queue depth while they wait.
      const burst = Array.from({ length: 20 }, () => detect(service, key, { text: ENGLISH_TEXT, segments: true }));
      let deepest = 0;
      for (let i = 0; i < 20 && deepest === 0; i++) {
        const depth = sample(
          parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()),
          'textdetect_detect_queue_depth',
          {},
        );
        deepest = Math.max(deepest, depth ?? 0);
      }
      expect((await Promise.all(burst)).every((a) => a.status === 200)).toBe(true);
      expect(deepest).toBeGreaterThan(0);
      const settled = parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
      expect(sample(settled, 'textdetect_detect_queue_depth', {})).toBe(0);
    } finally {
      await service.stop();
    }
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });
});
