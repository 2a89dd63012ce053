#!/usr/bin/env node
/**
 * Entrypoint of the Docker image: one image, several roles.
 *
 *   docker run IMAGE                      the detection service (same as `service`)
 *   docker run IMAGE slack                the Slack app
 *   docker run IMAGE discord              the Discord bot
 *   docker run IMAGE discord-register     registers the Discord commands once, then exits
 *   docker run IMAGE keys create --name … the key CLI (any `textdetect` subcommand: `textdetect …`)
 *
 * The role's compiled module is imported into this process rather than spawned, so node stays PID 1
 * and `docker stop`'s SIGTERM reaches the role's own graceful shutdown. process.argv is rewritten
 * first so each module sees the arguments it would get when run directly.
 */
import { fileURLToPath } from 'node:url';

const ROLES = {
  service: { module: '../dist/src/service/main.js', about: 'the detection service (POST /v1/detect) — the default' },
  slack: { module: '../dist/adapters/slack/main.js', about: 'the Slack app (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET or SLACK_APP_TOKEN)' },
  discord: { module: '../dist/adapters/discord/main.js', about: 'the Discord bot (DISCORD_TOKEN)' },
  'discord-register': { module: '../dist/adapters/discord/register.js', about: 'register the Discord commands, then exit' },
  keys: { module: '../dist/src/cli/main.js', about: 'manage API keys in API_KEYS_FILE: keys create|list|revoke', argv: ['keys'] },
  textdetect: { module: '../dist/src/cli/main.js', about: 'any textdetect CLI command, e.g. textdetect score --local --input …' },
};
/** Spellings people reach for, from the npm scripts (`discord:register`) and habit (`api`). */
const ALIASES = { api: 'service', 'discord:register': 'discord-register' };

const HELP = `Usage: docker run [docker options] IMAGE [role] [arguments]

Roles:
${Object.entries(ROLES)
  .map(([name, role]) => `  ${name.padEnd(18)}${role.about}`)
  .join('\n')}

Configuration comes from the environment (docker run --env-file .env); see .env.example.`;

const [given, ...rest] = process.argv.slice(2);
if (given === '--help' || given === '-h' || given === 'help') {
  process.stdout.write(`${HELP}\n`);
} else {
  const name = given === undefined ? 'service' : (ALIASES[given] ?? given);
  const role = Object.hasOwn(ROLES, name) ? ROLES[name] : undefined;
  if (!role) {
    process.stderr.write(`textdetect image: unknown role "${given}".\n\n${HELP}\n`);
    process.exitCode = 2;
  } else {
    const url = new URL(role.module, import.meta.url);
    process.argv = [process.argv[0], fileURLToPath(url), ...(role.argv ?? []), ...rest];
    await import(url.href);
  }
}
