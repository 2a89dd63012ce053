/**
 * Files shared in a watched channel, when the workspace turned that on (`/detect-settings
 * watch-files on`; off by default): their documents are checked in the background
 * (adapters/chat/watched-files.ts), downloaded with the bot token from Slack's file host, and one that
 * reads as likely AI-written gets a line in the audit channel (the author in plain text, never a
 * mention). Called by the message listener for a new member message of a watched channel.
 */
import type { webApi } from '@slack/bolt';
import { downloadFile, selectDocuments } from '../chat/attachments.ts';
import { checkWatchedFiles } from '../chat/watched-files.ts';
import { escapeMrkdwn } from './blocks.ts';
import { createNameResolver, slackErrorCode, teamScope, teamSettings, type SlackAppContext } from './checks.ts';
import { defaultModeFor } from './config.ts';
import { chatFileOfSlack, filesOfSlackMessage, filesReadMissing } from './message-files.ts';
import type { SlackWatchingApi } from './watch/api.ts';
import { describeAnswer, formatPercent, modeName } from '../../src/words.ts';

export interface WatchedSlackMessage {
  teamId: string;
  channel: string;
  user: string;
  ts: string;
  files?: unknown;
}

/** Starts the check of the message's documents and returns at once; failures are logged. */
export function watchSlackFiles(
  ctx: SlackAppContext,
  watching: SlackWatchingApi,
  client: webApi.WebClient,
  botToken: string | undefined,
  message: WatchedSlackMessage,
): void {
  const files = filesOfSlackMessage(message)
    .map(chatFileOfSlack)
    .filter((f) => f !== undefined);
  if (selectDocuments(files, ctx.config.files).documents.length === 0) return;
  const detectFile = ctx.detector.detectFile?.bind(ctx.detector);
  const log = ctx.logger.child({ team: message.teamId, channel: message.channel, kind: 'watched-file' });
  const work = async (): Promise<void> => {
    const settings = await teamSettings(ctx, message.teamId);
    if (!settings.watchFiles || !detectFile) return;
    const scope = teamScope(message.teamId);
    if (!(await watching.watcher.watching(scope, message.channel))) return;
    if (await watching.isExempt(message.teamId, message.user, (await watching.watcher.config(scope)).exemptIds)) return;
    const audit = await watching.reviewChannel(message.teamId);
    if (!audit) {
      log.info('watched documents: no audit channel to report to');
      return;
    }
    const resolver = createNameResolver(client, ctx.names);
    const reported = await checkWatchedFiles(files, settings.defaultMode ?? defaultModeFor(ctx.config, message.teamId), {
      limits: ctx.config.files,
      logger: log,
      download: (file) =>
        downloadFile(file, {
          allowedOrigins: ctx.config.fileOrigins,
          maxBytes: ctx.config.files.maxBytes,
          timeoutMs: ctx.config.files.downloadTimeoutMs,
          headers: botToken ? { authorization: `Bearer ${botToken}` } : undefined,
          htmlMeans: filesReadMissing(),
        }),
      detectFile: (data, file, mode) => detectFile(data, { filename: file.name, mode, segments: false, background: true }),
      report: async (file, result) => {
        const name = (await resolver.user?.(message.user)) ?? 'a member';
        const permalink = await client.chat
          .getPermalink({ channel: message.channel, message_ts: message.ts })
          .then((r) => r.permalink)
          .catch(() => undefined);
        const where = permalink ? `<${permalink.replace(/[<>|]/g, '')}|a message>` : 'a message';
        const words = describeAnswer(result);
        const reading = `${words.emoji} *${words.label}*${words.tooShort ? '' : ` (${formatPercent(result.ai_probability)}, ${modeName(result.mode)} mode)`}`;
        const map = words.windows ? `. ${words.windows.strip} ${escapeMrkdwn(words.windows.summary)}` : '';
        const text = `📄 Watched channel: the file “${escapeMrkdwn(file.name)}” shared by ${escapeMrkdwn(name)} (${message.user}) in ${where} in <#${message.channel}>: ${reading}${map} · request \`${result.request_id}\`. Nothing was done in the channel; a score is evidence, not proof.`;
        try {
          await client.chat.postMessage({ channel: audit, text, unfurl_links: false, unfurl_media: false });
        } catch (err) {
          log.warn({ slack_error: slackErrorCode(err) }, 'could not post a watched document to the audit channel');
        }
      },
    });
    log.info({ documents: files.length, reported }, 'watched documents checked');
  };
  work().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not check the documents of a watched message'));
}
