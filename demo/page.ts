/**
 * The demo's page on loopback: the transcript as a chat (what people did, what the bot posted,
 * grouped by the tour's steps), a box to run `/detect` on one's own text, and the bot's buttons
 * (review cards' Confirm / False positive / Dismiss, re-checks) pressed as the moderator. The page
 * loads nothing from elsewhere: its style and script are inline, links are drawn as text.
 *
 * Requests that act (`POST /check`, `POST /press`) must be JSON from the page's own origin, and every
 * request must name the page's own address as its Host, so another site open in the same browser can
 * neither drive the demo nor read it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Names } from './markup.ts';
import { entryHtml } from './render.ts';
import { DemoInputError, type DemoSession } from './session.ts';
import { STEP_TITLES, type Step, type Transcript } from './transcript.ts';

const MAX_BODY_BYTES = 64 * 1024;

export interface DemoPage {
  url: string;
  /** The session the page's actions go to, once it has started (until then they are refused with a sentence). */
  attach(session: DemoSession): void;
  close(): Promise<void>;
}

/** How the page names what it shows, before the session has started. */
export interface PageLabels {
  /** `Discord`, `Slack`. */
  platform: string;
  /** `the Discord bot`, `the Slack app`. */
  product: string;
}

const noNames: Names = () => undefined;

/** The transcript by step; the setting up (members' earlier messages) folded away. */
function timelineHtml(transcript: Transcript, names: Names): string {
  const steps = new Map<Step, string[]>();
  for (const entry of transcript.entries()) {
    if (entry.removed) continue;
    const html = steps.get(entry.step) ?? [];
    html.push(entryHtml(entry, names));
    steps.set(entry.step, html);
  }
  return [...steps]
    .map(([step, html]) =>
      step === 'setup'
        ? `<details><summary>${STEP_TITLES.setup}: ${html.length} earlier messages in #general</summary>${html.join('\n')}</details>`
        : `<h2>${step === 'yours' ? 'Your turn' : STEP_TITLES[step]}</h2>\n${html.join('\n')}`,
    )
    .join('\n');
}

