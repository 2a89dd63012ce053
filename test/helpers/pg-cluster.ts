/**
 * A throw-away PostgreSQL cluster of a test's own (initdb and pg_ctl from the installed server, in
 * a temp folder, on a free loopback port), for tests that stop the database: stopping the shared
 * server at 127.0.0.1:5432 would break every other suite running beside them. PostgreSQL refuses
 * to run as root, so under root its commands run as the `postgres` user.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis.ts';

const run = promisify(execFile);

export interface PostgresCluster {
  /** The `postgres` database of the cluster, user postgres, trust authentication. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (`immediate`: as a crash or a killed host would; `fast`: a clean shutdown). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and deletes its folder. */
  destroy(): Promise<void>;
}

/** Where initdb and pg_ctl are: `pg_config --bindir` (Debian keeps them off the PATH), else the PATH. */
let binDir: Promise<string | undefined> | undefined;
function serverBinary(name: string): Promise<string> {
  binDir ??= run('pg_config', ['--bindir']).then(
    ({ stdout }) => stdout.trim() || undefined,
    () => undefined,
  );
  return binDir.then((dir) => (dir ? join(dir, name) : name));
}

async function asPostgres(name: string, args: string[]): Promise<void> {
  const command = await serverBinary(name);
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', command, ...args]);
  else await run(command, args);
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  let running = false;
  const cluster: PostgresCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres('pg_ctl', [
        '-D',
        data,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        '-l',
        join(dir, 'server.log'),
        '-w',
        'start',
      ]);
      running = true;
    },
    async stop(mode = 'immediate') {
      if (!running) return;
      running = false;
      await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
    },
    async destroy() {
      await cluster.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
