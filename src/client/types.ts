/**
 * The wire contract of POST /v1/detect, as a caller sees it. The client package stands alone
 * (it may be published), so these types repeat the service's rather than importing them.
 */

export type Mode = 'academic' | 'financial' | 'legal' | 'general';
export type Language = 'en' | 'tr';
export type Verdict = 'likely_human' | 'mixed' | 'likely_ai';
export type Confidence = 'low' | 'medium' | 'high';

export interface DetectRequest {
  /** The text to check: non-blank, at most the server's MAX_TEXT_CHARS (default 50,000). */
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
}

/** `error.type` values, one per family of status codes. */
export type ErrorType =
  | 'invalid_request_error' // 400, 404, 405, 413, 415, 422
  | 'authentication_error' // 401
  | 'permission_error' // 403
  | 'rate_limit_error' // 429
  | 'api_error'; // 500, 503

/** The one error envelope every non-2xx answer of the service carries. */
export interface ErrorEnvelope {
  error: {
    type: ErrorType;
    /** Machine-readable, e.g. `text_too_long`, `rate_limited`, `invalid_api_key`. */
    code: string;
    /** A sentence a person can act on. */
    message: string;
    request_id?: string;
    /** The offending request field, for `invalid_request`. */
    param?: string;
    /** Seconds to wait, on 429. */
    retry_after?: number;
  };
}
