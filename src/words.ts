/**
 * The words an answer is shown with, written once for every surface: the web page (which is served
 * a compiled copy of this module, src/service/playground/assets.ts), the CLI and both bots.
 *
 * `describeAnswer` is the one decision of what to say about an answer of `POST /v1/detect` or
 * `/v1/detect/file`: the headline, the sentence under it (for a score that did not become a verdict,
 * why not), the box that says what the text is made of, the warnings and the map of a long
 * document's windows. Every surface lays out what it returns and adds no judgment of its own, so
 * no two surfaces, and no two parts of one answer, tell a text two stories (issue 39).
 *
 * The module runs unchanged in a browser: it imports only src/contract.ts (served beside it), uses
 * no Node API, and only TypeScript syntax that type stripping erases (no enum, namespace or
 * parameter property).
 */
import {
  type Composition,
  type Confidence,
  type DocumentWindow,
  EVIDENCE_FLOOR_WORDS,
  type GeneratedSpan,
  ORIGINS,
  type Origin,
  type Verdict,
  type WarningCode,
} from './contract.ts';

/**
 * The text the first start's `curl` line and README's example send: one paragraph an AI assistant
 * wrote, long enough to judge (over EVIDENCE_FLOOR_WORDS words), in plain ASCII without a quote
 * mark, so it can be pasted into a shell as it is.
 */
export const EXAMPLE_TEXT =
  'Climate change poses significant challenges to global food security. Rising temperatures, shifting precipitation patterns, and more frequent extreme weather events can reduce crop yields and disrupt supply chains. Furthermore, these impacts are likely to fall disproportionately on vulnerable populations in low-income regions. Addressing these challenges will require a comprehensive approach that combines climate-resilient agricultural practices, improved infrastructure, and coordinated international policy efforts.';

/**
 * A probability or a share as a whole percent, never 0% or 100%: a detector cannot be certain, and
 * 0.9995 rounded to "100%" reads as if it were.
 */
export function formatPercent(probability: number): string {
  return `${Math.min(99, Math.max(1, Math.round(probability * 100)))}%`;
}

// ---- The headline

export interface OriginWords {
  emoji: string;
  /** 0xRRGGBB, for embeds, cards and the page. */
  colour: number;
  /** The headline; `partly_ai`'s gets the share added (`originLabel`). */
  label: string;
  /** What the headline means, in one sentence. */
  sentence: string;
}

export const ORIGIN_WORDS: Readonly<Record<Origin, OriginWords>> = {
  ai_written: {
    emoji: '🔴',
    colour: 0xd93f0b,
    label: 'Reads as AI-written',
    sentence: 'This text was most likely written by an AI system.',
  },
  ai_polished: {
    emoji: '🟣',
    colour: 0x8250df,
    label: "Reads as the author's own text, polished by an AI",
    sentence: "It reads as a person's own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.",
  },
  partly_ai: {
    emoji: '🟠',
    colour: 0xe8773a,
    label: 'Partly AI-written',
    sentence: "Some passages look generated; the rest reads as the author's own writing.",
  },
  human: {
    emoji: '🟢',
    colour: 0x2da44e,
    label: 'Likely human-written',
    sentence: 'This text was most likely written by a person.',
  },
  // One label on every surface: "Mixed" was read as "partly generated", which `partly_ai` says.
  uncertain: {
    emoji: '🟡',
    colour: 0xfbca04,
    label: 'Unclear',
    sentence: 'The score falls between the bars for AI-written and human-written, so the detector cannot tell either way.',
  },
};

/** Under the evidence floor (`too_little_evidence`): no verdict, and no score shown, which would read as one all the same. */
export const TOO_SHORT = {
  emoji: '⚪',
  colour: 0x8b949e,
  label: 'Too short to judge',
  sentence: `Under about ${EVIDENCE_FLOOR_WORDS} words the detector cannot tell AI-written from human writing, so it gives no verdict and no score is shown.`,
} as const;

