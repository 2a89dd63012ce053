#!/usr/bin/env node
/**
 * `npm run build` (and `prepare`): compiles src/ and adapters/ to dist/ with tsc (source maps,
 * declarations), then copies the runtime assets tsc does not know about; then compiles the client
 * SDK (src/client/ and what it imports) on its own into packages/client/dist/, the standalone
 * `textdetect-client` package (skipped where packages/ is absent, as in the Docker build context).
 *
 *   node scripts/build.mjs               clean build; fails if TypeScript is missing
 *   node scripts/build.mjs --if-possible  as `prepare`: skips with a notice when TypeScript is not
 *                                         installed (`npm ci --omit=dev`), since a build is then either
 *                                         already there (Docker copies dist/) or cannot be made
 *
 * Plain JavaScript so it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist');
const CLIENT_PACKAGE = join(ROOT, 'packages', 'client');
const CLIENT_OUT = join(CLIENT_PACKAGE, 'dist');
/** Source roots compiled by tsconfig.build.json; their `assets/` folders are copied alongside. */
const SOURCE_ROOTS = ['src', 'adapters'];

const ifPossible = process.argv.includes('--if-possible');
// Anything else (--help, a typo) is answered by the scripts' shared reader of options, loaded only
// then: the Docker build context carries this file alone and passes no argument.
if (process.argv.slice(2).some((a) => a !== '--if-possible')) (await import('./lib/options.mjs')).checkScriptArgs(import.meta.url);

let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  if (ifPossible) {
    const state = existsSync(join(OUT, 'src', 'service', 'main.js')) ? 'the existing dist/ is used' : 'dist/ is missing';
    process.stderr.write(`textdetect build: TypeScript is not installed (dev dependencies omitted), so no build; ${state}.\n`);
    process.exit(0);
  }
  process.stderr.write('textdetect build: TypeScript is not installed; run `npm install` (with dev dependencies) first.\n');
  process.exit(1);
}

// A clean dist/: files of deleted or renamed sources must not linger and be shipped.
rmSync(OUT, { recursive: true, force: true });
compile(join(ROOT, 'tsconfig.build.json'));
rewriteDeclarationImports(OUT);
const copied = copyAssets();
process.stderr.write(`textdetect build: dist/ ready${copied ? ` (${copied} asset folder${copied === 1 ? '' : 's'} copied)` : ''}.\n`);

if (existsSync(join(CLIENT_PACKAGE, 'tsconfig.json'))) {
  rmSync(CLIENT_OUT, { recursive: true, force: true });
  compile(join(CLIENT_PACKAGE, 'tsconfig.json'));
  rewriteDeclarationImports(CLIENT_OUT);
  process.stderr.write('textdetect build: packages/client/dist/ ready.\n');
}

function compile(project) {
  const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`textdetect build: tsc -p ${relative(ROOT, project)} failed (errors above).\n`);
    process.exit(result.status ?? 1);
  }
}

/**
 * tsc rewrites `./x.ts` imports to `./x.js` in the JavaScript it emits but leaves them as written in
 * declaration files. TypeScript 5.x consumers of the package may not resolve a `.ts` specifier inside
 * node_modules, so the declarations get the same `.js` specifiers as the code.
 */
function rewriteDeclarationImports(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      rewriteDeclarationImports(path);
    } else if (entry.name.endsWith('.d.ts')) {
      const text = readFileSync(path, 'utf8');
      const rewritten = text.replace(/(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g, '$1$2$3.js$2');
      if (rewritten !== text) writeFileSync(path, rewritten);
    }
  }
}

/** Copies every `assets/` folder under the source roots to the same place under dist/. */
function copyAssets() {
  let count = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.name === 'assets') {
        cpSync(path, join(OUT, relative(ROOT, path)), { recursive: true });
        count++;
      } else {
        walk(path);
      }
    }
  };
  for (const root of SOURCE_ROOTS) {
    const dir = join(ROOT, root);
    if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  }
  return count;
}
