/**
 * What the Slack and Discord bots say about a result, independent of either platform's markup.
 * Each bot turns a `ResultSummary` into Block Kit or an embed; the wording lives here once.
 */
import type { DetectAuthorResponse, DetectResponse, Mode, Origin, Segment, Verdict, WarningCode } from '../../src/contract.ts';
import { AUTHOR_POLISHED_LINE, ORIGIN_WORDS, originHeadline, originOfAnswer } from './origin-words.ts';

export const CHAT_MODES: readonly Mode[] = ['general', 'academic', 'financial', 'legal'];

const VERDICT_LABELS: Record<Verdict, string> = {
  likely_ai: 'Likely AI-written',
  mixed: 'Mixed or uncertain',
  likely_human: 'Likely human-written',
};

/** Colours as 0xRRGGBB, shared so a verdict looks the same in both apps. */
export const VERDICT_COLOURS: Record<Verdict, number> = {
  likely_ai: 0xd93f0b,
  mixed: 0xfbca04,
  likely_human: 0x2da44e,
};

export const VERDICT_EMOJI: Record<Verdict, string> = {
  likely_ai: '🔴',
  mixed: '🟡',
  likely_human: '🟢',
};

export function verdictLabel(verdict: Verdict): string {
  return VERDICT_LABELS[verdict];
}

/** `0.873` → `87%`; never shows 0% or 100%, which would overstate what a detector can know. */
export function formatPercent(probability: number): string {
  const pct = Math.round(probability * 100);
  return `${Math.min(99, Math.max(1, pct))}%`;
}

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
  /** The origin in words (with the generated share for `partly_ai`), or "too short to judge". */
  headline: string;
  /** The headline's colour. */
  colour: number;
  /** A sentence under the headline when the headline alone needs one (AI-polished); undefined otherwise. */
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
  /** One sentence per warning the engine gave, in its order; empty when it gave none. */
  warningLines: string[];
}

/**
 * What each engine warning means to a moderator. Only the engine knows why a result is weak, so the
 * bots say what it reported and never guess a reason (a low confidence alone is no warning: the
 * verdict "Mixed or uncertain" already says so). Codes added to the engine later fall back to
 * `unknownWarningSentence` until they are worded here.
 */
export const WARNING_SENTENCES: Readonly<Record<WarningCode, string>> = {
  short_text: 'This text is short (under about 40 words), so the score is a weak guess: do not act on it alone.',
  strict_threshold:
    'The score leans AI but stays under the bar set so that at most 1 in 100 human texts is flagged, so the verdict is held back.',
  out_of_domain: 'This text is unlike the texts the detector was trained on, so the score is less reliable than usual.',
  language_uncertain: 'The language of this text was hard to tell, so the score may be off: re-check with the language set if you know it.',
  calibration_fallback:
    "The detector has no calibration for this mode in this language and used the language's general one, so the score is less precise and never called likely AI.",
  too_little_evidence: 'There are too few words to judge (under about 40), so no verdict is given.',
  language_mismatch:
    'This text is clearly in another language than the one the check was asked for, so the score means little and is never called likely AI: check again with the language detected.',
  strict_human_threshold:
    'The score leans human but stays above the bar set so that at most 1 in 20 AI texts is called likely human, so the text is not cleared.',
};

/** Headline of an answer below the evidence floor, single texts and members alike. */
export const TOO_SHORT_HEADLINE = '⚪ Too short to judge';

/** What replaces the score of a text below the evidence floor. */
export const TOO_SHORT_LINE =
  'The detector needs about 40 words or more to say anything about a text, so it gives no verdict and no score is shown.';

/** For a code the bots do not know yet: still shown, never dropped. */
export function unknownWarningSentence(code: string): string {
  const shown = code.replace(/[^\w.-]/g, '').slice(0, 40) || 'unknown';
  return `The detector flagged this result (${shown}), so treat the score with extra care.`;
}

export function warningSentence(code: string): string {
  return Object.hasOwn(WARNING_SENTENCES, code) ? WARNING_SENTENCES[code as WarningCode] : unknownWarningSentence(code);
}