/** A member check (`/v1/detect/author`) read as polished: the headline's sentence, said of their messages. */
export const AUTHOR_POLISHED_SENTENCE =
  'Their messages read as their own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.';

/** A member check held back below the evidence floor. */
export const AUTHOR_HELD_BACK_LABEL = 'Too little to judge yet';

const FROM_VERDICT: Readonly<Record<Verdict, Origin>> = { likely_ai: 'ai_written', mixed: 'uncertain', likely_human: 'human' };

/**
 * The answer's `origin`; for an answer without one (a server older than it), or with a value newer
 * than this build, what its warnings, composition and verdict said, so no surface shows a raw code.
 */
export function originOfAnswer(answer: {
  verdict: Verdict;
  origin?: unknown;
  warnings?: readonly string[];
  composition?: unknown;
}): Origin {
  if (typeof answer.origin === 'string' && (ORIGINS as readonly string[]).includes(answer.origin)) return answer.origin as Origin;
  if (Array.isArray(answer.warnings) && answer.warnings.includes('too_little_evidence')) return 'uncertain';
  if (answer.composition === 'partly_ai') return 'partly_ai';
  return FROM_VERDICT[answer.verdict] ?? 'uncertain';
}

/** The headline's words: `partly_ai` says how much, "Partly AI-written: about 55% of the words look generated". */
export function originLabel(origin: Origin, share?: number | null): string {
  const { label } = ORIGIN_WORDS[origin];
  if (origin === 'partly_ai' && typeof share === 'number') return `${label}: about ${formatPercent(share)} of the words look generated`;
  return label;
}

/** The headline with its emoji, e.g. `🔴 Reads as AI-written`. */
export function originHeadline(origin: Origin, share?: number | null): string {
  return `${ORIGIN_WORDS[origin].emoji} ${originLabel(origin, share)}`;
}

export const CONFIDENCE_WORDS: Readonly<Record<Confidence, string>> = {
  high: 'High confidence',
  medium: 'Medium confidence',
  low: 'Low confidence',
};

export function confidenceWords(confidence: string): string {
  return Object.hasOwn(CONFIDENCE_WORDS, confidence) ? CONFIDENCE_WORDS[confidence as Confidence] : `Confidence: ${confidence}`;
}

// ---- Warnings

/**
 * What each engine warning means to a reader. Only the engine knows why a result is weak, so the
 * surfaces say what it reported and never guess a reason; a code added later still gets a sentence
 * (`warningSentence`).
 */
export const WARNING_SENTENCES: Readonly<Record<WarningCode, string>> = {
  short_text: `The text is short (under about ${EVIDENCE_FLOOR_WORDS} words), so the score is a weak guess.`,
  strict_threshold:
    'The score leans AI but stays under the bar this server holds before it calls a text AI-written, set so that at most 1 in 100 human texts is called AI-written.',
  out_of_domain:
    'The text is unlike the texts the detector was calibrated on, so the score is less reliable and only a clear score becomes a verdict. Another mode may fit it better.',
  language_uncertain:
    'The language could not be told with certainty, so the text was scored as the language shown. If that is wrong, choose the language and check again.',
  calibration_fallback:
    "There is no calibration for this mode in this language, so the language's general one was used: the score is less precise and is never called AI-written.",
  too_little_evidence: `There are too few words to judge (under about ${EVIDENCE_FLOOR_WORDS}), so no verdict and no score are given.`,
  language_mismatch:
    'The text is clearly in another language than the one asked for, so it was scored with a model for the wrong language: the score means little and is never called AI-written. Check it again with the language detected.',
  strict_human_threshold:
    'The score leans human but stays above the bar this server holds before it calls a text human-written, set so that at most 1 in 20 AI texts is called human-written.',
};

/** A sentence for every warning, including codes added to the API after this build. */
export function warningSentence(code: string): string {
  if (Object.hasOwn(WARNING_SENTENCES, code)) return WARNING_SENTENCES[code as WarningCode];
  const shown = code.replace(/[^\w.-]/g, '').slice(0, 40) || 'unknown';
  return `The detector flagged this result (“${shown}”), so treat the score with extra care.`;
}

