/**
 * What `/detect-settings` needs besides its listener: reading the command's text into a change, and
 * the two permission questions (may this user change settings; may this user check messages).
 */
import type { webApi } from '@slack/bolt';
import type { Mode } from '../../src/contract.ts';
import { isMode } from '../chat/modes.ts';
import type { SettingsPatch } from '../chat/store/index.ts';

type WebClient = webApi.WebClient;

export const SETTINGS_COMMAND = '/detect-settings';

export const SETTINGS_USAGE = [
  '`/detect-settings` shows this workspace’s settings. Workspace admins can change them:',
  '• `/detect-settings mode <general|academic|financial|legal>`: the mode of checks that name none (`mode default` goes back to the bot’s default)',
  '• `/detect-settings audit #channel`: where each check is logged, without the text (`audit default` goes back to the bot’s default; invite the bot to the channel)',
  '• `/detect-settings checkers @user-group`: only members of that user group (and admins) may run the “Check for AI text” shortcut (`checkers everyone` lifts it)',
].join('\n');

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
  return { kind: 'invalid', problem: `“${name}” is not a setting.\n${SETTINGS_USAGE}` };
}

/** Workspace admins and owners (users.info); false when Slack cannot say. */
export async function isWorkspaceAdmin(client: WebClient, userId: string): Promise<boolean> {
  try {
    const res = await client.users.info({ user: userId });
    return Boolean(res.user?.is_admin || res.user?.is_owner || res.user?.is_primary_owner);
  } catch {
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
