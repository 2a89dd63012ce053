/**
 * Watching and documents in the Discord bot: attachments of a watched channel's messages are left
 * alone until the server turns on `/detect-settings watch-files`; then a document that reads as likely
 * AI-written gets a line in the mod-log channel. Real discord.js client against the fake Discord
 * (gateway MESSAGE_CREATE with Discord's Attachment objects, served by the fake's CDN on loopback),
 * the real service's file route, SQLite.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFlags } from 'discord.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { buildPdf } from '../helpers/documents.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';
import { type Place, user } from '../../demo/discord/payloads.ts';
import { type Author, guildWithChannels, messageCreate, resolvedChannel, settingsCommand } from '../../demo/discord/watch-payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;

// Written in the register of a generated answer (rated likely_ai by the engine, as in watch.test.ts).
const AI_PARAGRAPHS = [
  'It is important to note that effective communication plays a crucial role in fostering collaboration within any community. By leveraging clear guidelines and consistent moderation practices, communities can create an inclusive environment where every member feels valued and heard. Furthermore, regular feedback mechanisms enable continuous improvement, ensuring that the community remains vibrant, engaging, and aligned with its core values over time.',
  'Artificial intelligence has the potential to transform numerous industries by streamlining processes and enhancing decision-making capabilities. However, it is essential to consider the ethical implications associated with its widespread adoption. By prioritizing transparency, accountability, and fairness, organizations can harness the benefits of AI while mitigating potential risks. In conclusion, a balanced approach is key to ensuring responsible innovation that benefits society as a whole.',
];

let dir: string;
let service: RunningService;
let fake: FakeDiscord;
let backend: DetectionBackend;
let bot: DiscordBot;
const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
const modlog = snowflake();
const admin = user(snowflake(), 'admin');
const poster = user(snowflake(), 'poster') as Author;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'discord-watch-files-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-watch-files', rateLimitMax: 10_000 });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN, applicationFlags: ApplicationFlags.GatewayMessageContentLimited });
  backend = await connectDetectionBackend(
    { DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0' },
    { logger: pino({ level: 'silent' }) },
  );
  bot = createDiscordBot({
    token: TOKEN,
    detect: backend.detector,
    settings: { apiUrl: fake.apiUrl, state: { dataDir: join(dir, 'state') }, modLogChannelId: modlog, fileOrigins: [fake.cdnOrigin] },
    watch: {
      detector: watchDetectorFor(backend),
      store: new SqliteStore(join(dir, 'watch')),
      settings: DEFAULT_WATCH_SETTINGS,
      idlePollMs: 50,
      configTtlMs: 0,
    },
  });
  await bot.start();
  fake.dispatch(
    'GUILD_CREATE',
    guildWithChannels(
      place,
      [
        { id: place.channelId, name: 'general' },
        { id: modlog, name: 'mod-log' },
      ],
      [],
      APP_ID,
    ),
  );
  const deadline = Date.now() + 5_000;
  while (!bot.client.guilds.cache.has(place.guildId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
});

afterAll(async () => {
  await bot?.stop();
  await backend?.close();
  await fake?.close();
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function settings(subcommand: string, options: { name: string; type: number; value: string | boolean }[] = [], resolved?: object) {
  const payload = settingsCommand(place, admin, subcommand, options, resolved as Record<string, unknown> | undefined);
  fake.sendInteraction(payload);
  const edit = await fake.waitForRequest(
    (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`,
  );
  return String(edit.body.content ?? '');
}

function postWithPdf(name: string): void {
  const attachment = fake.attachment(place.channelId, name, buildPdf({ paragraphs: AI_PARAGRAPHS }), { contentType: 'application/pdf' });
  fake.dispatch('MESSAGE_CREATE', { ...messageCreate(place, poster, ''), attachments: [attachment] });
}

describe('watching and documents', () => {
  it('leaves attachments alone until watch-files is on; then a likely AI-written document gets a mod-log line', async () => {
    expect(
      await settings('watch', [{ name: 'channel', type: 7, value: place.channelId }], {
        channels: { [place.channelId]: resolvedChannel(place.channelId, 'general') },
      }),
    ).toContain(`Watching <#${place.channelId}>`);
    expect(await settings('show')).toContain('Documents shared in watched channels: left alone (default)');

    postWithPdf('off.pdf');
    await new Promise((r) => setTimeout(r, 1_000));
    // Off by default: not even downloaded.
    expect(fake.downloads).toHaveLength(0);

    expect(await settings('watch-files', [{ name: 'enabled', type: 5, value: true }])).toMatch(/^Watching now also checks the documents/);
    expect(await settings('show')).toContain('Documents shared in watched channels: checked too');
    postWithPdf('essay.pdf');
    const line = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === `/channels/${modlog}/messages` && String(r.body?.content).includes('essay.pdf'),
      20_000,
    );
    expect(line.body.content).toMatch(
      new RegExp(
        `^📄 Watched channel: the file “essay\\.pdf” shared by <@${poster.id}> in https://discord\\.com/channels/${place.guildId}/${place.channelId}/\\d+: (🔴 Reads as AI-written|🟣 Reads as the author's own text, polished by an AI) \\(\\d+%, General mode\\) · request \`req_\\w+\`\\. Nothing was done in the channel`,
      ),
    );
    expect(line.body.allowed_mentions).toEqual({ parse: [] });
    expect(fake.downloads.map((d) => decodeURIComponent(d.path.split('/').pop() ?? ''))).toEqual(['essay.pdf']);
    // Nothing sent to the watched channel.
    expect(fake.requests.filter((r) => r.method !== 'GET' && r.path.startsWith(`/channels/${place.channelId}/`))).toEqual([]);

    expect(await settings('watch-files', [{ name: 'enabled', type: 5, value: false }])).toMatch(/^Watching leaves documents alone again/);
  });
});
