/**
 * What is scored of a watched message: only what the member typed. A human member's embeds are link
 * previews (a site's words, not theirs) and a forwarded message is someone else's, so neither counts
 * here, unlike "Check for AI text", which a moderator points at a message on purpose.
 */
import { EmptyTextError } from '../../chat/errors.ts';
import type { RenderedText } from '../../chat/markup.ts';
import { renderDiscordMarkdown } from '../../chat/markup-discord.ts';
import { mentionNames } from '../message-text.ts';

export function watchedText(message: { id: string; content?: string | null; mentions?: unknown }): RenderedText {
  const content = message.content ?? '';
  if (!content.trim()) throw new EmptyTextError('That message has no text to check.');
  return renderDiscordMarkdown(content, mentionNames({ id: message.id, mentions: message.mentions }));
}
