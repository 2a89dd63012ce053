/**
 * The bots' storage interfaces, in the style of Bolt's `InstallationStore`: one interface per kind of
 * record, one module per backend implementing them (sqlite.ts, postgres.ts, redis.ts), and the
 * factory (index.ts) that picks backends from the environment. Backends import this file, never the
 * factory. The rule (docs/architecture.md): what must last (installations, settings, watched
 * channels, scores, flags, outcomes) is in a database, SQLite or PostgreSQL; Redis holds only what
 * may be lost or rebuilt (the texts behind buttons, retry claims, counters).
 */
import type { Mode } from '../../../src/contract.ts';
import type {
  CardReservation,
  CardState,
  Clearing,
  FlagRecord,
  Outcome,
  PendingItem,
  Preset,
  ReportData,
  ReviewResult,
  ScoreRecord,
  WatchConfig,
  WatchedChannel,
} from '../watch/types.ts';

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

/** What the bots' handlers use: settings (lasting) and the buttons' records and retry claims (short-lived). */
export interface ChatStore extends Omit<ShortLivedStore, 'forgetChecks'>, Pick<DurableStore, 'getSettings' | 'updateSettings'> {
  /** Prepares the store (a database's migrations); bots call it at start so a problem stops them with its reason. */
  ready?(): Promise<void>;
}

