/**
 * The run-time fix that lets bottleneck's Redis datastore recover on Redis 7 (see
 * src/client/bottleneck-redis7.ts). The end-to-end recovery is in cluster.test.ts (FLUSHALL, restart);
 * this file pins down what Redis really answers and that only bottleneck's own errors are touched.
 */
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverFromRedis7ScriptErrors, stripScriptErrorPrefix } from '../../src/client/bottleneck-redis7.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(process.env.REDIS_URL as string);
});
afterAll(() => {
  redis?.disconnect();
});

async function scriptError(reply: string): Promise<Error> {
  return (await redis.eval(`return redis.error_reply(ARGV[1])`, 0, reply).then(
    () => new Error('the script did not fail'),
    (err: Error) => err,
  )) as Error;
}

describe('bottleneck on Redis 7', () => {
  it('Redis prefixes script errors with "ERR ", which the fix strips from bottleneck\'s own errors only', async () => {
    const settings = await scriptError('SETTINGS_KEY_NOT_FOUND');
    const major = Number((await redis.info('server')).match(/redis_version:(\d+)/)?.[1]);
    if (major >= 7) expect(settings.message).toBe('ERR SETTINGS_KEY_NOT_FOUND');
    expect((stripScriptErrorPrefix(settings) as Error).message).toBe('SETTINGS_KEY_NOT_FOUND');
    expect((stripScriptErrorPrefix(await scriptError('UNKNOWN_CLIENT')) as Error).message).toBe('UNKNOWN_CLIENT');
    expect((stripScriptErrorPrefix(await scriptError('OVERWEIGHT:3:2')) as Error).message).toBe('OVERWEIGHT:3:2');
    // Anything else stays exactly as Redis sent it.
    const other = await redis.call('NO_SUCH_COMMAND').catch((err: Error) => err);
    const before = (other as Error).message;
    expect((stripScriptErrorPrefix(other) as Error).message).toBe(before);
    expect((stripScriptErrorPrefix(await scriptError('SETTINGS_KEY_NOT_FOUND_AND_MORE')) as Error).message).toBe(
      'ERR SETTINGS_KEY_NOT_FOUND_AND_MORE',
    );
  });

  it('a clustered limiter re-creates its keys after they vanish, through the wrapped connection', async () => {
    const connection = new Bottleneck.IORedisConnection({ client: redis.duplicate() });
    recoverFromRedis7ScriptErrors(connection);
    const id = `bottleneck-redis7-test-${process.pid}-${Date.now()}`;
    const limiter = new Bottleneck({ id, datastore: 'ioredis', connection, clearDatastore: true, maxConcurrent: 2 });
    try {
      expect(await limiter.schedule(async () => 'first')).toBe('first');
      // Remove only this limiter's keys (other suites share this Redis), as FLUSHALL or expiry would.
      const keys = await redis.keys(`b_${id}_*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
      expect(await limiter.schedule(async () => 'after the keys vanished')).toBe('after the keys vanished');
      expect(await redis.exists(`b_${id}_settings`)).toBe(1);
    } finally {
      await limiter.disconnect(true);
    }
  });
});
