/**
 * Block Kit for everything the app shows: the result, help, errors, the details modal and the audit
 * line. Wording comes from adapters/chat; this file only lays it out, escapes user text and keeps
 * every field within Slack's limits (block-limits.ts).
 */
import type { types as SlackTypes } from '@slack/bolt';
import type { DetectResponse, Mode } from '../../src/contract.ts';
import {
  AUTHOR_CHECK_BUTTON_LABEL,
  SHORT_MESSAGE_AUTHOR_HINT,
  summarizeComposition,
  excludedNote,
  oneLineSummary,
  otherModes,
  segmentLines,
  summarizeResult,
  type ResultSummary,
} from '../chat/format.ts';
import type { ExcludedCounts } from '../chat/format.ts';
import { LIMITS } from './block-limits.ts';
import { ACTION_AUTHOR_CHECK, encodeAuthorButton } from './author-button.ts';
import { languageName, modeName, type WindowMap, WINDOWS_TITLE } from '../../src/words.ts';

type KnownBlock = SlackTypes.KnownBlock;
type ModalView = SlackTypes.ModalView;

export const ACTION_RECHECK_PREFIX = 'recheck:';
export const ACTION_SHOW_DETAILS = 'show_details';
export const DETAILS_MODAL_CALLBACK = 'detect_details';

export interface SlackMessage {
  /** Notification and screen-reader fallback; Slack shows it where blocks cannot be rendered. */
  text: string;
  blocks: KnownBlock[];
}

/** Escapes the three characters Slack treats as markup, so user text can never become a mention or link. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes `text` and cuts it so the *escaped* result fits in `max` characters: escaping can grow a
 * string fivefold (`&` → `&amp;`), so truncating first is not enough.
 */
export function escapeAndFit(text: string, max: number): string {
  let out = '';
  let used = 0;
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const piece = escapeMrkdwn(chars[i] ?? '');
    const room = i === chars.length - 1 ? max : max - 1; // keep one place for the ellipsis
    if (used + Array.from(piece).length > room) return `${out}…`;
    out += piece;
    used += Array.from(piece).length;
  }
  return out;
}

export function mrkdwn(text: string) {
  return { type: 'mrkdwn' as const, text };
}

function plain(text: string) {
  return { type: 'plain_text' as const, text, emoji: true };
}

/** What the buttons of a result carry back to the app when clicked. */
export interface ButtonPayload {
  /** Id of the check in the app's result cache. */
  c: string;
  /** Mode to run (re-check) or of the result to detail (details). */
  m: Mode;
  /** The text itself when it fits in the button value, so a click still works after the cache forgot it. */
  t?: string;
}

/** JSON for a button `value`; the text is left out when it would not fit. */
export function encodeButtonValue(payload: ButtonPayload): string {
  const full = JSON.stringify(payload);
  if (Array.from(full).length <= LIMITS.buttonValue) return full;
  const { t: _dropped, ...rest } = payload;
  return JSON.stringify(rest);
}

export function decodeButtonValue(value: string | undefined): ButtonPayload | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<ButtonPayload>;
    if (typeof parsed.c !== 'string' || typeof parsed.m !== 'string') return undefined;
    return { c: parsed.c, m: parsed.m as Mode, ...(typeof parsed.t === 'string' ? { t: parsed.t } : {}) };
  } catch {
    return undefined;
  }
}

/** Where the checked text came from, for the line under the verdict. */
export type CheckSource = (
  | {
      kind: 'message';
      authorId?: string | undefined;
      permalink?: string | undefined;
      /** True for a bot's or app's message: no member check is offered then. */
      authorIsBot?: boolean | undefined;
    }
  | { kind: 'text'; words: number }
) & {
  /** What the markup renderer left out of the score (code blocks, mentions), for the note under the verdict. */
  excluded?: ExcludedCounts | undefined;
};

export interface ResultMessageInput {
  result: DetectResponse;
  checkId: string;
  source: CheckSource;
  /** The checked text, embedded in button values when short enough. */
  text?: string | undefined;
  /** Mentions the mode was re-checked when it differs from the first check. */
  recheckedFrom?: Mode | undefined;
}

