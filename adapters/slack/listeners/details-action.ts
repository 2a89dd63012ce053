/**
 * "Show details": a modal with every sentence's score. views.open must use the click's trigger_id
 * within 3 s, so a result already in the cache opens directly; one that needs a detection opens a
 * "scoring…" modal first and fills it in with views.update. A click with nothing to show (a button
 * the bot never made, a check it no longer has) or whose window Slack would not open is answered
 * with an ephemeral line in the conversation, which needs no trigger: every click gets an answer.
 */
import type { AllMiddlewareArgs, App, BlockAction, ButtonAction, RespondFn } from '@slack/bolt';
import { ACTION_SHOW_DETAILS, buildDetailsModal, buildErrorMessage, buildLoadingModal, buildModalError } from '../blocks.ts';
import { runCheck, slackErrorCode, type SlackAppContext } from '../checks.ts';
import {
  checkRequestForClick,
  DETAILS_NOT_OPENED_MESSAGE,
  EXPIRED_MESSAGE,
  readButtonClick,
  UNREADABLE_BUTTON_MESSAGE,
} from './button-context.ts';

export function registerDetailsAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(ACTION_SHOW_DETAILS, async ({ ack, body, action, client, respond }) => {
    await ack();
    // Bolt gives `respond` only when the click came with a response_url (a message's button does).
    const tell = (sentence: string): Promise<void> =>
      tellSentence(ctx, client, body.trigger_id, respond as RespondFn | undefined, sentence);
    const click = await readButtonClick(ctx, body, action);
    if (!click) {
      ctx.logger.warn({ action_id: action.action_id }, 'unreadable details button value');
      await tell(UNREADABLE_BUTTON_MESSAGE);
      return;
    }
    if (!click.record) {
      await tell(EXPIRED_MESSAGE);
      return;
    }
    const triggerId = body.trigger_id;
    let viewId: string | undefined;
    try {
      const cached = click.record.results[click.payload.m];
      if (cached) {
        await client.views.open({ trigger_id: triggerId, view: buildDetailsModal(cached) });
        return;
      }
      const opened = await client.views.open({ trigger_id: triggerId, view: buildLoadingModal() });
      viewId = opened.view?.id;
    } catch (err) {
      ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not open the details modal');
      await tell(DETAILS_NOT_OPENED_MESSAGE);
      return;
    }
    try {
      const outcome = await runCheck(ctx, checkRequestForClick(click, 'details', client));
      const view = outcome.ok ? buildDetailsModal(outcome.result) : buildModalError(outcome.message);
      if (viewId) await client.views.update({ view_id: viewId, view });
    } catch (err) {
      ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not show the details modal');
    }
  });
}

/** A new ephemeral line under the result (which stays as it is), or a small window when the click has no response_url. */
async function tellSentence(
  ctx: SlackAppContext,
  client: AllMiddlewareArgs['client'],
  triggerId: string,
  respond: RespondFn | undefined,
  sentence: string,
): Promise<void> {
  try {
    if (respond) {
      const reply = buildErrorMessage(sentence);
      await respond({ response_type: 'ephemeral', replace_original: false, text: reply.text, blocks: reply.blocks });
    } else await client.views.open({ trigger_id: triggerId, view: buildModalError(sentence) });
  } catch (err) {
    ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not answer a details button');
  }
}
