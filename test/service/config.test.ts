import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultApiKeysFile,
  defaultConfig,
  loadConfigFromEnv,
  parseDuration,
  resolveConfig,
} from '../../src/service/config.ts';

async function envExample(): Promise<Record<string, string>> {
  const raw = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
  const vars: Record<string, string> = {};
  for (const line of raw.split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match) vars[match[1]!] = match[2]!;
  }
  return vars;
}

describe('configuration', () => {
  it('.env.example lists every variable the service reads, with its defaults', async () => {
    const source = await readFile(new URL('../../src/service/config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/\(env, '([A-Z_]+)'/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(10);
    const example = await envExample();
    for (const name of read) expect(Object.keys(example), name).toContain(name);
    const fromExample = loadConfigFromEnv({ ...example, DETECT_WORKERS: '0', PLAYGROUND: '0', HOME: '/home/someone' });
    const defaults = defaultConfig({ HOME: '/home/someone' });
    // fileWorkersAtStart is no variable: a service configured from the environment warms its file
    // readers at start, one built from defaultConfig (tests, embedding) on the first file.
    expect(fromExample.fileWorkersAtStart).toBe(true);
    expect({ ...fromExample, apiKeysFile: '', rateLimitWindow: 0, fileWorkersAtStart: false }).toEqual({
      ...defaults,
      apiKeysFile: '',
      rateLimitWindow: 0,
    });
    expect(parseDuration(fromExample.rateLimitWindow)).toBe(parseDuration(defaults.rateLimitWindow));
  });

  it('reads every variable', () => {
    const config = loadConfigFromEnv({
      HOST: '0.0.0.0',
      PORT: '9000',
      ENVIRONMENT: 'production',
      API_KEYS_FILE: '/srv/keys.json',
      API_KEYS_REFRESH_MS: '250',
      RATE_LIMIT_MAX: '5',
      RATE_LIMIT_WINDOW: '"5 seconds"',
      REDIS_URL: 'redis://r:6379/2',
      REDIS_KEY_PREFIX: 'x:',
      MAX_TEXT_CHARS: '1000',
      AUTHOR_MAX_MESSAGE_CHARS: '300',
      AUTHOR_MAX_TOTAL_CHARS: '4000',
      BODY_LIMIT_BYTES: '20000',
      BODY_TIMEOUT_MS: '500',
      MODEL_PATH: '/m.bin',
      DETECT_WORKERS: '3',
      LOG_LEVEL: 'warn',
      SHUTDOWN_TIMEOUT_MS: '2000',
      TRUST_PROXY: '1',
      REDIS_TIMEOUT_MS: '40',
      REDIS_COOL_DOWN_MS: '2500',
      REDIS_TRIP_FAILURES: '5',
      RATE_LIMIT_INSTANCES: '3',
      METRICS: '1',
      METRICS_PORT: '9464',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      environment: 'production',
      apiKeysFile: '/srv/keys.json',
      apiKeysRefreshMs: 250,
      rateLimitMax: 5,
      rateLimitWindow: '5 seconds',
      redisUrl: 'redis://r:6379/2',
      redisKeyPrefix: 'x:',
      maxTextChars: 1000,
      authorMaxMessageChars: 300,
      authorMaxTotalChars: 4000,
      bodyLimit: 20000,
      bodyTimeoutMs: 500,
      modelPath: '/m.bin',
      workers: 3,
      logLevel: 'warn',
      shutdownTimeoutMs: 2000,
      trustProxy: 1,
      redisTimeoutMs: 40,
      redisCoolDownMs: 2500,
      redisTripFailures: 5,
      rateLimitInstances: 3,
      metrics: true,
      metricsPort: 9464,
    });
  });

  it('refuses bad values, naming the variable', () => {
    for (const [name, value] of [
      ['PORT', '70000'],
      ['PORT', 'http'],
      ['ENVIRONMENT', 'staging'],
      ['RATE_LIMIT_MAX', '0'],
      ['RATE_LIMIT_WINDOW', 'soon'],
      ['MAX_TEXT_CHARS', '-5'],
      ['AUTHOR_MAX_MESSAGE_CHARS', '0'],
      ['AUTHOR_MAX_TOTAL_CHARS', 'lots'],
      ['LOG_LEVEL', 'loud'],
      ['DETECT_WORKERS', '1.5'],
      ['REDIS_URL', 'notaurl'],
      ['REDIS_URL', 'localhost:6379'],
      ['REDIS_TIMEOUT_MS', '0'],
      ['REDIS_COOL_DOWN_MS', 'soon'],
      ['REDIS_TRIP_FAILURES', '0'],
      ['RATE_LIMIT_INSTANCES', '0'],
      ['RATE_LIMIT_INSTANCES', 'two'],
      ['METRICS', 'on please'],
      ['METRICS_PORT', '99999'],
    ] as const) {
      expect(() => loadConfigFromEnv({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
      expect(() => loadConfigFromEnv({ [name]: value })).toThrow(name);
    }
  });

  it('makes room in the default body limit for the larger of one text and all messages of an author', () => {
    const base = { ...defaultConfig({ HOME: '/home/someone' }), maxTextChars: 1000 };
    expect(resolveConfig({ ...base, authorMaxTotalChars: 500 }).bodyLimitBytes).toBe(1000 * 12 + 16 * 1024);
    expect(resolveConfig({ ...base, authorMaxTotalChars: 3000 }).bodyLimitBytes).toBe(3000 * 12 + 16 * 1024);
    expect(resolveConfig({ ...base, authorMaxTotalChars: 3000, bodyLimit: 5000 }).bodyLimitBytes).toBe(5000);
    expect(() => resolveConfig({ ...base, authorMaxMessageChars: 0 })).toThrow('authorMaxMessageChars');
  });

  it('parses durations', () => {
    expect(parseDuration('5 seconds')).toBe(5000);
    expect(parseDuration('1 minute')).toBe(60_000);
    expect(parseDuration('1m')).toBe(60_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1500')).toBe(1500);
    expect(parseDuration(250)).toBe(250);
    expect(parseDuration('0.5 s')).toBe(500);
    for (const bad of ['', 'soon', '5 fortnights', '-1 minute', '0', 0, Number.NaN]) expect(parseDuration(bad)).toBeUndefined();
  });

  it('keeps the default key file outside any checkout', () => {
    expect(defaultApiKeysFile({ HOME: '/home/a', XDG_CONFIG_HOME: '/cfg' })).toBe('/cfg/textdetect/api-keys.json');
    expect(defaultApiKeysFile({ XDG_CONFIG_HOME: '' })).toMatch(/\.config\/textdetect\/api-keys\.json$/);
  });
});
