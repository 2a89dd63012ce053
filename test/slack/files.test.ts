/**
 * Documents in the Slack app: the "Check for AI text" shortcut on a message with shared files, through
 * the real Bolt app, the fake Slack (its file host serves `url_private` / `url_private_download` on
 * loopback, with Slack's file objects, only to a bot token with `files:read`) and the real service's
 * `POST /v1/detect/file`, reading real PDF and DOCX files built in the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { watchDetectorFor } from '../../adapters/chat/watch/detector.ts';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import { buildDocx, buildPdf } from '../helpers/documents.ts';
import { type RecordedCall, signSlackRequest } from '../../demo/slack/fake-slack.ts';
import {
  BOT_TOKEN,
  type Harness,
  interactionBody,
  messageShortcutPayload,
  postToApp,
  SIGNING_SECRET,
  slashCommandBody,
  startHarness,
} from './harness.ts';
import { WAIT_MS } from '../helpers/load.ts';

// Written for this test: a short essay of several paragraphs.
const ESSAY_PARAGRAPHS = [
  'The harbour was quiet that morning, and the fishing boats had already gone out before the fog lifted from the water.',
  'My uncle mended nets on the pier while he told the same three stories he told every summer, each a little longer than the last.',
  'We bought bread from the van that came on Tuesdays, and the driver always asked after my mother, whom he had known at school.',
  'In the afternoon we climbed the hill behind the chapel to watch the ferry come in, counting cars as they rolled off the ramp.',
  'When the weather turned we stayed inside and played draughts by the stove, listening to the shipping forecast on the old radio.',
  'I have not been back in years, but I still think of that pier whenever I smell tar and salt on a warm day.',
];
const ESSAY = ESSAY_PARAGRAPHS.join(' ');
const PDF = 'application/pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

// Written in the register of a generated answer (rated likely_ai by the engine, as in watch.test.ts).
const AI_PARAGRAPHS = [
  'It is important to note that effective communication plays a crucial role in fostering collaboration within any community. By leveraging clear guidelines and consistent moderation practices, communities can create an inclusive environment where every member feels valued and heard. Furthermore, regular feedback mechanisms enable continuous improvement, ensuring that the community remains vibrant, engaging, and aligned with its core values over time.',
  'Artificial intelligence has the potential to transform numerous industries by streamlining processes and enhancing decision-making capabilities. However, it is essential to consider the ethical implications associated with its widespread adoption. By prioritizing transparency, accountability, and fairness, organizations can harness the benefits of AI while mitigating potential risks. In conclusion, a balanced approach is key to ensuring responsible innovation that benefits society as a whole.',
];

let h: Harness;
let noScope: Harness;
let watching: Harness;
let seq = 0;
const watchDir = mkdtempSync(join(tmpdir(), 'slack-files-watch-'));

beforeAll(async () => {
  [h, noScope, watching] = await Promise.all([
    startHarness({ env: { DETECT_MAX_FILE_BYTES: String(2 * 1024 * 1024) } }),
    // An app installed before files:read was added to the manifest.
    startHarness({
      slack: {
        scopes: DEFAULT_SCOPES.filter((scope) => scope !== 'files:read'),
      },
    }),
    // With watching (SQLite store in this file's own folder).
    startHarness({
      env: { REDIS_URL: '' },
      slack: {
        admins: ['U0ADMIN'],
        users: { U0AUTHOR: 'Ada Lovelace', U0ADMIN: 'Admin' },
        methods: {
          'conversations.info': (args) => ({
            ok: true,
            channel: { id: args.channel, name: 'general', is_channel: true, is_private: false, is_member: true },
          }),
        },
      },
      watch: (backend) => ({
        detector: watchDetectorFor(backend),
        store: new SqliteStore(join(watchDir, 'watch')),
        settings: DEFAULT_WATCH_SETTINGS,
        idlePollMs: 50,
        configTtlMs: 0,
      }),
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([h?.close(), noScope?.close(), watching?.close()]);
  rmSync(watchDir, { recursive: true, force: true });
});

/** Runs the shortcut on `message` and returns the ephemeral reply, told apart by a file name only this message has. */
async function shortcut(harness: Harness, message: Record<string, unknown>, marker: string): Promise<RecordedCall> {
  const ts = `1700001${String(++seq).padStart(3, '0')}.000100`;
  const { payload } = messageShortcutPayload(harness, { ts, ...message });
  const res = await postToApp(harness, interactionBody(payload));
  expect(res.status).toBe(200);
  return harness.slack.waitFor((c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks ?? []).includes(marker), WAIT_MS);
}

