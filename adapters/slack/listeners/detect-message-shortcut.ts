/**
 * Message shortcut "Check for AI text" (callback_id `detect_message`): checks the message's words
 * (rich text, plain text and attachments) and its shared documents (file-check.ts, up to three), and
 * shows the result only to the moderator who asked, in the same channel and thread.
 */
import type { App, MessageShortcut, RespondFn, webApi } from '@slack/bolt';
import { queuedNotice } from '../../chat/format.ts';
import { countWords } from '../../chat/message-text.ts';
import { withFileBlocks } from '../file-blocks.ts';
import { auditFiles, checkSlackFiles } from '../file-check.ts';
import { filesOfSlackMessage } from '../message-files.ts';
import { buildErrorMessage, type SlackMessage } from '../blocks.ts';
import { createNameResolver, outcomeMessage, runCheck, slackErrorCode, teamSettings, type SlackAppContext } from '../checks.ts';
import { defaultModeFor } from '../config.ts';
import { mayCheckMessages } from '../settings.ts';
import { renderSlackMessage } from '../message-text.ts';

export const MESSAGE_SHORTCUT_CALLBACK_ID = 'detect_message';
export const MESSAGE_SHORTCUT_NAME = 'Check for AI text';

/** Said at once when the message has documents, which can take a while to download and read. */
export function checkingFilesNotice(files: number): string {
  return `:hourglass_flowing_sand: Checking this message and its ${files === 1 ? 'document' : `${files} documents`}… Documents can take a little while; the result will appear here.`;
}

/**
 * chat.postEphemeral places the reply in the thread, but needs the bot in the channel; where it is
 * not (private channels, DMs), the shortcut's response_url still reaches the moderator.
 */
export async function replyEphemeral(
  ctx: SlackAppContext,
  client: webApi.WebClient,
  respond: RespondFn | undefined,
  target: { channel: string; user: string; threadTs?: string | undefined },
  reply: SlackMessage,
): Promise<void> {
  try {
    await client.chat.postEphemeral({
      channel: target.channel,
      user: target.user,
      text: reply.text,
      blocks: reply.blocks,
      ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
    });
    return;
  } catch (err) {
    const code = slackErrorCode(err);
    if (!respond) {
      ctx.logger.error({ slack_error: code, channel: target.channel }, 'could not post the ephemeral reply');
      return;
    }
    ctx.logger.info({ slack_error: code, channel: target.channel }, 'chat.postEphemeral refused; answering through response_url');
  }
  try {
    await respond({ response_type: 'ephemeral', replace_original: false, text: reply.text, blocks: reply.blocks });
  } catch (err) {
    ctx.logger.error({ slack_error: slackErrorCode(err), channel: target.channel }, 'could not answer through response_url either');
  }
}

/** `https://<domain>.slack.com/archives/<channel>/p<ts without dot>`, used when chat.getPermalink fails. */
function fallbackPermalink(domain: string | undefined, channel: string, ts: string, threadTs: string | undefined): string | undefined {
  if (!domain) return undefined;
  const base = `https://${domain}.slack.com/archives/${channel}/p${ts.replace('.', '')}`;
  return threadTs && threadTs !== ts ? `${base}?thread_ts=${threadTs}&cid=${channel}` : base;
}

