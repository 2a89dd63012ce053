/**
 * connectDetectionBackend against the real service: in-process when DETECT_API_URL is unset,
 * remote otherwise, and the real errors it produces turned into moderator sentences.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDetectionBackend } from '../../adapters/chat/backend.ts';
import { describeDetectError } from '../../adapters/chat/errors.ts';
import { AuthenticationError, ConnectionError, RateLimitError } from '../../src/client/errors.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { buildPdf } from '../helpers/documents.ts';
import { freePort } from '../helpers/redis.ts';

const TEXT =
  'The quarterly report shows steady growth in every region. Costs fell slightly while revenue rose, and the board expects the trend to continue next year as new products reach the market.';

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('in-process backend (DETECT_API_URL unset)', () => {
  it('starts the service on a loopback port with its own sandbox key and checks texts', async () => {
    const backend = await connectDetectionBackend({}, { logger: pino({ level: 'silent' }) });
    try {
      expect(backend.embedded).toBe(true);
      expect(backend.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const result = await backend.client.detect({ text: TEXT, mode: 'financial', segments: true });
      expect(result.mode).toBe('financial');
      expect(result.request_id).toMatch(/^req_/);
      expect(result.segments.length).toBeGreaterThan(1);
    } finally {
      await backend.close();
    }
    // Closed means closed: nothing listens there any more.
    await expect(fetch(`${backend.apiUrl}/v1/detect`, { method: 'POST' })).rejects.toThrow();
  });
});

describe('a document’s deadline (issue 32, item 23)', () => {
  it('waits for a document longer than for a text: a reader may take the service’s own FILE_TIMEOUT_MS', async () => {
    // A text deadline no answer can meet: a document sent under it came back "took too long" on every
    // busy machine (slack/files.test.ts), while the service was still reading it within its own 10 s.
    const backend = await connectDetectionBackend({ DETECT_TIMEOUT_MS: '1' }, { logger: pino({ level: 'silent' }) });
    try {
      const pdf = buildPdf({ paragraphs: [TEXT, TEXT, TEXT] });
      const answer = await backend.detector.detectFile(pdf, { filename: 'report.pdf', mode: 'financial' });
      expect(answer.file).toMatchObject({ name: 'report.pdf' });
      expect(answer.request_id).toMatch(/^req_/);
    } finally {
      await backend.close();
    }
  });
});

describe('remote backend (DETECT_API_URL set)', () => {
  let dir: string;
  let service: RunningService;
  let key: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'textdetect-chat-test-'));
    const file = join(dir, 'keys.json');
    key = (await createApiKey(file, { name: 'chat-test', environment: 'sandbox', rateLimitMax: 2 })).key;
    service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile: file, rateLimitMax: 100, logger: pino({ level: 'silent' }) });
  });

  afterAll(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a URL without a key, and a malformed URL, with a sentence naming the variable', async () => {
    await expect(connectDetectionBackend({ DETECT_API_URL: service.url })).rejects.toThrow(/DETECT_API_KEY is not/);
    await expect(connectDetectionBackend({ DETECT_API_URL: 'not a url', DETECT_API_KEY: key })).rejects.toThrow(
      /DETECT_API_URL="not a url" is not a valid URL/,
    );
    await expect(connectDetectionBackend({ DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_TIMEOUT_MS: 'soon' })).rejects.toThrow(
      /DETECT_TIMEOUT_MS/,
    );
  });

  it('turns a real 429 into "try again in N s" at once, without waiting a minute', async () => {
    const backend = await connectDetectionBackend({ DETECT_API_URL: service.url, DETECT_API_KEY: key, DETECT_MAX_RETRIES: '0' });
    try {
      await backend.client.detect({ text: TEXT });
      await backend.client.detect({ text: TEXT });
      const started = performance.now();
      const err = await caught(backend.client.detect({ text: TEXT }));
      // Half the minute the key's window would make it wait.
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(err).toBeInstanceOf(RateLimitError);
      const sentence = describeDetectError(err);
      const seconds = Number(/Try again in (\d+) s\./.exec(sentence)?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
    } finally {
      await backend.close();
    }
  });

  it('reports a wrong key as an auth problem for the bot admin', async () => {
    const backend = await connectDetectionBackend({ DETECT_API_URL: service.url, DETECT_API_KEY: `sk_test_${'x'.repeat(32)}` });
    try {
      const err = await caught(backend.client.detect({ text: TEXT }));
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(describeDetectError(err)).toMatch(/could not sign in .* DETECT_API_KEY/);
    } finally {
      await backend.close();
    }
  });

  it('reports a service that is down as unreachable', async () => {
    const port = await freePort();
    const backend = await connectDetectionBackend({
      DETECT_API_URL: `http://127.0.0.1:${port}`,
      DETECT_API_KEY: key,
      DETECT_MAX_RETRIES: '0',
    });
    try {
      const err = await caught(backend.client.detect({ text: TEXT }));
      expect(err).toBeInstanceOf(ConnectionError);
      expect(describeDetectError(err)).toMatch(/unreachable right now/);
    } finally {
      await backend.close();
    }
  });
});
