/**
 * Redis for a shared budget, without making ioredis a requirement of the SDK.
 *
 * The standalone client package (`textdetect-client`, built from this folder) lists ioredis as an
 * optional peer dependency: only callers who pass `redis` need it. So ioredis is loaded when the
 * first such client is built, not imported by this module, and the public types describe the few
 * methods the limiter calls rather than importing ioredis's own: the declarations then typecheck in a
 * project without ioredis, and any ioredis `Redis` instance still fits.
 *
 * `createRequire` rather than `import()`: the DetectClient constructor is synchronous (it throws on
 * bad options at once), and ioredis is a CommonJS package, so a synchronous require is the way to
 * load it there.
 */
import { createRequire } from 'node:module';
import { InvalidRequestError } from './errors.ts';

/** An ioredis client as far as the SDK uses it; an ioredis `Redis` instance satisfies it. */
export interface RedisClient {
  readonly status: string;
  duplicate(): RedisClient;
  connect(): Promise<void>;
  disconnect(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  once(event: 'ready', listener: () => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
  pttl(key: string): Promise<number>;
  set(key: string, value: string, mode: 'PX', milliseconds: number): Promise<unknown>;
}

/** What `require('ioredis')` gives (the Redis class, which bottleneck also accepts as its `Redis` option). */
export interface RedisModule {
  new (url: string, options: { lazyConnect: boolean }): RedisClient;
}

let loaded: RedisModule | undefined;

/**
 * Loads ioredis from where the SDK is installed, or throws InvalidRequestError
 * (`ioredis_not_installed`, param `redis`) saying how to install it.
 */
export function loadRedisModule(): RedisModule {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('ioredis') as RedisModule;
  } catch (err) {
    // Only ioredis itself missing is the caller's to fix; a broken ioredis install is reported as is.
    const missing = (err as { code?: unknown }).code === 'MODULE_NOT_FOUND' && /['"]ioredis['"]/.test(String((err as Error).message));
    if (!missing) throw err;
    throw new InvalidRequestError(
      'The redis option needs the ioredis package, which is not installed next to the textdetect client: run `npm install ioredis@6`, or leave redis out to pace calls within this process only.',
      { code: 'ioredis_not_installed', param: 'redis', cause: err },
    );
  }
  return loaded;
}
