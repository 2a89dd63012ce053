/**
 * What is scored of a watched Slack message: only what the member typed (its text or rich-text
 * blocks), not link unfurls or other attachments, which are a site's words rather than theirs.
 */
import type { RenderedText } from '../../chat/markup.ts';
import { renderSlackMessage } from '../../chat/markup-slack.ts';

export async function watchedSlackText(message: { text?: string | undefined; blocks?: unknown }): Promise<RenderedText> {
  // No name lookups: names are left out of the score either way.
  return renderSlackMessage({ text: message.text ?? '', ...(Array.isArray(message.blocks) ? { blocks: message.blocks } : {}) }, {});
}
