/**
 * The bots' state, behind one interface so a bot runs the same on one machine (embedded SQLite) and
 * as several instances behind a load balancer (Redis): what the re-check and details buttons need,
 * per-workspace/guild settings, and Slack's retry de-duplication.
 */
import type { Mode } from '../../../src/contract.ts';

/** Settings an admin changes with `/detect-settings`; unset fields fall back to the environment's defaults. */
export interface ScopeSettings {
  /** Mode of checks that name none (Slack) / of "Check for AI text" (Discord). */
  defaultMode?: Mode | undefined;
  /** Channel that receives one audit line per check (never the text). */
  auditChannelId?: string | undefined;
  /** Who may run the message check besides admins: a Discord role id or a Slack user group id. */
  checkerId?: string | undefined;
  /** Member checks: how many of the member's latest messages to read (adapters/chat/author.ts). */
  historyMessages?: number | undefined;
  /** Member checks: how many days back to read. */
  historyDays?: number | undefined;
  /** Watching also checks the documents shared in watched channels (`watch-files`); off unless set. */
  watchFiles?: boolean | undefined;
}

export const SETTING_NAMES = ['defaultMode', 'auditChannelId', 'checkerId', 'historyMessages', 'historyDays', 'watchFiles'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** A settings change: a string sets the field, null clears it (back to the default), absent leaves it. */
export type SettingsPatch = { [K in SettingName]?: string | null };

/** Clears every setting: what a removed bot or uninstalled app must leave behind is nothing. */
export function clearEverySetting(): SettingsPatch {
  return Object.fromEntries(SETTING_NAMES.map((name) => [name, null])) as SettingsPatch;
}

export interface ChatStore {
  /** `sqlite` (one machine, the default) or `redis` (shared by every instance on the same URL). */
  readonly kind: 'sqlite' | 'redis';
  /**
   * Keeps what a result's buttons need (the text included) for `ttlMs`; the record is gone after
   * that, so a text is stored only as long as a button can use it.
   */
  saveCheck(id: string, record: unknown, ttlMs: number): Promise<void>;
  /** The record, its lifetime renewed to `ttlMs` (a moderator comparing modes keeps it alive); undefined once expired. */
  loadCheck(id: string, ttlMs: number): Promise<unknown>;
  getSettings(scope: string): Promise<ScopeSettings>;
  /** Applies `patch` field by field (concurrent changes of different fields both survive) and returns the result. */
  updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings>;
  /** True the first time `key` is claimed within `ttlMs`, false for every repeat (Slack retries). */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Prepares the store (a database's migrations); bots call it at start so a problem stops them with its reason. */
  ready?(): Promise<void>;
  close(): Promise<void>;
}

export function settingsFromFields(fields: Record<string, string>): ScopeSettings {
  const out: ScopeSettings = {};
  if (fields.defaultMode) out.defaultMode = fields.defaultMode as Mode;
  if (fields.auditChannelId) out.auditChannelId = fields.auditChannelId;
  if (fields.checkerId) out.checkerId = fields.checkerId;
  // Stored as text like every setting; a value that is not a whole number is ignored (defaults apply).
  const whole = (v: string | undefined): number | undefined => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  if (whole(fields.historyMessages) !== undefined) out.historyMessages = whole(fields.historyMessages);
  if (whole(fields.historyDays) !== undefined) out.historyDays = whole(fields.historyDays);
  if (fields.watchFiles === 'on') out.watchFiles = true;
  return out;
}

/**
 * What must outlast every process, kept in a real database: PostgreSQL when `DATABASE_URL` is set
 * (shared by every instance on every machine), else the SQLite file under `DATA_DIR`. Installations,
 * per-workspace/per-server settings and the links between an organisation and its workspaces.
 */
export interface DurableStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Runs the schema migrations this build knows (once per process); every other method waits for it. */
  ready(): Promise<void>;
  /** The schema version the database is at. */
  readSchemaVersion(): Promise<number>;
  getSettings(scope: string): Promise<ScopeSettings>;
  updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings>;
  /** A new or renewed installation (an OAuth install): replaces the row, and any refresh lease on it. */
  saveInstallation(row: InstallationRow): Promise<void>;
  findInstallation(key: string): Promise<StoredInstallation | undefined>;
  /**
   * True for exactly one caller until `leaseMs` passes or the holder stores its refreshed tokens:
   * across processes and machines, only the holder may refresh the installation's token.
   * With `seenData`, only while the row still holds that data: a caller that read the installation
   * before another caller's refresh landed (and released the lease) must not refresh again with the
   * refresh token that refresh spent.
   */
  takeRefreshLease(key: string, owner: string, leaseMs: number, seenData?: string): Promise<boolean>;
  /** Stores refreshed tokens only while `owner` still holds the lease (and releases it); false otherwise. */
  saveRefreshedInstallation(key: string, owner: string, data: string, tokenExpiresAt: number | undefined): Promise<boolean>;
  countInstallations(): Promise<number>;
  /** Records that `scope` (a workspace) belongs to `parent` (an organisation-wide installation). */
  linkScope(parent: string, scope: string): Promise<void>;
  /**
   * Deletes the installation keyed `scope`, the settings of `scope` and of every scope linked under
   * it, and the links, in one transaction. Returns every scope whose data went (`scope` first).
   */
  deleteScope(scope: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * What may be lost without harm and must be fast: what the result buttons need, retry claims. Redis
 * when `REDIS_URL` is set (shared by every instance), else the SQLite file under `DATA_DIR`.
 */
export interface ShortLivedStore {
  readonly kind: 'sqlite' | 'redis';
  saveCheck(id: string, record: unknown, ttlMs: number): Promise<void>;
  loadCheck(id: string, ttlMs: number): Promise<unknown>;
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Deletes every check record whose id starts with `idPrefix` (a workspace's records, on uninstall); returns how many. */
  forgetChecks(idPrefix: string): Promise<number>;
  close(): Promise<void>;
}

/** An installation as the durable store keeps it: lookup fields plus an opaque blob the platform layer encrypts. */
export interface InstallationRow {
  /** `slack:<team id>` for a workspace, `slack:<enterprise id>` for an organisation-wide installation. */
  key: string;
  enterpriseId: string | undefined;
  teamId: string | undefined;
  isEnterpriseInstall: boolean;
  /** The platform's installation object, serialised and encrypted by the platform layer. */
  data: string;
  /** When the bot token expires (ms since the epoch); undefined without token rotation. */
  tokenExpiresAt: number | undefined;
}

export interface StoredInstallation extends InstallationRow {
  installedAt: number;
  updatedAt: number;
  /** Until when a refresh lease is held (ms since the epoch); undefined when none is. */
  refreshLeaseUntil: number | undefined;
}
