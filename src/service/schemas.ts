/**
 * JSON Schemas of the API. The same objects validate requests (fastify/ajv), serialise responses
 * (fast-json-stringify) and make up the OpenAPI document, so the published contract cannot drift
 * from what the server enforces. Only keywords that mean the same in draft-07 (ajv) and 2020-12
 * (OpenAPI 3.1) are used.
 */
import {
  AUTHOR_MAX_MESSAGES,
  CHARS_PER_UNIT,
  COMPOSITIONS,
  CONFIDENCES,
  FILE_TYPES,
  LANGUAGES,
  MODES,
  ORIGINS,
  POLISHED_THRESHOLD,
  SKIP_REASONS,
  VERDICTS,
} from '../contract.ts';

export function detectRequestSchema(maxTextChars: number) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['text'],
    properties: {
      text: {
        type: 'string',
        minLength: 1,
        // At least one non-whitespace character: a blank text has nothing to score.
        pattern: '\\S',
        // No maxLength: the limit counts characters as they are judged (a whitespace run as one,
        // `countChars`), which JSON Schema cannot say; the route checks it (413 text_too_long).
        description: `The text to check: non-blank, at most ${maxTextChars} characters, counted as Unicode code points with every run of whitespace counted as one and whitespace at either end not counted. A text of 1,200 words or more is judged window by window (the answer's \`windows\`). Must not contain NUL characters or unpaired UTF-16 surrogates. Each started ${CHARS_PER_UNIT} characters cost one unit of the key's rate limit.`,
      },
      mode: {
        type: 'string',
        enum: [...MODES],
        default: 'general',
        description: 'Calibration and verdict thresholds to apply.',
      },
      language: {
        type: 'string',
        enum: [...LANGUAGES],
        description: 'Language of the text; detected when omitted. Text in neither language is refused with 422 unsupported_language.',
      },
      segments: {
        type: 'boolean',
        default: false,
        description: "Also score each sentence; the answer's `segments` is empty otherwise.",
      },
    },
  } as const;
}

export const segmentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start', 'end', 'text', 'ai_probability'],
  properties: {
    start: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the submitted text, inclusive.' },
    end: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the submitted text, exclusive.' },
    text: { type: 'string', description: 'The sentence: `text.slice(start, end)` of the submitted text.' },
    ai_probability: { type: 'number', minimum: 0, maximum: 1 },
  },
} as const;

export const generatedSpanSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start', 'end', 'ai_probability'],
  properties: {
    start: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the submitted text, inclusive.' },
    end: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the submitted text, exclusive.' },
    ai_probability: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: 'Probability that this run of text was written by an AI: the run scored as a document of its own.',
    },
    confidence: {
      type: 'string',
      enum: [...CONFIDENCES],
      description:
        '`high` when the run, scored as a document of its own, would be called likely_ai (at most 1% of human texts flagged); `medium` when it leans clearly AI; `low` otherwise.',
    },
  },
} as const;

export const documentWindowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start', 'end', 'words', 'pages', 'ai_probability', 'verdict', 'confidence', 'origin'],
  properties: {
    start: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the text, inclusive.' },
    end: { type: 'integer', minimum: 0, description: 'UTF-16 offset into the text, exclusive.' },
    words: { type: 'integer', minimum: 0, description: 'Words the engine counted in the window.' },
    pages: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['first', 'last'],
      properties: { first: { type: 'integer', minimum: 1 }, last: { type: 'integer', minimum: 1 } },
      description: 'First and last page (1-based) the window covers, for a PDF; null for texts and other formats.',
    },
    ai_probability: { type: 'number', minimum: 0, maximum: 1, description: "The window's own probability, as if it were sent alone." },
    verdict: { type: 'string', enum: [...VERDICTS], description: "The window's own verdict, as if it were sent alone." },
    confidence: { type: 'string', enum: [...CONFIDENCES] },
    origin: {
      type: 'string',
      enum: [...ORIGINS],
      description: "The window's own headline, as if it were sent alone (`partly_ai` only with `segments: true`).",
    },
  },
} as const;