// ---- Shares of words

/**
 * The words for a share of the text's words, by band, so "nearly all" is never said of 71%. Each
 * band's words go before "of the text" and are said with the figure beside them; `key` picks the
 * composition box's title.
 */
export const SHARE_BANDS = [
  { min: 0.9, words: 'Nearly all', key: 'throughout' },
  { min: 0.6, words: 'Most', key: 'most' },
  { min: 0.4, words: 'About half', key: 'places' },
  { min: 0.15, words: 'Part', key: 'places' },
  { min: 0, words: 'A small part', key: 'places' },
] as const;

/** The band of a share: 0.71 is "Most". */
export function shareBand(share: number): (typeof SHARE_BANDS)[number] {
  // The last band's `min` is 0, so only a negative share falls through it.
  return SHARE_BANDS.find((band) => share >= band.min) ?? SHARE_BANDS[4];
}

/** How firmly a span looks generated, for a passage's description ("clearly", "probably", "possibly"). */
export function spanWords(confidence: string | undefined): string {
  if (confidence === 'high') return 'clearly';
  if (confidence === 'medium') return 'probably';
  return 'possibly';
}

/** Said before a generated span's text: "Passage that clearly looks AI-generated, 87%" (AI wording, under a polished headline). */
export function passageWords(confidence: string | undefined, probability: number, origin: Origin): string {
  return `Passage that ${spanWords(confidence)} ${origin === 'ai_polished' ? 'reads as AI wording' : 'looks AI-generated'}, ${formatPercent(probability)}`;
}

/**
 * The generated spans a surface quotes or outlines, in text order. A text of one window: all of
 * them. A long document, whose headline and share are read off its windows: only the spans inside
 * windows that read as AI-touched (AI-written, polished or partly AI); a span in a window that reads
 * as human-written or unclear is one stray run of sentences among thousands, which the document's
 * rule does not count, and quoting it under "Passages that look AI-generated" would say otherwise.
 */
export function passagesToShow<S extends Pick<GeneratedSpan, 'start' | 'end'>>(answer: {
  generated_spans?: readonly S[] | null;
  windows?: readonly Pick<DocumentWindow, 'start' | 'end' | 'origin'>[] | null;
}): S[] {
  const spans = Array.isArray(answer.generated_spans) ? [...answer.generated_spans].sort((a, b) => a.start - b.start) : [];
  const windows = Array.isArray(answer.windows) ? answer.windows : [];
  if (windows.length < 2) return spans;
  const touched = windows.filter((w) => w.origin === 'ai_written' || w.origin === 'ai_polished' || w.origin === 'partly_ai');
  return spans.filter((span) => {
    const middle = (span.start + span.end) / 2;
    return touched.some((w) => middle >= w.start && middle < w.end);
  });
}

/** The title over a list of the generated spans. */
export function passagesTitle(origin: Origin): string {
  return origin === 'ai_polished' ? 'Passages that read as AI wording' : 'Passages that look AI-generated';
}

/** The title over a long document's map. */
export const WINDOWS_TITLE = 'Part by part';

