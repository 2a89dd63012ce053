/**
 * What a moderator is told on Discord (issue 32, item 7): a text too short to judge shows no warning
 * about its score and no button that would show one; a member check that cannot run is titled as a
 * member check; a button, menu or form the bot does not know is not called a command; a poll is
 * read by its question and answers, whether its channel is cached or not (item 9). The real
 * discord.js Client and detection service, Discord's published INTERACTION_CREATE shapes over the fake.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TOO_SHORT, WARNING_SENTENCES } from '../../src/words.ts';

const TOO_SHORT_HEADLINE = `${TOO_SHORT.emoji} ${TOO_SHORT.label}`;
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { buildCommands, DEFAULT_COMMAND_OPTIONS } from '../../adapters/discord/commands.ts';
import { EVIDENCE_FLOOR_WORDS } from '../../src/contract.ts';
import { countWords } from '../../src/detector/engine.ts';
import { DetectClient } from '../../src/client/index.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { FakeDiscord, type RecordedRequest, snowflake } from '../../demo/discord/fake-discord.ts';
import { userCommand } from '../../demo/discord/member-payloads.ts';
import { buttonPress, chatInputDetect, guildCreate, messageCommand, type Place, user } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.moderator-sentences`;

let fake: FakeDiscord;
let service: RunningService;
let client: DetectClient;
let bot: DiscordBot;
let dir: string;
/** Every text the bot sent for scoring, in order. */
const scored: string[] = [];
const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
const moderator = user(snowflake(), 'moderator');

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), 'discord-sentences-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-sentences' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, logLevel: 'silent' });
  client = new DetectClient({ apiKey: key, baseUrl: service.url, maxRetries: 0 });
  bot = createDiscordBot({
    token: TOKEN,
    detect: {
      detect: (request, options) => {
        scored.push(typeof request.text === 'string' ? request.text : '');
        return client.detect(request, options);
      },
      detectAuthor: (request, options) => client.detectAuthor(request, options),
    },
    settings: { apiUrl: fake.apiUrl, state: { dataDir: join(dir, 'state') } },
  });
  await bot.start();
}, 60_000);

