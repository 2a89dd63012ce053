/**
 * What a Docker build needs from the network, checked without Docker (no engine runs here; issue 25,
 * item 14): the build stage's `npm ci` takes a registry mirror (`--build-arg NPM_REGISTRY`) and an
 * optional `.npmrc` secret, and docs/build.md names every image a build and compose pull.
 *
 * The `npm ci` line is run as the Dockerfile has it, with sh, the build argument as an environment
 * variable (which is how Docker hands an ARG to RUN) and the secret's path replaced by a temporary
 * file; `npm` on PATH is the real npm asked `config get registry` with the same options, so the test
 * reads the registry the step would install from, without installing.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ROOT, run } from './helpers.ts';

const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
const buildStage = lines.slice(
  lines.findIndex((line) => /^FROM\s.*\sAS build$/i.test(line)),
  lines.findLastIndex((line) => /^FROM\s/i.test(line)),
);
const npmCi = buildStage.find((line) => /^RUN\s.*\bnpm ci\b/.test(line)) ?? '';
const SECRET = '/run/secrets/npmrc';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docker-build-'));
  // Stands in for `npm ci`: the real npm prints the registry it would use with the same options.
  const real = (await run('sh', ['-c', 'command -v npm'], dir)).stdout.trim();
  await writeFile(
    join(dir, 'npm'),
    `#!/bin/sh\nregistry=""\nfor a in "$@"; do case "$a" in --registry=*) registry="$a";; esac; done\nexec "${real}" config get registry $registry\n`,
  );
  await chmod(join(dir, 'npm'), 0o755);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The build stage's `npm ci` step, run with sh as Docker would, with the secret file at `secret`. */
async function npmCiRegistry(env: Record<string, string>, secret: string): Promise<string> {
  const command = npmCi
    .replace(/^RUN\s+/, '')
    .replace(/--mount=\S+\s+/g, '')
    .replaceAll(SECRET, secret);
  const result = await run('sh', ['-c', command], dir, { PATH: `${dir}:${process.env.PATH}`, npm_config_registry: '', ...env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('Dockerfile build stage', () => {
  it('takes NPM_REGISTRY as a build argument and an optional npmrc secret for npm ci, and pulls no frontend image', () => {
    expect(buildStage).toContain('ARG NPM_REGISTRY=');
    expect(npmCi).toMatch(new RegExp(`--mount=type=secret,id=npmrc,target=${SECRET}\\s`));
    expect(npmCi).toContain(`npm_config_userconfig=${SECRET}`);
    // A `# syntax=` line makes Docker fetch the Dockerfile frontend from Docker Hub, even for a mirror build.
    expect(dockerfile).not.toMatch(/^#\s*syntax=/m);
  });

  it('installs from the npm registry by default, from NPM_REGISTRY when given, or from the mounted .npmrc', async () => {
    const missing = join(dir, 'no-such-npmrc');
    expect(await npmCiRegistry({}, missing)).toBe('https://registry.npmjs.org/');
    expect(await npmCiRegistry({ NPM_REGISTRY: 'https://npm.example.internal/' }, missing)).toBe('https://npm.example.internal/');
    const npmrc = join(dir, 'npmrc');
    await writeFile(npmrc, 'registry=https://mirror.example.org/npm/\n');
    expect(await npmCiRegistry({}, npmrc)).toBe('https://mirror.example.org/npm/');
    // The build argument wins over the secret's registry (whose credentials still apply).
    expect(await npmCiRegistry({ NPM_REGISTRY: 'https://npm.example.internal/' }, npmrc)).toBe('https://npm.example.internal/');
  });
});

describe('docs/build.md, "What a build needs"', () => {
  it('names the base image, the registry mirror and the secret, and every image compose.yaml pulls', async () => {
    const build = await readFile(join(ROOT, 'docs', 'build.md'), 'utf8');
    const section = build.slice(build.indexOf('### What a build needs'), build.indexOf('### Building without network'));
    expect(section.length).toBeGreaterThan(100);
    for (const phrase of ['node:22-slim', 'NODE_IMAGE', '--build-arg NPM_REGISTRY=', '--secret id=npmrc,src=']) {
      expect(section).toContain(phrase);
    }
    const compose = parseYaml(await readFile(join(ROOT, 'compose.yaml'), 'utf8')) as {
      services: Record<string, { image?: string; build?: unknown }>;
    };
    const pulled = [...new Set(Object.values(compose.services).flatMap((s) => (s.image && s.build === undefined ? [s.image] : [])))];
    expect(pulled.length).toBeGreaterThan(0);
    for (const image of pulled) expect(section, `compose.yaml pulls ${image}`).toContain(`\`${image}\``);
    // The README's build line says what it needs.
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/docker build -t textdetect \..*node:22-slim.*\n.*NPM_REGISTRY=/);
  });
});
