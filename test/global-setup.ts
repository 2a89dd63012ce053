import '../src/node-version.ts';
import { startRedisServer } from './helpers/redis.ts';
import { isolateHome, type IsolatedHome } from './helpers/test-home.ts';

// Tests talk to a real Redis. CI (and anyone with a server) passes REDIS_URL; otherwise one
// throw-away redis-server is started on a free loopback port for the whole run.
let owned: { stop(): Promise<void> } | undefined;
// The run's throw-away HOME (test/helpers/test-home.ts): no test process writes to the user's home.
let home: IsolatedHome | undefined;

export async function setup(): Promise<void> {
  home = await isolateHome();
  if (process.env.REDIS_URL) return;
  const server = await startRedisServer();
  owned = server;
  process.env.REDIS_URL = server.url;
}

export async function teardown(): Promise<void> {
  await owned?.stop();
  try {
    await home?.finish();
  } catch (err) {
    // vitest reports an error thrown here but still exits 0; a run that wrote to the home must fail.
    process.stderr.write(`\n${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
