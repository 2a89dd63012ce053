import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_PATTERN, KeyFileError, KeyStore, createApiKey, hashApiKey, listApiKeys, revokeApiKey } from '../../src/service/keys.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'textdetect-keys-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('key file', () => {
  it('creates the file, stores only a SHA-256 digest and returns the key once', async () => {
    const file = join(dir, 'nested', 'keys.json');
    const { id, key } = await createApiKey(file, { name: 'alice' });
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(id).toMatch(/^key_[0-9A-Za-z]{16}$/);
    const raw = await readFile(file, 'utf8');
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(key.slice(8, 36));
    const data = JSON.parse(raw);
    expect(data.keys[0]).toMatchObject({
      id,
      name: 'alice',
      environment: 'sandbox',
      sha256: hashApiKey(key),
      revoked: false,
      expires_at: null,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const { key: live } = await createApiKey(file, { name: 'bob', environment: 'production', rateLimitMax: 7, expiresAt: '2099-01-01' });
    expect(live).toMatch(/^sk_live_/);
    const listed = await listApiKeys(file);
    expect(listed.map((k) => k.name)).toEqual(['alice', 'bob']);
    expect(listed[1]).toMatchObject({
      environment: 'production',
      rate_limit_max: 7,
      expires_at: '2099-01-01T00:00:00.000Z',
      status: 'active',
    });
    expect(JSON.stringify(listed)).not.toContain('sha256');
  });

  it('keeps every key when many are created at once (lock + atomic rename)', async () => {
    const file = join(dir, 'concurrent.json');
    const created = await Promise.all(Array.from({ length: 25 }, (_, i) => createApiKey(file, { name: `k${i}` })));
    const listed = await listApiKeys(file);
    expect(listed).toHaveLength(25);
    expect(new Set(listed.map((k) => k.id))).toEqual(new Set(created.map((c) => c.id)));
    expect(new Set(created.map((c) => c.key)).size).toBe(25);
  });

  it('revokes by id or by key, and reports unknown ones', async () => {
    const file = join(dir, 'revoke.json');
    const a = await createApiKey(file, { name: 'a' });
    const b = await createApiKey(file, { name: 'b' });
    expect((await revokeApiKey(file, a.id))?.status).toBe('revoked');
    expect((await revokeApiKey(file, b.key))?.id).toBe(b.id);
    expect(await revokeApiKey(file, 'key_doesnotexist00')).toBeUndefined();
    expect((await listApiKeys(file)).map((k) => k.status)).toEqual(['revoked', 'revoked']);
  });

  it('rejects bad arguments with a clear error', async () => {
    const file = join(dir, 'bad.json');
    await expect(createApiKey(file, { name: '  ' })).rejects.toThrow(KeyFileError);
    await expect(createApiKey(file, { name: 'x', expiresAt: 'next tuesday' })).rejects.toThrow(/ISO date/);
    await expect(createApiKey(file, { name: 'x', rateLimitMax: 0 })).rejects.toThrow(/positive integer/);
    await expect(createApiKey(file, { name: 'x', environment: 'staging' as never })).rejects.toThrow(/sandbox/);
  });

  it('KeyStore checks environment, revocation and expiry, and keeps the last good keys on a corrupt file', async () => {
    const file = join(dir, 'store.json');
    const good = await createApiKey(file, { name: 'good' });
    const expiring = await createApiKey(file, { name: 'exp', expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const live = await createApiKey(file, { name: 'live', environment: 'production' });
    const store = new KeyStore(file, 'sandbox', 0);
    await store.refresh();
    expect(store.check(good.key)).toMatchObject({ ok: true });
    expect(store.check(expiring.key, Date.now() + 120_000)).toMatchObject({ ok: false, reason: 'expired' });
    expect(store.check(live.key)).toMatchObject({ ok: false, reason: 'wrong_environment' });
    expect(store.check('sk_test_short')).toMatchObject({ ok: false, reason: 'malformed' });
    expect(store.check(`sk_test_${'x'.repeat(32)}`)).toMatchObject({ ok: false, reason: 'unknown' });
    await revokeApiKey(file, good.id);
    await store.refresh();
    expect(store.check(good.key)).toMatchObject({ ok: false, reason: 'revoked' });
    const errors: string[] = [];
    store.onError = (err, status) => errors.push(`${status}: ${err.message}`);
    await writeFile(file, 'garbage');
    await store.refresh();
    expect(store.status).toBe('stale');
    expect(errors).toEqual([expect.stringMatching(/^stale: .*not valid JSON/)]);
    // The last good version stays in force, revocation included.
    expect(store.check(expiring.key)).toMatchObject({ ok: true });
    expect(store.check(good.key)).toMatchObject({ ok: false, reason: 'revoked' });
    await store.refresh();
    expect(errors).toHaveLength(1);
  });

  it('KeyStore fails closed when it has never read a good file', async () => {
    const file = join(dir, 'never-good.json');
    await writeFile(file, '{"keys": [ nope');
    const store = new KeyStore(file, 'sandbox', 0);
    await expect(store.refresh()).rejects.toThrow(/not valid JSON/);
    expect(store.check(`sk_test_${'x'.repeat(32)}`)).toMatchObject({ ok: false, reason: 'unknown' });
  });
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/textdetect.mjs', 'keys', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('textdetect keys CLI', () => {
  it('create prints the key alone on the last line; list and revoke manage it', async () => {
    const file = join(dir, 'cli.json');
    const created = await cli(['create', '--file', file, '--name', 'cli user', '--env', 'production', '--rate-limit', '30']);
    expect(created.code).toBe(0);
    const lastLine = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(lastLine).toMatch(KEY_PATTERN);
    expect(lastLine.startsWith('sk_live_')).toBe(true);
    const [entry] = await listApiKeys(file);
    expect(entry).toMatchObject({ name: 'cli user', environment: 'production', rate_limit_max: 30 });

    const listed = await cli(['list'], { API_KEYS_FILE: file });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(entry!.id);
    expect(listed.stdout).toContain('active');
    expect(listed.stdout).not.toContain(lastLine);
    // CREATED and EXPIRES in one format, to the second (EXPIRES once carried milliseconds).
    const expiring = await cli(['create', '--file', file, '--name', 'expiring', '--expires', '2027-06-30']);
    expect(expiring.code, expiring.stderr).toBe(0);
    const dated = await cli(['list', '--file', file]);
    const row = dated.stdout.split('\n').find((l) => l.endsWith('expiring')) ?? '';
    const times = row.match(/\S*\d{4}-\d\d-\d\dT\S*/g) ?? [];
    expect(times, row).toHaveLength(2);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(times[1]).toBe('2027-06-30T00:00:00Z');

    const revoked = await cli(['revoke', entry!.id, '--file', file]);
    expect(revoked.code).toBe(0);
    const json = await cli(['list', '--json', '--file', file]);
    expect(JSON.parse(json.stdout)[0].status).toBe('revoked');
  });

  it('exits 2 with a message on bad input', async () => {
    const file = join(dir, 'cli-bad.json');
    const noName = await cli(['create', '--file', file]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--name is required');
    const badEnv = await cli(['create', '--file', file, '--name', 'x', '--env', 'staging']);
    expect(badEnv.code).toBe(2);
    const unknown = await cli(['revoke', 'key_nope', '--file', file]);
    expect(unknown.code).toBe(2);
    const bogus = await cli(['rotate']);
    expect(bogus.code).toBe(2);
  });

  it('names the --expires flag when its date is bad, and writes no key', async () => {
    const file = join(dir, 'cli-expires.json');
    const bad = await cli(['create', '--file', file, '--name', 'x', '--expires', 'next tuesday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--expires must be an ISO date');
    expect(bad.stdout).toBe('');
    expect(await listApiKeys(file)).toEqual([]);
  });

  it('refuses an --expires date in the past with exit 2 and a sentence, and writes no key (issue 32, item 25)', async () => {
    const file = join(dir, 'cli-expired.json');
    const past = await cli(['create', '--file', file, '--name', 'x', '--expires', '2020-01-01']);
    expect(past.code).toBe(2);
    expect(past.stderr).toBe(
      'textdetect keys: --expires 2020-01-01 is in the past, so the key would be refused from the start; no key was created. Give a later date (it is when the key stops working).\n',
    );
    expect(past.stdout).toBe('');
    expect(await listApiKeys(file)).toEqual([]);
  });

  it('says a key was already revoked, with exit 1, and changes nothing (issue 32, item 25)', async () => {
    const file = join(dir, 'cli-revoke-twice.json');
    const { id } = await createApiKey(file, { name: 'twice', environment: 'sandbox' });
    const first = await cli(['revoke', id, '--file', file]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^Revoked ${id} \\("twice"\\) at `));
    const [entry] = await listApiKeys(file);
    const second = await cli(['revoke', id, '--file', file]);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toBe(`textdetect keys: ${id} ("twice") was already revoked at ${entry!.revoked_at}; nothing changed.\n`);
    expect((await listApiKeys(file))[0]!.revoked_at).toBe(entry!.revoked_at);
  });

  it('prints help on stdout with exit 0 when asked, and usage on stderr with exit 2 without a command', async () => {
    const help = await cli(['create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('textdetect keys create --name NAME');
    expect(help.stderr).toBe('');
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('give a command: create, list or revoke');
  });
});
