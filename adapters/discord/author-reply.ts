/**
 * Discord's rendering of a member check: one embed with the verdict over the member's recent
 * messages, the three most AI-like of them with jump links, what was left out and why, and what a
 * held-back verdict would need. Wording from adapters/chat/format.ts (shared with Slack).
 */
import { ButtonStyle, ComponentType, escapeMarkdown, type APIActionRowComponent, type APIButtonComponent, type APIEmbed } from 'discord.js';
import { AUTHOR_CHECK_BUTTON_LABEL, historyScopeLine, truncate, type AuthorSummary } from '../chat/format.ts';
import type { HistoryWindow } from '../chat/author.ts';
import { authorCheckCustomId } from './commands.ts';
import type { CheckSource } from './recheck-store.ts';
import { languageName, modeName } from '../../src/words.ts';

const FIELD_VALUE_MAX = 1024;
const DESCRIPTION_MAX = 4096;

export interface AuthorReplyContext {
  memberId: string;
  /** Messages of the member read (before leaving any out). */
  read: number;
  window: HistoryWindow;
  scanLimitHit: boolean;
}

export function authorEmbed(summary: AuthorSummary, context: AuthorReplyContext): APIEmbed {
  const lines = [
    summary.heldBackLine
      ? `Recent messages of <@${context.memberId}>: ${summary.heldBackLine}`
      : `Recent messages of <@${context.memberId}>: ${summary.bar} **${summary.percent}** probability that an AI wrote them, ${summary.basis}.`,
    historyScopeLine(context.read, context.window) +
      (context.scanLimitHit ? ' The bot stopped after the newest 1,000 messages of the channel.' : ''),
  ];
  if (summary.originLine) lines.push('', summary.originLine);
  if (summary.evidenceLine) lines.push('', `⏸️ ${summary.evidenceLine}`);
  if (summary.leftOutLine) lines.push('', summary.leftOutLine);
  if (summary.warningLines.length > 0) lines.push('', ...summary.warningLines.map((line) => `⚠️ ${line}`));

  const fields: NonNullable<APIEmbed['fields']> = [];
  if (summary.top.length > 0) {
    const value = summary.top
      .map((t) => {
        // Quoted as typed: a member's `**` or `[x](y)` must not format the reply or forge a link.
        const quote = `“${escapeMarkdown(t.excerpt)}”`;
        return `**${t.percent}** ${quote}${t.link ? ` · [jump](${t.link})` : ''}`;
      })
      .join('\n');
    fields.push({ name: 'Most AI-like messages', value: truncate(value, FIELD_VALUE_MAX), inline: false });
  }
  fields.push(
    { name: 'Mode', value: modeName(summary.mode), inline: true },
    { name: 'Language', value: languageName(summary.language), inline: true },
    { name: 'Request ID', value: `\`${summary.requestId}\``, inline: false },
  );
  return {
    title: summary.headline,
    color: summary.colour,
    description: truncate(lines.join('\n'), DESCRIPTION_MAX),
    fields,
    footer: { text: `model ${summary.model} · a score is evidence, not proof` },
  };
}

/** The button under a message check that runs the member check for the message's author. */
export function authorCheckRow(authorId: string, label = AUTHOR_CHECK_BUTTON_LABEL): APIActionRowComponent<APIButtonComponent> {
  return {
    type: ComponentType.ActionRow,
    components: [{ type: ComponentType.Button, style: ButtonStyle.Primary, label, custom_id: authorCheckCustomId(authorId) }],
  };
}

/** The member-check row under a message check: offered when the message's author is a person. */
export function memberCheckRows(source: CheckSource): APIActionRowComponent<APIButtonComponent>[] {
  if (source.kind !== 'message' || !source.authorId || source.authorIsBot) return [];
  return [authorCheckRow(source.authorId)];
}
