/**
 * The Slack scopes the app uses, and what to say when one is missing. Slack answers a call the token
 * may not make with `missing_scope` and names the scope in `needed`; without this module that answer
 * reached moderators as something else ("only admins may change settings", "try again in a minute").
 * The granted scopes are also read at start (the `x-oauth-scopes` header of `auth.test`, which
 * @slack/web-api exposes as `response_metadata.scopes`) and from each installation
 * (`installation.bot.scopes`), so the log says what is missing before anyone meets it.
 */
import type { Logger } from 'pino';

/** What each scope is for, in the words of a moderator's reply. */
const SCOPE_USE: Record<string, string> = {
  'users:read': 'tell whether you are a workspace admin',
  'channels:read': 'look up public channels',
  'groups:read': 'look up private channels',
  'usergroups:read': 'read the members of user groups',
  'channels:history': 'read public channels’ messages',
  'groups:history': 'read private channels’ messages',
  'files:read': 'download shared files',
  'chat:write': 'post messages',
  commands: 'receive slash commands',
};

/** A call Slack refused with `missing_scope`, carrying the scope it named. */
export class MissingScopeError extends Error {
  override name = 'MissingScopeError';
  constructor(readonly scope: string) {
    super(missingScopeSentence(scope));
  }
}

/** The scope a Slack Web API error says is missing (`missing_scope`, `needed`); undefined for any other error. */
export function missingScopeOf(err: unknown): string | undefined {
  if (err instanceof MissingScopeError) return err.scope;
  const data = (err as { data?: { error?: unknown; needed?: unknown } } | undefined)?.data;
  if (data?.error !== 'missing_scope') return undefined;
  // Slack may name several (`channels:read,groups:read`); the first is enough to act on.
  return typeof data.needed === 'string' && data.needed.trim() ? data.needed.split(',')[0]!.trim() : 'unknown';
}

/** The moderator's sentence for a missing scope: which one, what the app needed it for, who can fix it. */
export function missingScopeSentence(scope: string): string {
  const use = SCOPE_USE[scope];
  return `The app cannot ${use ?? 'do this'}: it lacks the Slack scope \`${scope}\`. Ask a workspace admin to add \`${scope}\` to the app (its manifest lists it) and reinstall it; nothing was changed or checked.`;
}

/** The scopes of `wanted` (the manifest's, or `SLACK_SCOPES`) that `granted` lacks. */
export function missingScopes(granted: readonly string[], wanted: readonly string[]): string[] {
  const have = new Set(granted.map((s) => s.trim()));
  return wanted.filter((s) => !have.has(s));
}

/** Logs the scopes a token or an installation lacks; nothing when all are granted or Slack did not say. */
export function logMissingScopes(
  logger: Logger,
  granted: readonly string[] | undefined,
  where: Record<string, unknown>,
  wanted: readonly string[] | undefined,
): string[] {
  if (!granted || !wanted) return [];
  const missing = missingScopes(granted, wanted);
  if (missing.length > 0) {
    logger.warn(
      { ...where, missing_scopes: missing },
      'the Slack token lacks scopes the app uses: the features that need them answer with the scope’s name until a workspace admin adds them and reinstalls the app',
    );
  }
  return missing;
}
