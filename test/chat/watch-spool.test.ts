/**
 * Watched messages that arrive while PostgreSQL is down, and a process stopped before it is back
 * (issue 32: the 40 messages received meanwhile were kept in memory only and lost at the stop).
 * A PostgreSQL cluster of the test's own, really stopped (`pg_ctl stop -m immediate`) and started;
 * the real watcher in a child process, stopped with a real SIGTERM and a real SIGKILL during the
 * outage. The messages it could not queue are in its spool (ids only) and scored after the restart.
 */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../adapters/chat/store/index.ts';
import { WATCH_SPOOL_FILE, WatchSpool } from '../../adapters/chat/watch/spool.ts';
import { startPostgresCluster, type PostgresCluster } from '../helpers/pg-cluster.ts';
import { killWatchers, runWatcher, WATCHED_TEXT } from './watcher-run.ts';

let dir: string;
let pg: PostgresCluster;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-spool-'));
  pg = await startPostgresCluster();
  const store = new PostgresStore(pg.url);
  await store.ready();
  await store.watchChannel('discord:1', 'C1', 0);
  await store.close();
}, 60_000);
afterAll(async () => {
  await killWatchers();
  await pg?.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe.each([['SIGTERM'], ['SIGKILL']] as const)('PostgreSQL down, the watcher stopped with %s before it is back', (signal) => {
  it('keeps the messages it could not queue in the spool (ids only) and scores every one after the restart', async () => {
    const spoolDir = join(dir, signal);
    const env = { WATCH_DIR: spoolDir, WATCH_DATABASE_URL: pg.url, WATCH_LEASE_MS: '500' };
    const ids = (from: number) => Array.from({ length: 10 }, (_, i) => `${signal}-${from + i}`);
    const first = runWatcher(env);
    await first.waitFor((l) => l === 'ready');
    for (const id of ids(0)) first.send(`offer ${id}`);
    for (const id of ids(0)) await first.waitFor((l) => l === `offered ${id} queued`);

    await pg.stop('immediate');
    for (const id of ids(10)) first.send(`offer ${id}`);
    for (const id of ids(10)) await first.waitFor((l) => l === `offered ${id} buffered`);
    await first.kill(signal);

    const spool = await readFile(join(spoolDir, WATCH_SPOOL_FILE), 'utf8');
    expect(spool.trim().split('\n')).toHaveLength(10);
    // Ids only: no line carries the message's words.
    expect(spool).not.toContain(WATCHED_TEXT('x').slice(20, 60));

    await pg.start();
    const second = runWatcher(env);
    await second.waitFor((l) => l === 'ready');
    const store = new PostgresStore(pg.url);
    try {
      const all = [...ids(0), ...ids(10)];
      const deadline = Date.now() + 30_000;
      let unscored = all;
      while (unscored.length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        const scored = await Promise.all(unscored.map((id) => store.isScored('discord:1', 'C1', id)));
        unscored = unscored.filter((_, i) => !scored[i]);
      }
      expect(unscored).toEqual([]);
      await expect(readFile(join(spoolDir, WATCH_SPOOL_FILE), 'utf8')).rejects.toThrow(/ENOENT/);
    } finally {
      await second.kill('SIGTERM');
      await store.close();
    }
  }, 90_000);
});

describe('PostgreSQL down between posting a card and recording it, the watcher stopped before it is back', () => {
  it('keeps the posted card in the spool and records it after the restart, without posting it again', async () => {
    const spoolDir = join(dir, 'card');
    const env = { WATCH_DIR: spoolDir, WATCH_DATABASE_URL: pg.url, WATCH_LEASE_MS: '500' };
    const setup = new PostgresStore(pg.url);
    try {
      await setup.setCards('discord:1', 'C1', true);
    } finally {
      await setup.close();
    }
    const first = runWatcher({ ...env, WATCH_HOLD_CARDS: '1' });
    await first.waitFor((l) => l === 'ready');
    first.send('offer card-1');
    const flagId = (await first.waitFor((l) => l.startsWith('posting '))).slice('posting '.length);
    await pg.stop('immediate');
    first.send('release');
    await first.waitFor((l) => l === `card ${flagId}`);
    // The card is out; the store could not hear of it.
    const deadline = Date.now() + 10_000;
    let spool = '';
    while (!spool.includes(flagId) && Date.now() < deadline) {
      spool = await readFile(join(spoolDir, WATCH_SPOOL_FILE), 'utf8').catch(() => '');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(spool).toContain(`"flagId":"${flagId}"`);
    await first.kill('SIGTERM');

    await pg.start();
    const second = runWatcher(env);
    await second.waitFor((l) => l === 'ready');
    const store = new PostgresStore(pg.url);
    try {
      const until = Date.now() + 30_000;
      let flag = await store.getFlag('discord:1', flagId);
      while ((flag?.card !== 'posted' || (await store.pendingCount()) > 0) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 200));
        flag = await store.getFlag('discord:1', flagId);
      }
      expect(flag).toMatchObject({ card: 'posted', cardId: `card-of-${flagId}` });
      expect(await store.pendingCount()).toBe(0);
      expect(second.lines.filter((l) => l.startsWith('posting '))).toEqual([]);
    } finally {
      await second.kill('SIGTERM');
      await store.setCards('discord:1', 'C1', false);
      await store.close();
    }
  }, 90_000);
});

describe('the spool file', () => {
  it('reads each message and card once, skips a line cut short by a crash, and is removed once empty', async () => {
    const spool = new WatchSpool(join(dir, 'file'));
    const item = { scope: 'slack:T1', channelId: 'C1', messageId: '1.2', authorId: 'U1', postedAt: 1, enqueuedAt: 2 };
    spool.add(item);
    spool.add(item);
    spool.addCard({ scope: 'slack:T1', flagId: 'f1', cardId: '3.4', cardChannelId: 'CMOD' });
    await appendFile(spool.path, '{"scope":"slack:T1","channelId":"C1","mess');
    expect(spool.read()).toEqual({ items: [item], cards: [{ scope: 'slack:T1', flagId: 'f1', cardId: '3.4', cardChannelId: 'CMOD' }] });
    spool.replace([], [{ scope: 'slack:T1', flagId: 'f1', cardId: '3.4', cardChannelId: 'CMOD' }]);
    expect(spool.read()).toEqual({ items: [], cards: [{ scope: 'slack:T1', flagId: 'f1', cardId: '3.4', cardChannelId: 'CMOD' }] });
    spool.replace([]);
    await expect(readFile(spool.path, 'utf8')).rejects.toThrow(/ENOENT/);
    expect(spool.read()).toEqual({ items: [], cards: [] });
  });
});
