/**
 * Issue 39, "Done when": a 100-page PDF and its DOCX, made by LibreOffice from one source
 * (test/helpers/hundred-pages.ts), checked end to end through the SDK, the CLI, the Slack app and the
 * Discord bot, all against one real service on loopback (the Slack harness's), the bots against the
 * platforms' stand-ins with their default file limits. Every surface shows the answer's headline and
 * its map of windows: the CLI one line per window with its pages (words for the DOCX, which has no
 * pages), Slack and Discord one emoji per window and the summary that names where the generated
 * parts are, within Block Kit's and the embeds' limits. The page checks the same files in
 * test/web/hundred-pages.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { createDiscordBot, type DiscordBot } from '../../adapters/discord/bot.ts';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import { escapeMrkdwn } from '../../adapters/slack/blocks.ts';
import { FakeDiscord, snowflake } from '../../demo/discord/fake-discord.ts';
import { messageCommand, type Place, user } from '../../demo/discord/payloads.ts';
import { DetectClient } from '../../src/client/index.ts';
import { describeAnswer, ORIGIN_WORDS, WINDOWS_TITLE } from '../../src/words.ts';
import { runCli } from '../cli/run-cli.ts';
import { messageEmbedProblems } from '../discord/embed-limits.ts';
import {
  type HundredPageReport,
  hundredPageReport,
  MAX_PAGES,
  type WholeDocument,
  wholeDocument,
  windowPlaces,
} from '../helpers/hundred-pages.ts';
import { NO_SOFFICE, SOFFICE } from '../helpers/libreoffice.ts';
import { type Harness, interactionBody, messageShortcutPayload, postToApp, startHarness } from '../slack/harness.ts';

if (!SOFFICE) console.warn(`test/documents/hundred-pages.test.ts: ${NO_SOFFICE}`);

const FORMATS = ['pdf', 'docx'] as const;
type Format = (typeof FORMATS)[number];
const PDF = 'application/pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
/** Reading and scoring 100 pages takes seconds, more on a busy machine: no deadline here is what is tested. */
const PATIENT_MS = 300_000;