function blocksOf(call: RecordedCall): any[] {
  return call.args.blocks as any[];
}

function block(call: RecordedCall, id: string): any {
  return blocksOf(call).find((b) => b.block_id === id);
}

describe('"Check for AI text" on a message with shared files', () => {
  it('checks the text and each document (downloaded with the bot token), and answers per file', async () => {
    const essay = h.slack.shareFile('essay.pdf', buildPdf({ paragraphs: ESSAY_PARAGRAPHS, linesPerPage: 12 }), {
      mimetype: PDF,
      filetype: 'pdf',
    });
    const report = h.slack.shareFile('report.docx', buildDocx({ paragraphs: ESSAY_PARAGRAPHS }), { mimetype: DOCX, filetype: 'docx' });
    const photo = h.slack.shareFile('photo.png', Buffer.from('not a png'), { mimetype: 'image/png', filetype: 'png' });
    const before = h.slack.fileDownloads.length;
    const reply = await shortcut(h, { text: ESSAY, files: [essay, report, photo], upload: false, subtype: 'file_share' }, 'report.docx');
    expect(validateBlockKit(blocksOf(reply))).toEqual([]);
    // The message's own result, then the files.
    expect(block(reply, 'verdict').text.text).toMatch(/estimated probability that the text is AI-written/);
    const first = block(reply, 'file0_verdict').text.text as string;
    expect(first).toMatch(
      /^📄 \*essay\.pdf\* {2}· {2}PDF, \d+ pages, [\d,]+ characters read\n\*(🔴|🟡|🟢|🟠) .+\* {2}`[█░]+` {2}\*\d{1,2}%\* estimated probability/,
    );
    expect(block(reply, 'file0_highlights').text.text).toMatch(/^\*Most AI-like sentences\*\n> “/);
    expect(block(reply, 'file0_meta').elements[0].text).toMatch(/Request id: `req_\w+`/);
    expect(block(reply, 'file1_verdict').text.text).toMatch(/^📄 \*report\.docx\* {2}· {2}Word document, [\d,]+ characters read/);
    expect(block(reply, 'file2_problem').text.text).toMatch(/^📄 \*photo\.png\*: not checked\. Images, video and sound are not checked/);
    expect(reply.args.text).toContain('essay.pdf: ');

    // Two downloads, from the download address, each with the bot token; the picture was not fetched.
    const downloads = h.slack.fileDownloads.slice(before);
    expect(downloads.map((d) => d.path).sort()).toEqual([
      `/files-pri/T0TEST-${essay.id}/download/essay.pdf`,
      `/files-pri/T0TEST-${report.id}/download/report.docx`,
    ]);
    for (const d of downloads) expect(d).toMatchObject({ authorization: `Bearer ${BOT_TOKEN}`, served: true });
    // One audit line per file besides the message's own, the author in plain text, never the text.
    const audit = await h.slack.waitFor(
      (c) => c.method === 'chat.postMessage' && c.args.channel === 'C0AUDIT' && String(c.args.text).includes('report.docx'),
    );
    expect(String(audit.args.text)).toMatch(
      /^:mag: Grace \(U0MOD\) checked the file “report\.docx” of <https:\/\/test\.slack\.com\/archives\/C0GENERAL\/p\d+\|a message> by Ada Lovelace \(U0AUTHOR\) in <#C0GENERAL>: .+ · request id `req_\w+`$/,
    );
  });

  it('answers a message that is only a PDF through the PDF', async () => {
    const only = h.slack.shareFile('only.pdf', buildPdf({ paragraphs: ESSAY_PARAGRAPHS }), { mimetype: PDF, filetype: 'pdf' });
    const reply = await shortcut(h, { text: '', files: [only], upload: false, subtype: 'file_share' }, 'only.pdf');
    expect(validateBlockKit(blocksOf(reply))).toEqual([]);
    expect(block(reply, 'files_head').text.text).toMatch(
      /^\*Documents of <https:\/\/test\.slack\.com\/archives\/C0GENERAL\/p\d+\|the message>\*$/,
    );
    expect(block(reply, 'file0_verdict').text.text).toMatch(/^📄 \*only\.pdf\* {2}· {2}PDF, 1 page, /);
  });

  it('names a scanned PDF, a file over the limit and a file outside Slack, each with its reason', async () => {
    const scan = h.slack.shareFile('scan.pdf', buildPdf({ imageOnly: true, pages: 2 }), { mimetype: PDF, filetype: 'pdf' });
    const big = h.slack.shareFile('big.docx', Buffer.alloc(10), { mimetype: DOCX, filetype: 'docx', size: 9 * 1024 * 1024 });
    // A Google Drive file shared in Slack: its addresses are Google's, and the bot token must not go there.
    const external = { ...h.slack.shareFile('plan.pdf', Buffer.alloc(10), { mimetype: PDF, filetype: 'pdf' }) };
    external.is_external = true;
    external.url_private = 'https://docs.google.com/document/d/abc/edit';
    external.url_private_download = 'https://docs.google.com/document/d/abc/export';
    const before = h.slack.fileDownloads.length;
    const reply = await shortcut(h, { text: '', files: [scan, big, external], upload: false, subtype: 'file_share' }, 'scan.pdf');
    expect(block(reply, 'file0_problem').text.text).toMatch(/does not do OCR/);
    expect(block(reply, 'file1_problem').text.text).toMatch(/It is too large to check \(9 MB; the limit is 2 MB\)/);
    expect(block(reply, 'file2_problem').text.text).toMatch(/not stored on the chat platform’s own file host/);
    // Only the scan was downloaded.
    expect(h.slack.fileDownloads.slice(before).map((d) => d.path)).toEqual([`/files-pri/T0TEST-${scan.id}/download/scan.pdf`]);
  });
});

