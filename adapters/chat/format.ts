/**
 * What the Slack and Discord bots say about a result, independent of either platform's markup.
 * Each bot turns a `ResultSummary` into Block Kit or an embed. The words an answer is shown with,
 * and the decision of what to say about it, are every surface's (src/words.ts); what is the bots'
 * own (quotes, bars, member checks, queue notices) lives here once.
 */
import type { DetectAuthorResponse, DetectResponse, Mode, Origin, Segment, Verdict } from '../../src/contract.ts';
import {
  AUTHOR_HELD_BACK_LABEL,
  AUTHOR_POLISHED_SENTENCE,
  describeAnswer,
  formatPercent,
  ORIGIN_WORDS,
  originHeadline,
  originOfAnswer,
  passagesTitle,
  passagesToShow,
  type WindowMap,
  warningSentence,
} from '../../src/words.ts';

export const CHAT_MODES: readonly Mode[] = ['general', 'academic', 'financial', 'legal'];

/** A ten-cell bar such as `████████░░`, readable in any font that chat apps use. */
export function probabilityBar(probability: number, cells = 10): string {
  const filled = Math.max(0, Math.min(cells, Math.round(probability * cells)));
  return '█'.repeat(filled) + '░'.repeat(cells - filled);
}

/**
 * The `count` most AI-like sentences, in the order they appear in the text. A sentence the text repeats
 * is quoted once (its highest-scoring occurrence): three quotes of one line say nothing more than one.
 * Empty when the text has a single distinct sentence, which the verdict already covers.
 */
