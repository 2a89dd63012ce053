/**
 * `npm run export:reviews`: the reviewed flags of watching as JSON Lines (adapters/chat/watch/export.ts),
 * read straight from the bots' database, SQLite under DATA_DIR or PostgreSQL at DATABASE_URL, as the
 * bots are configured. For an operator measuring the detector on their own community: ids, scores,
 * verdicts, outcomes, presets and dates; the database holds no text, so the export holds none.
 *
 *   npm run export:reviews -- [--data-dir DIR | --database-url URL] [--scope discord:<id>|slack:<id>] [--days N] [--out FILE]
 */
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultDataDir, PostgresStore, SqliteStore, storeLocationFromEnv } from './store/index.ts';
import { reviewsJsonl } from './watch/export.ts';
import { DAY_MS } from './watch/types.ts';

export const EXPORT_USAGE =
  'Usage: npm run export:reviews -- [--data-dir DIR | --database-url postgres://…] [--scope discord:<server id>|slack:<team id>] [--days N] [--out FILE]';

/** Runs the export; returns the exit code (2: bad arguments or an unreachable database). */
export async function exportReviews(argv: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<number> {
  let values: { 'data-dir'?: string; 'database-url'?: string; scope?: string; days?: string; out?: string };
  try {
    values = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        scope: { type: 'string' },
        days: { type: 'string' },
        out: { type: 'string' },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${EXPORT_USAGE}\n`);
    return 2;
  }
  const days = values.days === undefined ? undefined : Number(values.days);
  if (days !== undefined && !(Number.isInteger(days) && days > 0)) {
    process.stderr.write(`--days "${values.days}" must be a whole number of days, 1 or more.\n${EXPORT_USAGE}\n`);
    return 2;
  }
  if (values.scope !== undefined && !/^(discord|slack):\S+$/.test(values.scope)) {
    process.stderr.write(`--scope "${values.scope}" must be discord:<server id> or slack:<team id>.\n${EXPORT_USAGE}\n`);
    return 2;
  }
  let location: ReturnType<typeof storeLocationFromEnv>;
  try {
    location = storeLocationFromEnv({
      ...env,
      ...(values['database-url'] ? { DATABASE_URL: values['database-url'] } : {}),
      ...(values['data-dir'] ? { DATA_DIR: values['data-dir'], DATABASE_URL: '' } : {}),
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const store = location.databaseUrl ? new PostgresStore(location.databaseUrl) : new SqliteStore(location.dataDir ?? defaultDataDir(env));
  try {
    await store.ready();
    const from = days === undefined ? 0 : Date.now() - days * DAY_MS;
    const jsonl = reviewsJsonl(await store.reviewedFlags(values.scope, from));
    if (values.out) await writeFile(values.out, jsonl);
    else out(jsonl);
    process.stderr.write(
      `${jsonl === '' ? 0 : jsonl.trimEnd().split('\n').length} reviewed flags exported${values.out ? ` to ${values.out}` : ''}.\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`Could not read the reviewed flags: ${(err as Error).message}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await exportReviews(process.argv.slice(2), process.env, (text) => process.stdout.write(text));
}