export function summarizeResult(result: DetectResponse, highlightChars = 280): ResultSummary {
  const warningCodes = [
    ...new Set((Array.isArray(result.warnings) ? result.warnings : []).filter((w): w is string => typeof w === 'string' && w !== '')),
  ];
  const lowConfidence = result.confidence === 'low' || warningCodes.includes('short_text');
  const tooShort = warningCodes.includes('too_little_evidence');
  const origin = originOfAnswer(result);
  return {
    verdict: result.verdict,
    origin,
    headline: tooShort ? TOO_SHORT_HEADLINE : originHeadline(origin, result.generated_share),
    colour: ORIGIN_WORDS[origin].colour,
    originLine: !tooShort && origin === 'ai_polished' ? ORIGIN_WORDS.ai_polished.sentence : undefined,
    tooShort,
    tooShortLine: tooShort ? TOO_SHORT_LINE : undefined,
    percent: formatPercent(result.ai_probability),
    bar: probabilityBar(result.ai_probability),
    mode: result.mode,
    language: result.language,
    requestId: result.request_id,
    model: result.model,
    lowConfidence,
    highlights: tooShort
      ? []
      : mostAiLikeSentences(result.segments).map((s) => ({
          text: truncate(s.text.trim(), highlightChars),
          percent: formatPercent(s.ai_probability),
        })),
    warningCodes,
    // No score is shown below the evidence floor, so warnings about how far to trust the score say nothing.
    warningLines: tooShort ? [] : warningCodes.map(warningSentence),
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

/** `general` → `General`; used in button labels and titles. */
export function modeLabel(mode: Mode): string {
  return mode.charAt(0).toUpperCase() + mode.slice(1);
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

const LANGUAGE_NAMES: Record<string, string> = { en: 'English', tr: 'Turkish' };

/** `en` → `English`; unknown codes are shown as given. */
export function languageLabel(code: string): string {
  return LANGUAGE_NAMES[code] ?? code;
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

// What a post is made of (issues 18 and 31). `verdict: "mixed"` only says the score fell between
// the thresholds; `origin: "partly_ai"` says some passages look generated and the rest reads as the
// author's own. A moderator must be able to tell the two apart, so the headline (`summarizeResult`,
// from `origin`) says "Partly AI-written" and this summary quotes the generated passages.

/** Orange: between the yellow of an uncertain score and the red of a likely-AI one. */
export const PARTLY_GENERATED_COLOUR = ORIGIN_WORDS.partly_ai.colour;

/**
 * The result fields that say what a post is made of (filled when per-sentence scores were asked
 * for), and its warnings (a post too short to judge has nothing to say about its parts either).
 */
export type CompositionFields = Pick<DetectResponse, 'verdict' | 'segments' | 'generated_spans' | 'generated_share' | 'composition'> &
  Partial<Pick<DetectResponse, 'warnings' | 'origin'>>;

export interface CompositionSummary {
  /** `partly_generated` and `uncertain` are the two a bare "mixed" used to blur. */
  kind: 'partly_generated' | 'uncertain' | 'generated' | 'none';
  /** One sentence under the headline; undefined when there is nothing to add. */
  line: string | undefined;
  /** The generated passages to quote (at most three, text order, trimmed); empty unless partly generated. */
  passages: { text: string; percent: string }[];
  /** How many generated passages the post has (may exceed the quoted three). */
  passageCount: number;
  /** Estimated share of the post's words that are generated, e.g. `35%`; undefined when not measured. */
  share: string | undefined;
}

/** `0.354` → `35%`, kept within 1–99% unless the share is exactly 0 or 1. */
function sharePercent(share: number): string {
  if (share <= 0) return '0%';
  if (share >= 1) return '100%';
  return `${Math.min(99, Math.max(1, Math.round(share * 100)))}%`;
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
 * What to say about a post's composition, beside its verdict. `text` is the submitted text, when
 * the caller kept it, to quote spans exactly.
 */
export function summarizeComposition(
  result: CompositionFields,
  options: { text?: string | undefined; passageChars?: number } = {},
): CompositionSummary {
  const passageChars = options.passageChars ?? 200;
  const spans = Array.isArray(result.generated_spans) ? result.generated_spans : [];
  const share = typeof result.generated_share === 'number' ? result.generated_share : undefined;
  const none: CompositionSummary = {
    kind: 'none',
    line: undefined,
    passages: [],
    passageCount: spans.length,
    share: share === undefined ? undefined : sharePercent(share),
  };
  if (Array.isArray(result.warnings) && result.warnings.includes('too_little_evidence')) return { ...none, share: undefined };
  const origin = originOfAnswer(result);
  if (origin === 'partly_ai' && spans.length > 0) {
    const shown = [...spans].sort((a, b) => a.start - b.start);
    const passages = shown
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
      .slice(0, 3);
    const n = spans.length;
    const what = n === 1 ? 'One passage looks' : `${n} passages look`;
    const more = n > passages.length && passages.length > 0 ? ` The ${passages.length} most telling are quoted.` : '';
    return {
      kind: 'partly_generated',
      line: `${what} AI-written; the rest reads as the author's own writing.${more}`,
      passages,
      passageCount: n,
      share: share === undefined ? undefined : sharePercent(share),
    };
  }
  // Generated passages over most of the text, and the rest leaning AI too: the sentence model's
  // spans missed a few sentences of a generated text, which is not "partly" written by the author.
  if ((result.composition === 'ai' || result.composition === 'partly_ai') && result.verdict === 'likely_ai') {
    return {
      ...none,
      kind: 'generated',
      line:
        result.composition === 'ai'
          ? `Throughout: the generated-looking passages cover nearly all of the post${share === undefined ? '' : ` (about ${sharePercent(share)} of its words look generated)`}, not just a part of it.`
          : `Mostly generated: about ${sharePercent(share ?? 0)} of its words look generated, and the rest does not read clearly as the author's own.`,
    };
  }
  if (result.composition === 'ai' && result.verdict !== 'likely_human') {
    return {
      ...none,
      kind: 'generated',
      line: `Throughout: the generated-looking passages cover nearly all of the post${share === undefined ? '' : ` (about ${sharePercent(share)} of its words look generated)`}, not just a part of it.`,
    };
  }
  if (result.verdict === 'mixed' && result.composition === 'partly_ai') {
    return {
      ...none,
      kind: 'uncertain',
      line: `Uncertain: some passages lean AI (about ${sharePercent(share ?? 0)} of the words), but the rest does not read clearly as the author's own either, so the detector cannot tell either way.`,
    };
  }
  if (result.verdict === 'mixed') {
    const noPassage =
      result.composition === null || result.composition === undefined
        ? ''
        : ' No passage stands out as generated, so this is not a sign that part of the post was pasted in.';
    return {
      ...none,
      kind: 'uncertain',
      line: `Uncertain: the score falls between the thresholds, so the detector cannot tell either way.${noPassage}`,
    };
  }
  return none;
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
    headline: heldBack ? '🟡 Too little to judge yet' : originHeadline(origin),
    colour: ORIGIN_WORDS[origin].colour,
    originLine: origin === 'ai_polished' ? AUTHOR_POLISHED_LINE : undefined,
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
