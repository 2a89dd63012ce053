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
}

export const SETTING_NAMES = ['defaultMode', 'auditChannelId', 'checkerId', 'historyMessages', 'historyDays'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** A settings change: a string sets the field, null clears it (back to the default), absent leaves it. */
export type SettingsPatch = { [K in SettingName]?: string | null };

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
  return out;
}
