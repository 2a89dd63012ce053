/**
 * Block Kit of a member check: the verdict over the member's recent messages, the three most
 * AI-like of them with permalinks, what was left out and why, and what a held-back verdict needs.
 * Wording from adapters/chat/format.ts (shared with Discord); user text escaped and fitted to
 * Slack's limits like every other reply (blocks.ts).
 */
import type { types as SlackTypes } from '@slack/bolt';
import type { HistoryWindow } from '../chat/author.ts';
import { historyScopeLine, type AuthorSummary } from '../chat/format.ts';
import { LIMITS } from './block-limits.ts';
import { escapeAndFit, escapeMrkdwn, metaLine, mrkdwn, type SlackMessage } from './blocks.ts';

type KnownBlock = SlackTypes.KnownBlock;

/** Said when Slack's limits for apps outside its Marketplace cut the history short. */
export const SLACK_LIMITED_NOTE = (scanned: number): string =>
  `Slack let the app read only the newest ${scanned} messages of the channel (its limits for apps outside the Slack Marketplace: one history call a minute), so older messages and thread replies were not read.`;

/** Ids come from Slack, never from text; still kept to their alphabet inside markup. */
function userRef(id: string): string {
  return `<@${id.replace(/[^A-Z0-9]/gi, '')}>`;
}

export interface AuthorMessageContext {
  memberId: string;
  read: number;
  window: HistoryWindow;
  scanLimitHit: boolean;
  /** Slack handed over only its first, short page (see HistoryRead.slackLimited). */
  slackLimited?: boolean | undefined;
  /** Channel messages looked at. */
  scanned?: number | undefined;
}

export function buildAuthorResultMessage(summary: AuthorSummary, context: AuthorMessageContext): SlackMessage {
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      block_id: 'author_verdict',
      text: mrkdwn(
        `*${summary.headline}*: recent messages of ${userRef(context.memberId)}\n` +
          (summary.heldBackLine
            ? escapeMrkdwn(summary.heldBackLine)
            : `\`${summary.bar}\`  *${summary.percent}* probability that an AI wrote them, ${summary.basis}`) +
          (summary.originLine ? `\n${escapeMrkdwn(summary.originLine)}` : ''),
      ),
    },
    {
      type: 'context',
      block_id: 'author_scope',
      elements: [
        mrkdwn(
          escapeMrkdwn(
            historyScopeLine(context.read, context.window) +
              (context.scanLimitHit ? ' The app stopped after the newest 1,000 messages of the channel.' : '') +
              (context.slackLimited ? ` ${SLACK_LIMITED_NOTE(context.scanned ?? 0)}` : ''),
          ),
        ),
      ],
    },
  ];
  if (summary.evidenceLine) {
    blocks.push({
      type: 'section',
      block_id: 'author_evidence',
      text: mrkdwn(`:double_vertical_bar: ${escapeMrkdwn(summary.evidenceLine)}`),
    });
  }
  if (summary.top.length > 0) {
    const perQuote = Math.floor((LIMITS.sectionText - 100) / summary.top.length) - 60;
    const quotes = summary.top.map((t) => {
      const link = t.link ? `  <${t.link.replace(/[<>|]/g, '')}|view>` : '';
      return `> “${escapeAndFit(t.excerpt, perQuote)}”  *${t.percent}*${link}`;
    });
    blocks.push({ type: 'section', block_id: 'author_top', text: mrkdwn(`*Most AI-like messages*\n${quotes.join('\n')}`) });
  }
  if (summary.leftOutLine)
    blocks.push({ type: 'context', block_id: 'author_left_out', elements: [mrkdwn(escapeMrkdwn(summary.leftOutLine))] });
  if (summary.warningLines.length > 0) {
    blocks.push({
      type: 'section',
      block_id: 'author_warning',
      text: mrkdwn(summary.warningLines.map((line) => `:warning: ${escapeMrkdwn(line)}`).join('\n')),
    });
  }
  blocks.push({
    type: 'context',
    block_id: 'author_meta',
    elements: [mrkdwn(metaLine(summary))],
  });
  return {
    text: `${summary.headline}: ${summary.heldBackLine ?? `${summary.percent} AI-like ${summary.basis}`} (recent messages of one member). Request id: ${summary.requestId}`,
    blocks,
  };
}

/** The audit line of a member check: who checked whom, where, and the outcome; never the texts. */
export function buildAuthorAuditLine(entry: {
  userId: string;
  userName?: string | undefined;
  memberId: string;
  memberName?: string | undefined;
  channelId: string;
  mode: string;
  outcome: string;
}): SlackMessage {
  const id = (v: string): string => v.replace(/[^A-Z0-9]/gi, '');
  // Names and ids in plain text, as the other audit lines: a mention would notify the member.
  const person = (userId: string, name: string | undefined): string =>
    name ? `${escapeMrkdwn(name)} (${id(userId)})` : `user ${id(userId)}`;
  const text = `:mag: ${person(entry.userId, entry.userName)} checked the recent messages of ${person(entry.memberId, entry.memberName)} in <#${id(entry.channelId)}>: ${escapeMrkdwn(entry.outcome)} (${escapeMrkdwn(entry.mode)} mode)`;
  return { text, blocks: [{ type: 'section', block_id: 'audit', text: mrkdwn(text.slice(0, LIMITS.sectionText)) }] };
}
