/**
 * Documents in the Slack app: the "Check for AI text" shortcut on a message with shared files, through
 * the real Bolt app, the fake Slack (its file host serves `url_private` / `url_private_download` on
 * loopback, with Slack's file objects, only to a bot token with `files:read`) and the real service's
 * `POST /v1/detect/file`, reading real PDF and DOCX files built in the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import { buildDocx, buildPdf } from '../helpers/documents.ts';
import type { RecordedCall } from './fake-slack.ts';
import { BOT_TOKEN, type Harness, interactionBody, messageShortcutPayload, postToApp, startHarness } from './harness.ts';

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

let h: Harness;
let noScope: Harness;
let seq = 0;

beforeAll(async () => {
  [h, noScope] = await Promise.all([
    startHarness({ env: { DETECT_MAX_FILE_BYTES: String(2 * 1024 * 1024) } }),
    // An app installed before files:read was added to the manifest.
    startHarness({
      slack: {
        scopes: [
          'commands',
          'chat:write',
          'users:read',
          'channels:read',
          'groups:read',
          'usergroups:read',
          'channels:history',
          'groups:history',
        ],
      },
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([h?.close(), noScope?.close()]);
});

/** Runs the shortcut on `message` and returns the ephemeral reply, told apart by a file name only this message has. */
async function shortcut(harness: Harness, message: Record<string, unknown>, marker: string): Promise<RecordedCall> {
  const ts = `1700001${String(++seq).padStart(3, '0')}.000100`;
  const { payload } = messageShortcutPayload(harness, { ts, ...message });
  const res = await postToApp(harness, interactionBody(payload));
  expect(res.status).toBe(200);
  return harness.slack.waitFor((c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks ?? []).includes(marker), 30_000);
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
