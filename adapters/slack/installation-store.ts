/**
 * Bolt's `installationStore` for installs to many workspaces, kept in the bots' durable store
 * (PostgreSQL or SQLite, adapters/chat/store/). Bolt runs the OAuth flow and the token rotation;
 * this store adds what Bolt leaves to it:
 *
 * - **Tokens encrypted at rest.** An installation holds each workspace's bot and refresh tokens; it is
 *   sealed with AES-256-GCM under a key derived from `SLACK_INSTALLATION_KEY` before it reaches the
 *   database, so a copy of the database alone gives no token away.
 * - **One refresh at a time, across every process.** Bolt refreshes a token that expires within two
 *   hours inside `authorize()`, between `fetchInstallation` and `storeInstallation`. Two requests
 *   that both see the expiring token would both spend the same refresh token; Slack answers both
 *   with different pairs, and one of the two stored pairs is then dead (the pitfall the issue names).
 *   So `fetchInstallation` hands the refresh token to exactly one caller, the holder of a lease on
 *   the installation row; the others use the current token while it still works, or wait for the
 *   holder's refreshed token when it does not. `storeInstallation` writes a refreshed pair only while
 *   its caller still holds the lease.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { Logger } from 'pino';
import { logMissingScopes } from './scopes.ts';
import type { DurableStore } from '../chat/store/index.ts';

/** Bolt's window (@slack/oauth `detectExpiredOrExpiringTokens`): tokens expiring within 2 h are refreshed. */
export const BOLT_REFRESH_WINDOW_S = 7_200;
/** How long a refresh may take before another process may try (Bolt's call to oauth.v2.access, with retries). */
export const REFRESH_LEASE_MS = 30_000;
/** A request whose token has already expired waits this long for another process's refresh (within Slack's 3 s). */
export const REFRESH_WAIT_MS = 2_000;
/** A token this close to its expiry is treated as expired: it could die on the wire. */
const EXPIRY_MARGIN_S = 30;
const POLL_MS = 50;

/** Marks the installation object handed to the lease holder; symbols are not serialised, so it is never stored. */
const LEASE = Symbol('refresh lease owner');
type Leased = Installation & { [LEASE]?: string };

/** No installation for this workspace or organisation: never installed, or uninstalled. */
export class InstallationNotFoundError extends Error {
  override name = 'InstallationNotFoundError';
  readonly code = 'installation_not_found';
}

/** SLACK_INSTALLATION_KEY does not open the stored installations; `npm run slack` exits 2, as for a bad setting. */
export class InstallationKeyError extends Error {
  override name = 'InstallationKeyError';
}

/** The token expired and another process's refresh did not land within `REFRESH_WAIT_MS`. */
export class TokenRefreshPendingError extends Error {
  override name = 'TokenRefreshPendingError';
  readonly code = 'token_refresh_pending';
}

/** The durable store's key: the organisation for an org-wide installation, else the workspace. */
export function installationKey(query: {
  isEnterpriseInstall?: boolean | undefined;
  enterpriseId?: string | undefined;
  teamId?: string | undefined;
}): string {
  if (query.isEnterpriseInstall && query.enterpriseId) return `slack:${query.enterpriseId}`;
  if (query.teamId) return `slack:${query.teamId}`;
  if (query.enterpriseId) return `slack:${query.enterpriseId}`;
  throw new InstallationNotFoundError('The request names neither a workspace nor an organisation.');
}

/** Seals and opens installations: AES-256-GCM, a fresh 12-byte nonce each time, versioned format. */
export class InstallationCipher {
  readonly #key: Buffer;

  constructor(secret: string) {
    // HKDF turns any long random string into a 256-bit key bound to this one use.
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'textdetect', 'slack-installations-v1', 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed installation');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // Named, so that the error a request then meets (Bolt's AuthorizationError) says why in the log.
      throw new InstallationKeyError(
        'A stored Slack installation cannot be decrypted with SLACK_INSTALLATION_KEY (was the key changed?); set the key it was stored with, or have the workspace install the app again.',
      );
    }
  }
}

export interface DurableInstallationStoreOptions {
  durable: DurableStore;
  /** `SLACK_INSTALLATION_KEY`. */
  secret: string;
  logger: Logger;
  /** The bot scopes the app asks for (`SLACK_SCOPES`): an installation granted fewer is logged with what it lacks. */
  scopes?: readonly string[] | undefined;
  now?: () => number;
}

export class DurableInstallationStore implements InstallationStore {
  readonly #durable: DurableStore;
  readonly #cipher: InstallationCipher;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #scopes: readonly string[] | undefined;