/** The headline answer, one rule for every scoring route (src/detector/origin.ts). */
function originSchema(partly: string) {
  return {
    type: 'string',
    enum: [...ORIGINS],
    description: `The headline answer, reading \`verdict\`, \`composition\` and \`polished_probability\` together: \`uncertain\` under the evidence floor (\`too_little_evidence\`) or with \`verdict: "mixed"\`; ${partly}; \`ai_polished\` (\`likely_ai\` and \`polished_probability\` ≥ ${POLISHED_THRESHOLD}: reads as the author's own text, polished by an AI); \`ai_written\` (\`likely_ai\` otherwise: reads as AI-written); \`human\` (\`likely_human\`). New values may be added.`,
  } as const;
}

function polishedProbabilitySchema(reads: string, own: string) {
  return {
    type: ['number', 'null'],
    minimum: 0,
    maximum: 1,
    description: `Given that ${reads} as AI-touched, calibrated probability that the ${own} a person's own writing polished, edited or rewritten by an AI rather than written by one; null under the evidence floor. Meaningful when \`verdict\` is \`likely_ai\`, which \`origin\` reads it for.`,
  } as const;
}

export const detectResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'ai_probability',
    'mode',
    'language',
    'segments',
    'request_id',
    'model',
    'verdict',
    'confidence',
    'warnings',
    'generated_spans',
    'generated_share',
    'composition',
    'origin',
    'polished_probability',
    'windows',
  ],
  properties: {
    ai_probability: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description:
        "Probability that the text was written by an AI, calibrated per mode; for a text judged window by window, the windows' lower median weighted by their words.",
    },
    mode: { type: 'string', enum: [...MODES], description: 'The mode applied.' },
    language: { type: 'string', enum: [...LANGUAGES], description: 'The language applied (given or detected).' },
    segments: {
      type: 'array',
      items: segmentSchema,
      description: 'One element per sentence when `segments: true` was asked for, else empty.',
    },
    request_id: {
      type: 'string',
      pattern: '^req_[0-9A-Z]{26}$',
      description: '`req_` + a time-sortable unique id; also in the `Request-Id` header.',
    },
    model: { type: 'string', description: "Version id of the engine's model." },
    verdict: { type: 'string', enum: [...VERDICTS], description: "Reading of `ai_probability` against the mode's thresholds." },
    confidence: { type: 'string', enum: [...CONFIDENCES] },
    warnings: {
      type: 'array',
      items: { type: 'string' },
      description:
        'Why the verdict was held back or deserves less trust: `short_text` (under 40 words), `too_little_evidence` (under 40 words, the evidence floor of both routes: no verdict either way, `mixed`; show it as too short to judge), `strict_threshold` (AI-leaning, below the likely_ai bar of this mode and length), `out_of_domain` (unlike the calibration texts: wider uncertain band), `language_uncertain` (too few words to tell the language; scored as the requested or default one), `language_mismatch` (clearly in another language than the `language` given: scored as requested, never likely_ai), `calibration_fallback` (no calibration data for this mode in this language), `strict_human_threshold` (human-leaning, above the likely_human bar of this mode and length, set so that at most 5% of the AI texts of any tested source or AI model are cleared). New codes may be added.',
    },
    generated_spans: {
      type: 'array',
      items: generatedSpanSchema,
      description: 'With `segments: true`: merged runs of sentences that look generated, in text order; else empty.',
    },
    generated_share: {
      type: ['number', 'null'],
      minimum: 0,
      maximum: 1,
      description:
        "With `segments: true`: estimated share of the text's words that are generated (each sentence's `ai_probability` weighted by its words) when there is a generated span, 0 when there is none; null without `segments: true`, and under the evidence floor (`too_little_evidence`), where no share is estimated. For a text judged window by window (`windows`), with or without `segments`: the share of its words in windows called likely_ai.",
    },
    composition: {
      type: ['string', 'null'],
      enum: [...COMPOSITIONS, null],
      description:
        'With `segments: true`: `human` or `ai` when the sentences agree, `partly_ai` when some runs look generated and others not, `uncertain` when the evidence says neither (always under the evidence floor, with no generated span); else null. For a text judged window by window, with or without `segments`: read off its windows the same way (see `windows`). Unlike `verdict: "mixed"` (between the thresholds), `partly_ai` means partly generated.',
    },
    origin: originSchema(
      '`partly_ai` (with `segments: true`: a generated part beside a human one, the share in `generated_share`, whatever the verdict)',
    ),
    polished_probability: polishedProbabilitySchema('the text reads', 'text is'),
    windows: {
      type: 'array',
      items: documentWindowSchema,
      description:
        "A text of 1,200 words or more is cut at sentence ends into windows of about 800 words, each scored as a text of its own; empty for a text of one window. The answer then follows from the windows by one rule: `verdict` likely_ai when windows called likely_ai hold more than half of the words, likely_human when none is and windows called likely_human hold more than half, else mixed; `ai_probability` the windows' lower median by words; `generated_share` the share of words in likely_ai windows, and `composition` from it (ai from 0.9, partly_ai above 0), with or without `segments`; `origin` partly_ai when some windows are likely_ai and the others average under 30%.",
    },
  },
} as const;

