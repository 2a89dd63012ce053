/** The key file while the service runs: turned corrupt, corrupt from the start, deleted, and keys created meanwhile. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/service/keys.ts';
import { startService } from '../../src/service/index.ts';
import { ENGLISH_TEXT, call, detect, expectEnvelope, startTestService } from './helpers.ts';

describe('corrupt API key file', () => {
  it('keeps serving with the last good keys, logs the parse error once, reports keys: stale, and picks up the fixed file', async () => {
    const service = await startTestService();
    try {
      const goodKey = await service.newKey();
      const revoked = await createApiKey(service.keysFile, { name: 'to revoke' });
      await revokeApiKey(service.keysFile, revoked.id);
      expect((await detect(service, goodKey, { text: ENGLISH_TEXT })).status).toBe(200);
      expect((await call(service, '/readyz')).body.keys).toBe('ok');

      await writeFile(service.keysFile, '{"keys": [ this is not json');
      for (let i = 0; i < 3; i++) expect((await detect(service, goodKey, { text: ENGLISH_TEXT })).status).toBe(200);
      // The last good version includes its revocations: a corrupt file must not bring a revoked key back.
      expectEnvelope(await detect(service, revoked.key, { text: ENGLISH_TEXT }), 401, 'invalid_api_key');
      const ready = await call(service, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.keys).toBe('stale');
      const errors = service.logs.filter((l) => l.level === 50 && String(l.msg).includes('API key file unreadable'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ keys: 'stale', err: { code: 'corrupt_key_file' } });
      expect(String((errors[0]!.err as { message: string }).message)).toMatch(/not valid JSON/);
      expect(service.rawLogs()).not.toContain(goodKey);

      // Fixed by writing a good file again: its keys apply and readyz is back to ok.
      await writeFile(service.keysFile, JSON.stringify({ version: 1, keys: [] }));
      const newKey = await service.newKey();
      expect((await detect(service, newKey, { text: ENGLISH_TEXT })).status).toBe(200);
      expectEnvelope(await detect(service, goodKey, { text: ENGLISH_TEXT }), 401, 'invalid_api_key');
      expect((await call(service, '/readyz')).body.keys).toBe('ok');
    } finally {
      await service.stop();
    }
  });

  it('refuses to start when no good key file has ever been read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'textdetect-keys-'));
    try {
      const file = join(dir, 'api-keys.json');
      await writeFile(file, '{"keys": [ {"id": ');
      const started = startService({ port: 0, apiKeysFile: file, logLevel: 'silent' });
      await expect(started).rejects.toMatchObject({ code: 'corrupt_key_file', message: expect.stringMatching(/not valid JSON/) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const SHORT = 'A short text is enough to check the key, even if its score means little.';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a key created while the service runs', () => {
  it('is accepted by every one of 5 concurrent requests sent once the refresh interval has passed (5 trials)', async () => {
    // The default refresh interval: the first request after it starts a reload, the others must wait for it.
    const service = await startTestService({ apiKeysRefreshMs: 1000 });
    try {
      const warm = await service.newKey();
      await sleep(1100);
      expect((await detect(service, warm, { text: SHORT })).status).toBe(200);
      const trials: number[][] = [];
      for (let trial = 0; trial < 5; trial++) {
        const key = await service.newKey({ name: `trial ${trial}` });
        await sleep(1100);
        const answers = await Promise.all(Array.from({ length: 5 }, () => detect(service, key, { text: SHORT })));
        trials.push(answers.map((a) => a.status));
      }
      expect(trials).toEqual(Array.from({ length: 5 }, () => [200, 200, 200, 200, 200]));
    } finally {
      await service.stop();
    }
  });

  it('is accepted at once while other requests keep the key file freshly checked', async () => {
    const service = await startTestService({ apiKeysRefreshMs: 1000 });
    try {
      const busy = await service.newKey();
      await sleep(1100);
      let stop = false;
      // Traffic every 50 ms keeps the last check younger than the refresh interval.
      const traffic = (async () => {
        while (!stop) {
          await detect(service, busy, { text: SHORT });
          await sleep(50);
        }
      })();
      try {
        await sleep(300);
        for (let trial = 0; trial < 3; trial++) {
          const key = await service.newKey({ name: `busy trial ${trial}` });
          const answers = await Promise.all(Array.from({ length: 5 }, () => detect(service, key, { text: SHORT })));
          expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
        }
      } finally {
        stop = true;
        await traffic;
      }
    } finally {
      await service.stop();
    }
  });
});

describe('key file deleted while the service runs', () => {
  it('refuses every key, reports keys: missing in /readyz, logs it once, and recovers when a file is back', async () => {
    const service = await startTestService();
    try {
      const key = await service.newKey();
      expect((await detect(service, key, { text: SHORT })).status).toBe(200);
      expect((await call(service, '/readyz')).body.keys).toBe('ok');

      const logsBefore = service.logs.length;
      await rm(service.keysFile);
      expectEnvelope(await detect(service, key, { text: SHORT }), 401, 'invalid_api_key');
      for (let i = 0; i < 3; i++) {
        const ready = await call(service, '/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body.keys).toBe('missing');
        expectEnvelope(await detect(service, key, { text: SHORT }), 401, 'invalid_api_key');
      }
      const missing = service.logs.slice(logsBefore).filter((l) => String(l.msg).includes('API key file is missing'));
      expect(missing).toHaveLength(1);
      expect(missing[0]).toMatchObject({ level: 40, keys_file: service.keysFile });

      const again = await service.newKey();
      expect((await detect(service, again, { text: SHORT })).status).toBe(200);
      expect((await call(service, '/readyz')).body.keys).toBe('ok');
      expect(service.logs.slice(logsBefore).filter((l) => String(l.msg).includes('API key file found'))).toHaveLength(1);
    } finally {
      await service.stop();
    }
  });
});
