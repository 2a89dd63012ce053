/**
 * The review card a watched channel's flag raises in the audit (review) channel, in Block Kit: who
 * (plain text, never a mention), where, how sure, why, and three buttons. After a review the buttons
 * give way to the outcome, who chose it and when.
 */
import type { types as SlackTypes } from '@slack/bolt';
import { probabilityBar } from '../../chat/format.ts';
import { cardReading, cardTitle, READING_FIELD } from '../../chat/watch/card-words.ts';
import { CLEARING_TITLE, clearingNote } from '../../chat/watch/clearings.ts';
import { OUTCOMES, type Outcome } from '../../chat/watch/types.ts';
import type { ReviewCard } from '../../chat/watch/watcher.ts';
import { escapeAndFit, escapeMrkdwn, type SlackMessage } from '../blocks.ts';
import { formatPercent, modeName, originLabel } from '../../../src/words.ts';

type KnownBlock = SlackTypes.KnownBlock;

export const REVIEW_BLOCK_ID = 'watch_review';
export const REVIEW_ACTION_PREFIX = 'watch_review:';

export const OUTCOME_LABELS: Record<Outcome, string> = { confirmed: 'Confirm', false_positive: 'False positive', dismissed: 'Dismiss' };
export const OUTCOME_DONE: Record<Outcome, string> = {
  confirmed: '✅ Confirmed',
  false_positive: '❎ False positive',
  dismissed: '➖ Dismissed',
};

export function reviewActionId(outcome: Outcome): string {
  return `${REVIEW_ACTION_PREFIX}${outcome}`;
}

export function outcomeOfAction(actionId: string): Outcome | undefined {
  const outcome = actionId.startsWith(REVIEW_ACTION_PREFIX) ? actionId.slice(REVIEW_ACTION_PREFIX.length) : '';
  return (OUTCOMES as readonly string[]).includes(outcome) ? (outcome as Outcome) : undefined;
}

/** `Name (U0123)`, escaped: never a mention, so nobody is notified. */
export function plainPerson(name: string | undefined, id: string): string {
  return `${name?.trim() ? escapeMrkdwn(name.trim()) : 'member'} (${id})`;
}

/** Slack's date markup: every reader sees their own time zone; the fallback is UTC. */
export function slackDate(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `<!date^${seconds}^{date_short_pretty} {time}|${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC>`;
}

export interface CardLinks {
  /** Permalink of the message that raised the flag. */
  message: string | undefined;
  /** Permalinks of the highlighted messages, by message id. */
  highlights: Map<string, string>;
  /** Names of the moderators who cleared the member before, by user id (shown in plain text). */
  reviewerNames?: Map<string, string> | undefined;
}

export function buildCard(card: ReviewCard, links: CardLinks): SlackMessage {
  const j = card.judgment;
  const heading = cardTitle(j);
  const title = `${heading.emoji} *${heading.text}*`;
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: title } },
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Author:*\n${plainPerson(card.authorName, card.authorId)}` },
        { type: 'mrkdwn', text: `*Channel:*\n<#${card.channelId}>${card.threadId ? ' (thread)' : ''}` },
        { type: 'mrkdwn', text: `*${READING_FIELD}:*\n${cardReading(j)}` },
        { type: 'mrkdwn', text: `*Probability:*\n${probabilityBar(j.probability)} ${formatPercent(j.probability)}` },
      ],
    },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `*Evidence:* ${j.messagesUsed} message${j.messagesUsed === 1 ? '' : 's'}, ${j.wordsUsed} words${j.basis === 'author' ? ' (this member’s recent messages in the channel)' : ''} · ${modeName(j.mode)} mode · ${card.preset} preset`,
      },
    },
  ];
  if (j.highlights.length > 0) {
    const lines = j.highlights.map((h) => {
      const link = h.messageId ? links.highlights.get(h.messageId) : undefined;
      return `• *${formatPercent(h.probability)}*${link ? ` <${link}|message>` : ''} “${escapeAndFit(h.text, 600)}”`;
    });
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*${j.basis === 'author' ? 'Most AI-like messages' : 'Most AI-like sentences'}*\n${lines.join('\n')}` },
    });
  }
  if (card.clearings && card.clearings.length > 0) {
    const note = clearingNote(card.clearings, j, {
      person: (id) => plainPerson(links.reviewerNames?.get(id), id),
      date: (ms) => slackDate(ms),
    });
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `⚠️ *${CLEARING_TITLE}:* ${note}` } });
  }
  if (card.capReached) {
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `⚠️ *Hourly card limit reached:* this is card ${card.capReached.cap} of ${card.capReached.cap} for <#${card.channelId}> this hour. Further flags there are recorded without a card until ${slackDate(card.capReached.until)}; \`/detect-settings report\` counts them.`,
      },
    });
  }
  blocks.push(
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `${links.message ? `<${links.message}|Jump to message>` : 'Message link unavailable'} · posted ${slackDate(card.postedAt)} · request \`${j.requestId}\` · flag ${card.flagId} · Nothing was done in the channel. A score is evidence, not proof.`,
        },
      ],
    },
    {
      type: 'actions',
      block_id: REVIEW_BLOCK_ID,
      elements: OUTCOMES.map((outcome) => ({
        type: 'button' as const,
        action_id: reviewActionId(outcome),
        text: { type: 'plain_text' as const, text: OUTCOME_LABELS[outcome] },
        value: card.flagId,
        ...(outcome === 'confirmed' ? { style: 'danger' as const } : outcome === 'false_positive' ? { style: 'primary' as const } : {}),
      })),
    },
  );
  return {
    text: `Flag for review: ${plainPerson(card.authorName, card.authorId)} in <#${card.channelId}>, ${originLabel(j.origin, j.generatedShare)} ${formatPercent(j.probability)}`,
    blocks,
  };
}

/** The card after a review: its blocks without the buttons, and the outcome, who and when. */
export function reviewedBlocks(
  blocks: KnownBlock[],
  review: { outcome: Outcome; reviewerName?: string | undefined; reviewerId: string; at: number },
): KnownBlock[] {
  const kept = blocks.filter((b) => b.block_id !== REVIEW_BLOCK_ID && b.block_id !== `${REVIEW_BLOCK_ID}_done`);
  kept.push({
    type: 'context',
    block_id: `${REVIEW_BLOCK_ID}_done`,
    elements: [
      {
        type: 'mrkdwn',
        text: `*${OUTCOME_DONE[review.outcome]}* by ${plainPerson(review.reviewerName, review.reviewerId)} · ${slackDate(review.at)}`,
      },
    ],
  });
  return kept;
}
