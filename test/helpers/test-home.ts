/**
 * Keeps the test run out of the user's home. The global setup gives the whole run (its workers and
 * every process they spawn) a throw-away HOME with its XDG folders, and drops DATA_DIR and
 * API_KEYS_FILE, so a service, bot or CLI started without its own paths writes its key file and
 * databases there. It also takes a snapshot of the real home's textdetect folders and, at the end of
 * the run, fails it if anything in them changed.
 *
 * npm keeps its own cache and user config (`npm_config_cache`, `npm_config_userconfig` point at the
 * real ones): the package tests install from the cache that `npm ci` filled, as a user's npm would,
 * and a registry mirror configured in ~/.npmrc keeps working. Those are npm's folders, not textdetect's.
 */
import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/** Set in the run's environment: the throw-away home, and the real one (for the test that checks them). */
export const TEST_HOME_VAR = 'TEXTDETECT_TEST_HOME';
export const REAL_HOME_VAR = 'TEXTDETECT_TEST_REAL_HOME';

/** The folders (and files) textdetect writes by default for the given environment. */
export function textdetectPaths(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME?.trim() || userInfo().homedir;
  const paths = new Set([join(home, '.config', 'textdetect'), join(home, '.local', 'share', 'textdetect')]);
  for (const xdg of [env.XDG_CONFIG_HOME, env.XDG_DATA_HOME]) {
    if (xdg?.trim() && isAbsolute(xdg.trim())) paths.add(join(xdg.trim(), 'textdetect'));
  }
  if (env.DATA_DIR?.trim()) paths.add(env.DATA_DIR.trim());
  if (env.API_KEYS_FILE?.trim()) paths.add(dirname(env.API_KEYS_FILE.trim()));
  return [...paths];
}

/** Every file and folder under `paths` with its size and modification time (absent paths: nothing). */
export async function snapshot(paths: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const visit = async (path: string): Promise<void> => {
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(path);
    } catch {
      return;
    }
    out.set(path, info.isDirectory() ? 'dir' : `${info.size}:${info.mtimeMs}`);
    if (!info.isDirectory()) return;
    for (const name of await readdir(path).catch(() => [] as string[])) await visit(join(path, name));
  };
  for (const path of paths) await visit(path);
  return out;
}

/** Paths added, removed or changed between two snapshots. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [path, state] of after) {
    if (!before.has(path)) out.push(`${path} (created)`);
    else if (before.get(path) !== state) out.push(`${path} (modified)`);
  }
  for (const path of before.keys()) if (!after.has(path)) out.push(`${path} (deleted)`);
  return out.sort();
}

export interface IsolatedHome {
  dir: string;
  /** Throws when the real home's textdetect folders changed since `isolateHome()`; removes the throw-away home. */
  finish(): Promise<void>;
}

/** Points this process's environment (inherited by workers and their children) at a throw-away home. */
export async function isolateHome(env: NodeJS.ProcessEnv = process.env): Promise<IsolatedHome> {
  // A run started inside a test (test/web/skip-notice.test.ts runs vitest) is already in a throw-away
  // home, which the other tests of the outer run write to meanwhile: the outer run guards the real one.
  const nested = env[TEST_HOME_VAR] !== undefined;
  const realHome = env[REAL_HOME_VAR] ?? (env.HOME?.trim() || userInfo().homedir);
  const watched = nested ? [] : textdetectPaths(env);
  const before = await snapshot(watched);
  // The run's own temporary folder too (TMPDIR, which os.tmpdir() and the tools the tests start read),
  // removed at the end: whatever a test, a browser or a server leaves there goes with it.
  const tmp = await mkdtemp(join(tmpdir(), 'textdetect-test-tmp-'));
  // Traversable by other users (not listable): a test's own PostgreSQL cluster runs as the postgres
  // user (test/helpers/pg-cluster.ts) and must reach its folder inside this one.
  await chmod(tmp, 0o711);
  env.TMPDIR = tmp;
  const dir = await mkdtemp(join(tmp, 'textdetect-test-home-'));
  // npm's cache and config stay the user's (see above); resolved before HOME moves.
  env.npm_config_cache ||= join(realHome, '.npm');
  env.npm_config_userconfig ||= join(realHome, '.npmrc');
  env[REAL_HOME_VAR] = realHome;
  env[TEST_HOME_VAR] = dir;
  env.HOME = dir;
  env.XDG_CONFIG_HOME = join(dir, '.config');
  env.XDG_DATA_HOME = join(dir, '.local', 'share');
  env.XDG_CACHE_HOME = join(dir, '.cache');
  env.XDG_STATE_HOME = join(dir, '.local', 'state');
  delete env.DATA_DIR;
  delete env.API_KEYS_FILE;
  return {
    dir,
    async finish() {
      await rm(tmp, { recursive: true, force: true });
      const changed = changes(before, await snapshot(watched));
      if (changed.length > 0) {
        throw new Error(
          `The test run changed the real home's textdetect folders (tests must use temporary ones; or a textdetect process of yours ran meanwhile):\n  ${changed.join('\n  ')}`,
        );
      }
    },
  };
}
