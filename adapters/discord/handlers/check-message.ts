/**
 * The "Check for AI text" message command. The interaction carries the target message (content,
 * embeds and attachments included), which is why the bot needs no Message Content intent. Its text
 * and its documents (file-check.ts: up to three) are checked together and answered in one reply.
 */
import type { MessageContextMenuCommandInteraction } from 'discord.js';
import { selectDocuments } from '../../chat/attachments.ts';
import { describeDetectError, EmptyTextError, errorCode } from '../../chat/errors.ts';
import { answerProblem, deferAnswer, editAnswer, guildSettings, runCheck, type BotContext } from '../check.ts';
import type { RenderedText } from '../../chat/markup.ts';
import { memberCheckRows } from '../author-reply.ts';
import { fileEmbeds } from '../file-check.ts';
import { fitEmbeds } from '../file-reply.ts';
import { filesOfMessage } from '../message-files.ts';
import { messageLink, readMessage, type MessageLike } from '../message-text.ts';
import type { CheckSource } from '../recheck-store.ts';
import { mayCheckMessages } from './settings-command.ts';

export async function handleCheckMessage(ctx: BotContext, interaction: MessageContextMenuCommandInteraction): Promise<void> {
  if (!(await deferAnswer(ctx, interaction))) return;
  const serverSettings = await guildSettings(ctx, interaction.guildId);
  if (!mayCheckMessages(interaction, serverSettings.checkerId)) {
    await answerProblem(
      ctx,
      interaction,
      `In this server only members with <@&${serverSettings.checkerId}> may run "Check for AI text" (set with /detect-settings checker-role).`,
      'checker_role_required',
    );
    return;
  }
  // A `Message` when the channel is cached, the raw API object otherwise; both fit MessageLike.
  const message = interaction.targetMessage as unknown as MessageLike & {
    author?: { id: string; bot?: boolean } | null;
    channelId?: string;
    channel_id?: string;
  };
  const files = filesOfMessage(message);
  const hasDocuments = selectDocuments(files, ctx.settings.files).documents.length > 0;
  let rendered: RenderedText | undefined;
  try {
    rendered = readMessage(message);
  } catch (err) {
    // A message that is only documents is checked through them; with neither text nor documents, say why.
    if (!(err instanceof EmptyTextError && hasDocuments)) {
      await answerProblem(ctx, interaction, describeDetectError(err), errorCode(err));
      return;
    }
  }
  const channelId = message.channelId ?? message.channel_id ?? interaction.channelId ?? '';
  const mode = serverSettings.defaultMode ?? ctx.settings.messageMode;
  const source: CheckSource = {
    kind: 'message',
    guildId: interaction.guildId,
    channelId,
    messageId: interaction.targetId,
    authorId: message.author?.id,
    authorIsBot: message.author?.bot === true,
    link: messageLink(interaction.guildId, channelId, interaction.targetId),
  };
  // Files with text beside them (an image under a paragraph) are named too, so nothing is silently skipped.
  const documents =
    files.length > 0 ? fileEmbeds(ctx, interaction, files, { mode, language: undefined, segments: true, source }) : undefined;
  if (!rendered) {
    const embeds = await (documents ?? Promise.resolve([]));
    ctx.logger.info({ interactionId: interaction.id, files: files.length }, 'documents checked');
    await editAnswer(ctx, interaction, { embeds: fitEmbeds(embeds), components: memberCheckRows(source) });
    return;
  }
  await runCheck(ctx, interaction, {
    text: rendered.text,
    excluded: rendered.excluded,
    mode,
    language: undefined,
    segments: ctx.settings.messageSegments,
    source,
    trigger: 'message',
    fileEmbeds: documents,
  });
}
