/**
 * Documents shared in a watched channel, when the server turned that on (`/detect-settings
 * watch-files enabled:true`; off by default): checked in the background (adapters/chat/watched-files.ts)
 * and, when one reads as likely AI-written, told in the mod-log channel. Called by watch-messages.ts
 * for a new message of a watched channel, after its own exclusions (bots, system, command-like).
 */
import type { APIMessage } from 'discord.js';
import type { Logger } from 'pino';
import { downloadFile, selectDocuments } from '../../chat/attachments.ts';
import { checkWatchedFiles } from '../../chat/watched-files.ts';
import type { Watcher } from '../../chat/watch/watcher.ts';
import { guildSettings, type BotContext } from '../check.ts';
import { filesOfMessage } from '../message-files.ts';
import { messageLink } from '../message-text.ts';
import { describeAnswer, formatPercent, modeName } from '../../../src/words.ts';

/** What this needs of watch-messages.ts's context (declared here, so neither file imports the other back). */
export interface WatchFilesContext {
  ctx: BotContext;
  watcher: Pick<Watcher, 'config'>;
  logger: Logger;
}

/** Starts the check of the message's documents and returns at once; failures are logged. */
export function watchFiles(
  w: WatchFilesContext,
  message: APIMessage & { guild_id: string },
  scope: string,
  place: { channelId: string },
  isExempt: (exemptIds: string[]) => Promise<boolean>,
): void {
  const files = filesOfMessage(message);
  const ctx = w.ctx;
  if (selectDocuments(files, ctx.settings.files).documents.length === 0) return;
  const detectFile = ctx.detect.detectFile?.bind(ctx.detect);
  const work = async (): Promise<void> => {
    const settings = await guildSettings(ctx, message.guild_id);
    if (!settings.watchFiles || !detectFile) return;
    if (await isExempt((await w.watcher.config(scope)).exemptIds)) return;
    const modLog = settings.auditChannelId ?? ctx.settings.modLogChannelId;
    if (!modLog) {
      w.logger.info({ scope, channelId: place.channelId }, 'watched documents: no mod-log channel to report to');
      return;
    }
    const link = messageLink(message.guild_id, message.channel_id, message.id);
    const reported = await checkWatchedFiles(files, settings.defaultMode ?? ctx.settings.messageMode, {
      limits: ctx.settings.files,
      logger: w.logger.child({ scope, channelId: place.channelId, trigger: 'watched-file' }),
      download: (file) =>
        downloadFile(file, {
          allowedOrigins: ctx.settings.fileOrigins,
          maxBytes: ctx.settings.files.maxBytes,
          timeoutMs: ctx.settings.files.downloadTimeoutMs,
          signal: ctx.signal,
        }),
      detectFile: (data, file, mode) =>
        detectFile(data, { filename: file.name, mode, segments: false, background: true, signal: ctx.signal }),
      report: (file, result) => {
        const words = describeAnswer(result);
        const reading = `${words.emoji} ${words.label}${words.tooShort ? '' : ` (${formatPercent(result.ai_probability)}, ${modeName(result.mode)} mode)`}`;
        return ctx.modLog.post(
          modLog,
          `📄 Watched channel: the file “${file.name.replace(/[`*_~|<>@#]/g, '')}” shared by <@${message.author.id}> in ${link}: ${reading}${words.windows ? `. ${words.windows.strip} ${words.windows.summary}` : ''} · request \`${result.request_id}\`. Nothing was done in the channel; a score is evidence, not proof.`,
        );
      },
    });
    w.logger.info({ scope, channelId: place.channelId, documents: files.length, reported }, 'watched documents checked');
  };
  work().catch((err: unknown) =>
    w.logger.warn({ scope, err: (err as Error).message }, 'could not check the documents of a watched message'),
  );
}
