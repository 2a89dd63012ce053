/**
 * The wire contract of POST /v1/detect (and /v1/detect/author, /v1/detect/file): request, response,
 * error envelope and error codes.
 *
 * One module, imported by the service (which enforces it: src/service/schemas.ts builds its JSON
 * Schemas from these lists), by the client SDK (which speaks it) and by the bots, so the three cannot
 * drift apart. It imports nothing, so the published client can ship it as is; installed, it is
 * `textdetect/contract`.
 */

export const MODES = ['academic', 'financial', 'legal', 'general'] as const;
/** Calibration and verdict thresholds to apply; the server defaults to `general`. */
export type Mode = (typeof MODES)[number];

export const LANGUAGES = ['en', 'tr'] as const;
export type Language = (typeof LANGUAGES)[number];

export const VERDICTS = ['likely_human', 'mixed', 'likely_ai'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const CONFIDENCES = ['low', 'medium', 'high'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

/**
 * Codes the engine puts in `warnings`, each saying why a verdict was held back or deserves less
 * trust. Clients must accept codes added later; `WARNING_MESSAGES` has one line a person reads for each.
 */
export const WARNING_CODES = [
  'short_text',
  'strict_threshold',
  'out_of_domain',
  'language_uncertain',
  'calibration_fallback',
  'too_little_evidence',
  'language_mismatch',
  'strict_human_threshold',
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

export const WARNING_MESSAGES: Readonly<Record<WarningCode, string>> = {
  short_text: 'Under 40 words: too little text for a firm answer, so there is no verdict (see too_little_evidence) and confidence is low.',
  strict_threshold:
    'The probability leans AI, but is below the likely_ai threshold of this mode and text length, which is set so that at most 1% of human texts are flagged.',
  out_of_domain:
    'The text is unlike the texts the detector was calibrated on (style statistics or length), so the uncertain band is wider and the verdict more cautious.',
  language_uncertain:
    'Too few words to tell the language (names, links, mentions and code are ignored); the text was scored as the requested or default language.',
  calibration_fallback:
    "There is no calibration data for this mode in this language; the language's general calibration was used, so the verdict is never likely_ai and confidence is at most medium.",
  too_little_evidence:
    'Under 40 words (in the text, or in all the used messages of an author together): too little to judge, so the verdict is mixed whatever the probability says; author answers say in `evidence_needed` how many more words are needed.',
  language_mismatch:
    'The text is clearly written in another language than the one requested, so it was scored with a model for the wrong language: the verdict is never likely_ai and confidence is low. Send it without `language` to have the language identified.',
  strict_human_threshold:
    'The probability leans human, but is above the likely_human threshold of this mode and text length, which is set so that at most 5% of the AI texts of any tested source or AI model are called likely human.',
};

/**
 * The evidence floor, one rule for `POST /v1/detect` and `POST /v1/detect/author`: a text (or all the
 * used messages of one author together) of fewer words than this gets no verdict either way:
 * `verdict: "mixed"`, `confidence: "low"` and the `too_little_evidence` warning (single texts also
 * keep `short_text`). At this length the detector is close to chance on real short texts (AUROC
 * 0.56 on 15–40-word dev texts), so a "likely human" would be no more founded than a "likely AI".
 * Clients show such an answer as "too short to judge", without its percentage.
 */
export const EVIDENCE_FLOOR_WORDS = 40;

/**
 * The service's default document limit (its MAX_TEXT_CHARS): the most characters, counted by
 * `countChars`, that one text may hold, pasted (`POST /v1/detect`) or read out of a file (`POST
 * /v1/detect/file`). 100 A4 pages of LibreOffice's 10-point Liberation Serif with 1.5 cm margins
 * hold about 685,000; at its default 12 points, about 443,000. A text longer than one window is
 * judged window by window (`DocumentWindow`).
 */
export const DEFAULT_MAX_TEXT_CHARS = 750_000;

export interface DetectRequest {
  /** The text to check: non-blank, at most the server's MAX_TEXT_CHARS characters as `countChars` counts them (default 750,000). */
  text: string;
  /** Calibration to apply; the server defaults to `general`. */
  mode?: Mode;
  /** Omit to let the server detect it; text in neither language is rejected with 422. */
  language?: Language;
  /** Ask for a score per sentence. */
  segments?: boolean;
}

export interface Segment {
  /** UTF-16 offset into the submitted text, inclusive. */
  start: number;
  /** UTF-16 offset into the submitted text, exclusive. */
  end: number;
  text: string;
  ai_probability: number;
}

/**
 * A run of consecutive sentences that look generated (answers with `segments: true`). Offsets are
 * UTF-16 offsets into the submitted text, like a segment's.
 */
export interface GeneratedSpan {
  start: number;
  end: number;
  /**
   * Calibrated probability that this run of text was written by an AI: the run scored as a document
   * of its own (calibrated like a document of its length; the whole text's `ai_probability` when the
   * run is the whole text).
   */
  ai_probability: number;
  /**
   * `high` when the run, scored as a document of its own, would be called `likely_ai` (the same
   * thresholds, set so that at most 1% of human texts are flagged); `medium` when it leans clearly
   * AI; `low` otherwise. A pure human text is meant never to get a `high` span. Optional in the
   * type for older servers; this server always sends it.
   */
  confidence?: Confidence;
}

/**
 * What the document is made of, read off its sentence scores (answers with `segments: true`):
 * `human` / `ai` when the sentences agree, `partly_ai` when some runs look generated and others not,
 * `uncertain` when the evidence says neither. Unlike `verdict: "mixed"`, which only means "between the
 * thresholds", `partly_ai` means the text looks partly generated.
 */
export const COMPOSITIONS = ['human', 'ai', 'partly_ai', 'uncertain'] as const;
export type Composition = (typeof COMPOSITIONS)[number];

/**
 * The headline answer: who wrote the text, in the words a person acts on (`POST /v1/detect`,
 * `/v1/detect/file` and `/v1/detect/author`). Derived from `verdict`, `composition` and
 * `polished_probability` by one rule (src/detector/origin.ts):
 * - `uncertain`: too little evidence (`too_little_evidence`), or `verdict: "mixed"`;
 * - `partly_ai`: with `segments: true`, the sentence model found a generated part and a human one
 *   (`composition: "partly_ai"`, and the words outside the generated spans average under 30% AI
 *   per sentence, so a generated text whose span misses a few sentences keeps the plain AI
 *   headline); the share is in `generated_share`. Whatever the verdict: a half-human text is
 *   neither "AI-written" nor "human-written". Never for a text scored as another language than
 *   its own (`language_mismatch`, `language_uncertain`);
 * - `ai_polished`: `verdict: "likely_ai"` and `polished_probability` ≥ POLISHED_THRESHOLD (0.65): reads as the author's
 *   own text, polished, edited or rewritten by an AI;
 * - `ai_written`: `verdict: "likely_ai"` otherwise: reads as written by an AI;
 * - `human`: `verdict: "likely_human"`.
 * Without `segments` there is no `partly_ai`. Clients must accept values added later.
 */
export const ORIGINS = ['human', 'ai_polished', 'ai_written', 'partly_ai', 'uncertain'] as const;
export type Origin = (typeof ORIGINS)[number];

/**
 * From this `polished_probability` a `likely_ai` text is `ai_polished` rather than `ai_written`.
 * Above the head's own 0.5 (where 85% of polished training texts read as polished): on the dev
 * texts, 0.65 shows about half as many AI-written texts as polished (7.5% of those called
 * `likely_ai` instead of 13.9%) for 2 more of 21 polished ones shown as AI-written, and keeping an
 * AI text's plain AI headline is the safer mistake (docs/detector.md, "AI-polished vs AI-written: the polish head").
 */
export const POLISHED_THRESHOLD = 0.65;

/**
 * One window of a long document. A text of at least 1,200 words (round(words / 800) ≥ 2) is cut into
 * windows of about 800 words at sentence ends (the cut reads words and sentence ends only, never
 * line or paragraph breaks, so a PDF and a DOCX of one text are cut at the same words), and each
 * window is scored like a text of its own; the whole text's answer follows from its windows by one
 * rule (`DetectResponse.windows`; docs/service.md, "Whole documents"). Offsets are UTF-16 offsets
 * into the submitted (or, for files, the extracted) text.
 */
export interface DocumentWindow {
  /** UTF-16 offset into the text, inclusive. */
  start: number;
  /** UTF-16 offset into the text, exclusive. */
  end: number;
  /** Words the engine counted in the window. */
  words: number;
  /** First and last page (1-based) the window covers, for files that have pages (PDF); else null. */
  pages: { first: number; last: number } | null;
  /** The window's own calibrated probability, as if it were sent alone. */
  ai_probability: number;
  /** The window's own verdict, as if it were sent alone (same thresholds). */
  verdict: Verdict;
  confidence: Confidence;
  /** The window's headline, as if it were sent alone (see ORIGINS; `partly_ai` only with `segments: true`). */
  origin: Origin;
}

export interface DetectResponse {
  /** 0..1, calibrated per mode. */
  ai_probability: number;
  mode: Mode;
  language: Language;
  /** Always an array; empty unless `segments: true` was asked for. */
  segments: Segment[];
  /** `req_` followed by a sortable unique id; quote it to support. */
  request_id: string;
  /** Version id of the engine's model. */
  model: string;
  verdict: Verdict;
  confidence: Confidence;
  /** e.g. `short_text` for texts under ~40 words. */
  warnings: string[];
  /** With `segments: true`: merged runs of generated-looking sentences, in text order; else empty. */
  generated_spans: GeneratedSpan[];
  /**
   * With `segments: true`: estimated share (0..1) of the text's words that are generated, each
   * sentence's `ai_probability` weighted by its words, when there is a generated span; 0 when there
   * is none; null without `segments: true`, and under the evidence floor (`too_little_evidence`),
   * where no share is estimated.
   */
  generated_share: number | null;
  /**
   * With `segments: true`: what the document is made of (`uncertain` under the evidence floor, with
   * no generated span: too few words to judge its parts either); else null.
   */
  composition: Composition | null;
  /** The headline answer (see ORIGINS): what to tell a person, reading `verdict`, `composition` and `polished_probability` together. */
  origin: Origin;
  /**
   * Given that the text reads as AI-touched, the calibrated probability (0..1) that it is a
   * person's own text polished, edited or rewritten by an AI rather than written by one; null
   * under the evidence floor (`too_little_evidence`), and for a text that only the assistant head
   * reads as AI (its family's texts, which the polish reading was never trained on). Read it only
   * when the verdict is `likely_ai`; `origin` already does.
   */
  polished_probability: number | null;
  /**
   * The windows of a text longer than one window, in text order; empty for a text of one window.
   * The whole text's answer then follows from them by one rule (docs/service.md, "Whole documents";
   * `combineWindows` in src/detector/windows.ts), with or without `segments`:
   * - `verdict`: `likely_ai` when windows called likely_ai hold more than half of the words;
   *   `likely_human` when no window is called likely_ai and windows called likely_human hold more
   *   than half of the words; else `mixed`. One window never flags a document;
   * - `ai_probability`: the windows' lower median, weighted by their words;
   * - `generated_share`: the share of the words in windows called likely_ai; `composition`: `ai`
   *   from 0.9 of them, `partly_ai` under that and above none, `human` with none and a likely_human
   *   verdict, else `uncertain`;
   * - `origin`: `partly_ai` when `composition` is `partly_ai` and the other windows average under
   *   30% (they read as the author's own); else by the verdict, as for one text;
   * - `confidence`: `high` when windows of the verdict with high confidence hold more than half of
   *   the words, `medium` otherwise, `low` when mixed; `polished_probability`: the mean over the
   *   likely_ai windows (all windows when none), by words; `warnings`: every window's.
   * With `segments: true`, `segments` and `generated_spans` are the windows' (offsets into the whole
   * text; a span never crosses a window's edge): they show where inside each window, and the
   * headline follows the windows' verdicts only.
   * Optional in the type for older servers; this server always sends it.
   */
  windows?: DocumentWindow[];
}

/** Most messages one author request may carry. */
export const AUTHOR_MAX_MESSAGES = 200;

/**
 * Characters of submitted text that cost one unit of a key's rate limit, counted by `countChars`.
 * The work a call causes follows its characters, on every scoring route, so the cost does too: a
 * text of up to 5,000 characters costs 1 unit, 5,001 to 10,000 cost 2, and ten messages of 5,000
 * characters cost 10 whether they are sent as ten texts or as one author.
 */
export const CHARS_PER_UNIT = 5000;

/**
 * Characters of `text` as the service counts them, for its limits and its cost: what is judged.
 * Unicode code points (a character outside the BMP counts once), with every run of whitespace
 * counted as one character and whitespace at either end not counted: the engine reads a run of
 * spaces, tabs and line breaks as one break, so 100,000 spaces around two words are the 9
 * characters "word word", not 100,009.
 */
export function countChars(text: string): number {
  let count = 0;
  let pendingSpace = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isWhitespace(code)) {
      pendingSpace = count > 0;
      continue;
    }
    if (pendingSpace) {
      count++;
      pendingSpace = false;
    }
    count++;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return count;
}

/** JavaScript's `\s`: what the engine reads as a break between words. */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Units for `chars` characters of text: one per started CHARS_PER_UNIT, at least 1. */
export function unitsForChars(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_UNIT));
}