function count(n: number, one: string, many: string): string {
  return `${n === 1 ? 'one' : n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

// ---- The decision

/** What `describeAnswer` reads: an answer of `/v1/detect` or `/v1/detect/file`, from this server or an older one. */
export interface AnswerInput {
  ai_probability: number;
  verdict: Verdict;
  confidence: Confidence | string;
  warnings: readonly string[];
  origin?: unknown;
  composition?: Composition | null;
  generated_share?: number | null;
  generated_spans?: ReadonlyArray<Pick<GeneratedSpan, 'start' | 'end' | 'confidence'>>;
  windows?: readonly DocumentWindow[];
}

export interface CompositionWords {
  /** The box's title, e.g. "Partly generated". */
  label: string;
  sentence: string;
}

export interface AnswerWords {
  /** The headline value (`uncertain` below the evidence floor). */
  origin: Origin;
  /** Below the evidence floor: the headline says so and no score is shown. */
  tooShort: boolean;
  emoji: string;
  colour: number;
  /** The headline, e.g. "Partly AI-written: about 55% of the words look generated" or "Too short to judge". */
  label: string;
  /** The sentence under the headline: what it means, or why a score did not become a verdict. */
  sentence: string;
  /**
   * The sentence a surface short of room still shows under the headline (a chat reply): the
   * polished reading, or why a score did not become a verdict; undefined where the label says it all.
   */
  detail: string | undefined;
  /** "High confidence"; undefined when too short. */
  confidence: string | undefined;
  /** What the text is made of (answers with sentence scores); undefined without them or when too short. */
  composition: CompositionWords | undefined;
  /** One sentence per warning the sentences above do not already say, in the answer's order. */
  warnings: Array<{ code: string; sentence: string }>;
  /** The map of a long document's windows; undefined for a text of one window. */
  windows: WindowMap | undefined;
}

/**
 * What to say about one answer, for every surface. The rules:
 * - the headline is the answer's `origin` (src/detector/origin.ts decides it), or "Too short to judge";
 * - a text called neither AI- nor human-written says why under the headline, in words: the bar it
 *   did not pass, or the warning that held its verdict back;
 * - the composition box describes the sentence scores in the headline's terms: shares of words
 *   in the words of their band (`SHARE_BANDS`), never "generated" beside a polished headline, and
 *   where the sentences and the whole text differ it says how both can be true;
 * - a warning the sentences above already say is not said again;
 * - the windows of a long document are mapped, and a window that reads unlike the whole is explained.
 */
export function describeAnswer(answer: AnswerInput): AnswerWords {
  const warnings = Array.isArray(answer.warnings) ? answer.warnings.filter((w) => typeof w === 'string' && w !== '') : [];
  const tooShort = warnings.includes('too_little_evidence');
  const list = (said: readonly string[]) =>
    [...new Set(warnings)].filter((code) => !said.includes(code)).map((code) => ({ code, sentence: warningSentence(code) }));
  if (tooShort) {
    return {
      origin: 'uncertain',
      tooShort,
      emoji: TOO_SHORT.emoji,
      colour: TOO_SHORT.colour,
      label: TOO_SHORT.label,
      sentence: TOO_SHORT.sentence,
      detail: undefined,
      confidence: undefined,
      composition: undefined,
      // No score is shown, so warnings about how far to trust one say nothing.
      warnings: [],
      windows: undefined,
    };
  }
  const origin = originOfAnswer(answer);
  const words = ORIGIN_WORDS[origin];
  const held = origin === 'uncertain' ? heldBack(answer.ai_probability, warnings) : undefined;
  const sentence = held?.sentence ?? words.sentence;
  return {
    origin,
    tooShort,
    emoji: words.emoji,
    colour: words.colour,
    label: originLabel(origin, answer.generated_share),
    sentence,
    detail: origin === 'uncertain' || origin === 'ai_polished' ? sentence : undefined,
    confidence: confidenceWords(String(answer.confidence)),
    composition: compositionWords(answer, origin),
    warnings: list(held?.said ?? []),
    windows: windowMap(answer.windows, origin),
  };
}

/** Why a text was called neither AI- nor human-written, and which warnings that sentence already says. */
function heldBack(probability: number, warnings: readonly string[]): { sentence: string; said: string[] } {
  const leansAi = probability >= 0.5;
  if (warnings.includes('strict_threshold')) {
    return {
      sentence:
        'The score is higher than most human texts get, but under the bar this server holds before it calls a text AI-written (set so that at most 1 in 100 human texts is called AI-written), so it is not called AI-written.',
      said: ['strict_threshold'],
    };
  }
  if (warnings.includes('strict_human_threshold') && !leansAi) {
    return {
      sentence:
        'The score leans human, but not below the bar this server holds before it calls a text human-written (set so that at most 1 in 20 AI texts is called human-written), so it is not called human-written either.',
      said: ['strict_human_threshold'],
    };
  }
  const reasons: Array<[string, string]> = [
    ['language_mismatch', 'it was scored as another language than its own'],
    ['language_uncertain', 'its language could not be told with certainty'],
    ['calibration_fallback', 'this mode has no calibration of its own in this language'],
    ['out_of_domain', 'it is unlike the texts the detector was calibrated on, and such a text needs a clearer score'],
  ];
  const reason = reasons.find(([code]) => warnings.includes(code));
  if (reason && leansAi) {
    return { sentence: `The score leans AI, but the text is not called AI-written because ${reason[1]}.`, said: [] };
  }
  if (reason) {
    return { sentence: `The score leans human, but the text is not called human-written because ${reason[1]}.`, said: [] };
  }
  return { sentence: ORIGIN_WORDS.uncertain.sentence, said: [] };
}

/**
 * The composition box: the sentence scores (`composition`, `generated_share`, `generated_spans`)
 * said in the terms of the headline.
 */
function compositionWords(answer: AnswerInput, origin: Origin): CompositionWords | undefined {
  const composition = answer.composition;
  if (composition === null || composition === undefined) return undefined;
  const spans = passagesToShow(answer);
  const share = typeof answer.generated_share === 'number' ? answer.generated_share : 0;
  // How the sentences read: no span; spans that only lean AI (all `low`: composition "uncertain");
  // or a span that looks generated.
  const evidence = spans.length === 0 ? 'none' : spans.every((s) => s.confidence === 'low') ? 'lean' : 'look';
  const passages = count(spans.length, 'passage', 'passages');
  /** "Most of the text looks AI-generated (71% of its words, 3 passages)" */
  // The band of the figure shown, so 0.897 shown as 90% is "nearly all" too.
  const { words: much, key: band } = shareBand(Number.parseInt(formatPercent(share), 10) / 100);
  const part = (verb: string) => `${much} of the text ${verb} (${formatPercent(share)} of its words, ${passages})`;
  if (composition !== 'human' && composition !== 'ai' && composition !== 'partly_ai' && composition !== 'uncertain') {
    return { label: 'What the text is made of', sentence: `The service described the text as “${String(composition)}”.` };
  }
  switch (origin) {
    case 'partly_ai':
      return { label: 'Partly generated', sentence: `${part('looks AI-generated')}; the rest reads as the author's own writing.` };
    case 'ai_written':
      if (evidence === 'look') {
        return {
          label: { throughout: 'Generated throughout', most: 'Mostly generated', places: 'Generated in places' }[band],
          sentence:
            band === 'throughout'
              ? `${part('looks AI-generated')}.`
              : `${part('looks AI-generated')}, and the rest does not read clearly as the author's own.`,
        };
      }
      if (evidence === 'lean') {
        return {
          label: 'No clearly generated passage',
          sentence: `${part('leans AI')}, though no passage clearly enough to count as generated on its own; the text as a whole reads as AI-written.`,
        };
      }
      return {
        label: 'No passage stands out',
        sentence:
          'No single passage looks AI-generated, but the text as a whole reads as AI-written: the whole text weighs more evidence than any one sentence.',
      };
    case 'ai_polished':
      // The sentence model sees an AI's wording, which a polish leaves too: never "generated" here.
      if (evidence === 'none') {
        return { label: 'No passage stands out', sentence: "No single passage stands out: the AI's hand shows in the text as a whole." };
      }
      return {
        label: { throughout: 'AI wording throughout', most: 'AI wording in most of the text', places: 'AI wording in places' }[band],
        sentence: `${part('reads as AI wording')}, as a text does when an AI polishes or rewrites a person's writing.`,
      };
    case 'human':
      if (evidence === 'none') return { label: 'Reads as human writing', sentence: 'No passage looks AI-generated.' };
      return {
        label: evidence === 'lean' ? 'No clearly generated passage' : 'Passages that look generated',
        sentence:
          evidence === 'lean'
            ? `${part('leans AI')}, but no passage clearly enough to count as generated, and the text as a whole reads as human-written.`
            : `${part('looks AI-generated')}, but the text as a whole reads as human-written: read those passages before acting on either.`,
      };
    default:
      if (evidence === 'none') return { label: 'No passage stands out', sentence: 'No passage looks AI-generated on its own.' };
      if (evidence === 'lean') {
        return {
          label: 'No clearly generated passage',
          sentence: `${part('leans AI')}, but no passage clearly enough to count as generated.`,
        };
      }
      return {
        label: { throughout: 'Generated-looking throughout', most: 'Mostly generated-looking', places: 'Generated-looking passages' }[band],
        sentence: `${part('looks AI-generated')}${composition === 'partly_ai' ? ", and the rest does not read clearly as the author's own either" : ''}, but the text as a whole is not called AI-written (the line above says why).`,
      };
  }
}