/** `start` run once for every caller; if it fails, the next call tries again (the database may come up meanwhile). */
export function onceUntilItWorks(start: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () =>
    (running ??= start().catch((err: unknown) => {
      running = undefined;
      throw err;
    }));
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
  /** Applies `patch` field by field (concurrent changes of different fields both survive) and returns the result. */
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
  /** The encrypted data of up to `limit` installations, the latest stored first (the start-up check of the key that opens them). */
  recentInstallationData(limit: number): Promise<string[]>;
  /** Records that `scope` (a workspace) belongs to `parent` (an organisation-wide installation). */
  linkScope(parent: string, scope: string): Promise<void>;
  /** The organisation-wide installation `scope` was linked under, if any. */
  findParentScope(scope: string): Promise<string | undefined>;
  /**
   * Deletes the installation keyed `scope`, the settings of `scope` and of every scope linked under
   * it, and the links, in one transaction. Returns every scope whose data went (`scope` first).
   */
  forgetScope(scope: string): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * What may be lost without harm and must be fast: what the result buttons need, retry claims. Redis
 * when `REDIS_URL` is set (shared by every instance), else the SQLite file under `DATA_DIR`.
 */
export interface ShortLivedStore {
  /** `sqlite` (one machine, the default) or `redis` (shared by every instance on the same URL). */
  readonly kind: 'sqlite' | 'redis';
  /**
   * Keeps what a result's buttons need (the text included) for `ttlMs`; the record is gone after
   * that, so a text is stored only as long as a button can use it.
   */
  saveCheck(id: string, record: unknown, ttlMs: number): Promise<void>;
  /** The record, its lifetime renewed to `ttlMs` (a moderator comparing modes keeps it alive); undefined once expired. */
  loadCheck(id: string, ttlMs: number): Promise<unknown>;
  /** True the first time `key` is claimed within `ttlMs`, false for every repeat (Slack retries). */
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
  /** Until when a refresh lease is held (ms since the epoch); undefined when none is. */
  refreshLeaseUntil: number | undefined;
}

export interface CardLimits {
  /** One card per member per this many ms. */
  windowMs: number;
  /** Cards per channel per clock hour. */
  cap: number;
}

/**
 * Watching's records (adapters/chat/watch/): which channels a scope watches, the messages waiting
 * for their score (ids only), the scores, flags and moderators' outcomes. Always in the database
 * (SQLite or PostgreSQL), the waiting queue included, so neither a Redis restart nor a bot restart
 * loses one. Never stored: a message's text, a member's name.
 */
export interface WatchStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Migrations (and one-time imports); the bots call it at start so a database problem stops them with its reason. */
  ready(): Promise<void>;
  getConfig(scope: string): Promise<WatchConfig>;
  /** Starts watching (in shadow mode); a channel already watched keeps its start and mode. */
  watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }>;
  /** False when the channel was not watched. */
  unwatchChannel(scope: string, channelId: string): Promise<boolean>;
  /** Turns review cards on or off (shadow mode); undefined when the channel is not watched. */
  setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined>;
  /** Adds or removes an exempt role or user group; returns the list after the change. */
  setExempt(scope: string, id: string, exempt: boolean): Promise<string[]>;
  setPreset(scope: string, preset: Preset | null): Promise<void>;
  /** Sets the scope's retention (null: the bot's default) and applies it to what is already kept. */
  setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void>;
  /** Every scope that has anything stored. */
  scopes(): Promise<string[]>;
  /** Queues a message for its score; false when it is already queued or already scored. */
  enqueue(item: PendingItem): Promise<boolean>;
  /** Takes the oldest message whose turn has come for `leaseMs`; another instance may take it again once the lease runs out. */
  claimNext(now: number, leaseMs: number): Promise<PendingItem | undefined>;
  /** Extends the leases of messages being scored. */
  renew(keys: string[], until: number): Promise<void>;
  /** Puts a claimed message back, to be taken again from `availableAt` (a shutdown, a transient failure). */
  release(key: string, availableAt: number): Promise<void>;
  /** Removes a message from the queue (scored, skipped or gone). */
  complete(key: string): Promise<void>;
  /** Removes a waiting message (deleted by its author); false when it was not waiting. */
  drop(scope: string, channelId: string, messageId: string): Promise<boolean>;
  /** Messages waiting or being scored, in every scope. */
  pendingCount(): Promise<number>;
  isScored(scope: string, channelId: string, messageId: string, postedAt?: number): Promise<boolean>;
  /** True when the message is queued (waiting or being scored). */
  isPending(scope: string, channelId: string, messageId: string): Promise<boolean>;
  /** Keeps a score until `expiresAt`; false (and nothing changed) when the message was scored before. */
  recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean>;
  /** Takes a card's place: not when the member had a card within the window, not past the channel's hourly cap. */
  reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation>;
  /** Gives back a place `reserveCard` took at `now` (the card could not be posted): the member's window and the hour's count. */
  releaseCard(scope: string, channelId: string, authorId: string, now: number): Promise<void>;
  setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void>;
  getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined>;
  /** The flag of a scored message, if its score flagged it (a re-score after a crash finds its card to post). */
  flagOfMessage(scope: string, channelId: string, messageId: string): Promise<FlagRecord | undefined>;
  /**
   * Records a moderator's answer; the first answer stands. Undefined when the flag is no longer kept.
   * A "False positive" with `clearForMs` > 0 also keeps a clearing of the member (ids, date, the
   * flag's probability and words) until `at + clearForMs`, or sooner when the scope keeps its records
   * for less (its retention, counted from `at`) (adapters/chat/watch/clearings.ts).
   */
  review(
    scope: string,
    flagId: string,
    outcome: Outcome,
    reviewerId: string,
    at: number,
    options?: { clearForMs?: number },
  ): Promise<ReviewResult | undefined>;
  /** The member's clearings still in force at `now`, oldest first. */
  clearingsOf(scope: string, authorId: string, now: number): Promise<Clearing[]>;
  /** How many of the member's flags moderators confirmed at or after `since` (while their scores are kept). */
  confirmedSince(scope: string, authorId: string, since: number): Promise<number>;
  /** Forgets what the scope's reviews taught: its clearings and suggestions (the scores and outcomes stay). Returns the clearings deleted. */
  deleteClearings(scope: string): Promise<number>;
  /** Reviewed flags of a scope (every scope when undefined) answered at or after `from`, oldest answer first. */
  reviewedFlags(scope: string | undefined, from: number): Promise<FlagRecord[]>;
  /** The precision under which the report suggests a stricter preset; null: the default. */
  setPrecisionBound(scope: string, bound: number | null): Promise<void>;
  /**
   * True when a suggestion of `preset` for the channel should be posted in the mod-log now: never
   * posted, another preset than last time, or ten reviews more; records it when true.
   */
  claimSuggestion(scope: string, channelId: string, preset: Preset, reviews: number, now: number): Promise<boolean>;
  report(scope: string, now: number): Promise<ReportData>;
  /** Deletes records past their scope's retention. */
  sweep(now: number, defaultDays: number): Promise<void>;
  /** Deletes everything of a scope: watched channels, queue, scores, flags, outcomes. */
  deleteScope(scope: string): Promise<void>;
  close(): Promise<void>;
}

/** A score as an earlier version kept it elsewhere, with its flag's card and outcome (the one-time import). */
export type LegacyScore = ScoreRecord & {
  expiresAt: number;
  cardId?: string | undefined;
  cardChannelId?: string | undefined;
  outcome?: Outcome | undefined;
  reviewerId?: string | undefined;
  reviewedAt?: number | undefined;
};

/** Watch records an earlier version kept elsewhere (Redis, or the SQLite file before `DATABASE_URL`). */
export interface LegacyWatchRecords {
  configs: Map<string, WatchConfig>;
  scores?: LegacyScore[] | undefined;
  pending?: PendingItem[] | undefined;
}

/** Where such records are: `source` (`redis`, `sqlite`) is recorded when imported, so each is imported once. */
export interface LegacyWatchSource {
  source: string;
  read(): Promise<LegacyWatchRecords>;
  /** Removes the records from where they were, once they are in the database (every start after the import). */
  done?(): Promise<void>;
}

/** A database backend (sqlite.ts, postgres.ts): the bots' lasting state and watching's records. */
export type BotDatabase = DurableStore & WatchStore;