export function registerMessageShortcut(app: App, ctx: SlackAppContext): void {
  app.shortcut<MessageShortcut>(
    { callback_id: MESSAGE_SHORTCUT_CALLBACK_ID, type: 'message_action' },
    async ({ shortcut, ack, client, respond, context }) => {
      await ack();
      const teamId = shortcut.team?.id ?? shortcut.user.team_id;
      const channel = shortcut.channel.id;
      const message = shortcut.message as MessageShortcut['message'] & {
        thread_ts?: string;
        blocks?: unknown[];
        attachments?: unknown[];
        user?: string;
        bot_id?: string;
        files?: unknown[];
      };
      const ts = message.ts ?? shortcut.message_ts;
      // A reply in a thread is answered in that thread; a top-level message in the channel.
      const threadTs = message.thread_ts && message.thread_ts !== ts ? message.thread_ts : undefined;
      const settings = await teamSettings(ctx, teamId);
      if (!(await mayCheckMessages(client, shortcut.user.id, settings.checkerId))) {
        ctx.logger.info({ team: teamId, user: shortcut.user.id, code: 'checker_group_required' }, 'check not run');
        const refusal = buildErrorMessage(
          `In this workspace only members of <!subteam^${settings.checkerId}> (and admins) may run “Check for AI text” (set with /detect-settings checkers).`,
          { markup: 'mrkdwn' },
        );
        await replyEphemeral(ctx, client, respond, { channel, user: shortcut.user.id, threadTs }, refusal);
        return;
      }

      const [rendered, permalink] = await Promise.all([
        renderSlackMessage(message, createNameResolver(client, ctx.names)),
        client.chat
          .getPermalink({ channel, message_ts: ts })
          .then((r) => r.permalink)
          .catch(() => fallbackPermalink(shortcut.team?.domain, channel, ts, message.thread_ts)),
      ]);
      const mode = settings.defaultMode ?? defaultModeFor(ctx.config, teamId);
      const files = filesOfSlackMessage(message);
      // A document can take many seconds to download and read: the moderator is told at once that the
      // check is running (through response_url, so the notice can be taken away once the answer is posted).
      let fileNotice = false;
      if (files.length > 0) {
        fileNotice = await respond({ response_type: 'ephemeral', replace_original: false, text: checkingFilesNotice(files.length) }).then(
          () => true,
          (err: unknown) => {
            ctx.logger.info({ slack_error: slackErrorCode(err), channel }, 'could not post the checking notice');
            return false;
          },
        );
      }
      const withdrawNotice = async (): Promise<void> => {
        if (!fileNotice) return;
        fileNotice = false;
        await respond({ delete_original: true }).catch((err: unknown) =>
          ctx.logger.info({ slack_error: slackErrorCode(err), channel }, 'could not remove the checking notice'),
        );
      };
      // Checked while the text is: each file's answer goes under the text's.
      const fileCheck = { files, mode, botToken: context.botToken ?? client.token, client, teamId, userId: shortcut.user.id };
      const fileOutcomes = files.length > 0 ? checkSlackFiles(ctx, fileCheck) : undefined;
      // The audit channel gets a line per file, as it gets one for the message's text.
      const fileAudit = fileOutcomes
        ?.then((outcomes) => auditFiles(ctx, { ...fileCheck, channelId: channel, permalink, messageAuthorId: message.user }, outcomes))
        .catch((err: unknown) => ctx.logger.warn({ err: (err as Error).message }, 'could not write the files’ audit lines'));
      if (fileOutcomes && countWords(rendered.text) === 0) {
        // A message that is only files (a PDF shared without a comment): the files are the answer.
        await replyEphemeral(
          ctx,
          client,
          respond,
          { channel, user: shortcut.user.id, threadTs },
          withFileBlocks(undefined, await fileOutcomes, permalink),
        );
        await withdrawNotice();
        await fileAudit;
        return;
      }
      let announced = false;
      const outcome = await runCheck(ctx, {
        kind: 'shortcut',
        teamId,
        userId: shortcut.user.id,
        channelId: channel,
        mode,
        // Shown through response_url, which the result can then replace (an ephemeral post cannot be edited).
        // The queued notice takes the place of the "checking the document" one, so the result that
        // replaces it leaves nothing behind (a new message beside it left that notice on screen).
        onQueued: async (position: number) => {
          announced = true;
          const replacing = fileNotice;
          fileNotice = false;
          await respond({ response_type: 'ephemeral', replace_original: replacing, text: queuedNotice(position) });
        },
        client,
        rawText: rendered.text,
        source: { kind: 'message', authorId: message.user, authorIsBot: Boolean(message.bot_id), permalink, excluded: rendered.excluded },
        permalink,
        messageAuthorId: message.user,
      });
      const reply = fileOutcomes ? withFileBlocks(outcomeMessage(outcome), await fileOutcomes) : outcomeMessage(outcome);
      if (announced) {
        try {
          await respond({ response_type: 'ephemeral', replace_original: true, text: reply.text, blocks: reply.blocks });
          await fileAudit;
          return;
        } catch (err) {
          ctx.logger.info({ slack_error: slackErrorCode(err), channel }, 'could not replace the queued notice; posting the result');
        }
      }
      await replyEphemeral(ctx, client, respond, { channel, user: shortcut.user.id, threadTs }, reply);
      await withdrawNotice();
      await fileAudit;
    },
  );
}