export const errorSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message'],
      additionalProperties: true,
      properties: {
        type: {
          type: 'string',
          enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'api_error'],
          description:
            'Family of the error, fixed per status: 400/404/405/408/413/415/422 invalid_request_error, 401 authentication_error, 403 permission_error, 429 rate_limit_error, 500/503 api_error.',
        },
        code: { type: 'string', description: 'Machine-readable reason, e.g. `invalid_json`, `text_too_long`, `rate_limited`.' },
        message: { type: 'string', description: 'A sentence a person can act on.' },
        request_id: { type: 'string', description: 'Quote it to support.' },
        param: { type: 'string', description: 'The offending request field or header (400 invalid_request).' },
        retry_after: { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying (429, 503).' },
        detected_language: { type: 'string', description: 'Best guess of the language (422 unsupported_language).' },
      },
    },
  },
} as const;

export const healthSchema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['ok'] } },
} as const;

export const readySchema = {
  type: 'object',
  required: ['status', 'model', 'redis', 'keys'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ready'] },
    model: { type: 'string', description: 'Version id of the loaded model.' },
    redis: {
      type: 'string',
      enum: ['ok', 'degraded', 'disabled'],
      description:
        '`degraded`: Redis failed or was slow, rate limits are counted per instance until it answers again; `disabled` when no REDIS_URL is configured.',
    },
    keys: {
      type: 'string',
      enum: ['ok', 'stale', 'missing'],
      description:
        '`stale`: the API key file is unreadable and the last good version is in force (see the logs); `missing`: there is no API key file, so every key is refused.',
    },
  },
} as const;

/**
 * `POST /v1/detect/author`. The total size of all messages cannot be said in JSON Schema; the
 * handler checks it (413 `text_too_long`) and the description states it.
 */
export function detectAuthorRequestSchema(maxMessageChars: number, maxTotalChars: number) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['messages'],
    properties: {
      messages: {
        type: 'array',
        minItems: 1,
        maxItems: AUTHOR_MAX_MESSAGES,
        items: {
          type: 'string',
          // No maxLength: characters are counted as judged (`countChars`); the route checks them.
          description: `One message, at most ${maxMessageChars} characters (Unicode code points, a run of whitespace counted as one); no NUL characters or unpaired UTF-16 surrogates. Blank messages are accepted and reported as skipped ("empty").`,
        },
        description: `1 to ${AUTHOR_MAX_MESSAGES} messages of one author, in any order (the answer keeps it), holding at most ${maxTotalChars} characters together. Each started ${CHARS_PER_UNIT} characters of all messages together cost one unit of the key's rate limit.`,
      },
      mode: {
        type: 'string',
        enum: [...MODES],
        default: 'general',
        description: 'Calibration and verdict thresholds to apply.',
      },
      language: {
        type: 'string',
        enum: [...LANGUAGES],
        description:
          'Score every message as this language. When omitted each message is identified on its own, and messages clearly in neither language are skipped ("other_language") instead of refused.',
      },
    },
  } as const;
}

export const authorMessageScoreSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['index', 'words', 'ai_probability', 'skipped'],
  properties: {
    index: { type: 'integer', minimum: 0, description: "Position of the message in the request's `messages`." },
    words: { type: 'integer', minimum: 0, description: 'Words the engine counted in it (0 when skipped).' },
    ai_probability: {
      type: ['number', 'null'],
      minimum: 0,
      maximum: 1,
      description: "The message's own calibrated probability; null when it was skipped.",
    },
    skipped: {
      type: ['string', 'null'],
      enum: [...SKIP_REASONS, null],
      description:
        'Why the message was left out of the score: `empty` (blank), `no_words`, `link_only`, `other_language`; null when it was used. New reasons may be added.',
    },
  },
} as const;

