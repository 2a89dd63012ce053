/**
 * What `/detect-settings` needs besides its listener: reading the command's text into a change, and
 * the two permission questions (may this user change settings; may this user check messages).
 */
import type { webApi } from '@slack/bolt';
import type { Mode } from '../../src/contract.ts';
import { checkHistoryDays, checkHistoryMessages, DEFAULT_HISTORY_WINDOW } from '../chat/author.ts';
import { isMode } from '../chat/modes.ts';
import type { SettingsPatch } from '../chat/store/index.ts';
import { MissingScopeError, missingScopeOf } from './scopes.ts';

type WebClient = webApi.WebClient;

export const SETTINGS_COMMAND = '/detect-settings';

export const SETTINGS_USAGE = [
  '`/detect-settings` shows this workspace’s settings. Workspace admins can change them:',
  '• `/detect-settings mode <general|academic|financial|legal>`: the mode of checks that name none (`mode default` goes back to the bot’s default)',
  '• `/detect-settings audit #channel`: where each check is logged, without the text (`audit default` goes back to the bot’s default; invite the bot to the channel)',
  '• `/detect-settings checkers @user-group`: only members of that user group (and admins) may run the “Check for AI text” shortcut (`checkers everyone` lifts it)',
  '• `/detect-settings watch-files on|off`: whether watching also checks the documents (PDF, Word, text files) shared in watched channels; off by default',
  `• \`/detect-settings history <messages> <days>\`: how much of a member’s history \`/detect @member\` reads, e.g. \`history 50 30\` for their last 50 messages within 30 days (\`history default\` goes back to ${DEFAULT_HISTORY_WINDOW.maxMessages} and ${DEFAULT_HISTORY_WINDOW.days})`,
].join('\n');

/** What `watch-files on` does, said to the admin who turns it on. */
export const WATCH_FILES_ON =
  'Watching now also checks the documents (PDF, Word .docx, text and Markdown files; up to 3 per message) members share in watched channels: a document that reads as likely AI-written gets a line in the audit channel, with a link to the message. Nothing is done in the channel, and no review card is made for a document.';

export type SettingsCommand =
  | { kind: 'show' }
  | { kind: 'change'; patch: SettingsPatch; done: string }
  | { kind: 'invalid'; problem: string };

const RESET = /^(default|reset|none|off|everyone|anyone)$/i;

/**
 * Reads the command text. Slack escapes channels and user groups in it (the manifest sets
 * should_escape) as `<#C0123|name>` and `<!subteam^S0123|@handle>`; bare ids are accepted too.
 */
export function parseSettingsCommand(text: string): SettingsCommand {
  const [name = '', ...rest] = text.trim().split(/\s+/).filter(Boolean);
  const value = rest.join(' ');
  const setting = name.toLowerCase();
  if (setting === '' || setting === 'show' || setting === 'help') return { kind: 'show' };
  if (setting === 'mode') {
    if (RESET.test(value)) return { kind: 'change', patch: { defaultMode: null }, done: 'This workspace now uses the bot’s default mode.' };
    const mode = value.toLowerCase();
    if (!isMode(mode))
      return {
        kind: 'invalid',
        problem: `“${value || '(nothing)'}” is not a mode. Use general, academic, financial or legal, or \`default\`.`,
      };
    return { kind: 'change', patch: { defaultMode: mode as Mode }, done: `Checks that name no mode now use *${mode}*.` };
  }
  if (setting === 'audit' || setting === 'modlog') {
    if (RESET.test(value))
      return {
        kind: 'change',
        patch: { auditChannelId: null },
        done: 'This workspace’s audit channel was removed; the bot’s default applies.',
      };
    const id = /^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$/.exec(value)?.[1] ?? (/^[CG][A-Z0-9]+$/.test(value) ? value : undefined);
    if (!id) {
      return {
        kind: 'invalid',
        problem: `“${value || '(nothing)'}” is not a channel. Type # and pick the channel, e.g. \`/detect-settings audit #mod-log\`.`,
      };
    }
    return {
      kind: 'change',
      patch: { auditChannelId: id },
      done: `Checks are now logged in <#${id}> (invite the bot there with \`/invite @textdetect\` if it is not a member).`,
    };
  }
  if (setting === 'checkers' || setting === 'checker' || setting === 'role') {
    if (RESET.test(value))
      return {
        kind: 'change',
        patch: { checkerId: null },
        done: 'Everyone in the workspace may run the “Check for AI text” shortcut again.',
      };
    const id = /^<!subteam\^(S[A-Z0-9]+)(?:\|[^>]*)?>$/.exec(value)?.[1] ?? (/^S[A-Z0-9]+$/.test(value) ? value : undefined);
    if (!id) {
      return {
        kind: 'invalid',
        problem: `“${value || '(nothing)'}” is not a user group. Type @ and pick a user group, e.g. \`/detect-settings checkers @moderators\`.`,
      };
    }
    return {
      kind: 'change',
      patch: { checkerId: id },
      done: `Only members of <!subteam^${id}> (and workspace admins) may run the “Check for AI text” shortcut now.`,
    };
  }
  if (setting === 'history') return parseHistorySetting(rest);
  if (setting === 'watch-files' || setting === 'watch_files') {
    const on = /^(on|yes|true)$/i.test(value);
    if (!on && !/^(off|no|false|default)$/i.test(value)) {
      return {
        kind: 'invalid',
        problem: `“${value || '(nothing)'}” is not on or off. Type \`/detect-settings watch-files on\` or \`off\`.`,
      };
    }
    return {
      kind: 'change',
      patch: { watchFiles: on ? 'on' : null },
      done: on ? WATCH_FILES_ON : 'Watching leaves documents alone again: only what members type in watched channels is judged.',
    };
  }
  return { kind: 'invalid', problem: `“${name}” is not a setting.\n${SETTINGS_USAGE}` };
}

