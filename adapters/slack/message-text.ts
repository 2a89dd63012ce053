/**
 * What the Slack listeners read from a message or a slash command: the words a reader sees, as
 * rendered by adapters/chat/markup-slack.ts (the one place where Slack's markup is understood).
 */
import type { RenderedText } from '../chat/markup.ts';
import { renderSlackMessage, type SlackMessageLike, type SlackNameResolver } from '../chat/markup-slack.ts';

export { decodeSlackEntities, renderRichTextBlock, renderSlackMessage, renderSlackMrkdwn } from '../chat/markup-slack.ts';
export type { SlackMessageLike } from '../chat/markup-slack.ts';
export type { RenderedText } from '../chat/markup.ts';

/** Looks up names for ids; any lookup may fail or be absent, and the renderer then uses a neutral word. */
export type NameResolver = SlackNameResolver;

/** The text that is scored for a message (mentions, emoji and code blocks left out). */
export async function extractSlackMessageText(message: SlackMessageLike, names: NameResolver = {}): Promise<string> {
  const rendered: RenderedText = await renderSlackMessage(message, names);
  return rendered.text;
}