// ---- Windows of a long document

export interface WindowWords {
  /** "pages 4–6", "page 4", or "words 1–2,400" for a text without pages. */
  where: string;
  /** The window's own probability, and as shown ("87%"). */
  probability: number;
  percent: string;
  origin: Origin;
  /** The window's headline ("Reads as AI-written"). */
  label: string;
  emoji: string;
  colour: number;
  start: number;
  end: number;
}

export interface WindowMap {
  /** "3 of 12 parts read as AI-written (pages 4–9, 30–33) and 9 as human-written.", and, where parts differ from the whole, how both are true. */
  summary: string;
  /** One emoji per window, in text order: the map in one line. */
  strip: string;
  windows: WindowWords[];
}

/** How a group of windows reads, after "3 of 12 parts". */
const WINDOW_PHRASES: Readonly<Record<Origin, { one: string; many: string }>> = {
  ai_written: { one: 'reads as AI-written', many: 'read as AI-written' },
  ai_polished: { one: "reads as the author's own text, polished by an AI", many: "read as the author's own text, polished by an AI" },
  partly_ai: { one: 'reads as partly AI-written', many: 'read as partly AI-written' },
  human: { one: 'reads as human-written', many: 'read as human-written' },
  uncertain: { one: 'is unclear', many: 'are unclear' },
};

