/**
 * The client's User-Agent names the package version actually installed (read from package.json),
 * so a service operator can tell client releases apart in logs. A plain loopback HTTP server records
 * the header the real client sends.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DetectClient } from '../../src/client/index.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
let seen: IncomingHttpHeaders | undefined;
const server = createServer((req, res) => {
  seen = req.headers;
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ai_probability: 0.5,
        mode: 'general',
        language: 'en',
        segments: [],
        request_id: 'req_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        model: 'td1-000000000000',
        verdict: 'mixed',
        confidence: 'low',
        warnings: [],
      }),
    );
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

it('sends textdetect-client/<package version> and the caller’s suffix', async () => {
  const { port } = server.address() as AddressInfo;
  const client = new DetectClient({ apiKey: 'sk_test_x', baseUrl: `http://127.0.0.1:${port}`, limiter: false, userAgent: 'my-app/2.0' });
  try {
    await client.detect({ text: 'hello there' });
  } finally {
    await client.close();
  }
  expect(seen?.['user-agent']).toBe(`textdetect-client/${pkg.version} node/${process.versions.node} my-app/2.0`);
});
