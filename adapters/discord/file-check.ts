/**
 * The documents of a checked message (or of `/detect file:`): downloaded from Discord's CDN only,
 * sent to `POST /v1/detect/file` through the bots' queue, and rendered as one embed per file. Used by
 * handlers/check-message.ts and handlers/detect-command.ts, next to (or instead of) the text check.
 */
import type { APIEmbed, RepliableInteraction } from 'discord.js';
import type { Language, Mode } from '../../src/contract.ts';
import { downloadFile, FileProblem, type ChatFile } from '../chat/attachments.ts';
import { checkFiles, type FileOutcome } from '../chat/file-checks.ts';
import { guildSettings, interactionFields, type BotContext } from './check.ts';
import { fileEmbed } from './file-reply.ts';
import type { CheckSource } from './recheck-store.ts';

export interface FileCheckRequest {
  mode: Mode;
  language: Language | undefined;
  segments: boolean;
  source: CheckSource;
}

/** Checks `files` and gives their embeds (the checked ones first, then those left out), each file's outcome in the mod log. */
export async function fileEmbeds(
  ctx: BotContext,
  interaction: RepliableInteraction,
  files: readonly ChatFile[],
  request: FileCheckRequest,
): Promise<APIEmbed[]> {
  const logger = ctx.logger.child({ ...interactionFields(interaction), trigger: 'file', mode: request.mode });
  // Whatever else happens, Discord's window to answer the interaction must not pass.
  const answerBy = Math.max(1_000, ctx.settings.answerWithinMs - (Date.now() - (interaction.createdTimestamp || Date.now())));
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(answerBy)]);
  const detectFile = ctx.detect.detectFile?.bind(ctx.detect);
  const outcomes = await checkFiles(files, request, {
    limits: ctx.settings.files,
    logger,
    download: (file) =>
      downloadFile(file, {
        allowedOrigins: ctx.settings.fileOrigins,
        maxBytes: ctx.settings.files.maxBytes,
        timeoutMs: ctx.settings.files.downloadTimeoutMs,
        signal,
      }),
    detect: (data, file, options) => {
      if (!detectFile) {
        throw new FileProblem('files_unavailable', 'This bot is not set up to check documents (its detection client has no file checks).');
      }
      return detectFile(data, {
        filename: file.name,
        ...(file.mimeType ? { contentType: file.mimeType } : {}),
        mode: options.mode,
        ...(options.language ? { language: options.language } : {}),
        segments: options.segments,
        signal,
      });
    },
  });
  await recordFilesInModLog(ctx, interaction, request, outcomes);
  return outcomes.map(fileEmbed);
}

/** One mod-log line per file of a checked message (files of `/detect file:` are a pasted text's equivalent: not logged). */
async function recordFilesInModLog(
  ctx: BotContext,
  interaction: RepliableInteraction,
  request: FileCheckRequest,
  outcomes: readonly FileOutcome[],
): Promise<void> {
  if (request.source.kind !== 'message') return;
  const channelId = (await guildSettings(ctx, interaction.guildId)).auditChannelId ?? ctx.settings.modLogChannelId;
  if (!channelId) return;
  for (const outcome of outcomes) {
    // Pictures were never checks: they are named in the answer, not logged.
    if (!outcome.ok && outcome.code === 'not_a_document') continue;
    await ctx.modLog.record(channelId, {
      userId: interaction.user.id,
      link: request.source.link,
      authorId: request.source.authorId,
      mode: request.mode,
      file: outcome.file.name,
      outcome: outcome.ok ? { result: outcome.result } : { errorCode: outcome.code, requestId: outcome.requestId },
    });
  }
}
