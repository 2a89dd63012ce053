#!/usr/bin/env node
/**
 * `npm run package`: makes the two publishable tarballs from the build, without the repository's
 * install-time scripts in their package.json.
 *
 *   textdetect-<version>.tgz         the whole product (service, bots, CLI, model, and the SDK)
 *   textdetect-client-<version>.tgz  the client SDK alone (packages/client/: undici and bottleneck)
 *
 *   node scripts/pack.mjs [--destination DIR] [--json] [--only textdetect|textdetect-client]
 *   node scripts/pack.mjs --refuse-publish   (prepublishOnly of both package.json files)
 *
 * Why not plain `npm pack`: npm copies package.json as it is, so the tarball would carry the
 * repository's `prepare` (which builds dist/ with TypeScript, a dev dependency). npm never runs a
 * dependency's `prepare` from a tarball, yet npm 11 lists it among the "install scripts not yet
 * covered by allowScripts" of every install. So each package's files, exactly as `npm pack` selects
 * them (`files`, README, LICENSE), are staged in a temporary folder with a package.json stripped of
 * its install- and publish-time scripts, and packed from there. Publish the tarballs
 * (`npm publish textdetect-0.1.0.tgz`): npm runs no script for a tarball, while publishing a folder
 * runs `prepublishOnly`, which refuses with a pointer here.
 *
 * Needs the build (`npm run package` runs `npm run build` first). Plain JavaScript, like build.mjs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkScriptArgs } from './lib/options.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Scripts npm runs when a package is installed, packed or published; none belongs in a tarball. */
const LIFECYCLE_SCRIPTS = [
  'preinstall',
  'install',
  'postinstall',
  'preprepare',
  'prepare',
  'postprepare',
  'prepack',
  'postpack',
  'prepublish',
  'prepublishOnly',
  'publish',
  'postpublish',
];

const PACKAGES = [
  { name: 'textdetect', dir: ROOT, built: 'dist/src/client/index.js', extraFiles: [] },
  // The client package has no LICENSE of its own; the repository's applies and travels with it.
  { name: 'textdetect-client', dir: join(ROOT, 'packages', 'client'), built: 'dist/client/index.js', extraFiles: ['LICENSE'] },
];

checkScriptArgs(import.meta.url);
const args = process.argv.slice(2);

if (args.includes('--refuse-publish')) {
  process.stderr.write(
    "textdetect: do not publish the folder, its package.json carries the repository's scripts (prepare), which every install would then warn about.\n" +
      'Make the tarballs with `npm run package`, then publish those: npm publish textdetect-<version>.tgz / textdetect-client-<version>.tgz\n',
  );
  process.exit(1);
}

const json = args.includes('--json');
const destination = resolve(optionValue('--destination') ?? ROOT);
const only = optionValue('--only');
const selected = only ? PACKAGES.filter((p) => p.name === only) : PACKAGES;
if (selected.length === 0) fail(`--only must be one of ${PACKAGES.map((p) => p.name).join(', ')}; got "${only}".`);

const rootVersion = readManifest(ROOT).version;
const results = [];
for (const pkg of selected) results.push(pack(pkg));

if (json) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  for (const r of results) {
    process.stdout.write(`${r.path}  ${r.entryCount} files, ${kb(r.size)} packed, ${kb(r.unpackedSize)} unpacked\n`);
  }
}

function pack(pkg) {
  const manifest = readManifest(pkg.dir);
  if (manifest.name !== pkg.name) fail(`${join(pkg.dir, 'package.json')} names "${manifest.name}", expected "${pkg.name}".`);
  // One release number for both: the client's User-Agent and the service's changelog speak of one version.
  if (manifest.version !== rootVersion) {
    fail(
      `${pkg.name} is at version ${manifest.version} but the repository is at ${rootVersion}; give packages/client/package.json the same version.`,
    );
  }
  if (!existsSync(join(pkg.dir, pkg.built))) fail(`${pkg.name}: ${pkg.built} is missing; run \`npm run build\` first.`);

  // npm's own selection of the files (`files`, always-included README/LICENSE), without running scripts.
  const listed = npm(['pack', '--dry-run', '--json', '--ignore-scripts'], pkg.dir);
  const [info] = JSON.parse(listed);
  const files = info.files.map((f) => f.path).filter((path) => path !== 'package.json');

  const stage = mkdtempSync(join(tmpdir(), `${pkg.name}-pack-`));
  try {
    for (const path of files) copy(join(pkg.dir, path), join(stage, path));
    for (const path of pkg.extraFiles) if (!files.includes(path)) copy(join(ROOT, path), join(stage, path));
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(stripLifecycleScripts(manifest), null, 2)}\n`);
    mkdirSync(destination, { recursive: true });
    const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', destination], stage));
    const [result] = packed;
    return { ...result, path: join(destination, result.filename) };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The manifest with the lifecycle scripts removed (and `scripts` too when nothing is left), in its own key order. */
function stripLifecycleScripts(manifest) {
  const scripts = Object.fromEntries(Object.entries(manifest.scripts ?? {}).filter(([name]) => !LIFECYCLE_SCRIPTS.includes(name)));
  const stripped = { ...manifest, scripts };
  if (Object.keys(scripts).length === 0) delete stripped.scripts;
  return stripped;
}

function copy(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to);
}

function npm(npmArgs, cwd) {
  const result = spawnSync('npm', npmArgs, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  });
  if (result.status !== 0) fail(`npm ${npmArgs.join(' ')} failed in ${cwd}:\n${result.stderr || result.error?.message || ''}`);
  return result.stdout;
}

function readManifest(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

function optionValue(name) {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (value === undefined || value.startsWith('--')) fail(`${name} needs a value.`);
  return value;
}

function kb(bytes) {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.round(bytes / 1024)} kB`;
}

function fail(message) {
  process.stderr.write(`textdetect pack: ${message}\n`);
  process.exit(1);
}
