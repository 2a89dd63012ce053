/**
 * Member checks on Discord: the real discord.js client against the fake Discord (gateway, REST and
 * channel histories in Discord's shapes), the real detection service behind the bots' queue
 * (`POST /v1/detect/author` through DetectClient.detectAuthor). Covers the user command,
 * `/detect user:`, the button under a short message check, the window setting, and every way the
 * history can be unreadable.
 */
import { originHeadline } from '../../src/words.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import type { DetectionApi } from '../../adapters/discord/check.ts';
import { MISSING_HISTORY_PERMISSION, MISSING_MESSAGE_CONTENT } from '../../adapters/discord/history.ts';
import type { DetectAuthorRequest, DetectAuthorResponse } from '../../src/contract.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { FakeDiscordHistory, commandEcho, person, replyMessage, textMessage, type HistoryUser } from '../../demo/discord/fake-history.ts';
import { READ_HISTORY, detectUser, historySettings, userCommand } from '../../demo/discord/member-payloads.ts';
import { buttonPress, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
const MODLOG_CHANNEL = snowflake();
const DAY = 86_400_000;
const MODERATOR_PERMISSIONS = (1n << 13n) | (1n << 10n) | (1n << 11n) | READ_HISTORY;

// Written for this test: everyday chat messages of one member, 15–35 words each.
const ADA_MESSAGES = [
  'Morning all, the train was late again so I missed the standup, can someone paste the notes here when they get a sec?',
  'I tried the new build on my laptop last night and the login screen froze twice, no idea why yet.',
  'Lunch today is the noodle place by the bridge if anyone wants to come, we leave at half twelve sharp.',
  'Honestly the old dashboard was easier to read, the new colours make the red and orange look the same to me.',
  'My cat knocked the router off the shelf so if I drop off the call that is the reason, sorry in advance.',
  'Finished the review of the billing changes, left a few comments about the rounding, nothing that blocks the merge though.',
  'Does anyone know whether the office is open on Friday? The calendar says closed but the email said otherwise.',
  'Quick one: the staging database is almost full again, I cleaned the old logs but we need a proper fix soon.',
  'Thanks for covering my shift yesterday, I owe you a coffee and probably a cake as well at this point.',
  'The client liked the demo but asked for the export to work with their old spreadsheet tool, which is fun.',
  'I will be out Monday for the dentist, back Tuesday morning, ping me by text if something catches fire.',
  'We should write down how the deploy works, I forgot the order of the steps again and had to ask twice.',
];

let fake: FakeDiscord;
let history: FakeDiscordHistory;
let service: RunningService;
let backend: DetectionBackend;
let bot: DiscordBot;
let dir: string;
const sent: DetectAuthorRequest[] = [];
const answers: DetectAuthorResponse[] = [];

const guildId = snowflake();
const channelId = snowflake();
const threadId = snowflake();
const place: Place = { applicationId: APP_ID, guildId, channelId };
const threadPlace: Place = { applicationId: APP_ID, guildId, channelId: threadId };
const moderator = user(snowflake(), 'moderator');
const ada: HistoryUser = person(snowflake(), 'ada');
const bob: HistoryUser = person(snowflake(), 'bob');
const quiet: HistoryUser = person(snowflake(), 'quiet');
const otherBot: HistoryUser = { ...person(snowflake(), 'musicbot'), bot: true };

/** Message ids Ada's scorable messages got, newest first (what the bot must send, in order). */
let adaScorable: string[] = [];
let editedId = '';
let deletedText = '';

function seedHistory(): void {
  history.channel(channelId, { guildId });
  history.channel(threadId, { guildId });
  const ids: { id: string; ago: number }[] = [];
  // Plain messages over the past ten days, Bob's and a bot's in between.
  ADA_MESSAGES.forEach((text, i) => {
    const ago = (i + 1) * 18 * 3_600_000;
    const m = history.post(channelId, ago, textMessage(ada, text));
    ids.push({ id: m.id as string, ago });
    history.post(channelId, ago - 60_000, textMessage(bob, `Sounds good, message ${i} from bob about something else entirely.`));
    if (i % 4 === 0) history.post(channelId, ago - 120_000, textMessage(otherBot, 'Now playing: a song nobody asked for.'));
  });
  // A reply, and an edited message (scored with its new text).
  const bobs = history.post(channelId, 2 * 3_600_000, textMessage(bob, 'Is the release still happening on Thursday or did it move?'));
  const reply = history.post(
    channelId,
    3_500_000,
    replyMessage(
      ada,
      'It moved to next week because the payment provider asked for one more round of testing on their side.',
      bobs,
      guildId,
    ),
  );
  ids.push({ id: reply.id as string, ago: 3_500_000 });
  const edited = history.post(channelId, 3 * 3_600_000, textMessage(ada, 'teh meeting is at 3'));
  history.edit(
    channelId,
    edited.id as string,
    'The meeting moved to three in the afternoon, same room as last week, bring the printed agenda please.',
  );
  editedId = edited.id as string;
  ids.push({ id: editedId, ago: 3 * 3_600_000 });
  // A deleted message: gone from the history, so never sent.
  deletedText = 'This message was posted and then deleted by its author a minute later.';
  const deleted = history.post(channelId, 4 * 3_600_000, textMessage(ada, deletedText));
  history.remove(channelId, deleted.id as string);
  // What is left out, and why.
  history.post(
    channelId,
    5 * 3_600_000,
    textMessage(ada, '', {
      attachments: [
        {
          id: snowflake(),
          filename: 'photo.jpg',
          size: 1200,
          url: 'https://cdn.example/photo.jpg',
          proxy_url: 'https://media.example/photo.jpg',
          content_type: 'image/jpeg',
        },
      ],
    }),
  );
  history.post(channelId, 6 * 3_600_000, textMessage(ada, '', { sticker_items: [{ id: snowflake(), name: 'wave', format_type: 1 }] }));
  history.post(channelId, 7 * 3_600_000, textMessage(ada, 'https://example.com/some/article'));
  history.post(channelId, 8 * 3_600_000, textMessage(ada, '!rank'));
  history.post(channelId, 9 * 3_600_000, commandEcho(otherBot, ada, 'play', guildId));
  history.post(
    channelId,
    10 * 3_600_000,
    textMessage(ada, '', {
      message_reference: { type: 1, message_id: snowflake(), channel_id: snowflake(), guild_id: guildId },
      message_snapshots: [
        {
          message: {
            type: 0,
            content: 'Forwarded words someone else wrote somewhere else.',
            embeds: [],
            attachments: [],
            timestamp: new Date().toISOString(),
            edited_timestamp: null,
            flags: 0,
            mentions: [],
            mention_roles: [],
          },
        },
      ],
    }),
  );
  // System notices by Ada are not her prose and not counted: a join and a thread-created notice.
  history.post(channelId, 11 * 3_600_000, { type: 7, author: ada, content: '' });
  history.post(channelId, 12 * 3_600_000, {
    type: 18,
    author: ada,
    content: 'Release planning',
    thread: { id: threadId, type: 11, name: 'Release planning' },
  });
  // Older than the 30-day window.
  history.post(channelId, 40 * DAY, textMessage(ada, 'This is an old message from more than a month ago and must not be read.'));
  adaScorable = ids.sort((a, b) => a.ago - b.ago).map((x) => x.id);
  // The thread: its own channel with its own messages.
  history.post(threadId, 30 * 60_000, {
    type: 21,
    author: ada,
    content: '',
    message_reference: { type: 0, message_id: snowflake(), channel_id: channelId, guild_id: guildId },
  });
  for (let i = 0; i < 6; i++) {
    history.post(
      threadId,
      (i + 1) * 60_000,
      textMessage(ada, `In the thread: point ${i + 1} about the release plan, which we should settle before the end of this week.`),
    );
  }
}

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  history = new FakeDiscordHistory(fake);
  seedHistory();
  dir = await mkdtemp(join(tmpdir(), 'discord-member-test-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-member-test' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, redisUrl: process.env.REDIS_URL, logLevel: 'silent' });
  backend = await connectDetectionBackend({ DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0' });
  // The bot's own detector, with every author request and answer kept for the assertions.
  const detect: DetectionApi = {
    detect: (request, options) => backend.detector.detect(request, options),
    detectAuthor: async (request, options) => {
      sent.push(request);
      const answer = await backend.detector.detectAuthor(request, options);
      answers.push(answer);
      return answer;
    },
  };
  bot = createDiscordBot({
    token: TOKEN,
    detect,
    settings: { apiUrl: fake.apiUrl, modLogChannelId: MODLOG_CHANNEL, state: { dataDir: join(dir, 'state') } },
  });
  await bot.start();
});

afterAll(async () => {
  await bot?.stop();
  await backend?.close();
  await service?.close();
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sent.length = 0;
  answers.length = 0;
  history.messageContentIntent = true;
});

interface Exchange {
  callback: RecordedRequest;
  edit: RecordedRequest;
}

async function interact(payload: { id: string; token: string }): Promise<Exchange> {
  fake.sendInteraction(payload);
  const callback = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
  );
  // The final answer: an embed (a queued notice would be content only).
  const edit = await fake.waitForRequest(
    (r) =>
      r.method === 'PATCH' &&
      r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original` &&
      Array.isArray(r.body?.embeds) &&
      r.body.embeds.length > 0,
    30_000,
  );
  return { callback, edit };
}

function field(embed: any, name: string): string | undefined {
  return embed.fields?.find((f: { name: string }) => f.name === name)?.value;
}

function historyReads(since: number, channel = channelId): RecordedRequest[] {
  return fake.requests.filter((r) => r.method === 'GET' && r.path === `/channels/${channel}/messages` && r.at >= since);
}

describe('the user command "Check recent messages for AI"', () => {
  it('reads the member’s messages in the channel, sends the scorable ones newest first and answers privately with the verdict, links and what was left out', async () => {
    const started = Date.now();
    const x = await interact(userCommand(place, moderator, ada));
    expect(x.callback.body).toEqual({ type: 5, data: { flags: 64 } });
    expect(historyReads(started).length).toBeGreaterThan(0);
    // What was sent: exactly the scorable messages, newest first, the edit's new text, never the deleted one.
    expect(sent).toHaveLength(1);
    const request = sent[0]!;
    expect(request.mode).toBe('general');
    expect(request.messages).toHaveLength(adaScorable.length);
    expect(request.messages).toContain(
      'The meeting moved to three in the afternoon, same room as last week, bring the printed agenda please.',
    );
    expect(request.messages.join('\n')).not.toContain('teh meeting');
    expect(request.messages.join('\n')).not.toContain(deletedText);
    expect(request.messages.join('\n')).not.toContain('more than a month ago');
    expect(request.messages.join('\n')).not.toContain('Forwarded words');
    expect(request.messages.join('\n')).not.toContain('In the thread');
    expect(request.messages[0]).toMatch(/^It moved to next week/);

    const answer = answers[0]!;
    const embed = x.edit.body.embeds[0];
    expect(embed.description).toContain(`<@${ada.id}>`);
    expect(embed.description).toContain(`over ${answer.messages_used} messages and ${answer.words_used} words`);
    // Read: the scorable ones and the six left out (join and thread notices are not messages of theirs).
    expect(embed.description).toContain(`Read all ${adaScorable.length + 6} messages of theirs in this channel from the past 30 days.`);
    expect(embed.description).toContain(
      'Left out: 2 commands, 2 messages with only files, images or stickers, 1 message with only a link and 1 message forwarded from elsewhere (not their writing).',
    );
    expect(field(embed, 'Request ID')).toBe(`\`${answer.request_id}\``);
    // The three most AI-like messages, with jump links to exactly those messages.
    const top = field(embed, 'Most AI-like messages')!.split('\n');
    expect(top).toHaveLength(3);
    const ranked = answer.messages
      .filter((m) => m.ai_probability !== null)
      .sort((a, b) => (b.ai_probability ?? 0) - (a.ai_probability ?? 0) || a.index - b.index)
      .slice(0, 3);
    ranked.forEach((m, i) => {
      expect(top[i]).toContain(`[jump](https://discord.com/channels/${guildId}/${channelId}/${adaScorable[m.index]})`);
    });
    if (answer.evidence_needed === null) {
      expect(embed.title).toMatch(
        /^(🔴 Reads as AI-written|🟣 Reads as the author's own text, polished by an AI|🟡 Unclear|🟢 Likely human-written)$/,
      );
      expect(embed.title).toBe(originHeadline(answer.origin));
    }
    expect(x.edit.body.allowed_mentions).toEqual({ parse: [] });
    // The mod log names who checked whom, never a text.
    const log = await fake.waitForRequest(
      (r) => r.method === 'POST' && r.path === `/channels/${MODLOG_CHANNEL}/messages` && r.at >= started,
    );
    expect(log.body.content).toMatch(
      new RegExp(
        `^<@${moderator.id}> checked the recent messages of <@${ada.id}> in <#${channelId}> in general mode: .+, \\d+% over ${answer.messages_used} messages · request \`${answer.request_id}\`$`,
      ),
    );
    expect(log.body.content).not.toContain('meeting');
  });

  it('in a thread, reads the thread’s messages only', async () => {
    const x = await interact(userCommand(threadPlace, moderator, ada));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.messages).toHaveLength(6);
    for (const m of sent[0]!.messages) expect(m).toMatch(/^In the thread: point \d/);
    expect(field(x.edit.body.embeds[0], 'Most AI-like messages')).toContain(`https://discord.com/channels/${guildId}/${threadId}/`);
  });

  it('answers a member with no messages in the channel without calling the service', async () => {
    const x = await interact(userCommand(place, moderator, quiet));
    expect(sent).toHaveLength(0);
    expect(x.edit.body.embeds[0].title).toBe('Nothing to check');
    expect(x.edit.body.embeds[0].description).toBe(
      'This member has written no messages in this channel in the past 30 days, so there is nothing to check. Run the check in a channel where they write, or widen the window in the settings.',
    );
  });

  it('holds the verdict back with what more it needs when the member wrote too little', async () => {
    const fewId = snowflake();
    history.channel(fewId, { guildId });
    const few = person(snowflake(), 'newcomer');
    history.post(fewId, 60_000, textMessage(few, 'Hello everyone, glad to be here.'));
    history.post(fewId, 120_000, textMessage(few, 'Where do I find the onboarding docs?'));
    const x = await interact(userCommand({ ...place, channelId: fewId }, moderator, few));
    const answer = answers[0]!;
    // Two short lines: under the evidence floor (40 words together).
    expect(answer.verdict).toBe('mixed');
    expect(answer.warnings).toContain('too_little_evidence');
    const needed = answer.evidence_needed!;
    expect(needed.messages).toBe(0);
    expect(needed.words).toBeGreaterThan(0);
    const embed = x.edit.body.embeds[0];
    expect(embed.title).toBe('🟡 Too little to judge yet');
    // The engine's own figures, in words, and no percentage for a verdict held back.
    expect(embed.description).toContain(`⏸️ Held back: a verdict needs ${needed.words} more words of their own writing.`);
    expect(embed.description).toContain('Too little to judge: 2 messages');
    expect(JSON.stringify(embed)).not.toMatch(/\d%/);
    expect(embed.description).not.toContain('Too few scorable messages');
  });

  it('refuses a bot account without reading anything', async () => {
    const started = Date.now();
    const x = await interact(userCommand(place, moderator, { ...user(otherBot.id, 'musicbot'), bot: true }));
    expect(x.edit.body.embeds[0].description).toBe(
      'That account is a bot: its messages are not a person’s writing, so there is nothing to judge.',
    );
    expect(historyReads(started)).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });
});

