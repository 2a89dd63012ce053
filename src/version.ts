import { readFileSync } from 'node:fs';

/**
 * The package's version, read from its package.json at run time so it cannot drift from what was
 * installed. This module runs from `src/` (sources) or `dist/src/` (the build, an installed
 * package), so the nearest package.json named `textdetect` above it is the one.
 */
export function packageVersion(): string {
  let dir = new URL('./', import.meta.url);
  for (let depth = 0; depth < 5; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'textdetect' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json at this level: keep climbing.
    }
    dir = new URL('../', dir);
  }
  return 'unknown';
}