export const detectAuthorResponseSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'ai_probability',
    'mode',
    'language',
    'verdict',
    'confidence',
    'warnings',
    'messages_used',
    'words_used',
    'evidence_needed',
    'messages',
    'request_id',
    'model',
    'origin',
    'polished_probability',
  ],
  properties: {
    ai_probability: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: "Probability that this author's messages were written by an AI, calibrated on author windows.",
    },
    mode: { type: 'string', enum: [...MODES], description: 'The mode applied.' },
    language: {
      type: 'string',
      enum: [...LANGUAGES],
      description: 'The language applied: the one given, else the one most of the used messages were in.',
    },
    verdict: {
      type: 'string',
      enum: [...VERDICTS],
      description: 'Reading of `ai_probability`; `mixed` while there is too little evidence.',
    },
    confidence: { type: 'string', enum: [...CONFIDENCES] },
    warnings: {
      type: 'array',
      items: { type: 'string' },
      description:
        'As for /v1/detect; `too_little_evidence`: under 40 words in the used messages together, the evidence floor of both routes (`evidence_needed` says how many more). New codes may be added.',
    },
    messages_used: { type: 'integer', minimum: 0, description: 'Messages that counted towards the score.' },
    words_used: { type: 'integer', minimum: 0, description: 'Words in the messages that counted.' },
    evidence_needed: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['messages', 'words'],
      properties: {
        messages: { type: 'integer', minimum: 0, description: 'More scorable messages a verdict would need.' },
        words: { type: 'integer', minimum: 0, description: 'More words a verdict would need.' },
      },
      description:
        'How many more messages and words a verdict would need (40 words in the used messages together); null when there were enough.',
    },
    messages: {
      type: 'array',
      items: authorMessageScoreSchema,
      description: 'One entry per request message, in request order.',
    },
    request_id: {
      type: 'string',
      pattern: '^req_[0-9A-Z]{26}$',
      description: '`req_` + a time-sortable unique id; also in the `Request-Id` header.',
    },
    model: { type: 'string', description: "Version id of the engine's model." },
    origin: originSchema('never `partly_ai` (that needs sentence scores)'),
    polished_probability: polishedProbabilitySchema("the author's messages read", 'messages are'),
  },
} as const;

/**
 * The form fields of `POST /v1/detect/file` (multipart/form-data), for the OpenAPI document; the
 * route reads them itself, since a form's values arrive as strings.
 */
export function detectFileRequestSchema(maxFileBytes: number) {
  return {
    type: 'object',
    required: ['file'],
    properties: {
      file: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description: `The document: a PDF with a text layer, a DOCX, plain text (UTF-8), Markdown or HTML, at most ${maxFileBytes} bytes. The format is told from the bytes; the file name and declared type are only echoed.`,
      },
      mode: { type: 'string', enum: [...MODES], description: 'Calibration to apply; default `general`.' },
      language: { type: 'string', enum: [...LANGUAGES], description: 'Omit to detect it from the extracted text.' },
      segments: { type: 'string', enum: ['true', 'false'], description: 'Also score each sentence; default `false`.' },
    },
  } as const;
}

export const fileInfoSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'pages', 'characters'],
  properties: {
    name: { type: 'string', description: 'The file name sent (its last path part, at most 255 characters).' },
    type: { type: 'string', enum: [...FILE_TYPES], description: "The format told from the file's bytes." },
    pages: { type: ['integer', 'null'], minimum: 1, description: 'Pages of a PDF; null for formats without pages.' },
    characters: {
      type: 'integer',
      minimum: 0,
      description: `UTF-16 length of the text read out of the file, which was scored and which segment and window offsets refer to. The text costs one unit of the rate limit per started ${CHARS_PER_UNIT} characters counted as judged (a run of whitespace as one), as a /v1/detect text; never more than this length.`,
    },
  },
} as const;

export const detectFileResponseSchema = {
  ...detectResponseSchema,
  required: [...detectResponseSchema.required, 'file'],
  properties: {
    ...detectResponseSchema.properties,
    segments: {
      ...detectResponseSchema.properties.segments,
      description:
        "One element per sentence when `segments` was `true`, else empty. Offsets are UTF-16 offsets into the text read out of the file (repeated page headers, footers and page numbers left out), and each carries its `text`. A PDF's `windows` carry the pages they lie on.",
    },
    file: fileInfoSchema,
  },
} as const;
