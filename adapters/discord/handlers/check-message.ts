/**
 * The "Check for AI text" message command. The interaction carries the target message (content and
 * embeds included), which is why the bot needs no Message Content intent.
 */
import type { MessageContextMenuCommandInteraction } from 'discord.js';
import { describeDetectError, errorCode } from '../../chat/errors.ts';
import { answerProblem, deferAnswer, guildSettings, runCheck, type BotContext } from '../check.ts';
import type { RenderedText } from '../../chat/markup.ts';
import { messageLink, readMessage, type MessageLike } from '../message-text.ts';
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
  let rendered: RenderedText;
  try {
    rendered = readMessage(message);
  } catch (err) {
    await answerProblem(ctx, interaction, describeDetectError(err), errorCode(err));
    return;
  }
  const channelId = message.channelId ?? message.channel_id ?? interaction.channelId ?? '';
  await runCheck(ctx, interaction, {
    text: rendered.text,
    excluded: rendered.excluded,
    mode: serverSettings.defaultMode ?? ctx.settings.messageMode,
    language: undefined,
    segments: ctx.settings.messageSegments,
    source: {
      kind: 'message',
      guildId: interaction.guildId,
      channelId,
      messageId: interaction.targetId,
      authorId: message.author?.id,
      authorIsBot: message.author?.bot === true,
      link: messageLink(interaction.guildId, channelId, interaction.targetId),
    },
    trigger: 'message',
  });
}
