import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { WAIT_MS } from './load.ts';

/** A redis-server child process owned by a test: it can be stopped and started again on the same port. */
export interface RedisServerHandle {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its connections open but answers nothing, like a hung host. */
  freeze(): void;
  /** SIGCONT after `freeze()`. */
  thaw(): void;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a private, non-persistent redis-server on a free loopback port. */
export async function startRedisServer(port?: number): Promise<RedisServerHandle> {
  const chosen = port ?? (await freePort());
  let child: ChildProcess | undefined;
  const handle: RedisServerHandle = {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    async start() {
      child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await waitForPort(chosen, WAIT_MS);
    },
    freeze() {
      if (!child || child.exitCode !== null) throw new Error('redis-server is not running');
      child.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
        // A stopped process only dies once continued.
        running.kill('SIGCONT');
      });
    },
  };
  await handle.start();
  return handle;
}

/**
 * Freezes `server`, runs `close` (a Redis client's shutdown), kills the server and returns the
 * messages of the unhandled rejections seen until a second after the kill: a rejection left
 * behind by the shutdown surfaces once the sockets close, within milliseconds.
 */
export async function strayRejectionsOfCloseWhileHung(server: RedisServerHandle, close: () => Promise<void>): Promise<string[]> {
  const stray: string[] = [];
  const onStray = (reason: unknown): void => {
    stray.push(reason instanceof Error ? reason.message : String(reason));
  };
  process.on('unhandledRejection', onStray);
  try {
    server.freeze();
    await close();
    await server.stop();
    await new Promise((r) => setTimeout(r, 1_000));
    return stray;
  } finally {
    process.off('unhandledRejection', onStray);
  }
}
