/**
 * The audit channel's note when a watched channel's reviews fall under the workspace's precision
 * bound (adapters/chat/watch/precision.ts), with the button that applies the stricter preset. Only
 * a workspace admin's press changes anything; the app never changes the preset on its own.
 */
import type { App, BlockAction, ButtonAction, types as SlackTypes } from '@slack/bolt';
import { presetApplied } from '../../chat/watch/learning.ts';
import { type PrecisionMarkup, type Suggestion, suggestionSentence } from '../../chat/watch/precision.ts';
import { DEFAULT_PRESET, isPreset, PRESET_DESCRIPTIONS } from '../../chat/watch/presets.ts';
import { slackErrorCode, teamScope, type SlackAppContext } from '../checks.ts';
import { isWorkspaceAdmin } from '../settings.ts';
import { plainPerson } from './card.ts';

export const APPLY_PRESET_ACTION = 'watch_apply_preset';

export const SLACK_PRECISION_MARKUP: PrecisionMarkup = {
  channel: (id) => `<#${id}>`,
  person: (id) => plainPerson(undefined, id),
  bold: (text) => `*${text}*`,
  presetCommand: (preset) => `\`/detect-settings preset ${preset}\``,
};

export function suggestionMessage(suggestion: Suggestion): { text: string; blocks: SlackTypes.KnownBlock[] } {
  const text = suggestionSentence(suggestion, SLACK_PRECISION_MARKUP);
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: APPLY_PRESET_ACTION,
            text: { type: 'plain_text', text: `Apply ${suggestion.to}` },
            value: suggestion.to,
          },
        ],
      },
    ],
  };
}

export function registerApplyPresetAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(APPLY_PRESET_ACTION, async ({ ack, body, action, respond, client }) => {
    await ack();
    const teamId = body.team?.id ?? body.user.team_id;
    const userId = body.user.id;
    const preset = action.value ?? '';
    const log = ctx.logger.child({ team: teamId, user: userId, preset });
    const tell = async (text: string): Promise<void> => {
      try {
        await respond({ response_type: 'ephemeral', replace_original: false, text });
      } catch (err) {
        log.warn({ slack_error: slackErrorCode(err) }, 'could not answer the apply-preset button');
      }
    };
    const watching = ctx.watch;
    if (!teamId || !watching || !isPreset(preset)) return;
    if (!(await isWorkspaceAdmin(client, userId))) {
      log.info({ code: 'settings_forbidden' }, 'preset change refused');
      await tell('Only workspace admins and owners can change the flagging preset.');
      return;
    }
    try {
      await watching.store.setPreset(teamScope(teamId), preset === DEFAULT_PRESET ? null : preset);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'could not save the preset');
      await tell('The preset could not be saved (the app’s store is unavailable). Nothing was changed; try again in a minute.');
      return;
    }
    watching.watcher.invalidate(teamScope(teamId));
    log.info('watch preset changed from a suggestion');
    await tell(presetApplied(preset, PRESET_DESCRIPTIONS[preset], (text) => `*${text}*`));
  });
}
