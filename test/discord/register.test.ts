/** `npm run discord:register` against the fake Discord REST API. */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCommands, parsePermissionSetting } from '../../adapters/discord/commands.ts';
import { run } from '../../adapters/discord/register.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';

const APP_ID = snowflake();
const TOKEN = 'register-test-token';
let fake: FakeDiscord;

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
});
afterAll(async () => {
  await fake?.close();
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (s: string) => out.push(s), stderr: (s: string) => err.push(s) } };
}

/** What Discord must receive: checked field by field, not just "equals buildCommands()". */
function expectCommandJson(body: any[], checkPermission: string | null): void {
  expect(body).toHaveLength(4);
  const [detect, menu, settings, memberMenu] = body;
  expect(detect).toMatchObject({
    name: 'detect',
    type: 1,
    default_member_permissions: null,
    contexts: [0, 1],
    integration_types: [0],
  });
  expect(detect.options).toEqual([
    // Optional since `user` can replace `text`; the handler asks for one of them.
    expect.objectContaining({ name: 'text', type: 3, required: false, max_length: 6000 }),
    expect.objectContaining({
      name: 'mode',
      type: 3,
      required: false,
      choices: [
        { name: 'General', value: 'general' },
        { name: 'Academic', value: 'academic' },
        { name: 'Financial', value: 'financial' },
        { name: 'Legal', value: 'legal' },
      ],
    }),
    expect.objectContaining({
      name: 'language',
      type: 3,
      required: false,
      choices: [
        { name: 'English', value: 'en' },
        { name: 'Turkish', value: 'tr' },
      ],
    }),
    expect.objectContaining({ name: 'segments', type: 5, required: false }),
    expect.objectContaining({ name: 'user', type: 6, required: false }),
    // An attachment option (type 11): a document to check.
    expect.objectContaining({ name: 'file', type: 11, required: false }),
  ]);
  // The member check: a user command (type 2), in servers, for whoever may check messages.
  expect(memberMenu).toEqual({
    name: 'Check recent messages for AI',
    type: 2,
    contexts: [0],
    integration_types: [0],
    default_member_permissions: checkPermission,
  });
  expect(menu).toEqual({
    name: 'Check for AI text',
    type: 3,
    contexts: [0],
    integration_types: [0],
    default_member_permissions: checkPermission,
  });
  // Manage Server (1 << 5) only, in servers only; one subcommand per setting.
  expect(settings).toMatchObject({
    name: 'detect-settings',
    type: 1,
    default_member_permissions: '32',
    contexts: [0],
    integration_types: [0],
  });
  expect(settings.options.map((o: { name: string; type: number }) => `${o.name}:${o.type}`)).toEqual([
    'show:1',
    'mode:1',
    'modlog:1',
    'checker-role:1',
    'history:1',
    'watch-files:1',
    'watch:1',
    'unwatch:1',
    'cards:1',
    'exempt-role:1',
    'preset:1',
    'retention:1',
    'report:1',
    'precision:1',
    'clearings:1',
    'export-reviews:1',
    'delete-data:1',
  ]);
  const [, mode, modlog, role, history] = settings.options;
  expect(history.options).toEqual([
    expect.objectContaining({ name: 'messages', type: 4, required: false, min_value: 5, max_value: 200 }),
    expect.objectContaining({ name: 'days', type: 4, required: false, min_value: 1, max_value: 365 }),
  ]);
  expect(mode.options[0]).toMatchObject({ name: 'mode', type: 3, required: true });
  expect(mode.options[0].choices.map((c: { value: string }) => c.value)).toEqual([
    'general',
    'academic',
    'financial',
    'legal',
    'bot-default',
  ]);
  expect(modlog.options[0]).toMatchObject({ name: 'channel', type: 7, required: false, channel_types: [0, 5] });
  expect(role.options[0]).toMatchObject({ name: 'role', type: 8, required: false });
}

