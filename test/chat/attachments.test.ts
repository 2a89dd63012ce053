/**
 * Downloads of chat attachments (adapters/chat/attachments.ts) against a real HTTP server on
 * loopback standing in for a platform's file host: only allowed origins (redirects included, the
 * token never sent elsewhere), the size checked before (declared, announced) and while reading, the
 * time limit, and a sign-in page instead of the file.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatFile, downloadFile, FileProblem, selectDocuments } from '../../adapters/chat/attachments.ts';

type Handler = (res: ServerResponse, headers: IncomingHttpHeaders) => void;

let host: Server;
let other: Server;
let origin: string;
let otherOrigin: string;
const routes = new Map<string, Handler>();
const seen: { server: 'host' | 'other'; path: string; headers: IncomingHttpHeaders }[] = [];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  host = createServer((req, res) => {
    seen.push({ server: 'host', path: req.url ?? '', headers: req.headers });
    const handler = routes.get(req.url ?? '');
    if (handler) handler(res, req.headers);
    else res.writeHead(404).end();
  });
  other = createServer((req, res) => {
    seen.push({ server: 'other', path: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('elsewhere');
  });
  origin = await listen(host);
  otherOrigin = await listen(other);
});

afterAll(async () => {
  host.closeAllConnections();
  other.closeAllConnections();
  await Promise.all([new Promise((r) => host.close(r)), new Promise((r) => other.close(r))]);
});

const BYTES = Buffer.from('A plain text document with a few words in it.\n');

function file(path: string, over: Partial<ChatFile> = {}): ChatFile {
  return { name: 'notes.txt', url: `${origin}${path}`, size: BYTES.length, mimeType: 'text/plain', ...over };
}

const options = () => ({ allowedOrigins: [origin], maxBytes: 1_000, timeoutMs: 2_000 });

async function problemOf(promise: Promise<unknown>): Promise<FileProblem> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FileProblem);
    return err as FileProblem;
  }
  throw new Error('expected a FileProblem');
}

describe('downloadFile', () => {
  it('downloads from an allowed origin, with the headers given', async () => {
    routes.set('/ok', (res) => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BYTES.length) }).end(BYTES));
    const data = await downloadFile(file('/ok'), { ...options(), headers: { authorization: 'Bearer xoxb-secret' } });
    expect(Buffer.from(data).equals(BYTES)).toBe(true);
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer xoxb-secret');
  });

  it('refuses any other host before sending anything', async () => {
    const before = seen.length;
    const problem = await problemOf(downloadFile(file('/ok', { url: `${otherOrigin}/ok` }), options()));
    expect(problem.code).toBe('file_host_not_allowed');
    // Same host name, other port: another origin.
    const elsewhere = await problemOf(downloadFile({ ...file('/ok'), url: 'https://cdn.discordapp.com.evil.example/x.pdf' }, options()));
    expect(elsewhere.code).toBe('file_host_not_allowed');
    expect(seen.length).toBe(before);
  });

  it('follows a redirect within the allowed origins, never one off them (the token stays home)', async () => {
    routes.set('/moved', (res) => res.writeHead(302, { location: '/ok' }).end());
    expect(Buffer.from(await downloadFile(file('/moved'), options())).equals(BYTES)).toBe(true);

    routes.set('/away', (res) => res.writeHead(302, { location: `${otherOrigin}/file` }).end());
    const before = seen.filter((s) => s.server === 'other').length;
    const problem = await problemOf(downloadFile(file('/away'), { ...options(), headers: { authorization: 'Bearer xoxb-secret' } }));
    // Refused, and not as a failure worth trying again (issue 32, item 6).
    expect(problem.code).toBe('file_redirected_off_host');
    expect(problem.message).not.toMatch(/Try again|HTTP 30/);
    expect(seen.filter((s) => s.server === 'other').length).toBe(before);
  });

  it('refuses a file whose declared size is over the limit without downloading it', async () => {
    const before = seen.length;
    const problem = await problemOf(downloadFile(file('/ok', { size: 5_000_000 }), options()));
    expect(problem.code).toBe('file_too_large');
    expect(problem.message).toContain('4.8 MB');
    expect(problem.message).toContain('1000 bytes');
    expect(seen.length).toBe(before);
  });

  it('refuses a file announced larger than the limit, and stops reading one that grows past it', async () => {
    routes.set('/announced', (res) => res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000, 97)));
    expect((await problemOf(downloadFile(file('/announced', { size: 10 }), options()))).code).toBe('file_too_large');

    // No content-length (chunked), a declared size that lies, and a body that never ends: reading stops at the limit.
    let written = 0;
    let closed = false;
    routes.set('/endless', (res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      const timer = setInterval(() => {
        if (res.destroyed || written > 10_000_000) {
          clearInterval(timer);
          closed = true;
          res.destroy();
          return;
        }
        written += 4096;
        res.write(Buffer.alloc(4096, 98));
      }, 1);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    const problem = await problemOf(downloadFile(file('/endless', { size: 10, name: 'a.pdf' }), { ...options(), maxBytes: 50_000 }));
    expect(problem.code).toBe('file_too_large');
    await expect.poll(() => closed).toBe(true);
    // Stopped soon after the limit, not after the server's 10 MB.
    expect(written).toBeLessThan(2_000_000);
  });

  it('gives up a download that takes longer than the time limit', async () => {
    routes.set('/slow', (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      // Never ends.
    });
    // The body never ends, so any answer at all is the time limit's.
    const problem = await problemOf(downloadFile(file('/slow'), { ...options(), timeoutMs: 300 }));
    expect(problem.code).toBe('file_download_timeout');
  });

  it('tells a sign-in page apart from the file when told what it means', async () => {
    routes.set('/login', (res) =>
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html>Sign in</html>'),
    );
    const missing = new FileProblem('files_read_missing', 'lacks files:read');
    expect(await problemOf(downloadFile(file('/login'), { ...options(), htmlMeans: missing }))).toBe(missing);
    // A real HTML document is the file itself.
    const page = await downloadFile(file('/login', { name: 'page.html' }), { ...options(), htmlMeans: missing });
    expect(Buffer.from(page).toString()).toContain('Sign in');
  });

  it('says so when the host has no such file', async () => {
    const problem = await problemOf(downloadFile(file('/gone'), options()));
    expect(problem.code).toBe('file_download_failed');
    expect(problem.message).toContain('HTTP 404');
  });
});

describe('selectDocuments', () => {
  it('checks up to three documents and names the rest and the pictures', () => {
    const f = (name: string, mimeType?: string): ChatFile => ({ name, url: undefined, size: 1, mimeType });
    const { documents, skipped } = selectDocuments(
      [f('a.pdf', 'application/pdf'), f('photo.png', 'image/png'), f('b.docx'), f('c.txt', 'text/plain'), f('d.md'), f('clip.mp4')],
      { maxFiles: 3 },
    );
    expect(documents.map((d) => d.name)).toEqual(['a.pdf', 'b.docx', 'c.txt']);
    expect(skipped.map((s) => [s.file.name, s.problem.code])).toEqual([
      ['photo.png', 'not_a_document'],
      ['d.md', 'too_many_files'],
      ['clip.mp4', 'not_a_document'],
    ]);
  });
});