describe('without the files:read scope', () => {
  it('tells the moderator per file what the admin must do, for Slack’s sign-in page and for files.info', async () => {
    const essay = noScope.slack.shareFile('essay.pdf', buildPdf({ paragraphs: ESSAY_PARAGRAPHS }), { mimetype: PDF, filetype: 'pdf' });
    const shared = noScope.slack.shareFile('shared.pdf', buildPdf({ paragraphs: ESSAY_PARAGRAPHS }), { mimetype: PDF, filetype: 'pdf' });
    // A file Slack lists without its addresses (shared from another organisation): only files.info has them.
    const hidden = {
      id: shared.id,
      mode: 'hosted',
      file_access: 'check_file_info',
      created: shared.created,
      timestamp: shared.timestamp,
      user: 'U0AUTHOR',
    };
    const reply = await shortcut(noScope, { text: ESSAY, files: [essay, hidden], upload: false, subtype: 'file_share' }, 'essay.pdf');
    const sentence = 'lacks the Slack scope `files:read`. Ask a workspace admin to update the app from its manifest and reinstall it';
    expect(block(reply, 'file0_problem').text.text).toContain(sentence);
    expect(block(reply, 'file1_problem').text.text).toContain(sentence);
    expect(noScope.slack.callsOf('files.info').map((c) => c.args.file)).toEqual([shared.id]);
    // The text of the message is still checked.
    expect(block(reply, 'verdict').text.text).toMatch(/estimated probability/);
    // Slack answered the download with its sign-in page; nothing was sent to the file route.
    expect(noScope.slack.fileDownloads.at(-1)).toMatchObject({ served: false, authorization: `Bearer ${BOT_TOKEN}` });
  });
});

