import { readFileSync } from 'node:fs';

/** The packages this module is built into: the whole product, and the standalone client (packages/client/). */
const PACKAGE_NAMES = new Set(['textdetect', 'textdetect-client']);

/**
 * The package's version, read from its package.json at run time so it cannot drift from what was
 * installed. This module runs from `src/` (sources), `dist/src/` (the build, an installed package)
 * or `dist/` of the client package, so the nearest package.json with one of those names above it is
 * the one.
 */
export function packageVersion(): string {
  let dir = new URL('./', import.meta.url);
  for (let depth = 0; depth < 5; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof pkg.name === 'string' && PACKAGE_NAMES.has(pkg.name) && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json at this level: keep climbing.
    }
    dir = new URL('../', dir);
  }
  return 'unknown';
}
