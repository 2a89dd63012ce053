/**
 * `/detect-settings [mode …|audit #channel|checkers @group]`: a workspace's own settings, kept in
 * the bots' state store (every instance and every restart sees them). Anyone may look; only
 * workspace admins and owners may change them. Acknowledged at once, answered ephemerally.
 */
import type { App } from '@slack/bolt';
import { slackErrorCode, teamScope, teamSettings, type SlackAppContext } from '../checks.ts';
import { auditChannelFor, defaultModeFor } from '../config.ts';
import { isWorkspaceAdmin, parseSettingsCommand, SETTINGS_COMMAND, SETTINGS_USAGE } from '../settings.ts';
import type { ScopeSettings } from '../../chat/store/index.ts';
import { describeHistoryWindow, historyWindowOf } from '../../chat/author.ts';
import { refusedWithoutResponseUrl } from './detect-command.ts';
import { missingScopeOf, missingScopeSentence } from '../scopes.ts';
import { handleWatchSetting, isWatchSetting, WATCH_USAGE, watchSummary } from '../watch/settings.ts';

export function registerSettingsCommand(app: App, ctx: SlackAppContext): void {
  app.command(SETTINGS_COMMAND, async ({ command, ack, respond, client }) => {
    if (await refusedWithoutResponseUrl(command, ack, ctx)) return;
    await ack();
    const teamId = command.team_id;
    const log = ctx.logger.child({ team: teamId, user: command.user_id, command: SETTINGS_COMMAND });
    const answer = async (text: string): Promise<void> => {
      try {
        await respond({ response_type: 'ephemeral', replace_original: false, text });
      } catch (err) {
        log.error({ slack_error: slackErrorCode(err) }, 'could not answer /detect-settings through response_url');
      }
    };
    const describe = (settings: ScopeSettings): string => {
      const mode = settings.defaultMode ?? defaultModeFor(ctx.config, teamId);
      const audit = settings.auditChannelId ?? auditChannelFor(ctx.config, teamId);
      return [
        '*Settings of this workspace*',
        `• Mode of checks that name none: *${mode}*${settings.defaultMode ? '' : ' (bot default)'}`,
        `• Audit channel: ${audit ? `<#${audit}>` : 'none'}${settings.auditChannelId || !audit ? '' : ' (bot default)'}`,
        `• Who may run “Check for AI text”: ${settings.checkerId ? `members of <!subteam^${settings.checkerId}> and admins` : 'everyone'}`,
        `• Member checks (\`/detect @member\`) read ${describeHistoryWindow(historyWindowOf(settings))}${settings.historyMessages || settings.historyDays ? '' : ' (bot default)'}`,
        `• Documents shared in watched channels: ${settings.watchFiles ? 'checked too (`watch-files on`)' : 'left alone (default)'}`,
      ].join('\n');
    };

    if (isWatchSetting(command.text ?? '')) {
      try {
        await handleWatchSetting(ctx, { team_id: teamId, user_id: command.user_id, text: command.text ?? '' }, client, answer);
      } catch (err) {
        const scope = missingScopeOf(err);
        if (scope) {
          // Waiting a minute never grants a scope: say which one is missing.
          log.warn({ code: 'missing_scope', scope }, 'watch setting refused: the app lacks a Slack scope');
          await answer(missingScopeSentence(scope));
          return;
        }
        log.error({ err: (err as Error).message }, 'watch setting failed');
        await answer(
          'The watch settings could not be read or saved (the app’s store or Slack did not answer). Nothing was changed; try again in a minute.',
        );
      }
      return;
    }
    const parsed = parseSettingsCommand(command.text ?? '');
    if (parsed.kind === 'show') {
      await answer(`${describe(await teamSettings(ctx, teamId))}${await watchSummary(ctx, teamId)}\n\n${SETTINGS_USAGE}\n${WATCH_USAGE}`);
      return;
    }
    if (parsed.kind === 'invalid') {
      log.info({ code: 'invalid_setting' }, 'settings change refused');
      await answer(parsed.problem);
      return;
    }
    let admin: boolean;
    try {
      admin = await isWorkspaceAdmin(client, command.user_id);
    } catch (err) {
      const scope = missingScopeOf(err);
      if (!scope) throw err;
      log.warn({ code: 'missing_scope', scope }, 'settings change refused: the app lacks a Slack scope');
      await answer(missingScopeSentence(scope));
      return;
    }
    if (!admin) {
      log.info({ code: 'settings_forbidden' }, 'settings change refused');
      await answer('Only workspace admins and owners can change these settings. `/detect-settings` alone shows them.');
      return;
    }
    let updated: ScopeSettings;
    try {
      updated = await ctx.state.updateSettings(teamScope(teamId), parsed.patch);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'could not save workspace settings');
      await answer('The settings could not be saved (the bot’s state store is unavailable). Nothing was changed; try again in a minute.');
      return;
    }
    log.info({ changed: Object.keys(parsed.patch) }, 'workspace settings changed');
    await answer(`${parsed.done}\n\n${describe(updated)}`);
  });
}