/** Slack markup (a mention, a link) for the checked message; ids and URLs come from Slack, never from text. */
function messageReference(permalink: string | undefined, authorId: string | undefined): string {
  const message = permalink ? `<${permalink.replace(/[<>|]/g, '')}|a message>` : 'a message';
  return authorId ? `${message} by <@${authorId.replace(/[^A-Z0-9]/gi, '')}>` : message;
}

function sourceLine(source: CheckSource): string {
  if (source.kind === 'text') return `Checked the text you sent (${source.words} word${source.words === 1 ? '' : 's'})`;
  return `Checked ${messageReference(source.permalink, source.authorId)}`;
}

/** Mode, language, request id and model under every result (a text, a file, an author). */
export function metaLine(summary: Pick<ResultSummary, 'mode' | 'language' | 'requestId' | 'model'>): string {
  return [
    `Mode: *${summary.mode}*`,
    `Language: *${languageName(summary.language)}*`,
    `Request id: \`${escapeMrkdwn(summary.requestId)}\``,
    `Model: ${escapeMrkdwn(summary.model)}`,
  ].join('  ·  ');
}

/** The ephemeral reply to a check: verdict, bar, mode/language/request id, highlights, buttons. */
export function buildResultMessage(input: ResultMessageInput): SlackMessage {
  const summary = summarizeResult(input.result);
  const composition = summarizeComposition(input.result, { text: input.text });
  const source = input.source;
  const memberId = source.kind === 'message' && source.authorId && !source.authorIsBot ? source.authorId : undefined;
  const blocks: KnownBlock[] = [];
  blocks.push({
    type: 'section',
    block_id: 'verdict',
    text: mrkdwn(
      `*${summary.headline}*\n${summary.tooShortLine ? escapeMrkdwn(summary.tooShortLine) : `\`${summary.bar}\`  *${summary.percent}* estimated probability that the text is AI-written`}` +
        (summary.originLine ? `\n${escapeMrkdwn(summary.originLine)}` : '') +
        (composition.line ? `\n${escapeMrkdwn(composition.line)}` : ''),
    ),
  });
  const contextElements = [mrkdwn(truncateMarkup(sourceLine(input.source)))];
  if (input.recheckedFrom && input.recheckedFrom !== summary.mode) {
    contextElements.push(mrkdwn(`Re-checked in *${summary.mode}* mode (was ${input.recheckedFrom})`));
  }
  const note = excludedNote(input.source.excluded);
  if (note) contextElements.push(mrkdwn(escapeMrkdwn(note)));
  blocks.push({ type: 'context', block_id: 'source', elements: contextElements });
  if (summary.warningLines.length > 0) {
    blocks.push({ type: 'section', block_id: 'warning', text: mrkdwn(warningMarkup(summary)) });
  }
  if (memberId && summary.warningCodes.includes('short_text')) {
    blocks.push({
      type: 'context',
      block_id: 'short_message',
      elements: [mrkdwn(`:speech_balloon: ${escapeMrkdwn(SHORT_MESSAGE_AUTHOR_HINT)} Use *${AUTHOR_CHECK_BUTTON_LABEL}* below.`)],
    });
  }
  const map = windowsBlock(summary, 'windows');
  if (map) blocks.push(map);
  if (composition.passages.length > 0) {
    const perQuote = Math.floor((LIMITS.sectionText - 100) / composition.passages.length) - 20;
    const quotes = composition.passages.map((p) => `> “${escapeAndFit(p.text, perQuote)}”  *${p.percent}*`);
    blocks.push({
      type: 'section',
      block_id: 'generated_passages',
      text: mrkdwn(`*${composition.title}*\n${quotes.join('\n')}`),
    });
  }
  if (summary.highlights.length > 0) {
    // Three quotes of at most ~900 escaped characters each keep the section under 3000.
    const perQuote = Math.floor((LIMITS.sectionText - 100) / summary.highlights.length) - 20;
    const quotes = summary.highlights.map((h) => `> “${escapeAndFit(h.text.replace(/\s+/g, ' '), perQuote)}”  *${h.percent}*`);
    blocks.push({
      type: 'section',
      block_id: 'highlights',
      text: mrkdwn(`*Most AI-like sentences*\n${quotes.join('\n')}`),
    });
  }
  blocks.push({ type: 'context', block_id: 'meta', elements: [mrkdwn(metaLine(summary))] });
  // Too short to judge: another mode or the sentence scores would only show a score the answer says it cannot give.
  const scoreButtons = !summary.tooShort;
  const actions = [
    ...(scoreButtons
      ? otherModes(summary.mode).map((mode) => ({
          type: 'button' as const,
          action_id: `${ACTION_RECHECK_PREFIX}${mode}`,
          text: plain(`Re-check as ${modeName(mode)}`),
          value: encodeButtonValue({ c: input.checkId, m: mode, ...(input.text !== undefined ? { t: input.text } : {}) }),
        }))
      : []),
    ...(scoreButtons
      ? [
          {
            type: 'button' as const,
            action_id: ACTION_SHOW_DETAILS,
            text: plain('Show details'),
            style: 'primary' as const,
            value: encodeButtonValue({ c: input.checkId, m: summary.mode, ...(input.text !== undefined ? { t: input.text } : {}) }),
          },
        ]
      : []),
    ...(memberId
      ? [
          {
            type: 'button' as const,
            action_id: ACTION_AUTHOR_CHECK,
            text: plain(AUTHOR_CHECK_BUTTON_LABEL),
            value: encodeAuthorButton({ u: memberId }),
          },
        ]
      : []),
  ];
  if (actions.length > 0) blocks.push({ type: 'actions', block_id: 'result_actions', elements: actions });
  return { text: `${oneLineSummary(summary)}. Request id: ${summary.requestId}`, blocks };
}

/**
 * A long document's map: one emoji per window in text order, and the summary that names where the
 * parts that read as an AI's work are (every window's figure is in **Show details**).
 */
export function windowsBlock(summary: Pick<ResultSummary, 'windows'>, blockId: string): KnownBlock | undefined {
  if (!summary.windows) return undefined;
  const strip = Array.from(summary.windows.strip);
  const shown = strip.length > 200 ? `${strip.slice(0, 199).join('')}…` : strip.join('');
  return {
    type: 'section',
    block_id: blockId,
    text: mrkdwn(`*${WINDOWS_TITLE}*\n${shown}\n${escapeAndFit(summary.windows.summary, LIMITS.sectionText - 400)}`),
  };
}

/** One `:warning:` line per warning the engine gave. */
function warningMarkup(summary: ResultSummary): string {
  return summary.warningLines.map((line) => `:warning: ${escapeMrkdwn(line)}`).join('\n');
}

/** Markup strings built here are short by construction; this only guards against absurd ids. */
function truncateMarkup(text: string): string {
  return Array.from(text).length <= LIMITS.contextText
    ? text
    : `${Array.from(text)
        .slice(0, LIMITS.contextText - 1)
        .join('')}…`;
}

/**
 * A failure as a moderator sees it: one sentence, marked as a problem, never a stack. The sentence is
 * escaped, unless `markup` says the bot wrote it in mrkdwn itself (a `<!subteam^…>` mention that
 * Slack should draw as the group's name) and it holds no user text.
 */
export function buildErrorMessage(sentence: string, options: { markup?: 'mrkdwn' } = {}): SlackMessage {
  const room = LIMITS.sectionText - 20;
  const text = options.markup === 'mrkdwn' ? sentence.slice(0, room) : escapeAndFit(sentence, room);
  return {
    text: sentence,
    blocks: [{ type: 'section', block_id: 'error', text: mrkdwn(`:x: ${text}`) }],
  };
}

export function buildHelpMessage(lines: readonly string[]): SlackMessage {
  const body = lines.slice(1).join('\n');
  return {
    text: lines.join('\n'),
    blocks: [
      { type: 'section', block_id: 'help_title', text: mrkdwn(lines[0] ?? '*How to check a text*') },
      { type: 'section', block_id: 'help_body', text: mrkdwn(body.slice(0, LIMITS.sectionText)) },
    ],
  };
}

function modalBase(blocks: KnownBlock[]): ModalView {
  return {
    type: 'modal',
    callback_id: DETAILS_MODAL_CALLBACK,
    title: plain('AI text: details'),
    close: plain('Close'),
    blocks,
  };
}

/** Shown at once when a details click needs a fresh detection, since views.open must beat a 3 s trigger. */
export function buildLoadingModal(): ModalView {
  return modalBase([{ type: 'section', block_id: 'loading', text: mrkdwn(':hourglass_flowing_sand: Scoring every sentence…') }]);
}

export function buildModalError(sentence: string): ModalView {
  return modalBase([{ type: 'section', block_id: 'error', text: mrkdwn(`:x: ${escapeAndFit(sentence, LIMITS.sectionText - 20)}`) }]);
}

/**
 * Every sentence with its score. Sentences are packed into as few sections as fit (3000 chars each)
 * and the modal stops at Slack's 100 blocks, saying how many sentences it could not show.
 */
export function buildDetailsModal(result: DetectResponse): ModalView {
  const summary = summarizeResult(result);
  const head: KnownBlock[] = [
    {
      type: 'section',
      block_id: 'summary',
      text: mrkdwn(
        `*${summary.headline}*\n${summary.tooShortLine ? escapeMrkdwn(summary.tooShortLine) : `\`${summary.bar}\`  *${summary.percent}* for the whole text`}` +
          (summary.originLine ? `\n${escapeMrkdwn(summary.originLine)}` : ''),
      ),
    },
    { type: 'context', block_id: 'meta', elements: [mrkdwn(metaLine(summary))] },
  ];
  if (summary.warningLines.length > 0) head.push({ type: 'context', block_id: 'warning', elements: [mrkdwn(warningMarkup(summary))] });
  if (summary.windows) head.push(...windowLines(summary.windows));
  head.push({ type: 'divider', block_id: 'divider' });

  // Too short to judge as a whole is too short sentence by sentence as well.
  const lines = summary.tooShort
    ? []
    : segmentLines(result.segments).map((s) => `*${s.index}.* \`${s.bar}\` *${s.percent}*  ${escapeAndFit(s.text, 600)}`);
  if (lines.length === 0) {
    head.push({
      type: 'section',
      block_id: 'no_segments',
      text: mrkdwn(
        summary.tooShort
          ? 'No per-sentence scores: the text is too short to judge.'
          : 'The service returned no per-sentence scores for this text (it is a single sentence or too short to split).',
      ),
    });
    return modalBase(head);
  }
  head.push({
    type: 'section',
    block_id: 'segments_title',
    text: mrkdwn(`*Every sentence, in order* (${lines.length}): the percentage is how AI-like that sentence alone looks.`),
  });

  const room = LIMITS.modalBlocks - head.length - 1; // one block kept for the "not shown" note
  const sections: string[] = [];
  let current = '';
  let shown = 0;
  for (const line of lines) {
    const candidate = current ? `${current}\n${line}` : line;
    if (Array.from(candidate).length <= LIMITS.sectionText) {
      current = candidate;
      shown++;
      continue;
    }
    if (sections.length + 1 >= room) break;
    sections.push(current);
    current = line;
    shown++;
  }
  if (current) sections.push(current);
  const blocks: KnownBlock[] = [
    ...head,
    ...sections.map((text, i): KnownBlock => ({ type: 'section', block_id: `segments_${i}`, text: mrkdwn(text) })),
  ];
  if (shown < lines.length) {
    blocks.push({
      type: 'context',
      block_id: 'not_shown',
      elements: [mrkdwn(`${lines.length - shown} more sentences are not shown: Slack limits how much a window can hold.`)],
    });
  }
  return modalBase(blocks);
}

/**
 * Every window of a long document with its place, figure and reading, packed into at most four
 * sections; what does not fit is counted in a line under them.
 */
function windowLines(map: WindowMap): KnownBlock[] {
  const sections = [`*${WINDOWS_TITLE}*: ${escapeAndFit(map.summary, 1500)}`];
  let listed = 0;
  for (const w of map.windows) {
    const line = `${w.emoji} ${escapeMrkdwn(w.where)}: *${w.percent}*, ${escapeMrkdwn(w.label)}`;
    const last = sections.length - 1;
    if (Array.from(`${sections[last]}\n${line}`).length <= LIMITS.sectionText) sections[last] = `${sections[last]}\n${line}`;
    else if (sections.length < 4) sections.push(line);
    else break;
    listed++;
  }
  const blocks: KnownBlock[] = sections.map((text, i) => ({ type: 'section', block_id: `windows_${i}`, text: mrkdwn(text) }));
  const left = map.windows.length - listed;
  if (left > 0) {
    blocks.push({
      type: 'context',
      block_id: 'windows_left',
      elements: [mrkdwn(`${left} more parts are not listed: Slack limits how much a window can hold.`)],
    });
  }
  return blocks;
}

export interface AuditEntry {
  userId: string;
  /** Display name of the moderator, when it could be looked up. */
  userName?: string | undefined;
  /** Display name of the checked message's author, when it could be looked up. */
  messageAuthorName?: string | undefined;
  channelId?: string | undefined;
  /** For message shortcuts: link to the checked message. */
  permalink?: string | undefined;
  messageAuthorId?: string | undefined;
  /** How the check started. */
  kind: 'command' | 'shortcut' | 'recheck' | 'details';
  mode: Mode;
  /** Present on success. */
  result?: DetectResponse | undefined;
  /** Present on failure: machine-readable code. */
  errorCode?: string | undefined;
  requestId?: string | undefined;
  words?: number | undefined;
  /** A document of the message (its name; shown escaped): the line is about that file. */
  file?: string | undefined;
}

/**
 * A person in the audit line, as name and id in plain text rather than a `<@U…>` mention: a mention
 * would notify the moderator on every check, and could tell a message's author that it was checked.
 */
function auditPerson(id: string, name: string | undefined): string {
  const safeId = id.replace(/[^A-Z0-9]/gi, '');
  return name ? `${escapeMrkdwn(name)} (${safeId})` : `user ${safeId}`;
}

/** One audit line: who checked what (a link, never the text), the verdict and the request id. */
export function buildAuditMessage(entry: AuditEntry): SlackMessage {
  let what: string;
  if (entry.permalink || entry.messageAuthorId) {
    const message = entry.permalink ? `<${entry.permalink.replace(/[<>|]/g, '')}|a message>` : 'a message';
    what = entry.messageAuthorId ? `${message} by ${auditPerson(entry.messageAuthorId, entry.messageAuthorName)}` : message;
    if (entry.file) what = `the file “${escapeMrkdwn(entry.file)}” of ${what}`;
  } else {
    what = `a pasted text${entry.words !== undefined ? ` (${entry.words} words)` : ''}`;
  }
  const verb = entry.kind === 'recheck' ? 're-checked' : 'checked';
  const where = entry.channelId ? ` in <#${entry.channelId.replace(/[^A-Z0-9]/gi, '')}>` : '';
  let outcome: string;
  if (entry.result) {
    const summary = summarizeResult(entry.result);
    outcome = summary.tooShort
      ? `${summary.headline} (${entry.mode} mode)`
      : `${summary.headline} (${summary.percent}, ${entry.mode} mode${summary.lowConfidence ? ', low confidence' : ''})`;
  } else {
    outcome = `failed: \`${escapeMrkdwn(entry.errorCode ?? 'unknown')}\` (${entry.mode} mode)`;
  }
  const requestId = entry.result?.request_id ?? entry.requestId;
  const who = auditPerson(entry.userId, entry.userName);
  const text = `:mag: ${who} ${verb} ${what}${where}: ${outcome}${requestId ? ` · request id \`${escapeMrkdwn(requestId)}\`` : ''}`;
  return { text, blocks: [{ type: 'section', block_id: 'audit', text: mrkdwn(truncateMarkup(text)) }] };
}
