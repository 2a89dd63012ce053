/**
 * "Show details": a modal with every sentence's score. views.open must use the click's trigger_id
 * within 3 s, so a result already in the cache opens directly; one that needs a detection opens a
 * "scoring…" modal first and fills it in with views.update.
 */
import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { ACTION_SHOW_DETAILS, buildDetailsModal, buildLoadingModal, buildModalError } from '../blocks.ts';
import { runCheck, slackErrorCode, type SlackAppContext } from '../checks.ts';
import { checkRequestForClick, EXPIRED_MESSAGE, readButtonClick, UNREADABLE_BUTTON_MESSAGE } from './button-context.ts';

export function registerDetailsAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(ACTION_SHOW_DETAILS, async ({ ack, body, action, client }) => {
    await ack();
    const click = await readButtonClick(ctx, body, action);
    if (!click) {
      ctx.logger.warn({ action_id: action.action_id }, 'unreadable details button value');
      await client.views
        .open({ trigger_id: body.trigger_id, view: buildModalError(UNREADABLE_BUTTON_MESSAGE) })
        .catch((err: unknown) => ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not answer an unreadable details button'));
      return;
    }
    const triggerId = body.trigger_id;
    try {
      if (!click.record) {
        await client.views.open({ trigger_id: triggerId, view: buildModalError(EXPIRED_MESSAGE) });
        return;
      }
      const cached = click.record.results[click.payload.m];
      if (cached) {
        await client.views.open({ trigger_id: triggerId, view: buildDetailsModal(cached) });
        return;
      }
      const opened = await client.views.open({ trigger_id: triggerId, view: buildLoadingModal() });
      const viewId = opened.view?.id;
      const outcome = await runCheck(ctx, checkRequestForClick(click, 'details', client));
      const view = outcome.ok ? buildDetailsModal(outcome.result) : buildModalError(outcome.message);
      if (viewId) await client.views.update({ view_id: viewId, view });
    } catch (err) {
      ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not show the details modal');
    }
  });
}
