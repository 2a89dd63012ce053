/**
 * Block Kit for a message's documents: per file its name, what was read (type, pages, characters),
 * the verdict, probability and spans as for a text, or the sentence that says why it was not
 * checked. Appended under the message's own result (or alone, for a message that is only files).
 */
import type { types as SlackTypes } from '@slack/bolt';
import type { FileOutcome } from '../chat/file-checks.ts';
import { summarizeComposition, summarizeResult } from '../chat/format.ts';
import { fileFacts } from '../../src/words.ts';
import { LIMITS } from './block-limits.ts';
import { escapeAndFit, escapeMrkdwn, metaLine, mrkdwn, type SlackMessage, windowsBlock } from './blocks.ts';

type KnownBlock = SlackTypes.KnownBlock;

/** Quotes of at most `max` escaped characters each, so three fit in one section. */
function quotes(items: readonly { text: string; percent: string }[], max: number): string {
  return items.map((q) => `> “${escapeAndFit(q.text.replace(/\s+/g, ' '), max)}”  *${q.percent}*`).join('\n');
}

/** The blocks of one file, with block ids unique within the message (`file<i>_…`). */
function oneFile(outcome: FileOutcome, index: number): KnownBlock[] {
  const id = `file${index}`;
  const name = `📄 *${escapeAndFit(outcome.file.name, 200)}*`;
  if (!outcome.ok) {
    return [
      { type: 'divider', block_id: `${id}_divider` },
      { type: 'section', block_id: `${id}_problem`, text: mrkdwn(`${name}: not checked. ${escapeAndFit(outcome.sentence, 2_000)}`) },
    ];
  }
  const { result } = outcome;
  const summary = summarizeResult(result, 280);
  const composition = summarizeComposition(result, { of: 'file' });
  const lines = [
    `${name}  ·  ${escapeMrkdwn(fileFacts(result.file))}`,
    `*${summary.headline}*  \`${summary.bar}\`  *${summary.percent}* estimated probability that the text is AI-written`,
  ];
  if (summary.originLine) lines.push(escapeMrkdwn(summary.originLine));
  if (composition.line) lines.push(escapeMrkdwn(composition.line));
  for (const warning of summary.warningLines) lines.push(`:warning: ${escapeMrkdwn(warning)}`);
  const blocks: KnownBlock[] = [
    { type: 'divider', block_id: `${id}_divider` },
    { type: 'section', block_id: `${id}_verdict`, text: mrkdwn(lines.join('\n').slice(0, LIMITS.sectionText)) },
  ];
  const map = windowsBlock(summary, `${id}_windows`);
  if (map) blocks.push(map);
  if (composition.passages.length > 0) {
    blocks.push({
      type: 'section',
      block_id: `${id}_passages`,
      text: mrkdwn(`*${composition.title}*\n${quotes(composition.passages, 800)}`),
    });
  }
  if (summary.highlights.length > 0) {
    blocks.push({
      type: 'section',
      block_id: `${id}_highlights`,
      text: mrkdwn(`*Most AI-like sentences*\n${quotes(summary.highlights, 800)}`),
    });
  }
  blocks.push({
    type: 'context',
    block_id: `${id}_meta`,
    elements: [mrkdwn(metaLine(summary))],
  });
  return blocks;
}

export function fileBlocks(outcomes: readonly FileOutcome[]): KnownBlock[] {
  return outcomes.flatMap(oneFile);
}

/** A one-line fallback per file for notifications and screen readers. */
function fileFallback(outcome: FileOutcome): string {
  if (!outcome.ok) return `${outcome.file.name}: not checked. ${outcome.sentence}`;
  const summary = summarizeResult(outcome.result);
  return `${outcome.file.name}: ${summary.headline} (${summary.percent})`;
}

/**
 * `reply` (the message's own result, or undefined for a message that is only files) with the files'
 * blocks under it, within Slack's 50 blocks per message: the blocks of files that do not fit give way
 * to one line saying so.
 */
export function withFileBlocks(
  reply: SlackMessage | undefined,
  outcomes: readonly FileOutcome[],
  permalink?: string | undefined,
): SlackMessage {
  const message = permalink ? `<${permalink.replace(/[<>|]/g, '')}|the message>` : 'the message';
  const head: KnownBlock[] = reply
    ? [...reply.blocks]
    : [{ type: 'section', block_id: 'files_head', text: mrkdwn(`*Documents of ${message}*`) }];
  const blocks = [...head];
  let left = 0;
  outcomes.forEach((outcome, i) => {
    const more = oneFile(outcome, i);
    if (blocks.length + more.length > LIMITS.messageBlocks - 1) left += 1;
    else blocks.push(...more);
  });
  if (left > 0) {
    blocks.push({ type: 'context', block_id: 'files_left', elements: [mrkdwn(`${left} more file(s) did not fit in this answer.`)] });
  }
  const text = [reply?.text, ...outcomes.map(fileFallback)].filter(Boolean).join('\n');
  return { text: text.slice(0, LIMITS.messageText), blocks };
}