export function mostAiLikeSentences(segments: readonly Segment[], count = 3): Segment[] {
  const byScore = [...segments].sort((a, b) => b.ai_probability - a.ai_probability);
  const seen = new Set<string>();
  const distinct = byScore.filter((s) => {
    const key = s.text.replace(/\s+/g, ' ').trim().toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (distinct.length < 2) return [];
  return distinct.slice(0, count).sort((a, b) => a.start - b.start);
}

/** Cuts `text` to at most `max` characters (code points kept whole), marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

export interface ResultSummary {
  verdict: Verdict;
  /** The answer's headline value (`origin`), read from the verdict for servers that do not send it. */
  origin: Origin;
  /** The origin in words with its emoji (with the generated share for `partly_ai`), or "too short to judge". */
  headline: string;
  /** The headline's colour. */
  colour: number;
  /**
   * A sentence under the headline when the headline alone needs one: the polished reading, or why a
   * score did not become a verdict; undefined otherwise.
   */
  originLine: string | undefined;
  /**
   * True below the evidence floor (the engine's `too_little_evidence`): the headline then says the
   * text is too short to judge, and renderers show `tooShortLine` instead of `bar` and `percent`
   * (a percentage next to "too short" would read as a judgment all the same).
   */
  tooShort: boolean;
  /** What to say instead of the score when `tooShort`; undefined otherwise. */
  tooShortLine: string | undefined;
  percent: string;
  bar: string;
  mode: Mode;
  language: string;
  requestId: string;
  model: string;
  lowConfidence: boolean;
  /** Sentences to quote, already truncated for display. */
  highlights: { text: string; percent: string }[];
  /** The engine's warning codes, as it sent them. */
  warningCodes: string[];
  /** One sentence per warning the engine gave that the lines above do not already say, in its order. */
  warningLines: string[];
  /** The map of a long document's windows; undefined for a text of one window. */
  windows: WindowMap | undefined;
}

export function summarizeResult(result: DetectResponse, highlightChars = 280): ResultSummary {
  const words = describeAnswer(result);
  const warningCodes = [
    ...new Set((Array.isArray(result.warnings) ? result.warnings : []).filter((w): w is string => typeof w === 'string' && w !== '')),
  ];
  return {
    verdict: result.verdict,
    origin: words.origin,
    headline: `${words.emoji} ${words.label}`,
    colour: words.colour,
    originLine: words.detail,
    tooShort: words.tooShort,
    tooShortLine: words.tooShort ? words.sentence : undefined,
    percent: formatPercent(result.ai_probability),
    bar: probabilityBar(result.ai_probability),
    mode: result.mode,
    language: result.language,
    requestId: result.request_id,
    model: result.model,
    lowConfidence: result.confidence === 'low' || warningCodes.includes('short_text'),
    highlights: words.tooShort
      ? []
      : mostAiLikeSentences(result.segments).map((s) => ({
          text: truncate(s.text.trim(), highlightChars),
          percent: formatPercent(s.ai_probability),
        })),
    warningCodes,
    warningLines: words.warnings.map((w) => w.sentence),
    windows: words.windows,
  };
}

/** The modes a result can be re-checked in: every chat mode except the one it was checked in. */
export function otherModes(mode: Mode): Mode[] {
  return CHAT_MODES.filter((m) => m !== mode);
}

/** One plain line for notifications, logs and fallbacks, e.g. `🔴 Reads as AI-written: 87% AI-like (general, en)`. */
export function oneLineSummary(summary: ResultSummary): string {
  if (summary.tooShort) return `${summary.headline} (${summary.mode}, ${summary.language})`;
  const warning = summary.lowConfidence ? ` (low confidence${summary.warningCodes.includes('short_text') ? ': short text' : ''})` : '';
  // The partly headline already holds a colon and a figure of its own.
  const joint = summary.origin === 'partly_ai' ? '; the whole text' : ':';
  return `${summary.headline}${joint} ${summary.percent} AI-like (${summary.mode}, ${summary.language})${warning}`;
}

export interface SegmentLine {
  /** 1-based position of the sentence in the text. */
  index: number;
  percent: string;
  bar: string;
  /** The sentence, whitespace collapsed and cut to the display limit. */
  text: string;
  ai_probability: number;
}

/** Every sentence with its score, in text order, for a "details" view. */
export function segmentLines(segments: readonly Segment[], sentenceChars = 500): SegmentLine[] {
  return [...segments]
    .sort((a, b) => a.start - b.start)
    .map((s, i) => ({
      index: i + 1,
      percent: formatPercent(s.ai_probability),
      bar: probabilityBar(s.ai_probability, 5),
      text: truncate(s.text.replace(/\s+/g, ' ').trim(), sentenceChars),
      ai_probability: s.ai_probability,
    }));
}

/** What was left out of the score, as the counts a renderer reports (adapters/chat/markup.ts). */
export interface ExcludedCounts {
  codeBlocks: number;
  mentions: number;
  links?: number;
  /** Counted, but not named in the note (emoji are decoration); it names them when they were all a text held. */
  emoji?: number;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * One sentence for the reply when parts of the message were not scored, e.g. "Not scored: 1 code
 * block and 2 mentions (…)"; undefined when nothing was left out. Emoji are left out silently.
 */
export function excludedNote(excluded: ExcludedCounts | undefined): string | undefined {
  if (!excluded) return undefined;
  const parts: string[] = [];
  if (excluded.codeBlocks > 0) parts.push(plural(excluded.codeBlocks, 'code block', 'code blocks'));
  if (excluded.mentions > 0) parts.push(plural(excluded.mentions, 'mention', 'mentions'));
  if ((excluded.links ?? 0) > 0) parts.push(plural(excluded.links ?? 0, 'web address', 'web addresses'));
  if (parts.length === 0) return undefined;
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
  return `Not scored: ${list} (code, names and addresses are not the author's prose).`;
}

/** What a moderator sees while their check waits its turn in the bots' queue (adapters/chat/queue.ts). */
export function queuedNotice(position: number): string {
  return `⏳ Queued (position ${position}): other checks are ahead of this one; the result follows as soon as the detection service has room.`;
}

// What a post is made of (issues 18, 31 and 39): the words are src/words.ts's composition box;
// what is the bots' own is quoting the generated passages of a partly AI-written post.

/**
 * The result fields that say what a post is made of (filled when per-sentence scores were asked
 * for), and its warnings (a post too short to judge has nothing to say about its parts either).
 */
export type CompositionFields = Pick<DetectResponse, 'verdict' | 'segments' | 'generated_spans' | 'generated_share' | 'composition'> &
  Partial<Pick<DetectResponse, 'warnings' | 'origin' | 'ai_probability' | 'confidence' | 'windows'>>;

export interface CompositionSummary {
  /** The composition box in one line ("Partly generated: part of the text looks …"); undefined without sentence scores. */
  line: string | undefined;
  /** The title over the quoted passages, e.g. "Passages that look AI-generated (42% of the post; the first 3 of 4)". */
  title: string;
  /** The generated passages to quote (at most three, text order, trimmed); empty unless partly AI-written. */
  passages: { text: string; percent: string }[];
  /** How many generated passages the post has (may exceed the quoted three). */
  passageCount: number;
  /** Estimated share of the post's words that are generated, e.g. `35%`; undefined when not measured. */
  share: string | undefined;
}

/**
 * The words of one generated span: from the submitted text when the caller has it (offsets are UTF-16
 * offsets into it), otherwise rebuilt from the sentence scores that lie inside the span.
 */
function spanText(span: { start: number; end: number }, segments: readonly Segment[], text: string | undefined): string {
  if (text !== undefined && span.end <= text.length && span.start < span.end) return text.slice(span.start, span.end);
  const inside = segments.filter((s) => s.start >= span.start && s.end <= span.end);
  const pieces = inside.length > 0 ? inside : segments.filter((s) => s.start < span.end && s.end > span.start);
  return [...pieces]
    .sort((a, b) => a.start - b.start)
    .map((s) => s.text)
    .join(' ');
}

/**
 * What to say about a post's composition, beside its headline. `text` is the submitted text, when
 * the caller kept it, to quote spans exactly.
 */
export function summarizeComposition(
  result: CompositionFields,
  options: { text?: string | undefined; passageChars?: number; of?: 'post' | 'file' } = {},
): CompositionSummary {
  const passageChars = options.passageChars ?? 200;
  const spans = passagesToShow(result);
  const words = describeAnswer({
    ai_probability: result.ai_probability ?? 0.5,
    confidence: result.confidence ?? 'low',
    warnings: result.warnings ?? [],
    ...result,
  });
  const share = words.composition && typeof result.generated_share === 'number' ? formatPercent(result.generated_share) : undefined;
  const passages =
    words.origin === 'partly_ai'
      ? spans
          .map((span) => ({
            text: truncate(
              spanText(span, result.segments ?? [], options.text)
                .replace(/\s+/g, ' ')
                .trim(),
              passageChars,
            ).replace(/\s+…$/, '…'),
            percent: formatPercent(span.ai_probability),
          }))
          .filter((p) => p.text !== '')
          .slice(0, 3)
      : [];
  const notes = [
    ...(share ? [`${share} of the ${options.of ?? 'post'}`] : []),
    ...(spans.length > passages.length && passages.length > 0 ? [`the first ${passages.length} of ${spans.length}`] : []),
  ];
  return {
    line: words.composition ? `${words.composition.label}: ${lowerFirst(words.composition.sentence)}` : undefined,
    title: `${passagesTitle(words.origin)}${notes.length ? ` (${notes.join('; ')})` : ''}`,
    passages,
    passageCount: spans.length,
    share,
  };
}

/** "Most of the text" → "most of the text", after a colon. */
function lowerFirst(sentence: string): string {
  return /^[A-Z][a-z]/.test(sentence) ? sentence.charAt(0).toLowerCase() + sentence.slice(1) : sentence;
}

/** What a single message check says when the message alone is too short, pointing at the member-level check. */
export const SHORT_MESSAGE_AUTHOR_HINT =
  'This message is too short to judge on its own. Checking the author’s recent messages together gives a far more reliable answer.';

/** Label of the button that checks a message's author. */
export const AUTHOR_CHECK_BUTTON_LABEL = 'Check their recent messages';

// One member's recent messages, judged together (issue 17).

/**
 * Why a message of the member was not scored: the bots' own reasons (left out before the call) and
 * the engine's `SkipReason`s (in the answer's `messages[].skipped`).
 */
export type LeftOutReason =
  | 'command'
  | 'attachments_only'
  | 'link_only'
  | 'no_prose'
  | 'unreadable'
  | 'forwarded'
  | 'app_post'
  | 'over_size'
  | 'empty'
  | 'no_words'
  | 'other_language';

/** The order reasons are listed in, most common first. */
const LEFT_OUT_ORDER: readonly LeftOutReason[] = [
  'command',
  'attachments_only',
  'link_only',
  'no_prose',
  'empty',
  'no_words',
  'other_language',
  'forwarded',
  'app_post',
  'unreadable',
  'over_size',
];

/** `n` messages left out for `reason`, as words: "3 commands", "1 message with only a link". */
export function leftOutPhrase(reason: LeftOutReason, n: number): string {
  const messages = n === 1 ? '1 message' : `${n} messages`;
  switch (reason) {
    case 'command':
      return n === 1 ? '1 command' : `${n} commands`;
    case 'attachments_only':
      return `${messages} with only files, images or stickers`;
    case 'link_only':
      return `${messages} with only a link`;
    case 'no_prose':
      return `${messages} with only code, mentions or emoji`;
    case 'empty':
      return `${n === 1 ? '1 empty message' : `${n} empty messages`}`;
    case 'no_words':
      return `${messages} without words`;
    case 'other_language':
      return `${messages} in a language the detector does not support`;
    case 'forwarded':
      return `${messages} forwarded from elsewhere (not their writing)`;
    case 'app_post':
      return `${messages} posted through an app`;
    case 'unreadable':
      return `${messages} whose text the platform hid from the bot`;
    case 'over_size':
      return `${messages} past the size one check may carry (the oldest)`;
  }
}

/** "Left out: 3 commands and 1 message with only a link." or undefined when nothing was. */
export function leftOutLine(counts: ReadonlyMap<LeftOutReason, number>): string | undefined {
  const parts = LEFT_OUT_ORDER.filter((r) => (counts.get(r) ?? 0) > 0).map((r) => leftOutPhrase(r, counts.get(r) ?? 0));
  if (parts.length === 0) return undefined;
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
  return `Left out: ${list}.`;
}

function countPhrase(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** `evidence_needed` in words: "A verdict needs 2 more messages and 40 more words by this member." */
export function evidenceNeededLine(needed: { messages: number; words: number } | null | undefined): string | undefined {
  if (!needed) return undefined;
  const parts: string[] = [];
  if (needed.messages > 0) parts.push(countPhrase(needed.messages, 'more message', 'more messages'));
  if (needed.words > 0) parts.push(countPhrase(needed.words, 'more word', 'more words'));
  if (parts.length === 0) return 'The verdict is held back: there is too little usable text by this member yet.';
  return `Held back: a verdict needs ${parts.join(' and ')} of their own writing. Check again once they have written more, or widen the window in the settings.`;
}

/** One message of the member that was sent for scoring, as the reply shows it. */
export interface SentMessageView {
  /** What readers see of the message (quoted, trimmed). */
  excerpt: string;
  /** Jump link or permalink, when known. */
  link?: string | undefined;
}

export interface AuthorSummary {
  verdict: Verdict;
  /** The answer's `origin` (`uncertain` when held back). */
  origin: Origin;
  /** A sentence under the headline when it needs one (AI-polished); undefined otherwise. */
  originLine: string | undefined;
  /** True when `evidence_needed` held the verdict back. */
  heldBack: boolean;
  headline: string;
  colour: number;
  percent: string;
  bar: string;
  /** "over 23 messages and 612 words" */
  basis: string;
  /**
   * When held back (below the evidence floor): what replaces the score under the headline, which
   * renderers show instead of `bar` and `percent`; undefined otherwise.
   */
  heldBackLine: string | undefined;
  evidenceLine: string | undefined;
  leftOutLine: string | undefined;
  /** The engine's warnings other than `too_little_evidence` (which `evidenceLine` words). */
  warningLines: string[];
  /** The most AI-like messages, most AI-like first: position in the request, score, excerpt and link. */
  top: { position: number; percent: string; excerpt: string; link: string | undefined }[];
  mode: Mode;
  language: string;
  requestId: string;
  model: string;
}

/** Positions (in the request) of the `count` most AI-like scored messages, most AI-like first. */
export function mostAiLikeMessages(response: Pick<DetectAuthorResponse, 'messages'>, count = 3): number[] {
  return (Array.isArray(response.messages) ? response.messages : [])
    .filter((m) => m.skipped === null && typeof m.ai_probability === 'number')
    .sort((a, b) => (b.ai_probability ?? 0) - (a.ai_probability ?? 0) || a.index - b.index)
    .slice(0, count)
    .map((m) => m.index);
}

/**
 * What the bots say about one member's messages: the verdict over N messages and W words, the three
 * most AI-like messages, what was left out and why (`leftOut`: the bot's reasons; the engine's are
 * added from the answer), and what a held-back verdict would need.
 */
export function summarizeAuthorResult(
  response: DetectAuthorResponse,
  sent: readonly SentMessageView[],
  leftOut: ReadonlyMap<LeftOutReason, number>,
  excerptChars = 160,
): AuthorSummary {
  const counts = new Map(leftOut);
  for (const m of Array.isArray(response.messages) ? response.messages : []) {
    if (m.skipped) counts.set(m.skipped, (counts.get(m.skipped) ?? 0) + 1);
  }
  const heldBack = response.evidence_needed !== null && response.evidence_needed !== undefined;
  const scores = new Map((response.messages ?? []).map((m) => [m.index, m]));
  // Held back, the messages are each too short as well: no percentage is shown for any of them.
  const top = (heldBack ? [] : mostAiLikeMessages(response)).map((position) => ({
    position,
    percent: formatPercent(scores.get(position)?.ai_probability ?? 0),
    excerpt: truncate((sent[position]?.excerpt ?? '').replace(/\s+/g, ' ').trim(), excerptChars),
    link: sent[position]?.link,
  }));
  const warningCodes = [...new Set((response.warnings ?? []).filter((w) => typeof w === 'string' && w !== ''))];
  const origin = heldBack ? 'uncertain' : originOfAnswer(response);
  return {
    verdict: response.verdict,
    origin,
    heldBack,
    headline: heldBack ? `${ORIGIN_WORDS.uncertain.emoji} ${AUTHOR_HELD_BACK_LABEL}` : originHeadline(origin),
    colour: ORIGIN_WORDS[origin].colour,
    originLine: origin === 'ai_polished' ? AUTHOR_POLISHED_SENTENCE : undefined,
    percent: formatPercent(response.ai_probability),
    bar: probabilityBar(response.ai_probability),
    basis: `over ${countPhrase(response.messages_used, 'message', 'messages')} and ${countPhrase(response.words_used, 'word', 'words')}`,
    heldBackLine: heldBack
      ? `Too little to judge: ${countPhrase(response.messages_used, 'message', 'messages')} and ${countPhrase(response.words_used, 'word', 'words')} of theirs could be scored, so no score is shown.`
      : undefined,
    evidenceLine: evidenceNeededLine(response.evidence_needed),
    leftOutLine: leftOutLine(counts),
    warningLines: warningCodes.filter((c) => !(heldBack && c === 'too_little_evidence')).map(warningSentence),
    top,
    mode: response.mode,
    language: response.language,
    requestId: response.request_id,
    model: response.model,
  };
}

/** Where the messages were read from, e.g. "their last 50 messages in this channel from the past 30 days". */
export function historyScopeLine(read: number, window: { maxMessages: number; days: number }): string {
  const days = countPhrase(window.days, 'day', 'days');
  if (read === 0) return `No messages by them in this channel in the past ${days}.`;
  const which =
    read >= window.maxMessages
      ? `their last ${countPhrase(read, 'message', 'messages')}`
      : `all ${countPhrase(read, 'message', 'messages')} of theirs`;
  return `Read ${which} in this channel from the past ${days}.`;
}

/** Answer when nothing of the member could be scored, so no call was made. */
export function nothingToScoreSentence(
  read: number,
  leftOut: ReadonlyMap<LeftOutReason, number>,
  window: { maxMessages: number; days: number },
  scanLimitHit: boolean,
): string {
  const days = countPhrase(window.days, 'day', 'days');
  if (read === 0) {
    return scanLimitHit
      ? `This member wrote nothing in the latest messages of this channel the bot looked at (it reads at most the newest 1,000 messages of a channel, within the past ${days}), so there is nothing to check.`
      : `This member has written no messages in this channel in the past ${days}, so there is nothing to check. Run the check in a channel where they write, or widen the window in the settings.`;
  }
  return `None of this member's ${countPhrase(read, 'message', 'messages')} in this channel from the past ${days} has prose to score. ${leftOutLine(leftOut) ?? ''}`.trim();
}
