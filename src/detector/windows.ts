/**
 * Whole documents, window by window (docs/service.md, "Whole documents"). A text longer than one
 * window is cut into windows of about WINDOW_WORDS words at sentence ends; each window is scored
 * like a text of its own, and the document's answer follows from the windows by one rule
 * (`combineWindows`).
 *
 * Why windows of about 800 words: they lie in the band the likely_ai and likely_human thresholds
 * were fitted on (80 words and more) and no longer than 99% of the calibration texts, and a longer
 * window is more decisive. On 500 Brown corpus texts, 35 long human documents and 24 long AI
 * documents built from the dev sets, the share of human windows called likely_human was 48%, 65%,
 * 75% and 83% for windows of 300, 500, 800 and 1,200 words, of AI windows called likely_ai 56%, 68%,
 * 74% and 80%, and not one of the 9,663 human windows was called likely_ai at any size (`npm run
 * eval:windows`; docs/service.md, "Whole documents").
 * Shorter windows would draw a finer map at the price of more "mixed" windows; longer ones would
 * leave the calibrated lengths.
 *
 * The cut is told from the words and the sentence ends only, never from line or paragraph breaks,
 * so the same text read out of a PDF (lines joined, paragraph gaps guessed) and out of a DOCX (Word's
 * paragraphs) is cut at the same words.
 */
import { type DocumentWindow, POLISHED_THRESHOLD, WARNING_CODES } from '../contract.ts';
import { HUMAN_REST_MAX_PROBABILITY } from './origin.ts';
import { round4 } from './model.ts';
import type { Composition, Confidence, DetectionResult, DetectOptions, DocumentPlan, Origin, Verdict, WindowScore } from './types.ts';

/** Words a window aims at; a text is cut into round(words / WINDOW_WORDS) windows of equal share. */
export const WINDOW_WORDS = 800;
/** A text of fewer words is one window, judged whole (round(words / WINDOW_WORDS) ≤ 1). */
export const ONE_WINDOW_WORDS = Math.ceil(WINDOW_WORDS * 1.5);
/**
 * From this share of its words in windows called likely_ai, a document is "generated throughout"
 * (`composition: "ai"`), as for the generated spans of one text.
 */
const ALL_GENERATED_SHARE = 0.9;

/** A window's place in the text: UTF-16 offsets, [start, end), trimmed of whitespace. */
export type WindowRange = DocumentPlan['windows'][number];

/**
 * A word as the engine reads it: letters and digits, with the marks and invisible format characters
 * (zero-width space and joiners, soft hyphen) that normalisation removes counted inside it, so a
 * text sprinkled with U+200B is cut where the clean text is (and not judged in windows at all when
 * the clean text is one window).
 */
