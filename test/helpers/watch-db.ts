/** Reads the bots' SQLite watch file directly, for what no store call lists. */
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** A flag's id in `scope`, read from the SQLite watch file under `dataDir` (no store call lists flags). */
export function firstFlagId(dataDir: string, scope: string): string {
  const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
    DatabaseSync: new (p: string) => { prepare(s: string): { get(...a: unknown[]): { flag_id?: unknown } | undefined }; close(): void };
  };
  const db = new DatabaseSync(join(dataDir, 'textdetect-watch.sqlite'));
  try {
    return String(db.prepare('SELECT flag_id FROM watch_scores WHERE scope = ? AND flag_id IS NOT NULL LIMIT 1').get(scope)?.flag_id);
  } finally {
    db.close();
  }
}
