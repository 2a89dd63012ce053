/**
 * The review card a watched channel's flag raises in the mod-log channel: an embed a moderator
 * reads at a glance (who, where, how sure, why) and three buttons. The author is named in plain text
 * (never a mention), and nothing is posted in the watched channel itself.
 */
import { ButtonStyle, ComponentType, escapeMarkdown, type APIActionRowComponent, type APIButtonComponent, type APIEmbed } from 'discord.js';
import { probabilityBar, truncate } from '../../chat/format.ts';
import { cardColour, cardReading, cardTitle, READING_FIELD } from '../../chat/watch/card-words.ts';
import type { ReviewCard } from '../../chat/watch/watcher.ts';
import { CLEARING_TITLE, clearingNote } from '../../chat/watch/clearings.ts';
import { OUTCOMES, type Outcome } from '../../chat/watch/types.ts';
import { NEUTRAL_COLOUR } from '../reply.ts';
import { messageLink } from '../message-text.ts';
import { formatPercent, modeName } from '../../../src/words.ts';

const REVIEW_PREFIX = 'watch-review';

export const OUTCOME_LABELS: Record<Outcome, string> = {
  confirmed: 'Confirm',
  false_positive: 'False positive',
  dismissed: 'Dismiss',
};

export const OUTCOME_DONE: Record<Outcome, string> = {
  confirmed: '✅ Confirmed',
  false_positive: '❎ False positive',
  dismissed: '➖ Dismissed',
};

export const REVIEW_FIELD = 'Review';

export function reviewCustomId(outcome: Outcome, flagId: string): string {
  return `${REVIEW_PREFIX}:${outcome}:${flagId}`;
}

export function parseReviewCustomId(customId: string): { outcome: Outcome; flagId: string } | undefined {
  const [prefix, outcome, flagId, ...rest] = customId.split(':');
  if (prefix !== REVIEW_PREFIX || !outcome || !flagId || rest.length > 0) return undefined;
  if (!(OUTCOMES as readonly string[]).includes(outcome)) return undefined;
  return { outcome: outcome as Outcome, flagId };
}

/** `Name (123…)`, escaped: a display name must not bold or link anything, and is never a mention. */
export function plainPerson(name: string | undefined, id: string): string {
  const shown = name?.trim() ? escapeMarkdown(name.trim()).replace(/@/g, '@\u200b') : 'member';
  return `${shown} (${id})`;
}

export function cardEmbed(card: ReviewCard, guildId: string): APIEmbed {
  const j = card.judgment;
  const link = messageLink(guildId, card.threadId ?? card.channelId, card.messageId);
  const lines = [
    `**Author:** ${plainPerson(card.authorName, card.authorId)}`,
    `**Channel:** <#${card.channelId}>${card.threadId ? ` (thread <#${card.threadId}>)` : ''} · [Jump to message](${link})`,
    `**Posted:** <t:${Math.floor(card.postedAt / 1000)}:f>`,
  ];
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: READING_FIELD, value: cardReading(j), inline: true },
    { name: 'Probability', value: `${probabilityBar(j.probability)} ${formatPercent(j.probability)}`, inline: true },
    {
      name: 'Evidence',
      value: `${j.messagesUsed} message${j.messagesUsed === 1 ? '' : 's'}, ${j.wordsUsed} words${j.basis === 'author' ? ' (this member’s recent messages in the channel)' : ''} · ${modeName(j.mode)} mode · ${card.preset} preset`,
      inline: false,
    },
  ];
  if (j.highlights.length > 0) {
    const quote = (h: (typeof j.highlights)[number]): string => {
      const where = h.messageId ? ` [message](${messageLink(guildId, h.threadId ?? card.channelId, h.messageId)})` : '';
      return `**${formatPercent(h.probability)}**${where} “${escapeMarkdown(h.text)}”`;
    };
    fields.push({
      name: j.basis === 'author' ? 'Most AI-like messages' : 'Most AI-like sentences',
      value: truncate(j.highlights.map(quote).join('\n'), 1024),
      inline: false,
    });
  }
  if (card.clearings && card.clearings.length > 0) {
    // An embed never pings, so the moderators are named with mentions Discord shows as their names.
    const note = clearingNote(card.clearings, j, { person: (id) => `<@${id}>`, date: (ms) => `<t:${Math.floor(ms / 1000)}:f>` });
    fields.push({ name: `⚠️ ${CLEARING_TITLE}`, value: truncate(note, 1024), inline: false });
  }
  if (card.capReached) {
    fields.push({
      name: '⚠️ Hourly card limit reached',
      value: `This is card ${card.capReached.cap} of ${card.capReached.cap} for <#${card.channelId}> this hour. Further flags there are recorded without a card until <t:${Math.floor(card.capReached.until / 1000)}:t>; \`/detect-settings report\` counts them.`,
      inline: false,
    });
  }
  fields.push({ name: 'Request ID', value: `\`${j.requestId}\``, inline: false });
  const heading = cardTitle(j);
  return {
    title: `${heading.emoji} ${heading.text}`,
    color: cardColour(j),
    description: lines.join('\n'),
    fields,
    footer: {
      text: `Nothing was done in the channel. A score is evidence, not proof. · model ${j.model} · flag ${card.flagId}`,
    },
  };
}

export function cardButtons(flagId: string): APIActionRowComponent<APIButtonComponent>[] {
  const style: Record<Outcome, ButtonStyle.Danger | ButtonStyle.Success | ButtonStyle.Secondary> = {
    confirmed: ButtonStyle.Danger,
    false_positive: ButtonStyle.Success,
    dismissed: ButtonStyle.Secondary,
  };
  return [
    {
      type: ComponentType.ActionRow,
      components: OUTCOMES.map((outcome) => ({
        type: ComponentType.Button,
        style: style[outcome],
        label: OUTCOME_LABELS[outcome],
        custom_id: reviewCustomId(outcome, flagId),
      })),
    },
  ];
}

/** The card after a review: the outcome, who chose it and when, in place of the buttons. */
export function reviewedEmbed(
  embed: APIEmbed,
  review: { outcome: Outcome; reviewerName?: string | undefined; reviewerId: string; at: number },
): APIEmbed {
  const fields = (embed.fields ?? []).filter((f) => f.name !== REVIEW_FIELD);
  fields.push({
    name: REVIEW_FIELD,
    value: `${OUTCOME_DONE[review.outcome]} by ${plainPerson(review.reviewerName, review.reviewerId)} · <t:${Math.floor(review.at / 1000)}:f>`,
    inline: false,
  });
  return { ...embed, fields, color: review.outcome === 'confirmed' ? embed.color : NEUTRAL_COLOUR };
}