const RE_WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}\p{Cf}]*/gu;
/** A sentence end: . ! ? or … (closing quotes and brackets, or format characters, after it), then whitespace. */
const RE_SENTENCE_END = /[.!?…][\p{Cf}"'”’»)\]]*(?=\s)/gu;
const RE_SPACE = /\s/u;

/**
 * The windows of `text`: one (the whole text, untrimmed) when it has fewer than ONE_WINDOW_WORDS
 * words, else round(words / WINDOW_WORDS) windows, each cut at the sentence end nearest to its
 * share of the words (within a quarter of a window; else between two words). Linear in the text.
 * `windowWords` other than WINDOW_WORDS is for measuring other sizes (`npm run eval:windows`).
 */
export function windowRanges(text: string, windowWords = WINDOW_WORDS): WindowRange[] {
  // Two windows need 1.5 windows of words, and n words at least 2n - 1 characters: most texts stop here.
  if (text.length < 3 * windowWords - 1) return [{ start: 0, end: text.length }];
  // Word starts, counted first.
  const wordStarts: number[] = [];
  RE_WORD.lastIndex = 0;
  for (let m = RE_WORD.exec(text); m; m = RE_WORD.exec(text)) wordStarts.push(m.index);
  const total = wordStarts.length;
  const k = Math.round(total / windowWords);
  if (k <= 1) return [{ start: 0, end: text.length }];
  // Sentence ends, as the number of words before each.
  const endWords: number[] = [];
  const endOffsets: number[] = [];
  RE_SENTENCE_END.lastIndex = 0;
  let w = 0;
  for (let m = RE_SENTENCE_END.exec(text); m; m = RE_SENTENCE_END.exec(text)) {
    const at = m.index + m[0].length;
    while (w < total && wordStarts[w]! < at) w++;
    endWords.push(w);
    endOffsets.push(at);
  }
  const cuts: number[] = [];
  let previous = 0;
  let e = 0;
  for (let j = 1; j < k; j++) {
    const ideal = Math.round((total * j) / k);
    while (e < endWords.length && endWords[e]! < ideal) e++;
    // The nearest sentence end on either side of the ideal word, after the previous cut.
    let best = -1;
    for (const candidate of [e - 1, e]) {
      const at = endWords[candidate];
      if (at === undefined || at <= previous || at >= total || Math.abs(at - ideal) > windowWords / 4) continue;
      if (best < 0 || Math.abs(at - ideal) < Math.abs(endWords[best]! - ideal)) best = candidate;
    }
    const cutWord = best >= 0 ? endWords[best]! : Math.max(previous + 1, ideal);
    if (cutWord >= total) break;
    cuts.push(wordStarts[cutWord]!);
    previous = cutWord;
  }
  const ranges: WindowRange[] = [];
  let start = 0;
  for (const cut of [...cuts, text.length]) {
    ranges.push(trimmed(text, start, cut));
    start = cut;
  }
  return ranges;
}

function trimmed(text: string, start: number, end: number): WindowRange {
  while (start < end && RE_SPACE.test(text[start]!)) start++;
  while (end > start && RE_SPACE.test(text[end - 1]!)) end--;
  return { start, end };
}

/**
 * The document's answer from its windows' (`scores[i]` is the window `plan.windows[i]`), by the one
 * rule of docs/service.md, "Whole documents":
 * - `verdict`: `likely_ai` when the windows called likely_ai hold more than half of the words;
 *   `likely_human` when no window is called likely_ai and the windows called likely_human hold more
 *   than half of the words; else `mixed`. So a document is never flagged unless most of it is,
 *   window by window, and one window cannot flag it.
 * - `ai_probability`: the windows' probabilities' lower median, each window weighted by its words
 *   (at least half of the words are in windows at or under it, and at least half at or over it).
 * - `generated_share`: the share of the words in windows called likely_ai; `composition`: `ai` from
 *   ALL_GENERATED_SHARE of them, `partly_ai` below it and above none, `human` when none and the
 *   verdict is likely_human, else `uncertain`.
 * - `origin`: `partly_ai` when some windows are called likely_ai, not nearly all (`composition:
 *   "partly_ai"`), and the other windows average under HUMAN_REST_MAX_PROBABILITY (they read as
 *   the author's own); else read off the verdict as for one text (`ai_polished` / `ai_written` by
 *   `polished_probability`, `human`, `uncertain`).
 * - `confidence`: `low` when `mixed`; `high` when windows of the verdict with high confidence hold
 *   more than half of the words; else `medium`.
 * - `polished_probability`: the mean over the windows called likely_ai (all windows when none is),
 *   weighted by words. `warnings`: every window's, in WARNING_CODES order, except that the two
 *   "strict" codes are the document's own (a mixed verdict leaning AI or human, with no window
 *   called likely_ai).
 * - With segments: the windows' sentences and generated spans, in text order, offsets into the
 *   whole text; a span never crosses a window's edge. They show where inside each window; the
 *   headline follows the windows' verdicts only (a human document of 90 windows would otherwise be
 *   called partly AI whenever one window's sentence model marked a few sentences).
 */
export function combineWindows(plan: DocumentPlan, scores: readonly WindowScore[], options: DetectOptions): DetectionResult {
  if (scores.length !== plan.windows.length || scores.length === 0) throw new Error('combineWindows needs one score per window.');
  const segments = options.segments === true;
  let total = 0;
  let aiWords = 0;
  let humanWords = 0;
  for (const s of scores) {
    total += s.words;
    if (s.verdict === 'likely_ai') aiWords += s.words;
    if (s.verdict === 'likely_human') humanWords += s.words;
  }
  const half = total / 2;
  const verdict: Verdict = aiWords > half ? 'likely_ai' : aiWords === 0 && humanWords > half ? 'likely_human' : 'mixed';
  const probability = weightedLowerMedian(scores);
  const share = total > 0 ? round4(aiWords / total) : 0;
  const composition: Composition =
    share >= ALL_GENERATED_SHARE ? 'ai' : share > 0 ? 'partly_ai' : verdict === 'likely_human' ? 'human' : 'uncertain';

  const aiWindows = scores.filter((s) => s.verdict === 'likely_ai');
  const polished = weightedMean(aiWindows.length > 0 ? aiWindows : scores, (s) => s.polished_probability);
  const restProbability = weightedMean(
    scores.filter((s) => s.verdict !== 'likely_ai'),
    (s) => s.ai_probability,
  );
  let origin: Origin;
  if (composition === 'partly_ai' && restProbability !== null && restProbability < HUMAN_REST_MAX_PROBABILITY) origin = 'partly_ai';
  else if (verdict === 'likely_ai') origin = polished !== null && polished >= POLISHED_THRESHOLD ? 'ai_polished' : 'ai_written';
  else origin = verdict === 'likely_human' ? 'human' : 'uncertain';

  let confidence: Confidence = 'low';
  if (verdict !== 'mixed') {
    const sure = scores.filter((s) => s.verdict === verdict && s.confidence === 'high').reduce((sum, s) => sum + s.words, 0);
    confidence = sure > half ? 'high' : 'medium';
  }

  const seen = new Set<string>();
  for (const s of scores) for (const w of s.warnings) if (w !== 'strict_threshold' && w !== 'strict_human_threshold') seen.add(w);
  if (verdict === 'mixed' && aiWords === 0) seen.add(probability >= 0.5 ? 'strict_threshold' : 'strict_human_threshold');
  const known = WARNING_CODES as readonly string[];
  const warnings = [...seen].sort((a, b) => rank(known, a) - rank(known, b));

  const windows: DocumentWindow[] = scores.map((s, i) => ({
    start: plan.windows[i]!.start,
    end: plan.windows[i]!.end,
    words: s.words,
    pages: null,
    ai_probability: s.ai_probability,
    verdict: s.verdict,
    confidence: s.confidence,
    origin: s.origin,
  }));
  const first = scores[0]!;
  return {
    ai_probability: probability,
    mode: first.mode,
    language: plan.language,
    verdict,
    confidence,
    segments: segments
      ? scores.flatMap((s, i) => s.segments.map((g) => ({ ...g, start: g.start + windows[i]!.start, end: g.end + windows[i]!.start })))
      : [],
    warnings,
    model: first.model,
    generated_spans: segments
      ? scores.flatMap((s, i) =>
          s.generated_spans.map((g) => ({ ...g, start: g.start + windows[i]!.start, end: g.end + windows[i]!.start })),
        )
      : [],
    generated_share: share,
    composition,
    polished_probability: polished === null ? null : round4(polished),
    origin,
    windows,
  };
}

function rank(known: readonly string[], code: string): number {
  const i = known.indexOf(code);
  return i < 0 ? known.length : i;
}

/** The lowest probability at which the windows at or under it hold at least half of the words. */
function weightedLowerMedian(scores: readonly WindowScore[]): number {
  const sorted = [...scores].sort((a, b) => a.ai_probability - b.ai_probability);
  const total = sorted.reduce((sum, s) => sum + s.words, 0);
  let seen = 0;
  for (const s of sorted) {
    seen += s.words;
    if (seen * 2 >= total) return s.ai_probability;
  }
  return sorted.at(-1)!.ai_probability;
}

function weightedMean(scores: readonly WindowScore[], value: (s: WindowScore) => number | null): number | null {
  let words = 0;
  let sum = 0;
  for (const s of scores) {
    const v = value(s);
    if (v === null) continue;
    words += s.words;
    sum += v * s.words;
  }
  return words > 0 ? sum / words : null;
}
