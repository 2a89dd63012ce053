/**
 * What reviews teach watching (issue 33), end to end on the Discord bot: the real discord.js client
 * against the fake Discord, the real detection service and engine, real SQLite and PostgreSQL. A
 * member a moderator cleared gets no card on the same evidence and a card naming the clearing on
 * clearly stronger evidence; the mod-log is told when a channel's precision falls under the bound,
 * with an Apply button that changes the preset for a member with Manage Server only; the export
 * attaches JSON Lines without text; delete-data removes the clearings.
 *
 * Judged by message (WATCH_JUDGE=message) so each judgment's words are the message's own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFlags } from 'discord.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { PRESET_BITS } from '../../adapters/chat/watch/presets.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { createDetector } from '../../src/detector/index.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { user } from '../../demo/discord/payloads.ts';
import {
  type Author,
  cardButtonPress,
  guildWithChannels,
  messageCreate,
  resolvedChannel,
  settingsCommand,
} from '../../demo/discord/watch-payloads.ts';
import { AI_TEXTS } from '../slack/watch-texts.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
const MANAGE_MESSAGES = (1n << 13n).toString();

/**
 * The cleared message: the AI text the engine is least sure of; the stronger one: the others
 * together (more than 1.5 times the words), checked here to score at least as high.
 */
const FIXTURES = await (async () => {
  const engine = await createDetector();
  const scored = AI_TEXTS.map((text) => ({ text, p: engine.detect(text, { mode: 'general' }).ai_probability }));
  scored.sort((a, b) => a.p - b.p);
  const cleared = scored[0]!;
  const same = scored[1]!;
  const stronger = scored
    .slice(1)
    .map((s) => s.text)
    .join('\n\n');
  const strongerP = engine.detect(stronger, { mode: 'general' }).ai_probability;
  if (strongerP < cleared.p)
    throw new Error('The joined AI texts score lower than the cleared one: the fixture no longer tests “stronger”.');
  return { cleared: cleared.text, same: same.text, stronger };
})();

let dir: string;
let service: RunningService;
let key: string;
const databases: TestDatabase[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'discord-learning-'));
  const apiKeysFile = join(dir, 'keys.json');
  key = (await createApiKey(apiKeysFile, { name: 'discord-learning', rateLimitMax: 100_000 })).key;
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
}, 60_000);

