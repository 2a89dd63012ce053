/**
 * API keys: creation, listing, revocation and lookup.
 *
 * The key file is JSON and holds only SHA-256 digests of keys, never a key in clear: a leaked file
 * (or backup) cannot be used to call the API. Writers take a lock file and replace the file with
 * write-to-temp + rename, so a reader (the running service, another CLI call) always sees either
 * the old or the new file, never a half-written one.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

export type KeyEnvironment = 'sandbox' | 'production';

/** `sk_test_` keys are accepted by sandbox servers, `sk_live_` keys by production servers. */
export const KEY_PREFIX: Record<KeyEnvironment, string> = { sandbox: 'sk_test_', production: 'sk_live_' };

/** Prefix + exactly 32 base62 characters. */
export const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32}$/;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_FILE_VERSION = 1;

/** One key as stored on disk. */
export interface StoredApiKey {
  /** Public identifier (`key_…`): safe to log and to show; used to revoke. */
  id: string;
  /** Human label given at creation, e.g. the customer or the bot using it. */
  name: string;
  environment: KeyEnvironment;
  /** Hex SHA-256 of the full key string. */
  sha256: string;
  /** The prefix and last four characters (`sk_test_…abcd`) so a person can tell keys apart. */
  hint: string;
  /** ISO timestamp. */
  created_at: string;
  /** ISO timestamp after which the key is refused; null for no expiry. */
  expires_at: string | null;
  revoked: boolean;
  /** ISO timestamp of revocation, null while active. */
  revoked_at: string | null;
  /** Requests per rate-limit window for this key; null to use the server's RATE_LIMIT_MAX. */
  rate_limit_max: number | null;
}

export interface KeyFile {
  version: number;
  keys: StoredApiKey[];
}

/** What listing shows: everything except the digest. */
export type ApiKeyInfo = Omit<StoredApiKey, 'sha256'> & { status: 'active' | 'revoked' | 'expired' };

export interface CreateApiKeyOptions {
  /** Human label, e.g. `slack-bot` or a customer name. Required, non-blank. */
  name: string;
  /** Which servers accept the key; default `sandbox` (`sk_test_` prefix). */
  environment?: KeyEnvironment;
  /** ISO date or timestamp after which the key is refused; default never. */
  expiresAt?: string;
  /** Per-key override of the server's RATE_LIMIT_MAX (requests per window), a positive integer. */
  rateLimitMax?: number;
}

/** Raised for bad arguments and unreadable key files; `code` is machine-readable. */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError';
  readonly code: 'invalid_argument' | 'corrupt_key_file' | 'lock_timeout' | 'not_found';
  constructor(code: KeyFileError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function environmentOfKey(key: string): KeyEnvironment | undefined {
  if (key.startsWith(KEY_PREFIX.sandbox)) return 'sandbox';
  if (key.startsWith(KEY_PREFIX.production)) return 'production';
  return undefined;
}

export { environmentOfKey };

function parseKeyFile(raw: string, file: string): KeyFile {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    throw new KeyFileError('corrupt_key_file', `The API key file ${file} is not valid JSON.`);
  }
  const candidate = data as Partial<KeyFile> | null;
  if (!candidate || typeof candidate !== 'object' || !Array.isArray(candidate.keys)) {
    throw new KeyFileError('corrupt_key_file', `The API key file ${file} has no "keys" array.`);
  }
  for (const [index, entry] of candidate.keys.entries()) {
    const ok =
      entry &&
      typeof entry === 'object' &&
      typeof entry.id === 'string' &&
      typeof entry.sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(entry.sha256) &&
      (entry.environment === 'sandbox' || entry.environment === 'production') &&
      typeof entry.revoked === 'boolean' &&
      (entry.expires_at === null || typeof entry.expires_at === 'string') &&
      (entry.rate_limit_max === null || (Number.isInteger(entry.rate_limit_max) && entry.rate_limit_max > 0));
    if (!ok) throw new KeyFileError('corrupt_key_file', `Entry ${index} of the API key file ${file} is malformed.`);
  }
  return { version: candidate.version ?? KEY_FILE_VERSION, keys: candidate.keys };
}

/** Reads the key file; a missing file is an empty key set. */
export async function readKeyFile(file: string): Promise<KeyFile> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: KEY_FILE_VERSION, keys: [] };
    throw err;
  }
  return parseKeyFile(raw, file);
}

async function writeKeyFileAtomic(file: string, data: KeyFile): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBase62(8)}.tmp`;
  // 0600: the digests are not secrets, but the file also reveals key names and limits.
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(data, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

const inProcessQueues = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` while holding `<file>.lock`. The lock file guards against other processes (two CLI
 * calls at once); the in-process queue avoids polling the lock against ourselves.
 */