/**
 * Units of the key's rate limit one `POST /v1/detect` call costs: one per started CHARS_PER_UNIT
 * characters of `text` (1 to 150 with the default 750,000-character limit). The server charges it,
 * and the SDK and the bots' queue pace by it, so all count the same.
 */
export function detectRequestCost(text: string): number {
  return unitsForChars(countChars(text));
}

/**
 * Units one `POST /v1/detect/author` call costs: one per started CHARS_PER_UNIT characters of all
 * messages together (1 to 10 with the default 50,000-character AUTHOR_MAX_TOTAL_CHARS), however many messages hold
 * them. The server charges it, and the SDK and the bots' queue pace by it.
 */
export function authorRequestCost(messages: readonly string[]): number {
  let chars = 0;
  for (const message of messages) if (typeof message === 'string') chars += countChars(message);
  return unitsForChars(chars);
}

/**
 * One author's recent messages, judged together (`POST /v1/detect/author`). Each message is scored on
 * its own, and the author's answer combines them.
 */
export interface DetectAuthorRequest {
  /** 1 to AUTHOR_MAX_MESSAGES messages of one author, oldest or newest first (order is kept in the answer). */
  messages: string[];
  /** Calibration to apply; the server defaults to `general`. */
  mode?: Mode;
  /** Omit to detect it per message; messages clearly in another language are skipped. */
  language?: Language;
}

