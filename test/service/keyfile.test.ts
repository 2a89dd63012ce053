/** A key file that turns corrupt while the service runs, and one that is corrupt from the start. */
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