describe.runIf(SOFFICE)('a 100-page report and its DOCX on the SDK, the CLI, Slack and Discord', () => {
  let report: HundredPageReport;
  let slack: Harness;
  let fake: FakeDiscord;
  let backend: DetectionBackend;
  let bot: DiscordBot;
  let dir: string;
  /** The service's answers for each file, through the SDK: what every surface must show. */
  const answers = {} as Record<Format, WholeDocument>;

  const APP_ID = snowflake();
  const TOKEN = `${Buffer.from(APP_ID).toString('base64')}.fake.bot-token-for-tests`;
  const place: Place = { applicationId: APP_ID, guildId: snowflake(), channelId: snowflake() };

  beforeAll(async () => {
    report = await hundredPageReport();
    dir = await mkdtemp(join(tmpdir(), 'textdetect-hundred-pages-'));
    // The bots' file limits are their defaults (DETECT_MAX_FILE_BYTES 10 MB); only the deadlines are the test's.
    slack = await startHarness({
      rateLimitMax: 100_000,
      service: { fileTimeoutMs: PATIENT_MS },
      backendEnv: { DETECT_FILE_TIMEOUT_MS: String(PATIENT_MS) },
    });
    const client = new DetectClient({ baseUrl: slack.service.url, apiKey: slack.key, timeoutMs: PATIENT_MS, maxRetries: 0 });
    try {
      for (const format of FORMATS) {
        answers[format] = wholeDocument(await client.detectFile(report[format].bytes, { filename: `report.${format}`, segments: true }));
      }
    } finally {
      await client.close();
    }
    fake = await FakeDiscord.start({ applicationId: APP_ID, token: TOKEN });
    backend = await connectDetectionBackend(
      { DETECT_API_URL: slack.service.url, DETECT_API_KEY: slack.key, DETECT_MAX_RETRIES: '0', DETECT_FILE_TIMEOUT_MS: String(PATIENT_MS) },
      { logger: pino({ level: 'silent' }) },
    );
    bot = createDiscordBot({
      token: TOKEN,
      detect: backend.detector,
      settings: { apiUrl: fake.apiUrl, state: { dataDir: join(dir, 'discord') }, fileOrigins: [fake.cdnOrigin] },
    });
    await bot.start();
  });

  afterAll(async () => {
    await bot?.stop();
    await backend?.close();
    await fake?.close();
    await slack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The map's emoji strip as every chat surface draws it, worked out from the windows' own readings. */
  const strip = (answer: WholeDocument) => answer.windows.map((w) => ORIGIN_WORDS[w.origin].emoji).join('');

  it('the SDK gets the whole document, window by window: a partly generated report, the PDF and the DOCX alike', () => {
    const { pdf, docx } = answers;
    expect(pdf.file).toMatchObject({ name: 'report.pdf', type: 'pdf' });
    expect(pdf.file.pages).toBeGreaterThanOrEqual(95);
    expect(pdf.file.pages).toBeLessThanOrEqual(MAX_PAGES);
    expect(pdf.file.characters).toBeGreaterThan(600_000);
    expect(docx.file).toMatchObject({ name: 'report.docx', type: 'docx', pages: null });
    for (const answer of [pdf, docx]) {
      expect(answer.origin).toBe('partly_ai');
      expect(answer.windows.length).toBeGreaterThan(100);
      const origins = new Set(answer.windows.map((w) => w.origin));
      expect(origins.has('human')).toBe(true);
      expect(origins.has('partly_ai') || origins.has('ai_written')).toBe(true);
    }
    expect(describeAnswer(docx).label).toBe(describeAnswer(pdf).label);
    expect(pdf.windows[0]?.pages?.first).toBe(1);
    expect(pdf.windows.at(-1)?.pages?.last).toBe(pdf.file.pages);
    // The same windows, cut at the same words: as many, reading the same way but for a few near a bar.
    expect(docx.windows).toHaveLength(pdf.windows.length);
    const differing = docx.windows.filter((w, i) => w.origin !== pdf.windows[i]?.origin);
    expect(differing.length).toBeLessThanOrEqual(Math.ceil(pdf.windows.length / 20));
  });

  it('the CLI prints the headline and one line per window, with its pages (words for the DOCX)', async () => {
    const env = { TEXTDETECT_API_URL: slack.service.url, TEXTDETECT_API_KEY: slack.key };
    for (const format of FORMATS) {
      const answer = answers[format];
      const words = describeAnswer(answer);
      const r = await runCli(['detect', '--file', report[format].path, '--segments', '--timeout', String(PATIENT_MS)], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n');
      expect(lines[0]).toBe(
        format === 'pdf'
          ? `file: report.pdf: PDF, ${answer.file.pages} pages, ${answer.file.characters.toLocaleString('en-US')} characters read`
          : `file: report.docx: Word document, ${answer.file.characters.toLocaleString('en-US')} characters read`,
      );
      expect(lines[1]).toMatch(new RegExp(`^AI probability: \\d+\\.\\d% — ${words.label} \\(\\w+ confidence\\)$`));
      const title = lines.indexOf(`${WINDOWS_TITLE}: ${words.windows?.summary}`);
      expect(title, `${format}: the map's title line`).toBeGreaterThan(1);
      // One line per window, in order: where it is, its figure, its reading; then a blank line.
      const map = lines.slice(title + 1, title + 1 + answer.windows.length + 1);
      expect(map.at(-1)).toBe('');
      const rows = map.slice(0, -1).map((line) => /^ {2}(\S.*?) +(\d+\.\d%) {2}(.+)$/.exec(line));
      expect(rows.map((m) => m?.[1])).toEqual(windowPlaces(answer.windows));
      expect(rows.map((m) => m?.[3])).toEqual(answer.windows.map((w) => ORIGIN_WORDS[w.origin].label));
      if (format === 'pdf') for (const m of rows) expect(m?.[1]).toMatch(/^pages? \d/);
      else for (const m of rows) expect(m?.[1]).toMatch(/^words [\d,]+–[\d,]+$/);
    }
  });

  it('Slack: "Check for AI text" on a message sharing both files shows each one’s map within Block Kit’s limits', async () => {
    const files = [
      slack.slack.shareFile('report.pdf', report.pdf.bytes, { mimetype: PDF, filetype: 'pdf' }),
      slack.slack.shareFile('report.docx', report.docx.bytes, { mimetype: DOCX, filetype: 'docx' }),
    ];
    const { payload } = messageShortcutPayload(slack, { ts: '1700009000.000100', text: '', files, upload: false, subtype: 'file_share' });
    expect((await postToApp(slack, interactionBody(payload))).status).toBe(200);
    const reply = await slack.slack.waitFor(
      (c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks ?? []).includes('report.docx'),
      PATIENT_MS,
    );
    const blocks = reply.args.blocks as Array<{ block_id?: string; text?: { text: string } }>;
    expect(validateBlockKit(blocks)).toEqual([]);
    const text = (id: string) => blocks.find((b) => b.block_id === id)?.text?.text ?? '';
    FORMATS.forEach((format, i) => {
      const answer = answers[format];
      const words = describeAnswer(answer);
      expect(text(`file${i}_verdict`)).toContain(`*${words.emoji} ${words.label}*`);
      if (format === 'pdf') expect(text(`file${i}_verdict`)).toContain(`PDF, ${answer.file.pages} pages`);
      expect(text(`file${i}_windows`)).toBe(`*${WINDOWS_TITLE}*\n${strip(answer)}\n${escapeMrkdwn(words.windows?.summary ?? '')}`);
    });
  });

  it('Discord: "Check for AI text" on a message with both attachments shows each one’s map within the embed limits', async () => {
    const attachments = [
      fake.attachment(place.channelId, 'report.pdf', report.pdf.bytes, { contentType: PDF }),
      fake.attachment(place.channelId, 'report.docx', report.docx.bytes, { contentType: DOCX }),
    ];
    const payload = messageCommand(place, user(snowflake(), 'moderator'), { content: '', attachments });
    fake.sendInteraction(payload);
    const edit = await fake.waitForRequest(
      (r) => r.method === 'PATCH' && r.path === `/webhooks/${APP_ID}/${payload.token}/messages/@original`,
      PATIENT_MS,
    );
    const embeds = edit.body.embeds as Array<{ title: string; description: string; fields: Array<{ name: string; value: string }> }>;
    expect(embeds).toHaveLength(2);
    expect(messageEmbedProblems(embeds)).toEqual([]);
    FORMATS.forEach((format, i) => {
      const answer = answers[format];
      const words = describeAnswer(answer);
      expect(embeds[i]?.title).toBe(`📄 report.${format}: ${words.emoji} ${words.label}`);
      if (format === 'pdf') expect(embeds[i]?.description).toMatch(new RegExp(`^PDF, ${answer.file.pages} pages, `));
      expect(embeds[i]?.fields.find((f) => f.name === WINDOWS_TITLE)?.value).toBe(`${strip(answer)}\n${words.windows?.summary}`);
    });
  });
});
