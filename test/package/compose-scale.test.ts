/**
 * compose.yaml's `scale` profile, checked without a Docker engine: the default stays Redis and the
 * service (the bots have profiles of their own); the profile starts both bots and adds PostgreSQL, a
 * second service replica and a second Discord shard process, with health checks; and with the profile's block of .env.example applied
 * (Compose's `${NAME:-default}` interpolation replayed here), every bot process reaches PostgreSQL
 * and the Discord processes serve every shard exactly once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { storeLocationFromEnv } from '../../adapters/chat/store/index.ts';
import { readShardSettings, resolveShards } from '../../adapters/discord/shards.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Service {
  image?: string;
  command?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  networks?: { default?: { aliases?: string[] } };
}

async function compose(): Promise<Record<string, Service>> {
  const raw = await readFile(join(ROOT, 'compose.yaml'), 'utf8');
  return (parseYaml(raw, { merge: true }) as { services: Record<string, Service> }).services;
}

/** The scale block of .env.example, uncommented: what an operator puts in .env for the profile. */
async function scaleEnv(): Promise<Record<string, string>> {
  const raw = await readFile(join(ROOT, '.env.example'), 'utf8');
  const block = raw.slice(raw.indexOf('# ---- compose profile scale'));
  const env: Record<string, string> = {};
  for (const m of block.matchAll(/^# ([A-Z][A-Z0-9_]*)=(\S*)$/gm)) env[m[1]!] = m[2]!;
  return env;
}

/** Compose's interpolation of `${NAME:-default}` and `${NAME}` from the .env values. */
function interpolate(environment: Record<string, string> | undefined, env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(environment ?? {})) {
    out[k] = String(v).replace(/\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => env[name] || fallback || '');
  }
  return out;
}

describe('compose.yaml', () => {
  it('keeps the default to Redis and the service, without PostgreSQL; the bots only by profile', async () => {
    const services = await compose();
    const always = Object.entries(services)
      .filter(([, s]) => !s.profiles)
      .map(([name]) => name);
    expect(always.sort()).toEqual(['redis', 'service']);
    expect(services.slack!.profiles).toEqual(['slack', 'scale']);
    expect(services.discord!.profiles).toEqual(['discord', 'scale']);
    // Nothing the default starts depends on a service of the profile.
    for (const name of [...always, 'slack', 'discord']) expect(Object.keys(services[name]!.depends_on ?? {})).not.toContain('postgres');
    // Empty DATABASE_URL and shard settings without .env values: SQLite and one unsharded Discord process.
    const env = interpolate(services.discord!.environment, {});
    expect(storeLocationFromEnv(env).databaseUrl).toBeUndefined();
    expect(readShardSettings(env)).toBeUndefined();
  });

  it('keeps the bots’ data by default: DATA_DIR on a volume of each bot, Redis holding nothing that must last', async () => {
    const services = await compose();
    for (const name of ['slack', 'discord']) {
      const bot = services[name]!;
      const env = interpolate(bot.environment, {});
      const location = storeLocationFromEnv(env);
      // Without .env values: SQLite under DATA_DIR, and DATA_DIR is a named volume's mount point.
      expect(location.databaseUrl, name).toBeUndefined();
      expect(location.dataDir, name).toBe('/data');
      expect(bot.volumes, name).toEqual([`textdetect-${name}:/data`]);
    }
    expect(services.redis!.command).toEqual(['redis-server', '--save', '', '--appendonly', 'no']);
  });

  it('profile scale starts both bots and adds PostgreSQL, a second service replica and a second shard process, with health checks', async () => {
    const services = await compose();
    const scale = Object.entries(services)
      .filter(([, s]) => s.profiles?.includes('scale'))
      .map(([name]) => name);
    expect(scale.sort()).toEqual(['discord', 'discord-2', 'postgres', 'service-2', 'slack']);
    const { postgres, service, redis } = services;
    const replica = services['service-2']!;
    expect(postgres?.image).toMatch(/^postgres:1[5-9]/);
    expect(postgres?.healthcheck?.test).toEqual(['CMD', 'pg_isready', '-U', 'textdetect', '-d', 'textdetect']);
    expect(postgres?.volumes?.[0]).toMatch(/:\/var\/lib\/postgresql\/data$/);
    expect(redis?.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    // The replica is the service (same command, keys volume, Redis) under the same network name,
    // health-checked by the image's HEALTHCHECK like the first one, without a second host port.
    expect(replica.command).toEqual(service!.command);
    expect(replica.environment).toEqual(service!.environment);
    expect(replica.volumes).toEqual(service!.volumes);
    expect(replica.healthcheck).toBeUndefined();
    expect(replica.ports).toEqual([]);
    expect(replica.networks?.default?.aliases).toEqual(['service']);
    expect(services['discord-2']?.depends_on?.postgres).toEqual({ condition: 'service_healthy' });
    const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^HEALTHCHECK /m);
  });

  it('with the profile’s .env block, every bot uses PostgreSQL and Redis, and the shard processes cover each shard once', async () => {
    const services = await compose();
    const env = await scaleEnv();
    const url = new URL(env.DATABASE_URL!);
    const postgres = services.postgres!.environment!;
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(postgres.POSTGRES_USER);
    expect(url.pathname).toBe(`/${postgres.POSTGRES_DB}`);
    expect(interpolate(postgres, env).POSTGRES_PASSWORD).toBe(url.password);

    const shards: number[] = [];
    for (const name of ['slack', 'discord', 'discord-2']) {
      const effective = interpolate(services[name]!.environment, env);
      expect(storeLocationFromEnv(effective), name).toMatchObject({ redisUrl: 'redis://redis:6379', databaseUrl: env.DATABASE_URL });
      if (name === 'slack') continue;
      const settings = readShardSettings(effective)!;
      const assignment = await resolveShards(settings, 'unused-token', 'http://127.0.0.1:1');
      if (assignment === 'auto') throw new Error(`${name}: shards left to discord.js`);
      shards.push(...assignment.ids);
      expect(assignment.count).toBe(Number(env.DISCORD_SHARDS));
    }
    expect(shards.sort()).toEqual(Array.from({ length: Number(env.DISCORD_SHARDS) }, (_, i) => i));
  });
});