/** Why a message was left out of an author's score. */
export const SKIP_REASONS = ['empty', 'no_words', 'link_only', 'other_language'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface AuthorMessageScore {
  /** Position of the message in the request's `messages`. */
  index: number;
  /** Words the engine counted in it. */
  words: number;
  /** The message's own calibrated probability; null when it was skipped. */
  ai_probability: number | null;
  /** Why the message was left out; null when it was used. */
  skipped: SkipReason | null;
}

export interface DetectAuthorResponse {
  /** 0..1: probability that this author's messages were written by an AI, calibrated on author windows. */
  ai_probability: number;
  mode: Mode;
  /** The language applied (given, or the one most used messages were in). */
  language: Language;
  verdict: Verdict;
  confidence: Confidence;
  warnings: string[];
  /** Messages that counted towards the score. */
  messages_used: number;
  /** Words in the messages that counted. */
  words_used: number;
  /**
   * How many more messages and words a verdict would need (the evidence floor,
   * EVIDENCE_FLOOR_WORDS words in the used messages together); null when there were enough.
   */
  evidence_needed: { messages: number; words: number } | null;
  /** One entry per request message, in request order. */
  messages: AuthorMessageScore[];
  request_id: string;
  model: string;
  /** The headline answer for the author (see ORIGINS); never `partly_ai`, which needs sentence scores. */
  origin: Origin;
  /**
   * Given that the messages read as AI-touched, the calibrated probability that they are the
   * author's own writing polished by an AI rather than written by one; null under the evidence floor,
   * and for an author only the assistant head reads as AI (as for one text).
   */
  polished_probability: number | null;
}

/** Formats `POST /v1/detect/file` reads, told from the file's bytes (never its name or declared type). */
export const FILE_TYPES = ['pdf', 'docx', 'text', 'markdown', 'html'] as const;
export type FileType = (typeof FILE_TYPES)[number];

/**
 * Units of the key's rate limit one `POST /v1/detect/file` request costs: one per started
 * CHARS_PER_UNIT characters of the text read out of the file (counted by `countChars`), at least
 * one, exactly what a `/v1/detect` call with that text costs (a 50,000-character report costs 10).
 * The server charges it once the text is extracted; the answer's `file.characters` (UTF-16 units,
 * every whitespace counted) is never fewer, so pacing by `fileRequestCost(file.characters)` never
 * undercounts. A file refused before its text is read (wrong type, too large, unreadable, no text,
 * text over the limit) costs one unit, like any refused request.
 */
export function fileRequestCost(characters: number): number {
  return unitsForChars(characters);
}

/**
 * The form fields of `POST /v1/detect/file` (multipart/form-data) besides the document itself, which
 * goes in the field `file`. Same meaning and defaults as the fields of `/v1/detect`.
 */
export interface DetectFileFields {
  /** Calibration to apply; the server defaults to `general`. */
  mode?: Mode;
  /** Omit to let the server detect it from the extracted text; text in neither language is rejected with 422. */
  language?: Language;
  /** Ask for a score per sentence (form value `true` or `false`). */
  segments?: boolean;
}

/** What the server read out of the file. */
export interface FileInfo {
  /** The file name the caller sent (its last path part, at most 255 characters); only echoed, never used to tell the type. */
  name: string;
  /** The format told from the file's bytes. */
  type: FileType;
  /** Pages of a PDF; null for formats without pages (DOCX, text, Markdown, HTML). */
  pages: number | null;
  /** UTF-16 length of the extracted text that was scored; segment offsets refer to this text. */
  characters: number;
}

/**
 * The answer of `POST /v1/detect/file`: the `/v1/detect` answer for the text read out of the file,
 * plus `file`. Segment and span offsets are UTF-16 offsets into the extracted text, and each segment
 * carries its `text`, so a caller can show which part is meant without the extracted text itself.
 * Repeated page headers, footers and page numbers are left out of that text.
 */
export interface DetectFileResponse extends DetectResponse {
  file: FileInfo;
}

/** `error.type` values, one per family of status codes. */
export type ErrorType =
  | 'invalid_request_error' // 400, 404, 405, 408, 413, 414, 415, 417, 422, 431
  | 'authentication_error' // 401
  | 'permission_error' // 403
  | 'rate_limit_error' // 429
  | 'api_error'; // 500, 503

/** The `error.type` a status is answered with; fixed per status so callers can branch on either. */
export function errorTypeFor(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * The machine-readable `error.code` values the service answers with today. Callers should still
 * accept codes outside this list (a newer server may add some), which `ErrorCode` allows.
 */
export const ERROR_CODES = [
  'invalid_json',
  'invalid_request',
  'missing_api_key',
  'invalid_api_key',
  'wrong_environment',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'text_too_long',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'unsupported_encoding',
  'expectation_failed',
  'headers_too_large',
  'unsupported_language',
  // POST /v1/detect/file (messages: FILE_ERROR_MESSAGES below).
  'unsupported_file_type',
  'file_too_large',
  'too_many_pages',
  'file_unreadable',
  'no_text_in_file',
  'rate_limited',
  'internal_error',
  'not_ready',
] as const;
export type KnownErrorCode = (typeof ERROR_CODES)[number];
export type ErrorCode = KnownErrorCode | (string & {});

/**
 * The errors only `POST /v1/detect/file` answers with, their status, and what each means. The
 * extracted text itself is then checked like a `/v1/detect` text: `text_too_long` (413) over the
 * server's MAX_TEXT_CHARS (reading stops there: a file far over it is not read to its end),
 * `unsupported_language` (422) in neither language. A file without any text gives
 * `no_text_in_file`, never a blank-text `invalid_request`.
 */
export const FILE_ERRORS = {
  /** 415: the bytes are not a PDF, DOCX, plain text, Markdown or HTML file (an image, a zip, a program…). */
  unsupported_file_type: 415,
  /** 413: the upload is over the server's MAX_FILE_BYTES (default 10 MB). */
  file_too_large: 413,
  /** 413: the PDF has more pages than the server's MAX_FILE_PAGES (default 100). */
  too_many_pages: 413,
  /** 422: the file is encrypted (password-protected), corrupt, or unpacks to more than the server reads (a zip bomb). */
  file_unreadable: 422,
  /** 422: the file holds no text to read: a scanned PDF without a text layer (OCR is not done), or an empty document. */
  no_text_in_file: 422,
} as const satisfies Partial<Record<KnownErrorCode, number>>;
export type FileErrorCode = keyof typeof FILE_ERRORS;

/** The one error envelope every non-2xx answer of the service carries. */
export interface ErrorEnvelope {
  error: {
    type: ErrorType;
    /** Machine-readable, e.g. `text_too_long`, `rate_limited`, `invalid_api_key`. */
    code: ErrorCode;
    /** A sentence a person can act on. */
    message: string;
    request_id?: string;
    /** The offending request field, for `invalid_request`. */
    param?: string;
    /** Seconds to wait, on 429. */
    retry_after?: number;
  };
}
