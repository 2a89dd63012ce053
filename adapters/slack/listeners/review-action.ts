/**
 * Confirm / False positive / Dismiss on a review card. The first moderator's answer is recorded
 * (outcome, who, when) and the card is replaced in place (through the action's `response_url`)
 * without its buttons; a later press, or one by someone who is not a moderator, is answered only to
 * the person who pressed. Nothing happens in the watched channel.
 */
import type { App, BlockAction, ButtonAction, types as SlackTypes } from '@slack/bolt';
import { createNameResolver, slackErrorCode, teamScope, teamSettings, type SlackAppContext } from '../checks.ts';
import { DAY_MS } from '../../chat/watch/types.ts';
import { suggestionToPost } from '../../chat/watch/precision.ts';
import { OUTCOME_DONE, outcomeOfAction, plainPerson, REVIEW_ACTION_PREFIX, reviewedBlocks } from '../watch/card.ts';
import { APPLY_PRESET_ACTION, registerApplyPresetAction, suggestionMessage } from '../watch/suggestion.ts';

export function registerReviewAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(new RegExp(`^${REVIEW_ACTION_PREFIX}`), async ({ ack, body, action, respond, client }) => {
    await ack();
    const outcome = outcomeOfAction(action.action_id);
    const flagId = action.value;
    const teamId = body.team?.id ?? body.user.team_id;
    const userId = body.user.id;
    const log = ctx.logger.child({ team: teamId, user: userId, flag: flagId, outcome });
    const tell = async (text: string): Promise<void> => {
      try {
        await respond({ response_type: 'ephemeral', replace_original: false, text });
      } catch (err) {
        log.warn({ slack_error: slackErrorCode(err) }, 'could not answer a review button');
      }
    };
    const watching = ctx.watch;
    if (!outcome || !flagId || !teamId) return;
    if (!watching) {
      await tell('Watching is not set up in this app, so this card cannot be answered. Ask the app’s admin.');
      return;
    }
    // With a checkers group, only its members and admins answer cards; without one, whoever can see the review channel.
    const checkers = (await teamSettings(ctx, teamId)).checkerId;
    if (checkers && !(await watching.isModerator(teamId, userId))) {
      log.info({ code: 'review_forbidden' }, 'review refused');
      await tell(`Only workspace admins and members of <!subteam^${checkers}> can answer review cards.`);
      return;
    }
    const now = Date.now();
    let result: Awaited<ReturnType<typeof watching.store.review>>;
    try {
      result = await watching.store.review(teamScope(teamId), flagId, outcome, userId, now, {
        clearForMs: watching.settings.clearDays * DAY_MS,
      });
    } catch (err) {
      log.error({ err: (err as Error).message }, 'could not record a review');
      await tell('The answer could not be saved (the app’s store is unavailable). Nothing was recorded; try again in a minute.');
      return;
    }
    if (!result) {
      await tell(
        'This flag is no longer kept (records are deleted after the workspace’s retention period, or with `/detect-settings delete-data`), so the answer was not recorded.',
      );
      return;
    }
    const flag = result.flag;
    const names = createNameResolver(client, ctx.names);
    if (!result.applied) {
      const who = flag.reviewerId ? plainPerson(await names.user?.(flag.reviewerId), flag.reviewerId) : 'another moderator';
      await tell(`This flag was already answered: ${OUTCOME_DONE[flag.outcome ?? outcome]} by ${who}. Your answer was not recorded.`);
      return;
    }
    const blocks = (body.message?.blocks ?? []) as SlackTypes.KnownBlock[];
    try {
      await respond({
        replace_original: true,
        text: `${OUTCOME_DONE[outcome]}: ${String(body.message?.text ?? 'flag for review')}`,
        blocks: reviewedBlocks(blocks, { outcome, reviewerId: userId, reviewerName: await names.user?.(userId), at: now }),
      });
    } catch (err) {
      log.warn({ slack_error: slackErrorCode(err) }, 'could not edit the review card');
    }
    log.info('flag reviewed');
    // The channel's precision, told to the audit channel when this answer took it under the bound.
    try {
      const scope = teamScope(teamId);
      const suggestion = await suggestionToPost(watching.store, scope, flag.channelId, await watching.store.getConfig(scope), now);
      if (suggestion) {
        await respond({ response_type: 'in_channel', replace_original: false, ...suggestionMessage(suggestion) });
        log.info({ channel: flag.channelId, suggested: suggestion.to, action: APPLY_PRESET_ACTION }, 'stricter preset suggested');
      }
    } catch (err) {
      log.warn({ err: (err as Error).message, slack_error: slackErrorCode(err) }, 'could not suggest a stricter preset');
    }
  });
  registerApplyPresetAction(app, ctx);
}