/** Windows that read as the work of an AI, whose places the summary names. */
const AI_ORIGINS: readonly Origin[] = ['ai_written', 'ai_polished', 'partly_ai'];

interface Place {
  unit: 'page' | 'word' | 'character';
  first: number;
  last: number;
}

function placeWords({ unit, first, last }: Place): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return first === last ? `${unit} ${n(first)}` : `${unit}s ${n(first)}–${n(last)}`;
}

/**
 * Where each window is: its pages when the document has them, else its words counted from the
 * start (windows that overlap are placed by their characters instead).
 */
function windowPlaces(windows: readonly DocumentWindow[]): Place[] {
  const tiled = windows.every((w, i) => i === 0 || w.start >= (windows[i - 1]?.end ?? 0));
  let wordsBefore = 0;
  return windows.map((w) => {
    const place: Place = w.pages
      ? { unit: 'page', first: w.pages.first, last: w.pages.last }
      : tiled
        ? { unit: 'word', first: wordsBefore + 1, last: wordsBefore + Math.max(1, w.words) }
        : { unit: 'character', first: w.start + 1, last: w.end };
    wordsBefore += w.words;
    return place;
  });
}

/** Runs of neighbouring windows that `keep`, as one place each: "pages 4–9". */
function mergedPlaces(places: readonly Place[], keep: readonly boolean[]): Place[] {
  const runs: Place[] = [];
  let previous = -2;
  places.forEach((place, i) => {
    if (!keep[i]) return;
    const last = runs[runs.length - 1];
    if (last && previous === i - 1 && last.unit === place.unit) last.last = Math.max(last.last, place.last);
    else runs.push({ ...place });
    previous = i;
  });
  return runs;
}