  constructor(options: DurableInstallationStoreOptions) {
    this.#scopes = options.scopes;
    this.#durable = options.durable;
    this.#cipher = new InstallationCipher(options.secret);
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  async storeInstallation(installation: Installation): Promise<void> {
    const isEnterpriseInstall = installation.isEnterpriseInstall === true;
    const lookup = { isEnterpriseInstall, enterpriseId: installation.enterprise?.id, teamId: installation.team?.id };
    const key = installationKey(lookup);
    const data = this.#cipher.seal(JSON.stringify(installation));
    const expiresAt = installation.bot?.expiresAt === undefined ? undefined : installation.bot.expiresAt * 1000;
    const owner = (installation as Leased)[LEASE];
    if (owner === undefined) {
      // An install or reinstall through the OAuth flow.
      await this.#durable.saveInstallation({ key, ...lookup, data, tokenExpiresAt: expiresAt });
      this.#logger.info({ installation: key, org_wide: isEnterpriseInstall }, 'Slack installation stored');
      logMissingScopes(this.#logger, installation.bot?.scopes, { installation: key }, this.#scopes);
      return;
    }
    // Bolt's refresh: stored only while this caller still holds the lease. If it ran out and another
    // process refreshed meanwhile, that process's pair is the one to keep.
    if (await this.#durable.saveRefreshedInstallation(key, owner, data, expiresAt)) {
      this.#logger.info({ installation: key, expires_at: expiresAt }, 'Slack token refreshed');
    } else {
      this.#logger.warn({ installation: key }, 'refreshed Slack token not stored: the refresh lease ran out before it was saved');
    }
  }

  async fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation> {
    const key = installationKey(query);
    const deadline = this.#now() + REFRESH_WAIT_MS;
    for (;;) {
      const row = await this.#durable.findInstallation(key);
      if (!row) throw new InstallationNotFoundError(`No Slack installation for ${key}.`);
      const installation = JSON.parse(this.#cipher.open(row.data)) as Leased;
      const bot = installation.bot;
      const nowSec = Math.floor(this.#now() / 1000);
      if (!bot?.refreshToken || bot.expiresAt === undefined || bot.expiresAt - nowSec > BOLT_REFRESH_WINDOW_S) return installation;

      // Bolt will refresh this token: only the lease holder may.
      const owner = randomUUID();
      if (await this.#durable.takeRefreshLease(key, owner, REFRESH_LEASE_MS, row.data)) {
        installation[LEASE] = owner;
        return installation;
      }
      if (bot.expiresAt - nowSec > EXPIRY_MARGIN_S) {
        // Still valid for a while: use it as it is, and leave the refresh to the lease holder.
        return withoutRotation(installation);
      }
      if (this.#now() >= deadline) {
        throw new TokenRefreshPendingError(`The Slack token of ${key} expired and its refresh by another process has not landed yet.`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
    await this.#durable.forgetScope(installationKey(query));
  }
}

/** How many of the latest stored installations the start-up check opens. */
const KEY_CHECK_SAMPLE = 20;

/**
 * At start: does `SLACK_INSTALLATION_KEY` open the stored installations? None of the latest opening
 * means the key is not the one they were stored with, and every request would fail: the start stops
 * with a sentence naming the variable. Some not opening is logged as an error; the others work.
 */
export async function checkInstallationKey(
  durable: Pick<DurableStore, 'recentInstallationData'>,
  secret: string,
  logger: Logger,
  scopes?: readonly string[],
): Promise<void> {
  const sealed = await durable.recentInstallationData(KEY_CHECK_SAMPLE);
  if (sealed.length === 0) return;
  const cipher = new InstallationCipher(secret);
  let unreadable = 0;
  for (const data of sealed) {
    try {
      const installation = JSON.parse(cipher.open(data)) as Installation;
      // The scopes each workspace granted, read once here at start: a missing one is logged before anyone meets it.
      logMissingScopes(logger, installation.bot?.scopes, { installation: installationKey(installationLookup(installation)) }, scopes);
    } catch {
      unreadable += 1;
    }
  }
  if (unreadable === sealed.length) {
    throw new InstallationKeyError(
      `SLACK_INSTALLATION_KEY does not decrypt the stored Slack installations (none of the latest ${sealed.length} opens with it): it is not the key they were stored with. Set SLACK_INSTALLATION_KEY back to that key; with a new key every workspace would have to install the app again.`,
    );
  }
  if (unreadable > 0) {
    logger.error(
      { checked: sealed.length, unreadable },
      'some stored Slack installations cannot be decrypted with SLACK_INSTALLATION_KEY; their workspaces must install the app again',
    );
  }
}

function installationLookup(installation: Installation): InstallationQuery<boolean> {
  const isEnterpriseInstall = installation.isEnterpriseInstall === true;
  return { isEnterpriseInstall, enterpriseId: installation.enterprise?.id, teamId: installation.team?.id };
}

/** The installation without its refresh token: Bolt then uses the bot token as it is and refreshes nothing. */
function withoutRotation(installation: Installation): Installation {
  if (!installation.bot) return installation;
  const { refreshToken: _refresh, expiresAt: _expires, ...bot } = installation.bot;
  return { ...installation, bot };
}