/**
 * `history 50 30`, `history 50 messages 30 days`, `history 14d`, `history 100`, `history default`:
 * a bare first number is messages, a bare second one days; `d`/`days`/`messages` name them.
 */
function parseHistorySetting(words: string[]): SettingsCommand {
  const value = words.join(' ');
  if (RESET.test(value)) {
    return {
      kind: 'change',
      patch: { historyMessages: null, historyDays: null },
      done: `Member checks read the defaults again: the member’s last ${DEFAULT_HISTORY_WINDOW.maxMessages} messages within ${DEFAULT_HISTORY_WINDOW.days} days.`,
    };
  }
  const usage = 'Type the number of messages and of days, e.g. `/detect-settings history 50 30` (last 50 messages within 30 days).';
  let messages: number | undefined;
  let days: number | undefined;
  const tokens = value.toLowerCase().match(/\d+\s*(?:days?|d|messages?|msgs?)?|\S+/g) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? '';
    const number = /^(\d+)\s*(days?|d|messages?|msgs?)?$/.exec(token);
    if (!number) return { kind: 'invalid', problem: `“${value || '(nothing)'}” is not a history window. ${usage}` };
    let unit = number[2];
    if (!unit && /^(days?|d|messages?|msgs?)$/.test(tokens[i + 1] ?? '')) unit = tokens[++i];
    const n = Number(number[1]);
    if (unit?.startsWith('d') || (!unit && messages !== undefined)) days = n;
    else messages = n;
  }
  if (messages === undefined && days === undefined) return { kind: 'invalid', problem: usage };
  const patch: SettingsPatch = {};
  if (messages !== undefined) {
    const checked = checkHistoryMessages(messages);
    if (!checked.ok) return { kind: 'invalid', problem: checked.problem };
    patch.historyMessages = String(checked.value);
  }
  if (days !== undefined) {
    const checked = checkHistoryDays(days);
    if (!checked.ok) return { kind: 'invalid', problem: checked.problem };
    patch.historyDays = String(checked.value);
  }
  const parts = [
    messages !== undefined ? `their last ${messages} messages` : undefined,
    days !== undefined ? `within ${days} days` : undefined,
  ];
  return { kind: 'change', patch, done: `Member checks now read ${parts.filter(Boolean).join(' ')}.` };
}

/**
 * Workspace admins and owners (users.info); false when Slack cannot say. Without `users:read` Slack
 * cannot say for anyone, and "only admins may do this" would be a wrong answer to an admin: that
 * throws `MissingScopeError`, whose sentence names the scope.
 */
export async function isWorkspaceAdmin(client: WebClient, userId: string): Promise<boolean> {
  try {
    const res = await client.users.info({ user: userId });
    return Boolean(res.user?.is_admin || res.user?.is_owner || res.user?.is_primary_owner);
  } catch (err) {
    const scope = missingScopeOf(err);
    if (scope) throw new MissingScopeError(scope);
    return false;
  }
}

/** True when the user may run the message shortcut under the workspace's `checkers` setting. */
export async function mayCheckMessages(client: WebClient, userId: string, groupId: string | undefined): Promise<boolean> {
  if (!groupId) return true;
  try {
    const res = await client.usergroups.users.list({ usergroup: groupId });
    if (res.users?.includes(userId)) return true;
  } catch {
    // A deleted group or a missing usergroups:read scope: only admins may check until it is fixed.
  }
  return isWorkspaceAdmin(client, userId);
}