describe('when Discord withholds the history', () => {
  it('says the bot lacks Read Message History (Discord would answer with no messages at all)', async () => {
    const started = Date.now();
    const x = await interact(userCommand(place, moderator, ada, { appPermissions: MODERATOR_PERMISSIONS & ~READ_HISTORY }));
    expect(x.edit.body.embeds[0].description).toBe(MISSING_HISTORY_PERMISSION);
    expect(historyReads(started)).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it('says so when Discord refuses the channel (Missing Access)', async () => {
    const hiddenId = snowflake();
    history.channel(hiddenId, { guildId, canView: false });
    const x = await interact(userCommand({ ...place, channelId: hiddenId }, moderator, ada));
    expect(x.edit.body.embeds[0].description).toContain(MISSING_HISTORY_PERMISSION);
    expect(x.edit.body.embeds[0].description).toContain('commands only');
    expect(sent).toHaveLength(0);
  });

  it('says the application lacks the Message Content intent when Discord blanks the messages', async () => {
    history.messageContentIntent = false;
    const x = await interact(userCommand(place, moderator, ada));
    expect(x.edit.body.embeds[0].description).toBe(MISSING_MESSAGE_CONTENT);
    expect(sent).toHaveLength(0);
  });
});

describe('/detect user:@member', () => {
  it('checks the member in the mode asked for', async () => {
    const x = await interact(detectUser(place, moderator, ada, { mode: 'academic' }));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.mode).toBe('academic');
    expect(field(x.edit.body.embeds[0], 'Mode')).toBe('Academic');
  });

  it('is refused to a member without the permission "Check for AI text" needs (Manage Messages by default)', async () => {
    const x = await interact(detectUser(place, moderator, ada, { memberPermissions: (1n << 10n) | (1n << 11n) }));
    expect(x.edit.body.embeds[0].description).toBe(
      'Checking a member’s recent messages needs the same permission as "Check for AI text": ManageMessages.',
    );
    expect(sent).toHaveLength(0);
  });

  it('asks for text or user, and not both', async () => {
    const neither = await interact(detectUser(place, moderator, undefined));
    expect(neither.edit.body.embeds[0].description).toBe(
      'Give `text:` to check a text, `file:` to check a document, or `user:` to check a member’s recent messages in this channel.',
    );
    const both = await interact(detectUser(place, moderator, ada, { text: 'Some pasted text' }));
    expect(both.edit.body.embeds[0].description).toBe(
      'Give either `text:` or `file:` (a text or a document to check) or `user:` (a member whose recent messages to check), not both.',
    );
    expect(sent).toHaveLength(0);
  });
});

describe('a message too short to judge alone', () => {
  it('says so and offers a button that checks the author’s recent messages', async () => {
    const check = await interact(messageCommand(place, moderator, { content: 'lol same, see you at lunch', author: ada }));
    const embed = check.edit.body.embeds[0];
    expect(embed.title).toBe('⚪ Too short to judge');
    expect(embed.description).not.toMatch(/\d%/);
    expect(embed.description).toContain(
      '💬 This message is too short to judge on its own. Checking the author’s recent messages together gives a far more reliable answer. Use the button below.',
    );
    // No re-check row (too short in one mode is too short in all: issue 32, item 7); the member check's row alone.
    const rows = check.edit.body.components;
    expect(rows).toHaveLength(1);
    const button = rows[0].components[0];
    expect(button).toMatchObject({ type: 2, style: 1, label: 'Check their recent messages', custom_id: `author:${ada.id}` });

    const press = await interact(buttonPress(place, moderator, button.custom_id, check.edit.body));
    // A new private answer: the member check, for the message's author.
    expect(press.callback.body).toEqual({ type: 5, data: { flags: 64 } });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.messages).toHaveLength(adaScorable.length);
    expect(press.edit.body.embeds[0].description).toContain(`Recent messages of <@${ada.id}>`);
  });

  it('offers no member check for a bot’s message', async () => {
    const check = await interact(
      messageCommand(place, moderator, {
        content: 'Now playing: a song nobody asked for.',
        author: { ...user(otherBot.id, 'musicbot'), bot: true } as never,
      }),
    );
    expect(check.edit.body.components).toHaveLength(0);
    expect(check.edit.body.embeds[0].description).not.toContain('💬');
  });
});

describe('/detect-settings history', () => {
  it('sets how many messages and days member checks read, per server', async () => {
    const admin = user(snowflake(), 'admin');
    const set = await (async () => {
      const payload = historySettings(place, admin, { messages: 5, days: 2 });
      fake.sendInteraction(payload);
      return fake.waitForRequest((r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`);
    })();
    expect(set.body.content).toContain("• Member checks read the member's last 5 messages within 2 days");
    const refused = historySettings(place, admin, { messages: 500 });
    fake.sendInteraction(refused);
    const refusal = await fake.waitForRequest(
      (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${refused.token}/messages/@original`,
    );
    expect(refusal.body.content).toMatch(/from 5 to 200/);

    const x = await interact(userCommand(place, moderator, ada));
    expect(sent[0]!.messages.length).toBeLessThanOrEqual(5);
    expect(x.edit.body.embeds[0].description).toContain('from the past 2 days');

    const reset = historySettings(place, admin, {});
    fake.sendInteraction(reset);
    const back = await fake.waitForRequest(
      (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${reset.token}/messages/@original`,
    );
    expect(back.body.content).toContain("the member's last 50 messages within 30 days (bot default)");
  });
});