/** `/detect-settings <text>` as an admin; the answer's text. */
async function settings(harness: Harness, text: string): Promise<string> {
  const { body, responseUrl } = slashCommandBody(harness, text, { command: '/detect-settings', user_id: 'U0ADMIN' });
  const id = responseUrl.split('/').at(-1);
  await postToApp(harness, body);
  const call = await harness.slack.waitFor((c) => c.method === 'response_url' && c.responseId === id);
  return String(call.args.text);
}

/** A `file_share` message event of a watched channel, as Slack's Events API sends it. */
async function shareInChannel(harness: Harness, files: unknown[]): Promise<void> {
  const ts = `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}`;
  const body = JSON.stringify({
    token: 'verification-token-unused',
    team_id: 'T0TEST',
    api_app_id: 'A0TEST',
    event: {
      type: 'message',
      subtype: 'file_share',
      channel: 'C0GENERAL',
      channel_type: 'channel',
      user: 'U0AUTHOR',
      text: '',
      ts,
      event_ts: ts,
      upload: false,
      files,
    },
    type: 'event_callback',
    event_id: `Ev${randomBytes(8).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: 'T0TEST', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
  });
  const res = await fetch(harness.eventsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signSlackRequest(SIGNING_SECRET, body) },
    body,
  });
  expect(res.status).toBe(200);
}

describe('watching and documents', () => {
  it('leaves documents alone until watch-files is on; then a likely AI-written one gets an audit line', async () => {
    expect(await settings(watching, 'watch <#C0GENERAL|general>')).toContain('C0GENERAL');
    expect(await settings(watching, '')).toContain('Documents shared in watched channels: left alone (default)');
    const pdf = () => buildPdf({ paragraphs: AI_PARAGRAPHS });
    const first = watching.slack.shareFile('off.pdf', pdf(), { mimetype: PDF, filetype: 'pdf' });
    await shareInChannel(watching, [first]);
    await new Promise((r) => setTimeout(r, 1_000));
    // Off by default: not even downloaded.
    expect(watching.slack.fileDownloads).toHaveLength(0);

    expect(await settings(watching, 'watch-files maybe')).toMatch(/is not on or off/);
    expect(await settings(watching, 'watch-files on')).toMatch(/^Watching now also checks the documents/);
    expect(await settings(watching, '')).toContain('Documents shared in watched channels: checked too');
    const second = watching.slack.shareFile('essay.pdf', pdf(), { mimetype: PDF, filetype: 'pdf' });
    await shareInChannel(watching, [second]);
    const line = await watching.slack.waitFor((c) => c.method === 'chat.postMessage' && String(c.args.text).includes('essay.pdf'), WAIT_MS);
    expect(line.args.channel).toBe('C0AUDIT');
    expect(String(line.args.text)).toMatch(
      /^📄 Watched channel: the file “essay\.pdf” shared by Ada Lovelace \(U0AUTHOR\) in <https:\/\/test\.slack\.com\/archives\/C0GENERAL\/p\d+\|a message> in <#C0GENERAL>: (🔴 \*Reads as AI-written\*|🟣 \*Reads as the author's own text, polished by an AI\*) \(\d+%, General mode\) · request `req_\w+`\. Nothing was done in the channel/,
    );
    expect(watching.slack.fileDownloads.map((d) => d.path)).toEqual([`/files-pri/T0TEST-${second.id}/download/essay.pdf`]);
    // Nothing in the watched channel itself.
    expect(
      watching.slack.calls.filter(
        (c) => c.method.startsWith('chat.') && c.args.channel === 'C0GENERAL' && c.method !== 'chat.getPermalink',
      ),
    ).toEqual([]);

    expect(await settings(watching, 'watch-files off')).toMatch(/^Watching leaves documents alone again/);
  });
});