async function withKeyFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const previous = inProcessQueues.get(file) ?? Promise.resolve();
  const run = previous
    .catch(() => undefined)
    .then(async () => {
      await mkdir(dirname(file), { recursive: true });
      const lock = `${file}.lock`;
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          const handle = await open(lock, 'wx', 0o600);
          await handle.close();
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          // A writer that crashed leaves its lock behind; no write takes anywhere near 30 s.
          const info = await stat(lock).catch(() => undefined);
          if (info && Date.now() - info.mtimeMs > 30_000) {
            await unlink(lock).catch(() => undefined);
            continue;
          }
          if (Date.now() > deadline) {
            throw new KeyFileError(
              'lock_timeout',
              `Timed out waiting for the lock ${lock}; remove it if no other textdetect process is running.`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
      try {
        return await fn();
      } finally {
        await unlink(lock).catch(() => undefined);
      }
    });
  inProcessQueues.set(file, run);
  try {
    return await run;
  } finally {
    if (inProcessQueues.get(file) === run) inProcessQueues.delete(file);
  }
}

/**
 * Creates a key and stores its SHA-256 digest in `file` (created if missing). The returned `key` is
 * the only time the key exists in clear: hand it to its user and do not store it.
 */
export async function createApiKey(file: string, options: CreateApiKeyOptions): Promise<{ id: string; key: string }> {
  const name = typeof options.name === 'string' ? options.name.trim() : '';
  if (!name) throw new KeyFileError('invalid_argument', 'A key needs a non-blank name.');
  const environment = options.environment ?? 'sandbox';
  if (environment !== 'sandbox' && environment !== 'production') {
    throw new KeyFileError('invalid_argument', `environment must be "sandbox" or "production", not "${String(environment)}".`);
  }
  let expiresAt: string | null = null;
  if (options.expiresAt !== undefined) {
    const time = Date.parse(options.expiresAt);
    if (Number.isNaN(time)) {
      throw new KeyFileError(
        'invalid_argument',
        `expiresAt "${options.expiresAt}" is not an ISO date such as 2027-01-31 or 2027-01-31T12:00:00Z.`,
      );
    }
    expiresAt = new Date(time).toISOString();
  }
  let rateLimitMax: number | null = null;
  if (options.rateLimitMax !== undefined) {
    if (!Number.isSafeInteger(options.rateLimitMax) || options.rateLimitMax < 1) {
      throw new KeyFileError('invalid_argument', `rateLimitMax must be a positive integer, not ${String(options.rateLimitMax)}.`);
    }
    rateLimitMax = options.rateLimitMax;
  }

  const key = KEY_PREFIX[environment] + randomBase62(32);
  const id = `key_${randomBase62(16)}`;
  await withKeyFileLock(file, async () => {
    const data = await readKeyFile(file);
    data.keys.push({
      id,
      name,
      environment,
      sha256: hashApiKey(key),
      hint: `${KEY_PREFIX[environment]}…${key.slice(-4)}`,
      created_at: new Date().toISOString(),
      expires_at: expiresAt,
      revoked: false,
      revoked_at: null,
      rate_limit_max: rateLimitMax,
    });
    data.version = KEY_FILE_VERSION;
    await writeKeyFileAtomic(file, data);
  });
  return { id, key };
}

function statusOf(entry: StoredApiKey, now = Date.now()): ApiKeyInfo['status'] {
  if (entry.revoked) return 'revoked';
  if (entry.expires_at !== null && Date.parse(entry.expires_at) <= now) return 'expired';
  return 'active';
}

/** Every key in the file (without digests), oldest first. A missing file lists nothing. */
export async function listApiKeys(file: string): Promise<ApiKeyInfo[]> {
  const data = await readKeyFile(file);
  const now = Date.now();
  return data.keys.map(({ sha256: _digest, ...rest }) => ({ ...rest, status: statusOf({ sha256: _digest, ...rest }, now) }));
}

/**
 * Revokes a key, given its id (`key_…`) or the key itself. Returns the revoked entry, or undefined
 * when no key matches. Revoking twice keeps the first revocation date.
 */
export async function revokeApiKey(
  file: string,
  idOrKey: string,
): Promise<(ApiKeyInfo & { /** It was revoked before this call, which changed nothing. */ already_revoked: boolean }) | undefined> {
  return await withKeyFileLock(file, async () => {
    const data = await readKeyFile(file);
    const digest = KEY_PATTERN.test(idOrKey) ? hashApiKey(idOrKey) : undefined;
    const entry = data.keys.find((k) => k.id === idOrKey || (digest !== undefined && k.sha256 === digest));
    if (!entry) return undefined;
    const alreadyRevoked = Boolean(entry.revoked);
    if (!entry.revoked) {
      entry.revoked = true;
      entry.revoked_at = new Date().toISOString();
      await writeKeyFileAtomic(file, data);
    }
    const { sha256: _digest, ...rest } = entry;
    return { ...rest, status: statusOf(entry), already_revoked: alreadyRevoked };
  });
}

/** Outcome of checking a presented key. */
export type KeyCheck =
  | { ok: true; key: StoredApiKey }
  | {
      ok: false;
      reason: 'malformed' | 'unknown' | 'revoked' | 'expired' | 'wrong_environment';
      key?: StoredApiKey;
      keyEnvironment?: KeyEnvironment;
    };

/**
 * `ok`: the file as it is now; `stale`: the file is unreadable and the last good version is in use;
 * `missing`: there is no file (deleted, or never created), so every key is refused.
 */
export type KeyStoreStatus = 'ok' | 'stale' | 'missing';

/**
 * The service's view of the key file: an in-memory digest index, refreshed when the file changes
 * (checked at most every `refreshMs`), so keys created or revoked by the CLI take effect without a
 * restart.
 *
 * A file that turns unreadable (a bad hand edit, a disk hiccup) does not take the service down: the
 * last good keys stay in force, the error is reported once per bad version through `onError`, and
 * `status` says `stale` until a good file is back. Only a store that never read a good file throws,
 * since it has nothing to fall back on. A file that disappears is an empty key set, as at start:
 * deleting the file is how an operator would cut every key off, so it is honoured, and `status`
 * says `missing` so that an accidental deletion shows.
 */
export class KeyStore {
  readonly file: string;
  readonly environment: KeyEnvironment;
  private readonly refreshMs: number;
  private byDigest = new Map<string, StoredApiKey>();
  private signature = '';
  /** When the last reload started (performance.now()). */
  private checkedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private lastError: Error | undefined;
  private everLoaded = false;
  private missing = false;
  /** Called once for each unreadable version of the file (a new error, not every check). */
  onError: ((err: Error, status: KeyStoreStatus | 'unreadable') => void) | undefined;
  /** Called when `status` changes after a reload (e.g. `ok` → `missing` when the file is deleted). */
  onStatusChange: ((status: KeyStoreStatus, previous: KeyStoreStatus) => void) | undefined;

  constructor(file: string, environment: KeyEnvironment, refreshMs = 1000) {
    this.file = file;
    this.environment = environment;
    this.refreshMs = refreshMs;
  }

  /** Whether the keys in force are the file's current content. */
  get status(): KeyStoreStatus {
    if (this.lastError) return 'stale';
    return this.missing ? 'missing' : 'ok';
  }

  /**
   * Re-reads the file if it changed (checked when `refreshMs` has passed since the last check, or
   * always with `force`); throws KeyFileError only while no good file has ever been read.
   */
  async refresh(force = false): Promise<void> {
    const asked = performance.now();
    // A reload in progress may be replacing the keys (a key created a moment ago): wait for it
    // rather than answer from the set it replaces.
    while (this.loading) await this.loading;
    const due = force ? this.checkedAt < asked : asked - this.checkedAt >= this.refreshMs;
    if (due) {
      this.loading = this.reload().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
    if (this.lastError && !this.everLoaded) throw this.lastError;
  }

  private async reload(): Promise<void> {
    this.checkedAt = performance.now();
    const first = !this.everLoaded;
    const before = this.status;
    await this.read();
    const after = this.status;
    if (!first && after !== before) this.onStatusChange?.(after, before);
  }

  private async read(): Promise<void> {
    let signature: string;
    try {
      const info = await stat(this.file).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      signature = info ? `${info.ino}:${info.size}:${info.mtimeMs}` : 'missing';
    } catch (err) {
      this.fail(err as Error, `stat:${(err as NodeJS.ErrnoException).code ?? ''}`);
      return;
    }
    if (signature === this.signature) return;
    try {
      const data = await readKeyFile(this.file);
      this.byDigest = new Map(data.keys.map((k) => [k.sha256, k]));
      this.signature = signature;
      this.lastError = undefined;
      this.missing = signature === 'missing';
      this.everLoaded = true;
    } catch (err) {
      this.fail(err as Error, signature);
    }
  }

  private fail(err: Error, signature: string): void {
    const isNew = signature !== this.signature || !this.lastError;
    // Remember the bad version so it is parsed (and reported) once, not on every check.
    this.signature = signature;
    this.lastError = err;
    if (!this.everLoaded) this.byDigest = new Map();
    if (isNew) this.onError?.(err, this.everLoaded ? 'stale' : 'unreadable');
  }

  /**
   * Checks a presented key. The lookup is by SHA-256 digest, so any timing difference of the map
   * lookup depends on the digest of the attempt, which says nothing useful about stored keys; the
   * final comparison is constant-time anyway.
   */
  check(presented: string, now = Date.now()): KeyCheck {
    if (!KEY_PATTERN.test(presented)) return { ok: false, reason: 'malformed' };
    const keyEnvironment = environmentOfKey(presented);
    if (keyEnvironment !== this.environment) return { ok: false, reason: 'wrong_environment', keyEnvironment };
    const digest = hashApiKey(presented);
    const entry = this.byDigest.get(digest);
    if (!entry || !timingSafeEqual(Buffer.from(entry.sha256, 'hex'), Buffer.from(digest, 'hex'))) {
      return { ok: false, reason: 'unknown' };
    }
    if (entry.environment !== this.environment) return { ok: false, reason: 'wrong_environment', key: entry, keyEnvironment };
    if (entry.revoked) return { ok: false, reason: 'revoked', key: entry };
    if (entry.expires_at !== null && Date.parse(entry.expires_at) <= now) return { ok: false, reason: 'expired', key: entry };
    return { ok: true, key: entry };
  }

  /** Number of keys loaded (all states). */
  get size(): number {
    return this.byDigest.size;
  }
}
