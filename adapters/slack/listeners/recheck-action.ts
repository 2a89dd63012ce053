/**
 * "Re-check as <mode>" buttons: runs the same text in another mode and replaces the ephemeral result
 * in place, so the moderator compares modes without a pile of replies.
 */
import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { ACTION_RECHECK_PREFIX, buildErrorMessage } from '../blocks.ts';
import { queuedNotice } from '../../chat/format.ts';
import { outcomeMessage, runCheck, slackErrorCode, type SlackAppContext } from '../checks.ts';
import { checkRequestForClick, EXPIRED_MESSAGE, readButtonClick, UNREADABLE_BUTTON_MESSAGE } from './button-context.ts';

export function registerRecheckAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(new RegExp(`^${ACTION_RECHECK_PREFIX}`), async ({ ack, body, action, respond, client }) => {
    await ack();
    const click = await readButtonClick(ctx, body, action);
    if (!click) {
      ctx.logger.warn({ action_id: action.action_id }, 'unreadable re-check button value');
      // A new ephemeral line, not a replacement: the result the button sits under stays readable.
      const reply = buildErrorMessage(UNREADABLE_BUTTON_MESSAGE);
      await respond({ response_type: 'ephemeral', replace_original: false, text: reply.text, blocks: reply.blocks }).catch((err: unknown) =>
        ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not answer an unreadable re-check button'),
      );
      return;
    }
    let reply;
    if (!click.record) {
      reply = buildErrorMessage(EXPIRED_MESSAGE);
    } else {
      const previous = Object.keys(click.record.results)[0] as typeof click.payload.m | undefined;
      const cached = click.record.results[click.payload.m];
      // Same text, same mode: the engine is deterministic, so a cached result is the answer.
      const outcome = cached
        ? ({ ok: true, record: click.record, result: cached } as const)
        : await runCheck(
            ctx,
            checkRequestForClick(click, 'recheck', client, (position) =>
              respond({ response_type: 'ephemeral', replace_original: true, text: queuedNotice(position) }),
            ),
          );
      reply = outcomeMessage(outcome, previous);
    }
    try {
      await respond({ response_type: 'ephemeral', replace_original: true, text: reply.text, blocks: reply.blocks });
    } catch (err) {
      ctx.logger.error({ slack_error: slackErrorCode(err) }, 'could not update the result after a re-check');
    }
  });
}
