/** The engine's public types. `src/service` and the CLI depend on these; keep them stable. */

// Modes, languages, verdicts and confidences are the API's values (src/contract.ts); the engine
// produces exactly those, so it reuses the contract's lists instead of keeping copies.
import type {
  AuthorMessageScore,
  Composition,
  Confidence,
  DocumentWindow,
  GeneratedSpan,
  Language,
  Mode,
  Origin,
  SkipReason,
  Verdict,
  WarningCode,
} from '../contract.ts';
export {
  AUTHOR_MAX_MESSAGES,
  COMPOSITIONS,
  CONFIDENCES,
  EVIDENCE_FLOOR_WORDS,
  LANGUAGES,
  MODES,
  ORIGINS,
  SKIP_REASONS,
  VERDICTS,
  WARNING_CODES,
  WARNING_MESSAGES,
} from '../contract.ts';
export type {
  AuthorMessageScore,
  Composition,
  Confidence,
  DocumentWindow,
  GeneratedSpan,
  Language,
  Mode,
  Origin,
  SkipReason,
  Verdict,
  WarningCode,
};
export type DetectionWarning = WarningCode | (string & {});

/** What the first look at a long text decides: its language (once, for every window) and its windows (UTF-16 offsets, trimmed). */
export interface DocumentPlan {
  language: Language;
  /** The language was a guess (too little evidence): every window then carries `language_uncertain`. */
  languageUncertain: boolean;
  windows: Array<{ start: number; end: number }>;
}

/** One window's own answer, as `detect` gives it for the window's text alone, and the words the engine counted in it. */
export type WindowScore = DetectionResult & { words: number };

/** What scoring a window needs of its document's plan. */
export type WindowPlan = Pick<DocumentPlan, 'language' | 'languageUncertain'>;

/** The first step of `detect`: the answer of a text of one window, or the plan of a longer one. */
export type TextStart = { result: DetectionResult } | { plan: DocumentPlan };

export interface DetectOptions {
  /** Calibration and thresholds to apply; default `general`. */
  mode?: Mode;
  /** Skip language identification and score as this language. */
  language?: Language;
  /** Also score each sentence; default false (the result's `segments` is then empty). */
  segments?: boolean;
}

export interface SegmentScore {
  /** UTF-16 offset into the original (un-normalised) input string, inclusive. */
  start: number;
  /** UTF-16 offset into the original input string, exclusive. */
  end: number;
  /** `input.slice(start, end)`. */
  text: string;
  ai_probability: number;
}

export interface DetectionResult {
  ai_probability: number;
  mode: Mode;
  language: Language;
  verdict: Verdict;
  confidence: Confidence;
  segments: SegmentScore[];
  warnings: DetectionWarning[];
  /** The model artifact's version id. */
  model: string;
  /** With `segments`: merged runs of generated-looking sentences; else empty. */
  generated_spans: GeneratedSpan[];
  /** With `segments`: estimated share of the text's words that are generated (sentence probabilities × words) when there is a span, 0 when there is none; else null. */
  generated_share: number | null;
  /** With `segments`: what the document is made of; else null. */
  composition: Composition | null;
  /**
   * Given that the text reads as AI-touched, the calibrated probability that it is a human's own
   * text polished, edited or rewritten by an AI rather than text an AI wrote (AI-paraphrased AI
   * text counts as AI-written). 0.5 is the operating point: from 0.5 it reads as the author's own
   * text polished by an AI. Null under the evidence floor (too little evidence), for a text that
   * only the assistant head makes `likely_ai` (`assistant.ts`), and from a model artifact older than
   * this field.
   */
  polished_probability: number | null;
  /** The headline answer (`originOf` in origin.ts): verdict, composition and polished_probability read together. */
  origin: Origin;
  /**
   * The windows of a text longer than one window (windows.ts), each scored as a text of its own,
   * from which the answer above follows (`combineWindows`); empty for a text of one window.
   * `pages` is null here: the service fills it for PDFs.
   */
  windows: DocumentWindow[];
}

export interface AuthorDetectOptions {
  /** Calibration and thresholds to apply; default `general`. */
  mode?: Mode;
  /** Score every message as this language; when omitted each message's language is identified. */
  language?: Language;
}

export interface AuthorDetectionResult {
  ai_probability: number;
  mode: Mode;
  language: Language;
  verdict: Verdict;
  confidence: Confidence;
  warnings: DetectionWarning[];
  messages_used: number;
  words_used: number;
  /** How many more messages and words a verdict would need; null when there were enough. */
  evidence_needed: { messages: number; words: number } | null;
  /** One entry per input message, in input order. */
  messages: AuthorMessageScore[];
  model: string;
  /** Version id of the author-level calibration (`models/author.json`) that combined the messages. */
  author_model?: string;
  /**
   * Given that the text reads as AI-touched, the calibrated probability that it is a human's own
   * text polished, edited or rewritten by an AI rather than text an AI wrote (AI-paraphrased AI
   * text counts as AI-written). 0.5 is the operating point: from 0.5 it reads as the author's own
   * text polished by an AI. For an author it is read off the used messages pooled into one text (as `ai_probability` is);
   * null while `evidence_needed`.
   */
  polished_probability: number | null;
  /** The headline answer (`originOf` in origin.ts); never `partly_ai`. */
  origin: Origin;
}

export interface Detector {
  /** Version id of the loaded model artifact. */
  readonly model: string;
  /**
   * Synchronous and CPU-bound; throws UnsupportedLanguageError for text in neither supported language.
   * A text longer than one window is judged window by window (windows.ts).
   */
  detect(text: string, options?: DetectOptions): DetectionResult;
  /**
   * `detect` in steps, for a caller that schedules a long text's windows itself: the answer of a text
   * of one window, or the plan of a longer one (its language and windows). Each window then goes to
   * `detectWindow`, and the scores to `combineWindows` (windows.ts): the same answer as `detect`.
   */
  start(text: string, options?: DetectOptions): TextStart;
  /** One window of a plan, scored like a text of its own in the plan's language. */
  detectWindow(text: string, plan: WindowPlan, options?: DetectOptions): WindowScore;
  /**
   * Judges one author across 1..AUTHOR_MAX_MESSAGES messages: each is scored on its own, skipped
   * ones (empty, link-only, another language) are reported, and the rest are combined.
   */
  detectAuthor(messages: readonly string[], options?: AuthorDetectOptions): AuthorDetectionResult;
}

/** Raised when the text is in a language the engine has no model for; it is never scored as English. */
export class UnsupportedLanguageError extends Error {
  override readonly name = 'UnsupportedLanguageError';
  /** Best guess of the text's language or script (e.g. `de`, `cyrillic`, `unknown`). */
  readonly detected: string;
  constructor(detected: string, message?: string) {
    super(message ?? `The text appears to be in "${detected}"; only English (en) and Turkish (tr) are supported.`);
    this.detected = detected;
  }
}
