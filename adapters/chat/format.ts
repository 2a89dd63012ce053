/**
 * What the Slack and Discord bots say about a result, independent of either platform's markup.
 * Each bot turns a `ResultSummary` into Block Kit or an embed; the wording lives here once.
 */
import type { DetectResponse, Mode, Segment, Verdict, WarningCode } from '../../src/contract.ts';

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
  headline: string;
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
};

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
  return {
    verdict: result.verdict,
    headline: `${VERDICT_EMOJI[result.verdict]} ${verdictLabel(result.verdict)}`,
    percent: formatPercent(result.ai_probability),
    bar: probabilityBar(result.ai_probability),
    mode: result.mode,
    language: result.language,
    requestId: result.request_id,
    model: result.model,
    lowConfidence,
    highlights: mostAiLikeSentences(result.segments).map((s) => ({
      text: truncate(s.text.trim(), highlightChars),
      percent: formatPercent(s.ai_probability),
    })),
    warningCodes,
    warningLines: warningCodes.map(warningSentence),
  };
}

/** The modes a result can be re-checked in: every chat mode except the one it was checked in. */
export function otherModes(mode: Mode): Mode[] {
  return CHAT_MODES.filter((m) => m !== mode);
}

/** One plain line for notifications, logs and fallbacks, e.g. `🔴 Likely AI-written: 87% AI-like (general, en)`. */
export function oneLineSummary(summary: ResultSummary): string {
  const warning = summary.lowConfidence ? ` (low confidence${summary.warningCodes.includes('short_text') ? ': short text' : ''})` : '';
  return `${summary.headline}: ${summary.percent} AI-like (${summary.mode}, ${summary.language})${warning}`;
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