afterAll(async () => {
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(['SQLite', 'PostgreSQL'] as const)('Discord: reviews teach watching (%s)', (kind) => {
  const place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
  const general = place.channelId;
  const modlog = snowflake();
  const scope = `discord:${place.guildId}`;
  const admin = user(snowflake(), 'admin');
  const mod = user(snowflake(), 'alice');
  const member = user(snowflake(), 'writer') as Author;
  let fake: FakeDiscord;
  let bot: DiscordBot;
  let backend: DetectionBackend;
  let store: WatchStore;
  let clock = Date.now();

  afterAll(async () => {
    await bot?.stop();
    await backend?.close();
    await store?.close();
    await fake?.close();
  });

  async function interact(payload: { id: string; token: string }): Promise<{ callback: RecordedRequest; edit?: RecordedRequest }> {
    fake.sendInteraction(payload);
    const callback = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
    );
    if (callback.body?.type !== 5) return { callback };
    const edit = await fake.waitForRequest(
      (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`,
    );
    return { callback, edit };
  }

  async function settings(
    subcommand: string,
    options: { name: string; type: number; value: string | boolean | number }[] = [],
    resolved?: object,
  ) {
    const { edit } = await interact(settingsCommand(place, admin, subcommand, options, resolved as Record<string, unknown>));
    return edit!;
  }

  const cards = () => fake.requests.filter((q) => q.method === 'POST' && q.path === `/channels/${modlog}/messages` && q.body?.components);
  const watcher = () => bot.context.watch!.watcher!;

  async function post(text: string): Promise<void> {
    const scored = watcher().counters.scored;
    clock = Math.max(clock + 5, Date.now());
    fake.dispatch('MESSAGE_CREATE', messageCreate(place, member, text, { timestamp: new Date(clock).toISOString() }));
    await waitUntil(() => watcher().counters.scored > scored, 'a score');
  }

  async function press(card: RecordedRequest, index: number, who = mod) {
    const customId = card.body.components[0].components[index].custom_id as string;
    const message = { id: snowflake(), channelId: modlog, embeds: card.body.embeds, components: card.body.components };
    return interact(cardButtonPress(place, who, customId, message, MANAGE_MESSAGES));
  }

  it('starts: watching the channel with cards on', async () => {
    fake = await FakeDiscord.start({
      applicationId: APP_ID,
      token: TOKEN,
      applicationFlags: ApplicationFlags.GatewayMessageContentLimited,
    });
    // Follow-up messages (the mod-log note under an answered card).
    fake.route('POST', new RegExp(`^/webhooks/${APP_ID}/[^/]+$`), (req) => ({
      status: 200,
      body: {
        id: snowflake(),
        channel_id: modlog,
        content: (req.body as { content?: string })?.content ?? '',
        embeds: [],
        components: [],
        attachments: [],
        author: { id: APP_ID, username: 'textdetect', discriminator: '0', avatar: null, bot: true },
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        pinned: false,
        type: 0,
        flags: 0,
      },
    }));
    let state: { dataDir: string; databaseUrl?: string } = { dataDir: join(dir, `state-${kind}`) };
    if (kind === 'PostgreSQL') {
      const db = await createTestDatabase();
      databases.push(db);
      state = { ...state, databaseUrl: db.url };
    }
    store = state.databaseUrl ? new PostgresStore(state.databaseUrl) : new SqliteStore(state.dataDir);
    backend = await connectDetectionBackend(
      { DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0' },
      { logger: pino({ level: 'silent' }) },
    );
    bot = createDiscordBot({
      token: TOKEN,
      detect: backend.detector,
      settings: { apiUrl: fake.apiUrl, state },
      watch: {
        detector: watchDetectorFor(backend),
        store,
        settings: { ...DEFAULT_WATCH_SETTINGS, judge: 'message', cardWindowMs: 1 },
        idlePollMs: 20,
        configTtlMs: 0,
      },
    });
    await bot.start();
    fake.dispatch(
      'GUILD_CREATE',
      guildWithChannels(
        place,
        [
          { id: general, name: 'general' },
          { id: modlog, name: 'mod-log' },
        ],
        [{ id: snowflake(), name: 'Mods', permissions: MANAGE_MESSAGES }],
        APP_ID,
      ),
    );
    await waitUntil(() => bot.client.guilds.cache.has(place.guildId), 'GUILD_CREATE', 5_000);
    const channel = (id: string, name: string) => ({
      options: [{ name: 'channel', type: 7, value: id }],
      resolved: { channels: { [id]: resolvedChannel(id, name) } },
    });
    await settings('watch', channel(general, 'general').options, channel(general, 'general').resolved);
    await settings('modlog', channel(modlog, 'mod-log').options, channel(modlog, 'mod-log').resolved);
    const on = await settings(
      'cards',
      [...channel(general, 'general').options, { name: 'state', type: 3, value: 'on' }],
      channel(general, 'general').resolved,
    );
    expect(String(on.body.content)).toContain('Review cards are on');
  });

  it('a member marked false positive gets no card on the same evidence, and one naming the clearing on clearly stronger evidence', async () => {
    await post(FIXTURES.cleared);
    await waitUntil(() => cards().length === 1, 'the first card');
    const pressed = await press(cards()[0]!, 1);
    expect(pressed.callback.body.type).toBe(7);
    expect(await store.clearingsOf(scope, member.id, Date.now())).toMatchObject([{ reviewerId: mod.id, authorId: member.id }]);

    await post(FIXTURES.same);
    await new Promise((r) => setTimeout(r, 200));
    expect(cards()).toHaveLength(1);
    const report = await settings('report');
    expect(String(report.body.embeds[0].description)).toContain(
      '1 held back (member cleared by a moderator, evidence not clearly stronger)',
    );
    expect(String(report.body.embeds[0].description)).toContain(`Marked false positive: <@${member.id}>`);

    await post(FIXTURES.stronger);
    await waitUntil(() => cards().length === 2, 'the card on stronger evidence');
    const field = cards()[1]!.body.embeds[0].fields.find((f: { name: string }) => f.name === '⚠️ Cleared before');
    expect(field.value).toMatch(
      new RegExp(
        `^This member’s earlier flag was marked false positive by <@${mod.id}> on <t:\\d+:f> \\(\\d+%, \\d+ words\\)\\. This judgment is clearly stronger`,
      ),
    );
    expect(cards()[1]!.body.allowed_mentions).toEqual({ parse: [] });
  });

  it('tells the mod-log when the channel’s precision falls under the bound; Apply changes the preset for Manage Server only', async () => {
    // With the false positive above, nine reviews of the channel under standard: 5 confirmed here
    // (strict would flag them) and 3 false positives (it would not).
    const now = Date.now();
    for (let i = 0; i < 8; i++) {
      const confirmed = i < 5;
      const presets = PRESET_BITS.standard | PRESET_BITS.loose | (confirmed ? PRESET_BITS.strict : 0);
      await store.recordScore(
        {
          scope,
          channelId: general,
          messageId: `seed${i}`,
          authorId: `seeded${i}`,
          postedAt: now - 1000,
          probability: confirmed ? 0.99 : 0.93,
          verdict: 'likely_ai',
          confidence: 'high',
          presets,
          requestId: `req_seed${i}`,
          flagId: `seed${i}`,
          card: 'posted',
          preset: 'standard',
          words: 80,
        },
        now + 86_400_000,
      );
      await store.review(scope, `seed${i}`, confirmed ? 'confirmed' : 'false_positive', mod.id, now - 1000);
    }
    expect(String((await settings('report')).body.embeds[0].description)).not.toContain('⚠️');
    // The tenth review, on the last card: Confirm. 6 of 10 is under 80%.
    const answered = await press(cards()[1]!, 0);
    expect(answered.callback.body.type).toBe(7);
    const note = await fake.waitForRequest((q) => q.method === 'POST' && new RegExp(`^/webhooks/${APP_ID}/`).test(q.path));
    expect(note.body.content).toContain(
      `<#${general}>: moderators confirmed 60% of 10 reviewed flags under **standard**, under the bound of 80%.`,
    );
    // The shares, recomputed from the stored preset bits of the reviewed flags.
    const reviewed = await store.reviewedFlags(scope, 0);
    const strict = (f: { presets: number }) => (f.presets & PRESET_BITS.strict) !== 0;
    const confirmed = reviewed.filter((f) => f.outcome === 'confirmed');
    const fps = reviewed.filter((f) => f.outcome === 'false_positive');
    expect([confirmed.length, fps.length]).toEqual([6, 4]);
    const kept = confirmed.filter(strict).length;
    const dropped = fps.filter((f) => !strict(f)).length;
    expect(dropped).toBeGreaterThanOrEqual(3);
    expect(note.body.content).toContain(
      `**strict** would have kept ${kept} of 6 confirmed flags (${Math.round((100 * kept) / 6)}%) and dropped ${dropped} of 4 false positives (${Math.round((100 * dropped) / 4)}%)`,
    );
    expect(note.body.allowed_mentions).toEqual({ parse: [] });
    const apply = note.body.components[0].components[0];
    expect(apply.label).toBe('Apply strict');
    const noteMessage = { id: snowflake(), channelId: modlog, embeds: [], components: note.body.components };
    // A moderator without Manage Server is refused; the preset stays.
    const refused = await interact(cardButtonPress(place, mod, apply.custom_id, noteMessage, MANAGE_MESSAGES));
    expect(refused.callback.body.data.content).toContain('Only members with Manage Server');
    expect((await store.getConfig(scope)).preset).toBeUndefined();
    const applied = await interact(cardButtonPress(place, admin, apply.custom_id, noteMessage, (1n << 5n).toString()));
    expect(applied.callback.body.data.content).toContain('now flagged with the **strict** preset');
    expect((await store.getConfig(scope)).preset).toBe('strict');
  });

  it('exports reviewed flags as a JSON Lines file without any text; delete-data removes the clearings', async () => {
    const exported = await settings('export-reviews');
    const raw = String(exported.body);
    expect(raw).toContain('reviewed-flags.jsonl');
    expect(raw).toContain('"outcome":"false_positive"');
    expect(raw).toContain(`"reviewer_id":"${mod.id}"`);
    for (const text of AI_TEXTS) expect(raw).not.toContain(text.slice(0, 40));

    await settings('delete-data', [{ name: 'confirm', type: 5, value: true }]);
    expect(await store.clearingsOf(scope, member.id, Date.now())).toEqual([]);
    expect(await store.reviewedFlags(scope, 0)).toEqual([]);
  });
});
