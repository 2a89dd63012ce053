/** The engine's public types. `src/service` and the CLI depend on these; keep them stable. */

// Modes, languages, verdicts and confidences are the API's values (src/contract.ts); the engine
// produces exactly those, so it reuses the contract's lists instead of keeping copies.
import type { Confidence, Language, Mode, Verdict } from '../contract.ts';
export { CONFIDENCES, LANGUAGES, MODES, VERDICTS } from '../contract.ts';
export type { Confidence, Language, Mode, Verdict };

/**
 * Machine-readable warnings. Each one says why a verdict was held back or why the result deserves
 * less trust; `WARNING_MESSAGES` has the sentence a person reads for each code.
 */
export const WARNING_CODES = ['short_text', 'strict_threshold', 'out_of_domain', 'language_uncertain', 'calibration_fallback'] as const;
export type WarningCode = (typeof WARNING_CODES)[number];
export type DetectionWarning = WarningCode | (string & {});

/** One line per warning code, for people (bots, CLI, docs). */
export const WARNING_MESSAGES: Record<WarningCode, string> = {
  short_text: 'Under 40 words: too little text for a firm answer, so the verdict is never likely_ai and confidence is low.',
  strict_threshold:
    'The probability leans AI, but is below the likely_ai threshold of this mode and text length, which is set so that at most 1% of human texts are flagged.',
  out_of_domain:
    'The text is unlike the texts the detector was calibrated on (style statistics or length), so the uncertain band is wider and the verdict more cautious.',
  language_uncertain:
    'Too few words to tell the language (names, links, mentions and code are ignored); the text was scored as the requested or default language.',
  calibration_fallback:
    'There is no calibration data for this mode in this language; the language\'s general calibration was used, so confidence is at most medium.',
};

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
}

export interface Detector {
  /** Version id of the loaded model artifact. */
  readonly model: string;
  /** Synchronous and CPU-bound; throws UnsupportedLanguageError for text in neither supported language. */
  detect(text: string, options?: DetectOptions): DetectionResult;
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
