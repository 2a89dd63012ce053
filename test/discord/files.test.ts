/**
 * Documents in the Discord bot: "Check for AI text" on a message with attachments and `/detect
 * file:`, driven through the real discord.js Client against the fake Discord, whose CDN serves the
 * attachments on loopback (Discord's Attachment objects: id, filename, size, url, proxy_url,
 * content_type). Behind the bot: the shared queue (connectDetectionBackend) and the real service's
 * `POST /v1/detect/file`, reading real PDF and DOCX files built in the test.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { buildDocx, buildPdf, buildZip } from '../helpers/documents.ts';
import { FakeDiscord, snowflake, type RecordedRequest } from '../../demo/discord/fake-discord.ts';
import { chatInputDetect, messageCommand, user, type Place } from '../../demo/discord/payloads.ts';

const APP_ID = snowflake();
const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
const MODLOG_CHANNEL = snowflake();
// Written for this test: a short essay of several paragraphs.
const ESSAY_PARAGRAPHS = [
  'The village library opened on Saturdays only, and for most of my childhood that was the best day of the week.',
  'My grandmother walked me there after breakfast, stopping at the bakery for a roll we were not supposed to eat before lunch.',
  'The librarian kept a box of returned books on the counter and let me sort them, which I believed was a real job.',
  'I remember the smell of the radiator in winter, the squeak of the trolley and the clock that was always ten minutes slow.',
  'When the roof leaked one spring the whole reading room was moved into the school hall, and we carried the atlases across the square in a line.',
  'Years later I went back and found the building turned into flats, with the old stone sign still above the door.',
  'I stood there longer than I meant to, thinking about how much of what I know I first met on those crowded shelves.',
];
const ESSAY = ESSAY_PARAGRAPHS.join(' ');

let fake: FakeDiscord;
let service: RunningService;
let backend: DetectionBackend;
let dir: string;
let bot: DiscordBot;

const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };
const moderator = user(snowflake(), 'moderator');
/** Bytes a 2 MB limit lets through: small enough for tests, large enough for the documents. */
const MAX_BYTES = 2 * 1024 * 1024;