describe('discord:register', () => {
  it('--dry-run prints the command JSON array and sends nothing', async () => {
    const before = fake.requests.length;
    const c = capture();
    expect(await run(['--dry-run'], {}, c.io)).toBe(0);
    const printed = JSON.parse(c.out.join('\n'));
    expectCommandJson(printed, '8192'); // Manage Messages = 1 << 13
    expect(printed).toEqual(JSON.parse(JSON.stringify(buildCommands())));
    expect(fake.requests.length).toBe(before);
  });

  it('registers in one server with DISCORD_GUILD_ID, asking Discord for the application id', async () => {
    const guildId = snowflake();
    const c = capture();
    const code = await run([], { DISCORD_TOKEN: TOKEN, DISCORD_API_URL: fake.apiUrl, DISCORD_GUILD_ID: guildId }, c.io);
    expect(c.err).toEqual([]);
    expect(code).toBe(0);
    const me = fake.requests.find((r) => r.method === 'GET' && r.path === '/applications/@me');
    expect(me?.headers.authorization).toBe(`Bot ${TOKEN}`);
    const put = await fake.waitForRequest((r) => r.method === 'PUT' && r.path === `/applications/${APP_ID}/guilds/${guildId}/commands`);
    expect(put.headers.authorization).toBe(`Bot ${TOKEN}`);
    expectCommandJson(put.body, '8192');
    expect(c.out[0]).toBe(
      `Registered 4 commands (/detect, "Check for AI text", /detect-settings, "Check recent messages for AI") in server ${guildId}; they are usable there now.`,
    );
    expect(c.out[1]).toBe(
      `Invite link (scopes bot + applications.commands): https://discord.com/oauth2/authorize?client_id=${APP_ID}&scope=bot+applications.commands&permissions=68608`,
    );
  });

  it('registers globally, with a configured permission for the message command', async () => {
    const c = capture();
    const code = await run(
      [],
      {
        DISCORD_TOKEN: TOKEN,
        DISCORD_API_URL: `${fake.apiUrl}/`,
        DISCORD_APPLICATION_ID: APP_ID,
        DISCORD_CHECK_PERMISSION: 'ModerateMembers, ManageMessages',
      },
      c.io,
    );
    expect(code).toBe(0);
    const put = await fake.waitForRequest((r) => r.method === 'PUT' && r.path === `/applications/${APP_ID}/commands`);
    expectCommandJson(put.body, ((1n << 40n) | (1n << 13n)).toString());
    expect(c.out[0]).toMatch(
      /^Registered 4 commands \(\/detect, "Check for AI text", \/detect-settings, "Check recent messages for AI"\) globally/,
    );
  });

  it('explains a refused token (exit 3) and a bad setting (exit 2)', async () => {
    const refused = capture();
    expect(await run([], { DISCORD_TOKEN: 'wrong', DISCORD_API_URL: fake.apiUrl, DISCORD_APPLICATION_ID: APP_ID }, refused.io)).toBe(3);
    expect(refused.err[0]).toMatch(/^Discord refused DISCORD_TOKEN \(401\)\./);

    const missing = capture();
    expect(await run([], { DISCORD_API_URL: fake.apiUrl }, missing.io)).toBe(2);
    expect(missing.err[0]).toMatch(/^DISCORD_TOKEN is not set/);

    const typo = capture();
    expect(await run(['--dry-run'], { DISCORD_CHECK_PERMISSION: 'ManageMesages' }, typo.io)).toBe(2);
    expect(typo.err[0]).toBe(
      'DISCORD_CHECK_PERMISSION="ManageMesages": "ManageMesages" is not a Discord permission name. Use names such as ManageMessages or ModerateMembers, a decimal bitfield, or "everyone".',
    );

    const guild = capture();
    expect(await run([], { DISCORD_TOKEN: TOKEN, DISCORD_GUILD_ID: 'my-server' }, guild.io)).toBe(2);
    expect(guild.err[0]).toMatch(/^DISCORD_GUILD_ID="my-server" is not a Discord id/);

    const wrongApp = capture();
    expect(await run([], { DISCORD_TOKEN: TOKEN, DISCORD_API_URL: fake.apiUrl, DISCORD_APPLICATION_ID: snowflake() }, wrongApp.io)).toBe(3);
    expect(wrongApp.err[0]).toMatch(/^Discord refused the registration \(Missing Access\)/);
  });

  it('says which address it could not reach and names DISCORD_API_URL, as the bot does (exit 5; issue 40, item 7)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closed = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
    await new Promise((resolve) => server.close(resolve));
    const down = capture();
    expect(await run([], { DISCORD_TOKEN: TOKEN, DISCORD_API_URL: closed, DISCORD_APPLICATION_ID: APP_ID }, down.io)).toBe(5);
    expect(down.err).toEqual([
      `Could not reach Discord's API at ${closed} (ECONNREFUSED); check the network, a proxy or firewall, or DISCORD_API_URL.`,
    ]);
  });

  it('npm run discord:register -- --dry-run works as a command', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'discord:register', '--', '--dry-run'], {
      env: { ...process.env, DISCORD_TOKEN: '' },
    });
    expectCommandJson(JSON.parse(stdout), '8192');
  });
});

describe('permission settings', () => {
  it('reads names, bitfields and "everyone"', () => {
    expect(parsePermissionSetting(undefined, 'X', '8192')).toBe('8192');
    expect(parsePermissionSetting('everyone', 'X', '8192')).toBeNull();
    expect(parsePermissionSetting('0', 'X', null)).toBe('0');
    expect(parsePermissionSetting('manage_messages', 'X', null)).toBe('8192');
    expect(parsePermissionSetting('Administrator|BanMembers', 'X', null)).toBe(((1n << 3n) | (1n << 2n)).toString());
  });
});
