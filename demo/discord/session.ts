/**
 * The Discord demo: the real bot (adapters/discord, discord.js) and the detection service started
 * in this process as `npm run discord` starts them, against the Discord stand-in on loopback
 * (fake-discord.ts: REST, gateway, CDN; fake-history.ts: channel histories). A server with #general
 * and #mod-log, a moderator (the visitor), and two members; the tour drives the bot with the payloads
 * Discord sends (payloads.ts, member-payloads.ts, watch-payloads.ts) and adds to the transcript what
 * the stand-in recorded of the bot's REST calls.
 */
import { ApplicationFlags } from 'discord.js';
import { botUserAgent, connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { readWatchSettings } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { DISCORD_MAX_STRING_OPTION } from '../../adapters/discord/commands.ts';
import { buildPdf } from '../documents.ts';
import type { Names } from '../markup.ts';
import {
  countJudgments,
  DemoInputError,
  type DemoSession,
  isQueuedNotice,
  quoteText,
  type SessionOptions,
  type TourResult,
  until,
} from '../session.ts';
import { aiCheckText, AI_TEXTS, essayParagraphs, humanCheckText, memberMessages } from '../texts.ts';
import type { Button, Message } from '../transcript.ts';
import { WAIT_MS } from '../wait.ts';
import { FakeDiscord, messageObject, snowflake, type RecordedRequest } from './fake-discord.ts';
import { FakeDiscordHistory, person, textMessage, type HistoryUser } from './fake-history.ts';
import { detectUser } from './member-payloads.ts';
import { buttonPress, chatInputDetect, type Place } from './payloads.ts';
import { cardButtonPress, guildWithChannels, messageCreate, resolvedChannel, settingsCommand } from './watch-payloads.ts';

const BOT_NAME = 'textdetect';
const MODERATOR_NAME = 'you (moderator)';
/** Discord's button styles by number (1 primary … 4 danger; 5 link buttons carry no custom id). */
const BUTTON_STYLES: Record<number, Button['style']> = { 1: 'primary', 2: 'secondary', 3: 'success', 4: 'danger' };
/** Discord's ephemeral message flag. */
const EPHEMERAL = 64;

interface MessageData {
  content?: string;
  embeds?: {
    title?: string;
    description?: string;
    color?: number;
    fields?: { name: string; value: string }[];
    footer?: { text?: string };
  }[];
  components?: { components?: { type?: number; style?: number; label?: string; custom_id?: string }[] }[];
  flags?: number;
}

/** Discord's message (content, embeds, the buttons under them) as the transcript's messages. */
function messagesOf(data: MessageData): Message[] {
  const messages: Message[] = [];
  if (data.content) messages.push({ text: data.content, fields: [], buttons: [] });
  for (const embed of data.embeds ?? []) {
    messages.push({
      title: embed.title,
      color: embed.color,
      text: embed.description,
      fields: (embed.fields ?? []).map((f) => ({ name: f.name, value: f.value })),
      footer: embed.footer?.text,
      buttons: [],
    });
  }
  if (messages.length === 0) messages.push({ fields: [], buttons: [] });
  const buttons = (data.components ?? [])
    .flatMap((row) => row.components ?? [])
    .filter((c) => c.type === 2 && c.custom_id)
    .map((c) => ({ id: c.custom_id as string, label: c.label ?? '', style: BUTTON_STYLES[c.style ?? 2] ?? 'secondary' }));
  (messages.at(-1) as Message).buttons = buttons;
  return messages;
}

/** A deferred answer's edit that is a notice of the queue, not the answer. */
function isProgress(body: MessageData | undefined): boolean {
  return !body?.embeds?.length && isQueuedNotice(body?.content);
}

interface Interaction {
  channel: string;
  /** The transcript entry whose button was pressed. */
  pressed?: number | undefined;
  /** The entry that holds the answer (a deferred reply, or the pressed message it updates). */
  answer?: number | undefined;
}

export async function startDiscordDemo(options: SessionOptions): Promise<DemoSession> {
  const { transcript, logger } = options;
  const applicationId = snowflake();
  const token = `${Buffer.from(applicationId).toString('base64')}.demo.a-token-only-the-stand-in-knows`;
  // Message Content on: the bot may watch channels and read members' history, as most servers that watch need.
  const fake = await FakeDiscord.start({ applicationId, token, applicationFlags: ApplicationFlags.GatewayMessageContent });
  let backend: DetectionBackend | undefined;
  let bot: DiscordBot | undefined;
  try {
    /** Set by close(): the tour takes no further step. */
    let closing = false;
    const notClosing = (): void => {
      if (closing) throw new Error('The demo is stopping.');
    };
    const place: Place = { applicationId, guildId: snowflake(), channelId: snowflake() };
    const channels = new Map([
      [place.channelId, 'general'],
      [snowflake(), 'mod-log'],
    ]);
    const modlog = [...channels.keys()][1] as string;
    const moderator = person(snowflake(), 'you');
    const marta: HistoryUser = person(snowflake(), 'marta');
    const quill: HistoryUser = person(snowflake(), 'quill');
    const people = new Map([moderator, marta, quill, { id: applicationId, username: BOT_NAME }].map((p) => [p.id, p.username]));
    const modRole = snowflake();
    const names: Names = (kind, id) =>
      kind === 'channel' ? channels.get(id) : kind === 'role' ? (id === modRole ? 'Moderators' : undefined) : people.get(id);

    const history = new FakeDiscordHistory(fake);
    history.channel(place.channelId, { guildId: place.guildId });
    // Follow-up messages (POST /webhooks/{application}/{token}), as Discord answers them.
    fake.route('POST', /^\/webhooks\/\d+\/[^/]+$/, (request) => ({
      status: 200,
      body: messageObject({ author: fake.botUser, content: request.body?.content ?? '', embeds: request.body?.embeds ?? [] }),
    }));
    // A server member (the card names who pressed its button by their server name).
    fake.route('GET', /^\/guilds\/\d+\/members\/(\d+)$/, (_request, match) => {
      const username = people.get(match[1] as string);
      return username
        ? {
            status: 200,
            body: { user: { id: match[1], username, global_name: null, discriminator: '0', avatar: null }, nick: null, roles: [] },
          }
        : { status: 404, body: { message: 'Unknown Member', code: 10007 } };
    });

    const interactions = new Map<string, Interaction>();
    const byMessageId = new Map<string, number>();
    /** What the bot last sent for each entry, as Discord would echo it with a press on one of its buttons. */
    const sent = new Map<number, MessageData>();
    const show = (id: number, data: MessageData): void => {
      sent.set(id, data);
      transcript.update(id, messagesOf(data));
    };
    fake.onRequest((request) => record(request));

    /** Turns what the bot sent the stand-in into transcript entries. */
    function record(request: RecordedRequest): void {
      const ok = request.response !== undefined && request.response.status < 300;
      if (!ok) {
        logger.debug({ method: request.method, path: request.path, status: request.response?.status }, 'the stand-in refused a call');
        return;
      }
      const callback = request.method === 'POST' ? /^\/interactions\/\d+\/([^/]+)\/callback$/.exec(request.path) : null;
      if (callback) {
        const it = interactions.get(callback[1] as string);
        if (!it) return;
        const type = request.body?.type as number;
        const data = (request.body?.data ?? {}) as MessageData;
        if (type === 4 || type === 5) {
          const messages = type === 4 ? messagesOf(data) : [{ text: `${BOT_NAME} is thinking…`, fields: [], buttons: [] }];
          it.answer = transcript.add({
            channel: it.channel,
            author: BOT_NAME,
            bot: true,
            onlyYou: ((data.flags ?? 0) & EPHEMERAL) !== 0,
            pending: type === 5,
            messages,
          }).id;
          if (type === 4) sent.set(it.answer, data);
        } else if (type === 6) it.answer = it.pressed;
        else if (type === 7 && it.pressed !== undefined) {
          it.answer = it.pressed;
          show(it.pressed, data);
        }
        return;
      }
      const edit = request.method === 'PATCH' ? /^\/webhooks\/\d+\/([^/]+)\/messages\/@original$/.exec(request.path) : null;
      if (edit) {
        const answer = interactions.get(edit[1] as string)?.answer;
        if (answer !== undefined) show(answer, request.body ?? {});
        return;
      }
      const followUp = request.method === 'POST' ? /^\/webhooks\/\d+\/([^/]+)$/.exec(request.path) : null;
      if (followUp) {
        const it = interactions.get(followUp[1] as string);
        const body = (request.body ?? {}) as MessageData;
        const entry = transcript.add({
          channel: it?.channel ?? 'general',
          author: BOT_NAME,
          bot: true,
          onlyYou: ((body.flags ?? 0) & EPHEMERAL) !== 0,
          messages: messagesOf(body),
        });
        sent.set(entry.id, body);
        return;
      }
      const post = request.method === 'POST' ? /^\/channels\/(\d+)\/messages$/.exec(request.path) : null;
      if (post) {
        const entry = transcript.add({
          channel: channels.get(post[1] as string) ?? 'unknown-channel',
          author: BOT_NAME,
          bot: true,
          onlyYou: false,
          messages: messagesOf(request.body ?? {}),
        });
        sent.set(entry.id, request.body ?? {});
        const id = (request.response?.body as { id?: string } | undefined)?.id;
        if (id) byMessageId.set(id, entry.id);
      }
    }

    /**
     * Sends an interaction as the moderator and waits for the bot's answer: the callback and, when the
     * bot deferred, the edit that carries the answer (not a queue notice).
     */
    async function interact(
      payload: { id: string; token: string },
      what: { channel?: string; action: string; source?: string; pressed?: number },
    ): Promise<void> {
      notClosing();
      const channel = what.channel ?? 'general';
      transcript.add({
        channel,
        author: MODERATOR_NAME,
        bot: false,
        onlyYou: false,
        action: what.action,
        source: what.source,
        messages: [],
      });
      interactions.set(payload.token, { channel, pressed: what.pressed });
      fake.sendInteraction(payload);
      const callback = await fake.waitForRequest(
        (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
        WAIT_MS,
      );
      if (callback.body?.type === 5 || callback.body?.type === 6) {
        await fake.waitForRequest(
          (r) =>
            r.method === 'PATCH' &&
            r.path === `/webhooks/${applicationId}/${payload.token}/messages/@original` &&
            !isProgress(r.body as MessageData),
          WAIT_MS,
        );
      }
    }

    /** A member's message in #general: on the gateway (as Discord delivers it) and in the channel's history. */
    function post(author: HistoryUser, text: string, source: string, agoMs = 0): void {
      notClosing();
      const stored = history.post(place.channelId, agoMs, textMessage(author, text));
      if (agoMs === 0) {
        fake.dispatch(
          'MESSAGE_CREATE',
          messageCreate(place, author, text, { id: stored.id as string, timestamp: stored.timestamp as string }),
        );
      }
      transcript.add({
        channel: 'general',
        author: author.username,
        bot: false,
        onlyYou: false,
        source,
        messages: [{ text, fields: [], buttons: [] }],
      });
    }

    const channelOption = (id: string) => ({
      options: [{ name: 'channel', type: 7, value: id }],
      resolved: { channels: { [id]: resolvedChannel(id, channels.get(id) as string) } },
    });

    backend = await connectDetectionBackend({}, { logger, userAgent: botUserAgent('discord') });
    const judgments = countJudgments(watchDetectorFor(backend));
    bot = createDiscordBot({
      token,
      detect: backend.detector,
      logger,
      settings: { apiUrl: fake.apiUrl, state: { dataDir: options.dataDir }, fileOrigins: [fake.cdnOrigin] },
      watch: { detector: judgments.detector, settings: readWatchSettings({}), enabled: 'auto' },
    });
    await bot.start();
    const started = bot;
    fake.dispatch(
      'GUILD_CREATE',
      guildWithChannels(
        place,
        [...channels].map(([id, name]) => ({ id, name })),
        [{ id: modRole, name: 'Moderators', permissions: String(1n << 13n) }],
        applicationId,
      ),
    );
    await until(() => started.client.guilds.cache.has(place.guildId), 'the bot to take in the server (GUILD_CREATE)', WAIT_MS);
    // Marta's messages of the past days, for the member check.
    const martasMessages = memberMessages();
    martasMessages.forEach((m, i) => {
      post(marta, m.text, m.source, (martasMessages.length - i) * 5 * 3_600_000);
    });

    const running = { backend, bot };
    return {
      platform: 'Discord',
      product: 'the Discord bot',
      names,

      async tour(): Promise<TourResult> {
        transcript.step = 'check';
        for (const sample of [humanCheckText(), aiCheckText()]) {
          await interact(chatInputDetect(place, moderator, { text: sample.text, mode: 'general' }), {
            action: `/detect text: ${quoteText(sample.text)}`,
            source: sample.source,
          });
        }

        transcript.step = 'member';
        await interact(detectUser(place, moderator, marta, { mode: 'general' }), {
          action: `/detect user: @marta (her last ${martasMessages.length} messages in #general, judged together)`,
          source: martasMessages[0]?.source,
        });

        transcript.step = 'document';
        const essay = essayParagraphs();
        const pdf = buildPdf({ paragraphs: essay.paragraphs, header: 'Essay: On civil rights', footer: 'Page {n} of {total}' });
        const file = fake.attachment(place.channelId, 'essay.pdf', pdf, { contentType: 'application/pdf' });
        await interact(chatInputDetect(place, moderator, { mode: 'general', file }), {
          action: `/detect file: essay.pdf (a PDF of ${essay.paragraphs.length} paragraphs, ${pdf.length.toLocaleString('en')} bytes)`,
          source: essay.source,
        });

        transcript.step = 'card';
        await interact(
          settingsCommand(place, moderator, 'watch', channelOption(place.channelId).options, channelOption(place.channelId).resolved),
          {
            action: '/detect-settings watch channel: #general',
          },
        );
        await interact(settingsCommand(place, moderator, 'modlog', channelOption(modlog).options, channelOption(modlog).resolved), {
          action: '/detect-settings modlog channel: #mod-log',
        });
        const cards = channelOption(place.channelId);
        await interact(
          settingsCommand(place, moderator, 'cards', [...cards.options, { name: 'state', type: 3, value: 'on' }], cards.resolved),
          { action: '/detect-settings cards channel: #general state: on' },
        );
        // Quill posts AI-register texts one by one, each judged with the ones before it, until a card comes.
        const isCard = (r: RecordedRequest) => r.method === 'POST' && r.path === `/channels/${modlog}/messages` && r.body?.components;
        for (const text of AI_TEXTS) {
          const before = judgments.judged();
          post(quill, text, aiCheckText().source);
          await until(() => judgments.judged() > before || fake.requests.some(isCard), 'the bot to judge a watched message', WAIT_MS);
          if (fake.requests.some(isCard)) break;
        }
        await fake.waitForRequest(isCard, WAIT_MS);
        const cardAtMs = Math.round(performance.now());
        transcript.step = 'yours';
        return { cardAtMs };
      },

      async checkText(text: string): Promise<void> {
        const trimmed = text.trim();
        if (!trimmed) throw new DemoInputError('Type or paste a text to check.');
        if (text.length > DISCORD_MAX_STRING_OPTION) {
          throw new DemoInputError(
            `Discord’s /detect takes at most ${DISCORD_MAX_STRING_OPTION.toLocaleString('en')} characters; this text has ${text.length.toLocaleString('en')}.`,
          );
        }
        transcript.step = 'yours';
        await interact(chatInputDetect(place, moderator, { text, mode: 'general', segments: true }), {
          action: `/detect text: ${quoteText(text)} segments: true`,
          source: 'your text',
        });
      },

      async press(entryId: number, buttonId: string): Promise<void> {
        const entry = transcript.get(entryId);
        const button = entry?.messages.flatMap((m) => m.buttons).find((b) => b.id === buttonId);
        const data = sent.get(entryId);
        if (!entry || !button || !data) throw new DemoInputError('That button is no longer there; the page will catch up in a moment.');
        transcript.step = 'yours';
        const embeds = data.embeds ?? [];
        const components = data.components ?? [];
        const messageId = [...byMessageId].find(([, id]) => id === entryId)?.[0];
        const channelId = [...channels].find(([, name]) => name === entry.channel)?.[0] ?? place.channelId;
        const payload = messageId
          ? cardButtonPress(place, moderator, buttonId, { id: messageId, channelId, embeds, components })
          : buttonPress(place, moderator, buttonId, { embeds, components });
        await interact(payload, { channel: entry.channel, action: `pressed “${button.label}”`, pressed: entryId });
      },

      async close(): Promise<void> {
        closing = true;
        await running.bot.stop();
        await running.backend.close();
        await fake.close();
      },
    };
  } catch (err) {
    await bot?.stop().catch(() => undefined);
    await backend?.close().catch(() => undefined);
    await fake.close();
    throw err;
  }
}