function page(labels: PageLabels, transcript: Transcript, names: Names): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>textdetect demo: ${labels.product}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
header{background:#2b2d31;color:#fff;padding:.8em 1.2em}header small{color:#b5bac1;display:block}
main{display:flex;gap:1.5em;padding:1em 1.2em;align-items:flex-start}
#timeline{flex:3;min-width:0}aside{flex:1;position:sticky;top:1em;background:#fff;padding:1em;border-radius:8px}
h2{font-size:1em;margin:1.5em 0 .5em;color:#4e5058}summary{cursor:pointer;color:#4e5058;font-weight:600;margin:.5em 0}
.entry{background:#fff;border-radius:8px;padding:.6em .9em;margin:.4em 0}
.entry.action{background:#eef1ff}.meta{font-size:.8em;color:#5c5f66;margin-bottom:.2em}
.command{font-family:ui-monospace,monospace}.source{font-size:.8em;color:#6d7178}
.message{border-left:4px solid #c7ccd1;padding:.3em .7em;margin:.3em 0;background:#f9fafb}
.title{font-weight:600}.text{margin:.2em 0}dl{margin:.3em 0}dt{font-weight:600;font-size:.85em;margin-top:.3em}dd{margin:0}
.footer{font-size:.75em;color:#6d7178;margin-top:.3em}.quote{display:block;border-left:3px solid #c7ccd1;padding-left:.5em;color:#3c3f45}
.link{text-decoration:underline dotted}code{background:#eceef1;padding:0 .2em;border-radius:3px}
.buttons{margin-top:.4em;display:flex;gap:.4em;flex-wrap:wrap}
button{border:0;border-radius:4px;padding:.35em .8em;cursor:pointer;font:inherit;background:#4e5058;color:#fff}
button.primary{background:#5865f2}button.success{background:#248046}button.danger{background:#da373c}
textarea{width:100%;box-sizing:border-box;min-height:12em;font:inherit}#status{min-height:1.5em;color:#5c5f66}
</style></head>
<body>
<header><strong>textdetect demo: ${labels.product}</strong>
<small>${labels.product.replace(/^t/, 'T')} and the detection service, run as in production, against a stand-in of ${labels.platform} on this machine (127.0.0.1). Nothing leaves this machine; no token, account or database is needed.</small></header>
<main><section id="timeline">${timelineHtml(transcript, names)}</section>
<aside><form id="check"><strong>Check your own text</strong>
<p>Runs <code>/detect</code> as the moderator, with per-sentence scores.</p>
<textarea name="text" required placeholder="Paste a paragraph or two (40 words or more for a verdict)."></textarea>
<p><button type="submit" class="primary">/detect</button></p><p id="status"></p></form>
<p>Buttons under the bot's messages work: press <em>Confirm</em>, <em>False positive</em> or <em>Dismiss</em> on the review card as a moderator would, or re-check a result in another mode.</p></aside></main>
<script>
let version = -1;
const timeline = document.getElementById('timeline');
const status = document.getElementById('status');
async function refresh() {
  try {
    const res = await fetch('/entries?since=' + version);
    if (res.status === 200) {
      const body = await res.json();
      const open = timeline.querySelector('details')?.open;
      version = body.version;
      timeline.innerHTML = body.html;
      if (open) timeline.querySelector('details').open = true;
    }
  } catch {}
}
async function send(path, body) {
  status.textContent = 'Waiting for the bot…';
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({}));
  status.textContent = res.ok ? 'Answered.' : (answer.error || 'The demo could not do that.');
  await refresh();
}
document.getElementById('check').addEventListener('submit', (e) => { e.preventDefault(); send('/check', { text: e.target.text.value }); });
timeline.addEventListener('click', (e) => {
  const b = e.target.closest('button[data-entry]');
  if (b) { b.disabled = true; send('/press', { entry: Number(b.dataset.entry), button: b.dataset.button }); }
});
setInterval(refresh, 1000);
</script></body></html>`;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new DemoInputError('Send JSON.');
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new DemoInputError('That is more than the demo page takes at once (64 KB).');
    chunks.push(chunk as Buffer);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (body !== null && typeof body === 'object') return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new DemoInputError('Send a JSON object.');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

/**
 * Serves the page on 127.0.0.1:`port` (0: any free port), before the bot has started so that a port
 * already taken is said at once. A port in use is refused with a sentence naming `--port`.
 */
export async function startPage(labels: PageLabels, transcript: Transcript, port = 0): Promise<DemoPage> {
  let origin = '';
  let session: DemoSession | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Asked for by this address only: a page elsewhere whose name was pointed at 127.0.0.1 (DNS rebinding) gets nothing.
    const listening = new URL(origin);
    if (req.headers.host !== listening.host && req.headers.host !== `localhost:${listening.port}`) {
      json(res, 421, { error: `The demo answers at ${origin}/ only.` });
      return;
    }
    const url = new URL(req.url ?? '/', origin);
    if (req.method === 'GET' && url.pathname === '/') {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(page(labels, transcript, session?.names ?? noNames));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/entries') {
      if (Number(url.searchParams.get('since')) === transcript.version) {
        res.writeHead(204).end();
        return;
      }
      json(res, 200, { version: transcript.version, html: timelineHtml(transcript, session?.names ?? noNames) });
      return;
    }
    if (req.method === 'POST' && (url.pathname === '/check' || url.pathname === '/press')) {
      if (req.headers.origin !== undefined && req.headers.origin !== origin) {
        json(res, 403, { error: 'Only the demo page itself may do this.' });
        return;
      }
      try {
        if (!session || transcript.step !== 'yours') {
          throw new DemoInputError('The tour is still running: wait for the review card, then try again.');
        }
        const body = await readJson(req);
        if (url.pathname === '/check') {
          if (typeof body.text !== 'string') throw new DemoInputError('Type or paste a text to check.');
          await session.checkText(body.text);
        } else {
          if (typeof body.entry !== 'number' || typeof body.button !== 'string') throw new DemoInputError('Press a button of the bot’s.');
          await session.press(body.entry, body.button);
        }
        json(res, 200, { ok: true });
      } catch (err) {
        if (err instanceof DemoInputError) json(res, 400, { error: err.message });
        else json(res, 500, { error: `The demo could not do that: ${(err as Error).message}` });
      }
      return;
    }
    json(res, 404, { error: 'Nothing here; the demo is at /.' });
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: (err as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new DemoInputError(
              `Port ${port} is already in use on 127.0.0.1: run \`npm run demo -- --port <another>\`, or leave --port out for any free port.`,
            )
          : err,
      ),
    );
    server.listen(port, '127.0.0.1', resolve);
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    attach(started) {
      session = started;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
