/**
 * `npm run export:reviews` against both real databases: the reviewed flags of one scope or all, as
 * JSON Lines with ids, scores, outcomes, presets and dates, never a text; bad arguments get a
 * sentence and exit code 2.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportReviews } from '../../adapters/chat/export-reviews.ts';
import { PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

let dir: string;
let db: TestDatabase;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'export-reviews-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

async function seed(store: WatchStore): Promise<void> {
  const now = Date.now();
  for (const [scope, id, outcome] of [
    ['discord:1', 'f1', 'confirmed'],
    ['discord:1', 'f2', 'false_positive'],
    ['discord:1', 'f3', undefined],
    ['slack:T1', 'f4', 'dismissed'],
  ] as const) {
    await store.recordScore(
      {
        scope,
        channelId: 'C1',
        messageId: `m-${id}`,
        authorId: 'A1',
        postedAt: now - 1000,
        probability: 0.95,
        verdict: 'likely_ai',
        confidence: 'high',
        presets: 6,
        requestId: `req_${id}`,
        flagId: id,
        card: 'posted',
        preset: 'standard',
        words: 120,
      },
      now + 86_400_000,
    );
    if (outcome) await store.review(scope, id, outcome, 'MOD', now);
  }
}

describe.each([
  ['SQLite', () => ({ store: new SqliteStore(join(dir, 'db')) as WatchStore, args: ['--data-dir', join(dir, 'db')] })],
  ['PostgreSQL', () => ({ store: new PostgresStore(db.url) as WatchStore, args: ['--database-url', db.url] })],
] as const)('export:reviews on %s', (_kind, open) => {
  it('writes the reviewed flags of a scope, or of every scope, as JSON Lines', async () => {
    const { store, args } = open();
    await seed(store);
    await store.close();
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      let out = '';
      expect(await exportReviews([...args, '--scope', 'discord:1'], {}, (t) => (out += t))).toBe(0);
      const rows = out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rows.map((r) => [r.flag_id, r.outcome])).toEqual([
        ['f1', 'confirmed'],
        ['f2', 'false_positive'],
      ]);
      expect(rows[0]).toMatchObject({
        scope: 'discord:1',
        ai_probability: 0.95,
        preset: 'standard',
        words: 120,
        flagged_by: ['standard', 'loose'],
      });
      const file = join(dir, `all-${_kind}.jsonl`);
      expect(await exportReviews([...args, '--out', file, '--days', '7'], {}, () => undefined)).toBe(0);
      expect((await readFile(file, 'utf8')).trimEnd().split('\n')).toHaveLength(3);
      expect(await exportReviews([...args, '--days', 'soon'], {}, () => undefined)).toBe(2);
      expect(await exportReviews([...args, '--scope', 'teams:1'], {}, () => undefined)).toBe(2);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('--days "soon" must be a whole number of days');
    } finally {
      stderr.mockRestore();
    }
  });
});
