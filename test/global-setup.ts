import '../src/node-version.ts';
import { startRedisServer } from './helpers/redis.ts';

// Tests talk to a real Redis. CI (and anyone with a server) passes REDIS_URL; otherwise one
// throw-away redis-server is started on a free loopback port for the whole run.
let owned: { stop(): Promise<void> } | undefined;

export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const server = await startRedisServer();
  owned = server;
  process.env.REDIS_URL = server.url;
}

export async function teardown(): Promise<void> {
  await owned?.stop();
}