/** Places listed in a summary before "and N more". */
const PLACES_LISTED = 4;

function windowMap(windows: readonly DocumentWindow[] | undefined, headline: Origin): WindowMap | undefined {
  if (!Array.isArray(windows) || windows.length < 2) return undefined;
  const places = windowPlaces(windows);
  const shown: WindowWords[] = windows.map((w, i) => {
    const origin = originOfAnswer(w);
    return {
      where: placeWords(places[i]!),
      probability: w.ai_probability,
      percent: formatPercent(w.ai_probability),
      origin,
      label: ORIGIN_WORDS[origin].label,
      emoji: ORIGIN_WORDS[origin].emoji,
      colour: ORIGIN_WORDS[origin].colour,
      start: w.start,
      end: w.end,
    };
  });
  // The groups that read as an AI's work first, each with where it is; then the rest.
  const groups = [...AI_ORIGINS, 'uncertain' as const, 'human' as const]
    .map((origin) => ({ origin, n: shown.filter((w) => w.origin === origin).length }))
    .filter((g) => g.n > 0);
  const parts = groups.map(({ origin, n }, i) => {
    const phrase = n === 1 ? WINDOW_PHRASES[origin].one : WINDOW_PHRASES[origin].many;
    const head =
      i === 0 ? `${n} of ${windows.length} parts ${phrase}` : `${n} ${phrase.replace(/^reads? as /, 'as ').replace(/^(?:is|are) /, '')}`;
    if (!AI_ORIGINS.includes(origin)) return head;
    const where = mergedPlaces(
      places,
      shown.map((w) => w.origin === origin),
    ).map(placeWords);
    const listed = where.slice(0, PLACES_LISTED).join(', ');
    return `${head} (${listed}${where.length > PLACES_LISTED ? `, and ${where.length - PLACES_LISTED} more` : ''})`;
  });
  const joined = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  const differs = shown.some((w) => w.origin !== headline);
  const summary =
    `${joined}.` +
    (differs ? ' Each part is judged alone, so a part can read differently from the document as a whole, which the headline judges.' : '');
  return { summary, strip: shown.map((w) => w.emoji).join(''), windows: shown };
}

// ---- Labels of the answer's other fields

const LANGUAGE_NAMES: Readonly<Record<string, string>> = { en: 'English', tr: 'Turkish' };

/** `en` → "English"; another language code by its English name where the runtime knows it. */
export function languageName(code: string): string {
  if (Object.hasOwn(LANGUAGE_NAMES, code)) return LANGUAGE_NAMES[code]!;
  if (!code || code === 'unknown') return 'a language that could not be identified';
  if (/^[a-z]{2,3}$/.test(code)) {
    try {
      const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
      if (name && name !== code) return name;
    } catch {
      // not a language tag the runtime knows: the code itself, quoted
    }
  }
  return `“${code}”`;
}

/** `general` → "General"; a mode newer than this build as it is. */
export function modeName(mode: string): string {
  return mode.charAt(0).toUpperCase() + mode.slice(1);
}

const FILE_TYPE_NAMES: Readonly<Record<string, string>> = {
  pdf: 'PDF',
  docx: 'Word document',
  text: 'Plain text',
  markdown: 'Markdown',
  html: 'HTML',
};

/** What the service read out of a file: "PDF, 12 pages, 31,877 characters read". */
export function fileFacts(file: { type: string; pages: number | null; characters: number }): string {
  const parts = [FILE_TYPE_NAMES[file.type] ?? file.type.toUpperCase()];
  if (typeof file.pages === 'number' && file.pages > 0)
    parts.push(`${file.pages.toLocaleString('en-US')} ${file.pages === 1 ? 'page' : 'pages'}`);
  parts.push(`${file.characters.toLocaleString('en-US')} character${file.characters === 1 ? '' : 's'} read`);
  return parts.join(', ');
}
