/**
 * `npm run discord:register [-- --dry-run]`: sends the bot's command definitions to Discord, for
 * every server (global) or for one server (`DISCORD_GUILD_ID`, instant, good for trying out).
 * A bulk overwrite (PUT) replaces the whole set, so re-running is safe and removes stale commands.
 */
import '../../src/node-version.ts';
import { pathToFileURL } from 'node:url';
import { DiscordAPIError, HTTPError, REST, Routes, type APIApplication, type RESTPutAPIApplicationCommandsResult } from 'discord.js';
import { DEFAULT_COMMAND_OPTIONS, buildCommands, inviteUrl, parsePermissionSetting, type CommandOptions } from './commands.ts';
import { parseApiUrl, parseSnowflake, readToken } from './config.ts';
import { DiscordUnreachableError } from './discord-errors.ts';

export interface RegisterIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

const defaultIo: RegisterIo = {
  stdout: (s) => process.stdout.write(`${s}\n`),
  stderr: (s) => process.stderr.write(`${s}\n`),
};

export function readCommandOptions(env: NodeJS.ProcessEnv): CommandOptions {
  return {
    checkMessagePermission: parsePermissionSetting(
      env.DISCORD_CHECK_PERMISSION,
      'DISCORD_CHECK_PERMISSION',
      DEFAULT_COMMAND_OPTIONS.checkMessagePermission,
    ),
    detectPermission: parsePermissionSetting(
      env.DISCORD_DETECT_PERMISSION,
      'DISCORD_DETECT_PERMISSION',
      DEFAULT_COMMAND_OPTIONS.detectPermission,
    ),
  };
}

function explainDiscordFailure(err: unknown, guildId: string | undefined, apiUrl: string): { code: number; message: string } {
  if (err instanceof DiscordAPIError) {
    if (err.status === 401) {
      return {
        code: 3,
        message:
          'Discord refused DISCORD_TOKEN (401). Copy a fresh token from the Developer Portal (your application → Bot → Reset Token).',
      };
    }
    if (err.status === 403 || err.code === 50001) {
      return {
        code: 3,
        message: guildId
          ? `Discord refused access to server ${guildId} (${err.message}). Invite the bot to that server first with the "applications.commands" scope (see the invite link in docs/discord.md), or check DISCORD_GUILD_ID.`
          : `Discord refused the registration (${err.message}). Check that DISCORD_APPLICATION_ID belongs to this bot's token.`,
      };
    }
    if (err.status === 400) {
      return { code: 2, message: `Discord rejected the command definitions: ${err.message}` };
    }
    return { code: 5, message: `Discord answered ${err.status}: ${err.message}` };
  }
  if (err instanceof HTTPError) return { code: 5, message: `Discord answered HTTP ${err.status}; try again in a minute.` };
  return { code: 5, message: new DiscordUnreachableError(apiUrl, err).message };
}

/**
 * Environment read: DISCORD_TOKEN (unless --dry-run), DISCORD_APPLICATION_ID (optional: asked from
 * Discord otherwise), DISCORD_GUILD_ID (optional), DISCORD_API_URL (optional), DISCORD_CHECK_PERMISSION,
 * DISCORD_DETECT_PERMISSION. Exit codes follow the CLI's: 0 ok, 2 bad input, 3 refused, 5 unreachable.
 */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env, io: RegisterIo = defaultIo): Promise<number> {
  const unknown = argv.filter((a) => a !== '--dry-run');
  if (unknown.length > 0) {
    io.stderr(`Unknown argument ${unknown.join(' ')}. Usage: npm run discord:register [-- --dry-run]`);
    return 2;
  }
  const dryRun = argv.includes('--dry-run');

  let body: ReturnType<typeof buildCommands>;
  let token: string | undefined;
  let guildId: string | undefined;
  let applicationId: string | undefined;
  let apiUrl: string;
  try {
    body = buildCommands(readCommandOptions(env));
    if (dryRun) {
      io.stdout(JSON.stringify(body, null, 2));
      return 0;
    }
    token = readToken(env);
    guildId = parseSnowflake(env.DISCORD_GUILD_ID, 'DISCORD_GUILD_ID');
    applicationId = parseSnowflake(env.DISCORD_APPLICATION_ID, 'DISCORD_APPLICATION_ID');
    apiUrl = parseApiUrl(env.DISCORD_API_URL);
  } catch (err) {
    io.stderr(err instanceof Error ? err.message : String(err));
    return 2;
  }

  const rest = new REST({ api: apiUrl }).setToken(token);
  try {
    if (!applicationId) {
      const app = (await rest.get(Routes.currentApplication())) as APIApplication;
      applicationId = app.id;
    }
    const route = guildId ? Routes.applicationGuildCommands(applicationId, guildId) : Routes.applicationCommands(applicationId);
    const registered = (await rest.put(route, { body })) as RESTPutAPIApplicationCommandsResult;
    const names = registered.map((c) => (c.type === 1 ? `/${c.name}` : `"${c.name}"`)).join(', ');
    io.stdout(
      guildId
        ? `Registered ${registered.length} commands (${names}) in server ${guildId}; they are usable there now.`
        : `Registered ${registered.length} commands (${names}) globally; Discord clients may take a few minutes to show them.`,
    );
    io.stdout(`Invite link (scopes bot + applications.commands): ${inviteUrl(applicationId)}`);
    return 0;
  } catch (err) {
    const { code, message } = explainDiscordFailure(err, guildId, apiUrl);
    io.stderr(message);
    return code;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await run(process.argv.slice(2));
}
