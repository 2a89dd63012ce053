/**
 * The Slack demo: the real Slack app (adapters/slack, Bolt on its HTTP receiver) and the detection
 * service started in this process as `npm run slack` starts them, against the Slack stand-in on
 * loopback (fake-slack.ts: the Web API, response URLs, the file host; fake-history.ts: channel
 * histories). A workspace with #general and #mod-log, a moderator who is a workspace admin (the
 * visitor), and two members; the tour POSTs signed slash commands, shortcuts, button presses and
 * events to the app (payloads.ts) and adds to the transcript what the stand-in recorded of the app's
 * Web API calls and response-URL posts.
 */
import { randomBytes } from 'node:crypto';
import { botUserAgent, connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { readWatchSettings } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import { loadSlackConfig } from '../../adapters/slack/config.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
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
import { FakeSlack, type RecordedCall } from './fake-slack.ts';
import { FakeSlackHistory } from './fake-history.ts';
import {
  buttonPayload,
  eventCallbackBody,
  interactionBody,
  messageShortcutPayload,
  postSigned,
  type SlackActor,
  slashCommandBody,
} from './payloads.ts';

const BOT_NAME = 'textdetect';
const MODERATOR_NAME = 'you (moderator)';
const TEAM_ID = 'T0DEMO';
const GENERAL = 'C0GENERAL';
const MODLOG = 'C0MODLOG';
const MODERATOR: SlackActor = { id: 'U0MOD', name: 'you' };
const MARTA = 'U0MARTA';
const QUILL = 'U0QUILL';

interface Block {
  type: string;
  block_id?: string;
  text?: { text?: string };
  fields?: { text?: string }[];
  elements?: {
    type?: string;
    text?: string | { text?: string };
    action_id?: string;
    value?: string;
    style?: string;
    elements?: unknown[];
  }[];
  accessory?: { type?: string; text?: { text?: string }; action_id?: string; value?: string; style?: string };
  title?: { text?: string };
}

interface SlackMessage {
  text?: string;
  blocks?: Block[];
  title?: { text?: string };
}

/**
 * Slack's mrkdwn as the demo's markup (demo/markup.ts: Discord's markdown): `*bold*` → `**bold**`,
 * `<url|text>` → `[text](url)`, `<#C…|name>` → `#name`, `<!date^…>` → a timestamp, entities decoded.
 */
/** The emoji codes the app writes (adapters/slack), as Slack's clients draw them; others stay as typed. */
const EMOJI: Record<string, string> = {
  warning: '⚠️',
  x: '❌',
  mag: '🔍',
  hourglass_flowing_sand: '⏳',
  speech_balloon: '💬',
  double_vertical_bar: '⏸️',
};

export function fromMrkdwn(text: string): string {
  return text
    .replace(/:([a-z_]+):/g, (code, name: string) => EMOJI[name] ?? code)
    .replace(/<!date\^(\d+)\^[^>]*>/g, '<t:$1:f>')
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, '#$2')
    .replace(/<!(here|channel|everyone)>/g, '@$1')
    .replace(/<(https?:[^|>]+)\|([^>]+)>/g, '[$2]($1)')
    .replace(/<(https?:[^>]+)>/g, '[$1]($1)')
    .replace(/(^|[\s(“"'>~])\*([^*\n]+)\*(?=$|[\s).,;:!?”"'~])/gm, '$1**$2**')
    .replace(/(^|[\s(“"'>])_([^_\n]+)_(?=$|[\s).,;:!?”"'])/gm, '$1$2')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function textOf(value: string | { text?: string } | undefined): string {
  return typeof value === 'string' ? value : (value?.text ?? '');
}

/** Plain words of a rich_text block (what members type), joined. */
function richText(elements: unknown[] | undefined): string {
  return (elements ?? [])
    .map((e) => {
      const el = e as { text?: string; url?: string; elements?: unknown[] };
      return el.text ?? el.url ?? richText(el.elements);
    })
    .join('');
}

/** A Slack message (its blocks, else its text) as the transcript's message, the buttons with ids `b<block>e<element>`. */
function messagesOf(message: SlackMessage): Message[] {
  const out: Message = { fields: [], buttons: [] };
  if (message.title?.text) out.title = message.title.text;
  const blocks = message.blocks ?? [];
  if (blocks.length === 0) return [{ ...out, text: fromMrkdwn(message.text ?? '') }];
  const lines: string[] = [];
  const button = (id: string, b: { text?: { text?: string } | string; style?: string }): Button => ({
    id,
    label: textOf(b.text),
    style: b.style === 'primary' ? 'primary' : b.style === 'danger' ? 'danger' : 'secondary',
  });
  blocks.forEach((block, i) => {
    if (block.type === 'header') {
      if (out.title) lines.push(`**${textOf(block.text)}**`);
      else out.title = textOf(block.text);
    } else if (block.type === 'section') {
      if (block.text?.text) lines.push(fromMrkdwn(block.text.text));
      for (const field of block.fields ?? []) {
        // A field is `*Name:*` and its value on the next line: one line here, in Slack's order.
        lines.push(fromMrkdwn((field.text ?? '').replace(/^(\*[^*\n]+\*)\n/, '$1 ')));
      }
      if (block.accessory?.type === 'button') out.buttons.push(button(`b${i}a`, block.accessory));
    } else if (block.type === 'context') {
      lines.push(
        (block.elements ?? [])
          .map((e) => fromMrkdwn(textOf(e.text)))
          .filter(Boolean)
          .join(' · '),
      );
    } else if (block.type === 'actions') {
      (block.elements ?? []).forEach((e, j) => {
        if (e.type === 'button') out.buttons.push(button(`b${i}e${j}`, e as { text?: { text?: string }; style?: string }));
      });
    } else if (block.type === 'rich_text') {
      lines.push(richText(block.elements));
    }
  });
  out.text = lines.filter((l) => l !== '').join('\n');
  return [out];
}

/** The button element a transcript button id (`b<block>e<element>`, `b<block>a`) stands for. */
function elementOf(
  message: SlackMessage,
  id: string,
): { action_id?: string; value?: string; text?: { text?: string } | string } | undefined {
  const m = /^b(\d+)(?:e(\d+)|a)$/.exec(id);
  const block = m ? message.blocks?.[Number(m[1])] : undefined;
  if (!m || !block) return undefined;
  return m[2] === undefined ? block.accessory : block.elements?.[Number(m[2])];
}

function isProgress(args: Record<string, unknown>): boolean {
  return !Array.isArray(args.blocks) && isQueuedNotice(args.text);
}

/** A response URL the app was handed: the channel it answers in, and the message it last posted there. */
interface Interaction {
  channel: string;
  current?: number | undefined;
}

export async function startSlackDemo(options: SessionOptions): Promise<DemoSession> {
  const { transcript, logger } = options;
  const botToken = `xoxb-demo-${randomBytes(12).toString('hex')}`;
  const signingSecret = randomBytes(24).toString('hex');
  const channels = new Map([
    [GENERAL, 'general'],
    [MODLOG, 'mod-log'],
  ]);
  const people = new Map([
    [MODERATOR.id, MODERATOR.name],
    [MARTA, 'marta'],
    [QUILL, 'quill'],
  ]);
  const names: Names = (kind, id) => (kind === 'channel' ? channels.get(id) : kind === 'user' ? people.get(id) : undefined);
  const history = new FakeSlackHistory({ teamId: TEAM_ID, scopes: [...DEFAULT_SCOPES] });
  for (const id of channels.keys()) history.channel({ id });
  const slack = new FakeSlack({
    botToken,
    teamId: TEAM_ID,
    users: Object.fromEntries(people),
    channels: Object.fromEntries(channels),
    admins: [MODERATOR.id],
    scopes: [...DEFAULT_SCOPES],
    methods: {
      ...history.methods,
      'conversations.info': (args) => {
        const name = channels.get(String(args.channel));
        return name
          ? { ok: true, channel: { id: args.channel, name, is_channel: true, is_private: false, is_member: true } }
          : { ok: false, error: 'channel_not_found' };
      },
    },
  });
  await slack.start();
  let backend: DetectionBackend | undefined;
  let app: RunningSlackApp | undefined;
  try {
    /** Set by close(): the tour takes no further step. */
    let closing = false;
    const notClosing = (): void => {
      if (closing) throw new Error('The demo is stopping.');
    };
    const interactions = new Map<string, Interaction>();
    const byTs = new Map<string, number>();
    const byView = new Map<string, number>();
    /** What the app last sent for each entry (its blocks carry the buttons' values). */
    const sent = new Map<number, SlackMessage & { ts?: string; channelId?: string }>();
    const add = (channel: string, onlyYou: boolean, message: SlackMessage & { ts?: string; channelId?: string }): number => {
      const entry = transcript.add({ channel, author: BOT_NAME, bot: true, onlyYou, messages: messagesOf(message) });
      sent.set(entry.id, message);
      return entry.id;
    };
    const show = (id: number, message: SlackMessage): void => {
      sent.set(id, { ...sent.get(id), ...message });
      transcript.update(id, messagesOf(message));
    };

    slack.onCall((call) => record(call));

    /** Turns what the app sent the stand-in into transcript entries. */
    function record(call: RecordedCall): void {
      const args = call.args;
      const response = call.response as { ok?: boolean; ts?: string; view?: { id?: string } } | string | undefined;
      if (call.method === 'response_url') {
        const it = interactions.get(call.responseId ?? '');
        if (!it) return;
        if (args.delete_original === true) {
          if (it.current !== undefined) transcript.remove(it.current);
          it.current = undefined;
        } else if (args.replace_original === true && it.current !== undefined) {
          show(it.current, args as SlackMessage);
        } else {
          it.current = add(it.channel, args.response_type !== 'in_channel', args as SlackMessage);
        }
        return;
      }
      if (typeof response !== 'object' || response.ok !== true) return;
      const channel = channels.get(String(args.channel)) ?? 'unknown-channel';
      if (call.method === 'chat.postEphemeral') add(channel, true, args as SlackMessage);
      else if (call.method === 'chat.postMessage') {
        const id = add(channel, false, { ...(args as SlackMessage), ts: response.ts, channelId: String(args.channel) });
        if (response.ts) byTs.set(response.ts, id);
      } else if (call.method === 'views.open') {
        const view = args.view as SlackMessage;
        const id = add('general', true, view);
        if (response.view?.id) byView.set(response.view.id, id);
      } else if (call.method === 'views.update') {
        const id = byView.get(String(args.view_id));
        if (id !== undefined) show(id, args.view as SlackMessage);
      }
    }

    const post = (body: string, contentType?: string) =>
      postSigned(app?.eventsUrl as string, body, { secret: signingSecret, ...(contentType ? { contentType } : {}) });

    /** Runs a slash command as the moderator in #general; resolves with the answer through its response URL. */
    async function command(command: string, text: string, action: string, source?: string): Promise<void> {
      notClosing();
      transcript.add({ channel: 'general', author: MODERATOR_NAME, bot: false, onlyYou: false, action, source, messages: [] });
      const cmd = slashCommandBody({ slack }, text, { command, user_id: MODERATOR.id, user_name: MODERATOR.name, team_domain: 'demo' });
      const id = cmd.responseUrl.split('/').at(-1) as string;
      interactions.set(id, { channel: 'general' });
      const ack = await post(cmd.body);
      if (ack.status !== 200) throw new Error(`The app refused ${command} (HTTP ${ack.status}): ${ack.body}`);
      await slack.waitFor((c) => c.method === 'response_url' && c.responseId === id && !isProgress(c.args), WAIT_MS);
    }

    /** A member's message in #general: in the channel's history and, as Slack delivers it, as an event to the app. */
    async function say(user: string, text: string, source: string, agoMs = 0, files?: unknown[]): Promise<Record<string, unknown>> {
      notClosing();
      const message = history.post(GENERAL, agoMs, user, text, files ? { files, upload: false, subtype: 'file_share' } : {});
      transcript.add({
        channel: 'general',
        author: people.get(user) ?? user,
        bot: false,
        onlyYou: false,
        source,
        messages: [{ text: files ? `${text}\n📎 essay.pdf` : text, fields: [], buttons: [] }],
      });
      if (agoMs === 0) {
        const event = { ...message, type: 'message', channel: GENERAL, channel_type: 'channel', team: TEAM_ID, event_ts: message.ts };
        const res = await post(eventCallbackBody(TEAM_ID, event), 'application/json');
        if (res.status !== 200) throw new Error(`The app refused a message event (HTTP ${res.status}).`);
      }
      return message;
    }

    backend = await connectDetectionBackend({}, { logger, userAgent: botUserAgent('slack') });
    const judgments = countJudgments(watchDetectorFor(backend));
    const config = {
      ...loadSlackConfig({
        SLACK_BOT_TOKEN: botToken,
        SLACK_SIGNING_SECRET: signingSecret,
        SLACK_HOST: '127.0.0.1',
        SLACK_PORT: '0',
        SLACK_API_URL: slack.apiUrl,
        DATA_DIR: options.dataDir,
      }),
      // The stand-in's file host instead of files.slack.com (never read from the environment).
      fileOrigins: [slack.filesOrigin],
    };
    app = await startSlackApp(config, {
      detector: backend.detector,
      logger,
      watch: { detector: judgments.detector, settings: readWatchSettings({}) },
    });
    const martasMessages = memberMessages();
    for (const [i, m] of martasMessages.entries()) await say(MARTA, m.text, m.source, (martasMessages.length - i) * 5 * 3_600_000);

    const running = { backend, app };
    return {
      platform: 'Slack',
      product: 'the Slack app',
      names,

      async tour(): Promise<TourResult> {
        transcript.step = 'check';
        for (const sample of [humanCheckText(), aiCheckText()]) {
          await command('/detect', sample.text, `/detect ${quoteText(sample.text)}`, sample.source);
        }

        transcript.step = 'member';
        await command(
          '/detect',
          `<@${MARTA}|marta>`,
          `/detect @marta (her last ${martasMessages.length} messages in #general, judged together)`,
          martasMessages[0]?.source,
        );

        transcript.step = 'document';
        const essay = essayParagraphs();
        const pdf = buildPdf({ paragraphs: essay.paragraphs, header: 'Essay: On civil rights', footer: 'Page {n} of {total}' });
        const file = slack.shareFile('essay.pdf', pdf, { mimetype: 'application/pdf', filetype: 'pdf', user: QUILL });
        const shared = await say(QUILL, 'Here is my essay for Friday, comments welcome.', essay.source, 0, [file]);
        transcript.add({
          channel: 'general',
          author: MODERATOR_NAME,
          bot: false,
          onlyYou: false,
          action: `“Check for AI text” on quill’s message with essay.pdf (a PDF of ${essay.paragraphs.length} paragraphs, ${pdf.length.toLocaleString('en')} bytes)`,
          messages: [],
        });
        const shortcut = messageShortcutPayload({ slack }, { ...shared, user: QUILL }, { who: MODERATOR });
        const shortcutId = shortcut.responseUrl.split('/').at(-1) as string;
        interactions.set(shortcutId, { channel: 'general' });
        await post(interactionBody(shortcut.payload));
        // Posted in the channel for the moderator, or (after a queue notice) in place of that notice.
        const answer = await slack.waitFor(
          (c) =>
            (c.method === 'chat.postEphemeral' || (c.method === 'response_url' && c.responseId === shortcutId)) &&
            JSON.stringify(c.args.blocks ?? []).includes('essay.pdf'),
          WAIT_MS,
        );
        if (answer.method === 'chat.postEphemeral') {
          // The "Checking this message and its document…" line goes once the answer is there.
          await slack.waitFor(
            (c) => c.method === 'response_url' && c.responseId === shortcutId && c.args.delete_original === true,
            WAIT_MS,
          );
        }

        transcript.step = 'card';
        await command('/detect-settings', `watch <#${GENERAL}|general>`, '/detect-settings watch #general');
        await command('/detect-settings', `audit <#${MODLOG}|mod-log>`, '/detect-settings audit #mod-log');
        await command('/detect-settings', `cards <#${GENERAL}|general> on`, '/detect-settings cards #general on');
        const isCard = (c: RecordedCall) =>
          c.method === 'chat.postMessage' && c.args.channel === MODLOG && JSON.stringify(c.args.blocks ?? []).includes('watch_review');
        // Quill posts AI-register texts one by one, each judged with the ones before it, until a card comes.
        for (const text of AI_TEXTS) {
          const before = judgments.judged();
          await say(QUILL, text, aiCheckText().source);
          await until(() => judgments.judged() > before || slack.calls.some(isCard), 'the app to judge a watched message', WAIT_MS);
          if (slack.calls.some(isCard)) break;
        }
        await slack.waitFor(isCard, WAIT_MS);
        const cardAtMs = Math.round(performance.now());
        transcript.step = 'yours';
        return { cardAtMs };
      },

      async checkText(text: string): Promise<void> {
        if (!text.trim()) throw new DemoInputError('Type or paste a text to check.');
        transcript.step = 'yours';
        await command('/detect', text, `/detect ${quoteText(text)}`, 'your text');
      },

      async press(entryId: number, buttonId: string): Promise<void> {
        const message = sent.get(entryId);
        const element = message ? elementOf(message, buttonId) : undefined;
        const entry = transcript.get(entryId);
        if (!entry || !message || !element?.action_id)
          throw new DemoInputError('That button is no longer there; the page will catch up in a moment.');
        transcript.step = 'yours';
        const label = textOf(element.text);
        transcript.add({
          channel: entry.channel,
          author: MODERATOR_NAME,
          bot: false,
          onlyYou: false,
          action: `pressed “${label}”`,
          messages: [],
        });
        const channelId = message.channelId ?? GENERAL;
        const press = buttonPayload(
          { slack },
          { action_id: element.action_id, value: element.value ?? '', text: label },
          { channel: channelId, channelName: entry.channel, who: MODERATOR, ...(message.ts ? { messageTs: message.ts } : {}) },
        );
        if (message.ts) {
          // A press on a message of the channel (a review card) carries the message, as Slack sends it.
          press.payload.container = { type: 'message', message_ts: message.ts, channel_id: channelId, is_ephemeral: false };
          press.payload.message = { type: 'message', ts: message.ts, text: message.text, blocks: message.blocks };
        }
        const id = press.responseUrl.split('/').at(-1) as string;
        interactions.set(id, { channel: entry.channel, current: entryId });
        const before = slack.calls.length;
        const ack = await post(interactionBody(press.payload));
        if (ack.status !== 200) throw new Error(`The app refused the press (HTTP ${ack.status}).`);
        // Answered through the press's response URL, or in a window (Show details).
        await slack.waitFor(
          (c) =>
            slack.calls.indexOf(c) >= before &&
            ((c.method === 'response_url' && c.responseId === id && !isProgress(c.args)) || c.method === 'views.open'),
          WAIT_MS,
        );
      },

      async close(): Promise<void> {
        closing = true;
        await running.app.stop();
        await running.backend.close();
        await slack.stop();
      },
    };
  } catch (err) {
    await app?.stop().catch(() => undefined);
    await backend?.close().catch(() => undefined);
    await slack.stop();
    throw err;
  }
}
