/**
 * What the result buttons share: finding the check a click refers to (in the state store, which
 * survives restarts and is shared by instances on one Redis, or rebuilt from the text the button
 * carries once the store has forgotten it).
 */
import type { BlockAction, ButtonAction } from '@slack/bolt';
import { isMode } from '../../chat/modes.ts';
import { countWords } from '../../chat/message-text.ts';
import { decodeButtonValue, type ButtonPayload } from '../blocks.ts';
import type { CheckRecord, CheckRequest, SlackAppContext } from '../checks.ts';

export interface ButtonClick {
  payload: ButtonPayload;
  teamId: string | undefined;
  userId: string;
  channelId: string | undefined;
  /** Undefined when the check expired and the button could not carry its text. */
  record: CheckRecord | undefined;
}

export const EXPIRED_MESSAGE =
  'This result is too old for its buttons to work (the bot keeps results for a limited time, and the text was too long to keep in the button). Run the check again.';

/** A button whose value no result of this app ever carried: Slack would not send it, so something else made the request. */
export const UNREADABLE_BUTTON_MESSAGE =
  'This button could not be read: it does not carry a check the bot made (it may come from an older version of the app). Run the check again.';

/** Slack would not open the details window (its trigger had expired, or was not one Slack issued). */
export const DETAILS_NOT_OPENED_MESSAGE =
  'The details window could not be opened (Slack allows it only within 3 seconds of the click). Press Show details again.';

export async function readButtonClick(
  ctx: SlackAppContext,
  body: BlockAction<ButtonAction>,
  action: ButtonAction,
): Promise<ButtonClick | undefined> {
  const payload = decodeButtonValue(action.value);
  if (!payload || !isMode(payload.m)) return undefined;
  const teamId = body.team?.id ?? body.user.team_id;
  const userId = body.user.id;
  const channelId = body.channel?.id;
  let record: CheckRecord | undefined;
  try {
    record = await ctx.results.get(payload.c, teamId);
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, 'could not read the stored result; using the text the button carries');
  }
  // A check belongs to the moderator who ran it; anyone else gets a fresh record from the button's text.
  if (record && (record.userId !== userId || record.teamId !== teamId)) record = undefined;
  if (!record && payload.t !== undefined) {
    record = ctx.results.create({
      teamId,
      userId,
      text: payload.t,
      source: { kind: 'text', words: countWords(payload.t) },
      channelId,
      permalink: undefined,
      messageAuthorId: undefined,
    });
  }
  return { payload, teamId, userId, channelId, record };
}

/** The detection a button asks for: the clicked mode, on the text of the check it belongs to. */
export function checkRequestForClick(
  click: ButtonClick,
  kind: CheckRequest['kind'],
  client: CheckRequest['client'],
  onQueued?: CheckRequest['onQueued'],
): CheckRequest {
  return {
    kind,
    teamId: click.teamId,
    userId: click.userId,
    channelId: click.channelId,
    mode: click.payload.m,
    client,
    record: click.record,
    onQueued,
  };
}
