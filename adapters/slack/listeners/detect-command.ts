/**
 * `/detect [mode] <text>`: acknowledged at once (Slack drops a command not acked within 3 s), then
 * checked and answered ephemerally through the command's response_url.
 */
import type { AckFn, App, RespondArguments, SlashCommand } from '@slack/bolt';
import { countWords } from '../../chat/message-text.ts';
import { queuedNotice } from '../../chat/format.ts';
import { helpLines, parseDetectCommand } from '../../chat/modes.ts';
import { buildHelpMessage } from '../blocks.ts';
import { createNameResolver, outcomeMessage, runCheck, slackErrorCode, teamDefaultMode, type SlackAppContext } from '../checks.ts';
import { renderSlackMrkdwn } from '../message-text.ts';
import { answerMemberCheck, memberTarget, UNESCAPED_MEMBER } from './detect-author.ts';
import { MESSAGE_SHORTCUT_NAME } from './detect-message-shortcut.ts';

/**
 * A slash command without `response_url` (Slack always sends one; a broken proxy or a hand-made
 * request may not): the answer could not be delivered after the ack, so nothing is run and the ack
 * itself says so.
 */
export const NO_RESPONSE_URL_REPLY =
  'Slack sent this command without its response address (response_url), so the app could not deliver an answer later and nothing was done. Try the command again; if this keeps happening, tell the app’s admin.';

/** Answers the ack with NO_RESPONSE_URL_REPLY and says true when `command` has no response_url. */
export async function refusedWithoutResponseUrl(
  command: SlashCommand,
  ack: AckFn<string | RespondArguments>,
  ctx: SlackAppContext,
): Promise<boolean> {
  if (command.response_url) return false;
  ctx.logger.warn(
    { team: command.team_id, user: command.user_id, code: 'no_response_url' },
    'slash command without response_url; nothing run',
  );
  await ack({ response_type: 'ephemeral', text: NO_RESPONSE_URL_REPLY });
  return true;
}

export function registerDetectCommand(app: App, ctx: SlackAppContext): void {
  app.command(ctx.config.command, async ({ command, ack, respond, client }) => {
    const defaultMode = await teamDefaultMode(ctx, command.team_id);
    const parsed = parseDetectCommand(command.text ?? '', defaultMode);
    if (parsed.kind === 'help') {
      // Help needs no detection, so it rides on the ack itself.
      const help = buildHelpMessage(
        helpLines({
          command: ctx.config.command,
          defaultMode,
          messageAction: MESSAGE_SHORTCUT_NAME,
          memberCheck: `${ctx.config.command} @member`,
        }),
      );
      await ack({ response_type: 'ephemeral', text: help.text, blocks: help.blocks });
      return;
    }
    if (await refusedWithoutResponseUrl(command, ack, ctx)) return;
    await ack();

    // `/detect @member`: the member's recent messages in this channel, judged together.
    const target = memberTarget(parsed.text);
    if (target?.kind === 'unescaped') {
      await respond({ response_type: 'ephemeral', replace_original: false, text: UNESCAPED_MEMBER }).catch(() => undefined);
      return;
    }
    if (target) {
      await answerMemberCheck(ctx, respond, {
        teamId: command.team_id,
        teamDomain: command.team_domain,
        userId: command.user_id,
        channelId: command.channel_id,
        memberId: target.userId,
        mode: parsed.explicitMode ? parsed.mode : undefined,
        client,
      });
      return;
    }

    // Command text arrives with Slack's entity escaping and, when the command escapes them, <@U…> tokens.
    const rendered = await renderSlackMrkdwn(parsed.text, createNameResolver(client, ctx.names));
    // While the check waits in the queue the moderator sees its position; the result then replaces that notice.
    let announced = false;
    const outcome = await runCheck(ctx, {
      onQueued: async (position) => {
        announced = true;
        await respond({ response_type: 'ephemeral', replace_original: false, text: queuedNotice(position) });
      },
      kind: 'command',
      teamId: command.team_id,
      userId: command.user_id,
      channelId: command.channel_id,
      mode: parsed.mode,
      client,
      rawText: rendered.text,
      source: { kind: 'text', words: countWords(rendered.text), excluded: rendered.excluded },
    });
    const reply = outcomeMessage(outcome);
    try {
      await respond({ response_type: 'ephemeral', replace_original: announced, text: reply.text, blocks: reply.blocks });
    } catch (err) {
      ctx.logger.error(
        { slack_error: slackErrorCode(err), team: command.team_id, user: command.user_id },
        'could not answer /detect through response_url',
      );
    }
  });
}