beforeAll(async () => {
  fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), 'discord-files-test-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'discord-files-test' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile, rateLimitMax: 1000, logLevel: 'silent' });
  backend = await connectDetectionBackend(
    { DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0', DETECT_TIMEOUT_MS: '20000' },
    { logger: pino({ level: 'silent' }) },
  );
  bot = createDiscordBot({
    token: TOKEN,
    detect: backend.detector,
    settings: {
      apiUrl: fake.apiUrl,
      modLogChannelId: MODLOG_CHANNEL,
      state: { dataDir: join(dir, 'state') },
      files: { maxFiles: 3, maxBytes: MAX_BYTES, downloadTimeoutMs: 3_000 },
      // The fake's CDN instead of cdn.discordapp.com: passed by the test, never read from the environment.
      fileOrigins: [fake.cdnOrigin],
    },
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

async function interact(payload: { id: string; token: string }): Promise<RecordedRequest> {
  fake.sendInteraction(payload);
  const callback = await fake.waitForRequest(
    (r) => r.method === 'POST' && r.path === `/interactions/${payload.id}/${payload.token}/callback`,
  );
  expect(callback.body).toEqual({ type: 5, data: { flags: 64 } });
  return fake.waitForRequest(
    (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original` && r.at >= callback.at,
    30_000,
  );
}

function field(embed: any, name: string): string | undefined {
  return embed.fields?.find((f: { name: string }) => f.name === name)?.value;
}

/** The essay over two pages of a PDF with a text layer. */
const pdf = () => buildPdf({ paragraphs: ESSAY_PARAGRAPHS, linesPerPage: 12 });
const docx = () => buildDocx({ paragraphs: ESSAY_PARAGRAPHS });

describe('"Check for AI text" on a message with documents', () => {
  it('checks the text and each document, and answers per file; pictures are named, not downloaded', async () => {
    const essay = fake.attachment(place.channelId, 'essay.pdf', pdf(), { contentType: 'application/pdf' });
    const report = fake.attachment(place.channelId, 'report.docx', docx(), {
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    const photo = fake.attachment(place.channelId, 'photo.png', Buffer.from('not really a png'), { contentType: 'image/png' });
    const before = fake.downloads.length;
    const started = performance.now();
    const edit = await interact(messageCommand(place, moderator, { content: ESSAY, attachments: [essay, report, photo] }));
    // A figure, not a bound: the machine is shared.
    console.log(
      `[measure] discord, "Check for AI text" on a message with its text, a 2-page PDF, a DOCX and a picture: answered in ${Math.round(performance.now() - started)} ms`,
    );
    const embeds = edit.body.embeds as any[];
    expect(embeds).toHaveLength(4);
    // The message's own text first, as before.
    expect(embeds[0].title).toMatch(
      /^(🔴 Reads as AI-written|🟣 Reads as the author's own text, polished by an AI|🟡 Unclear|🟢 Likely human-written|🟠 Partly AI-written: about \d{1,2}% of the words look generated)$/,
    );
    expect(field(embeds[0], 'Message')).toContain(`/channels/${place.guildId}/${place.channelId}/`);

    const [, first, second, third] = embeds;
    expect(first.title).toMatch(
      /^📄 essay\.pdf: (🔴 Reads as AI-written|🟣 Reads as the author's own text, polished by an AI|🟡 Unclear|🟢 Likely human-written|🟠 Partly AI-written: about \d{1,2}% of the words look generated)$/,
    );
    expect(first.description).toMatch(/^PDF, \d+ pages, [\d,]+ characters read\n.+\*\*\d{1,2}%\*\* probability that an AI wrote it/);
    expect(field(first, 'Request ID')).toMatch(/^`req_\w+`$/);
    // Spans as for a text: the most AI-like sentences, quoted from the document.
    const quoted = (field(first, 'Most AI-like sentences') ?? '').split('\n');
    expect(quoted.length).toBeGreaterThan(0);
    for (const line of quoted) expect(ESSAY).toContain(/“(.+)”$/.exec(line)?.[1]?.replace(/…$/, '') ?? '∅');

    expect(second.title).toMatch(/^📄 report\.docx: /);
    expect(second.description).toMatch(/^Word document, [\d,]+ characters read\n/);

    expect(third.title).toBe('📄 photo.png: not checked');
    expect(third.description).toMatch(/^Images, video and sound are not checked/);

    // Only the two documents were fetched from the CDN, each whole.
    const fetched = fake.downloads.slice(before).map((d) => decodeURIComponent(d.path.split('/').pop() ?? ''));
    expect(fetched.sort()).toEqual(['essay.pdf', 'report.docx']);
    // The re-check buttons stay for the message's text.
    expect(edit.body.components[0].components.map((b: { label: string }) => b.label)).toContain('Re-check as Academic');
    // One mod-log line per document besides the message's own; the picture was no check.
    const lines = (
      await Promise.all(
        ['essay.pdf', 'report.docx'].map((n) =>
          fake.waitForRequest((r) => r.path === `/channels/${MODLOG_CHANNEL}/messages` && String(r.body?.content).includes(n)),
        ),
      )
    ).map((r) => r.body.content as string);
    expect(lines[0]).toMatch(
      /^<@\d+> checked the file “essay\.pdf” of https:\/\/discord\.com\/channels\/.+ in general mode: .+ · request `req_\w+`$/,
    );
    expect(lines[1]).toMatch(/checked the file “report\.docx” of /);
    expect(
      fake.requests.some((r) => r.path === `/channels/${MODLOG_CHANNEL}/messages` && String(r.body?.content).includes('photo.png')),
    ).toBe(false);
  });

  it('a message that is only a PDF is answered through the PDF (no more "checks text only")', async () => {
    const essay = fake.attachment(place.channelId, 'only.pdf', pdf(), { contentType: 'application/pdf' });
    const edit = await interact(messageCommand(place, moderator, { content: '', attachments: [essay] }));
    expect(edit.body.embeds).toHaveLength(1);
    expect(edit.body.embeds[0].title).toMatch(/^📄 only\.pdf: /);
    expect(edit.body.embeds[0].description).toMatch(/^PDF, \d+ pages/);
    // The author is a person: the member check stays offered.
    expect(edit.body.components[0].components[0].label).toBe('Check their recent messages');
  });

  it('tells each file’s problem in a sentence: no text layer, not a document, unreadable, too many, too large, another host', async () => {
    const scan = fake.attachment(place.channelId, 'scan.pdf', buildPdf({ imageOnly: true, pages: 2 }), { contentType: 'application/pdf' });
    // A zip renamed as a PDF: the type is told from the bytes.
    const zip = fake.attachment(place.channelId, 'renamed.pdf', buildZip([{ name: 'a.bin', data: Buffer.alloc(200, 1) }]), {
      contentType: 'application/pdf',
    });
    const broken = fake.attachment(place.channelId, 'broken.pdf', buildPdf({ paragraphs: ESSAY_PARAGRAPHS, encrypted: true }), {
      contentType: 'application/pdf',
    });
    const fourth = fake.attachment(place.channelId, 'fourth.txt', Buffer.from(ESSAY), { contentType: 'text/plain' });
    const edit = await interact(messageCommand(place, moderator, { content: '', attachments: [scan, zip, broken, fourth] }));
    const byName = new Map((edit.body.embeds as any[]).map((e) => [/^📄 (.+?): /.exec(e.title)?.[1], e]));
    expect(byName.get('scan.pdf').description).toMatch(/does not do OCR/);
    expect(byName.get('renamed.pdf').description).toMatch(/^The detector cannot read this kind of file/);
    expect(byName.get('broken.pdf').description).toMatch(/^The file could not be read: it is password-protected or damaged/);
    expect(byName.get('fourth.txt').description).toBe('Not checked: only the first 3 documents of a message are checked.');

    const big = fake.attachment(place.channelId, 'big.pdf', Buffer.alloc(10), { declaredSize: 5 * MAX_BYTES });
    const elsewhere = { ...fake.attachment(place.channelId, 'far.pdf', pdf()), url: 'https://files.example.com/far.pdf' };
    const before = fake.downloads.length;
    const second = await interact(messageCommand(place, moderator, { content: '', attachments: [big, elsewhere] }));
    expect(second.body.embeds[0].description).toMatch(/^It is too large to check \(10 MB; the limit is 2 MB\)/);
    expect(second.body.embeds[1].description).toMatch(/not stored on the chat platform’s own file host/);
    expect(fake.downloads.length).toBe(before);
  });

  it('words each problem by what it is: an empty text file, a download sent off the CDN, a voice message and a video (issue 32, item 6)', async () => {
    const empty = fake.attachment(place.channelId, 'empty.txt', Buffer.from('  \n\n  '), { contentType: 'text/plain; charset=utf-8' });
    const moved = fake.attachment(place.channelId, 'moved.pdf', pdf(), {
      contentType: 'application/pdf',
      redirectTo: 'https://login.example.com/start?next=file',
    });
    const edit = await interact(messageCommand(place, moderator, { content: '', attachments: [empty, moved] }));
    const byName = new Map((edit.body.embeds as any[]).map((e) => [/^📄 (.+?): /.exec(e.title)?.[1], e]));
    expect(byName.get('empty.txt').description).toMatch(/^It is empty: there is no text in it, so there is nothing to check\./);
    expect(byName.get('empty.txt').description).not.toContain('scanned');
    const refused = byName.get('moved.pdf').description as string;
    expect(refused).toBe(
      'The chat platform sent the download on to login.example.com, outside its own file host, and the bot does not follow it there, so the file was not checked.',
    );
    expect(refused).not.toMatch(/Try again|HTTP 302/);

    // Discord's voice message: an audio attachment with duration_secs and waveform (and the message flag 1 << 13).
    const voice = {
      ...fake.attachment(place.channelId, 'voice-message.ogg', Buffer.alloc(64, 1), { contentType: 'audio/ogg' }),
      duration_secs: 4.2,
      waveform: 'AAAAAAAAAA==',
    };
    const video = fake.attachment(place.channelId, 'clip.mp4', Buffer.alloc(64, 1), { contentType: 'video/mp4' });
    const media = await interact(messageCommand(place, moderator, { content: '', attachments: [voice as never, video] }));
    expect(media.body.embeds[0].description).toBe(
      'That message has only attachments (a voice message and a video) and no text. The bot checks text and documents (PDF, Word .docx, plain text or Markdown files), not pictures, sound or video.',
    );
  });

  it('stops reading a file that turns out larger than its declared size', async () => {
    const liar = fake.attachment(place.channelId, 'liar.txt', Buffer.alloc(MAX_BYTES * 3, 97), {
      contentType: 'text/plain',
      declaredSize: 1_000,
      chunkDelayMs: 1,
    });
    const before = fake.downloads.length;
    const edit = await interact(messageCommand(place, moderator, { content: '', attachments: [liar] }));
    expect(edit.body.embeds[0].description).toMatch(/^It is too large to check \(over 2 MB, the limit\)/);
    const download = fake.downloads[before];
    expect(download?.complete).toBe(false);
    expect(download?.bytesSent).toBeLessThan(MAX_BYTES * 2);
  });
});

describe('/detect file:', () => {
  it('checks an uploaded document (the attachment option, resolved in the interaction)', async () => {
    const upload = fake.attachment(place.channelId, 'upload.docx', docx());
    const edit = await interact(chatInputDetect(place, moderator, { mode: 'academic', file: upload }));
    expect(edit.body.embeds).toHaveLength(1);
    expect(edit.body.embeds[0].title).toMatch(/^📄 upload\.docx: /);
    expect(field(edit.body.embeds[0], 'Mode')).toBe('Academic');
    expect(field(edit.body.embeds[0], 'Most AI-like sentences')).toBeDefined();
  });

  it('checks the text beside the file too, and refuses a file with user:', async () => {
    const upload = fake.attachment(place.channelId, 'notes.txt', Buffer.from(ESSAY), { contentType: 'text/plain' });
    const both = await interact(chatInputDetect(place, moderator, { mode: 'general', text: ESSAY, file: upload }));
    expect(both.body.embeds).toHaveLength(2);
    expect(both.body.embeds[1].title).toMatch(/^📄 notes\.txt: /);
    expect(both.body.embeds[1].description).toMatch(/^Plain text, [\d,]+ characters read/);

    const payload = chatInputDetect(place, moderator, { mode: 'general', file: upload });
    payload.data.options.push({ name: 'user', type: 6, value: moderator.id });
    (payload.data as any).resolved.users = { [moderator.id]: moderator };
    const refused = await interact(payload);
    expect(refused.body.embeds[0].description).toMatch(/^Give either `text:` or `file:`/);
  });
});