afterAll(async () => {
  await bot?.stop();
  await client?.close();
  await service?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function answerOf(payload: { id: string; token: string }): Promise<RecordedRequest> {
  fake.sendInteraction(payload);
  return fake.waitForRequest((r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`);
}

describe('too short to judge', () => {
  it('shows no warning about the score, no per-sentence field and no re-check button', async () => {
    const edit = await answerOf(chatInputDetect(place, moderator, { text: 'Thanks, see you at noon tomorrow', mode: 'general' }));
    const embed = edit.body.embeds[0];
    expect(embed.title).toBe(TOO_SHORT_HEADLINE);
    expect(embed.description).toContain('no score is shown');
    for (const sentence of Object.values(WARNING_SENTENCES)) expect(embed.description).not.toContain(sentence);
    expect(embed.description).not.toContain('⚠️');
    expect(embed.fields.map((f: { name: string }) => f.name)).not.toContain('Most AI-like sentences');
    expect(JSON.stringify(edit.body.components ?? [])).not.toContain('Re-check');
  });
});

describe('the /detect text option says what the bot does (issue 40, item 8)', () => {
  const TEXT =
    'The committee reviewed the proposal in detail over the course of the spring term. It is important to note that the findings suggest a significant improvement in overall outcomes for participants. Furthermore, the results demonstrate a clear and consistent trend across every cohort that was examined.';
  /** The first `words` words of TEXT, as the engine counts them. */
  function textOf(words: number): string {
    const text = TEXT.split(/\s+/).slice(0, words).join(' ');
    expect(countWords(text, 'en')).toBe(words);
    return text;
  }
  const scoreShown = (embed: unknown): boolean => /\b\d{1,3}%/.test(JSON.stringify(embed));

  it(`its floor is the engine's: ${EVIDENCE_FLOOR_WORDS - 1} words are too short to judge with no score, ${EVIDENCE_FLOOR_WORDS} get one`, async () => {
    const detect = buildCommands(DEFAULT_COMMAND_OPTIONS).find((c) => c.name === 'detect') as {
      options: { name: string; description: string }[];
    };
    expect(detect.options.find((o) => o.name === 'text')?.description).toBe(
      `The text to check (English or Turkish; under ${EVIDENCE_FLOOR_WORDS} words it is too short to judge)`,
    );
    const short = (await answerOf(chatInputDetect(place, moderator, { text: textOf(EVIDENCE_FLOOR_WORDS - 1), mode: 'general' }))).body
      .embeds[0];
    expect(short.title).toBe(TOO_SHORT_HEADLINE);
    expect(scoreShown(short)).toBe(false);
    const enough = (await answerOf(chatInputDetect(place, moderator, { text: textOf(EVIDENCE_FLOOR_WORDS), mode: 'general' }))).body
      .embeds[0];
    expect(enough.title).not.toBe(TOO_SHORT_HEADLINE);
    expect(scoreShown(enough)).toBe(true);
  });
});

describe('a member check that cannot run', () => {
  it('is titled as a member check, not "Could not check this text"', async () => {
    const botAccount = { ...user(snowflake(), 'helper-bot'), bot: true };
    const edit = await answerOf(userCommand(place, moderator, botAccount));
    expect(edit.body.embeds[0].title).toBe('Could not check this member’s messages');
    expect(edit.body.embeds[0].description).toContain('That account is a bot');
  });
});

describe('interactions the bot does not know', () => {
  it('a button, a select menu and a form are each named as what they are', async () => {
    const reply = { embeds: [], components: [] };
    const button = buttonPress(place, moderator, 'old-feature:1', reply);
    const select = {
      ...buttonPress(place, moderator, 'old-menu', reply),
      data: { custom_id: 'old-menu', component_type: 3, values: ['a'] },
    };
    const { message: _message, ...withoutMessage } = buttonPress(place, moderator, 'old-form', reply);
    const form = { ...withoutMessage, type: 5, data: { custom_id: 'old-form', components: [] } };
    const [b, s, f] = await Promise.all([answerOf(button), answerOf(select), answerOf(form)]);
    expect(b.body.content).toBe(
      'This button is not known to the running bot, or the message it belongs to has expired. Run the check again.',
    );
    expect(s.body.content).toBe(
      'This menu is not known to the running bot, or the message it belongs to has expired. Run the command again.',
    );
    expect(f.body.content).toBe('This form is not known to the running bot, or it has expired. Open it again from the command.');
  });
});

/** "Check for AI text" on a message that is a poll, as Discord sends it (content empty, the words in `poll`). */
function pollCheck(where: Place) {
  const payload = messageCommand(where, moderator, { content: '', author: user(snowflake(), 'asker') });
  const message = Object.values(payload.data.resolved.messages)[0] as Record<string, unknown>;
  message.poll = {
    question: { text: 'Which day suits the team offsite best?' },
    answers: [
      { answer_id: 1, poll_media: { text: 'Tuesday at the lake house' } },
      { answer_id: 2, poll_media: { text: 'Thursday in the city', emoji: { id: null, name: '🏙️' } } },
    ],
    expiry: new Date(Date.now() + 86_400_000).toISOString(),
    allow_multiselect: false,
    layout_type: 1,
    results: { is_finalized: false, answer_counts: [] },
  };
  return payload;
}

describe('a poll message (issue 32, item 9)', () => {
  it('is checked by its question and answers when the channel is not cached', async () => {
    const edit = await answerOf(pollCheck(place));
    expect(edit.body.embeds[0].title).toBe(TOO_SHORT_HEADLINE);
    expect(scored.at(-1)).toBe('Which day suits the team offsite best?\nTuesday at the lake house\nThursday in the city');
    expect(edit.body.content ?? '').not.toContain('could not read this request');
  });

  it('and when it is', async () => {
    const cached: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
    fake.dispatch('GUILD_CREATE', guildCreate(cached));
    await vi.waitFor(() => expect(bot.client.channels.cache.has(cached.channelId)).toBe(true));
    const edit = await answerOf(pollCheck(cached));
    expect(edit.body.embeds[0].title).toBe(TOO_SHORT_HEADLINE);
    expect(scored.at(-1)).toBe('Which day suits the team offsite best?\nTuesday at the lake house\nThursday in the city');
  });
});
