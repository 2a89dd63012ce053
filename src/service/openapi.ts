/**
 * The OpenAPI 3.1 document served at GET /v1/openapi.json, assembled from the schemas in
 * schemas.ts, i.e. the very objects that validate requests and serialise answers.
 */
import type { ServiceConfig } from './config.ts';
import { AUTHOR_MAX_MESSAGES, CHARS_PER_UNIT } from '../contract.ts';
import {
  detectFileRequestSchema,
  detectFileResponseSchema,
  fileInfoSchema,
  authorMessageScoreSchema,
  detectAuthorRequestSchema,
  detectAuthorResponseSchema,
  detectRequestSchema,
  detectResponseSchema,
  errorSchema,
  healthSchema,
  readySchema,
} from './schemas.ts';

const ID_HEADERS = {
  'Request-Id': { description: 'The `request_id` of this answer.', schema: { type: 'string' } },
  'X-Request-Id': { description: "The caller's X-Request-Id if one was sent, else the `request_id`.", schema: { type: 'string' } },
};

const RATE_HEADERS = {
  'RateLimit-Limit': {
    description:
      "Requests allowed per window for this key (or, unauthenticated, this address). The probes and this document are never refused, but report the address's budget.",
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: 'Quota and window in seconds, e.g. `60;w=60` (draft-ietf-httpapi-ratelimit-headers-06).',
    schema: { type: 'string' },
  },
};

/** An error answer: like every answer of the API, it carries the ids and the RateLimit-* headers. */
function errorResponse(description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { ...ID_HEADERS, ...RATE_HEADERS, ...extraHeaders },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

// Parts every scoring route (/v1/detect, /v1/detect/file, /v1/detect/author) documents alike.
const REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'Your own id for this call (a UUID); echoed in the X-Request-Id header and logged with ours.',
  schema: { type: 'string', format: 'uuid' },
};
const RETRY_HEADERS = {
  'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
  'Retry-After-Ms': { description: 'Milliseconds to wait.', schema: { type: 'integer' } },
};
const UNAUTHORIZED = errorResponse('`missing_api_key` or `invalid_api_key` (unknown, revoked or expired).', {
  'WWW-Authenticate': { schema: { type: 'string' } },
});
const WRONG_ENVIRONMENT = errorResponse('`wrong_environment`: a live key on a sandbox server or a test key on a production server.');
const REQUEST_TIMEOUT = errorResponse('`request_timeout`: the body did not arrive in time.');
const EXPECTATION_FAILED = errorResponse('`expectation_failed`: an `Expect` header other than `100-continue`.');
const INTERNAL_ERROR = errorResponse('`internal_error`.');
const ENGINE_NOT_READY = errorResponse('`not_ready`: the engine is loading or the server is shutting down.', {
  'Retry-After': { schema: { type: 'integer' } },
});

export function buildOpenApiDocument(
  config: Pick<
    ServiceConfig,
    'maxTextChars' | 'environment' | 'authorMaxMessageChars' | 'authorMaxTotalChars' | 'maxFileBytes' | 'maxFilePages' | 'fileTimeoutMs'
  > & {
    rateLimitWindowMs: number;
    rateLimitMax: number;
  },
) {
  const limited = { ...ID_HEADERS, ...RATE_HEADERS };
  return {
    openapi: '3.1.0',
    info: {
      title: 'textdetect',
      version: '1',
      description:
        'Tells how likely a text was written by an AI. Authenticate with `Authorization: Bearer <key>` ' +
        `(this server is a ${config.environment} server and accepts ${config.environment === 'sandbox' ? 'sk_test_' : 'sk_live_'} keys). ` +
        `Requests are limited to ${config.rateLimitMax} per ${config.rateLimitWindowMs / 1000} s per key by default; ` +
        `a request costs one unit of that budget when it arrives; POST /v1/detect and POST /v1/detect/author cost one unit per started ${CHARS_PER_UNIT} characters of submitted text (at least one), charged all at once when the body is read, or refused with 429 at the price of the arrival unit alone; POST /v1/detect/file costs the same for the text read out of the file. ` +
        'Every error answer is `{"error": {type, code, message, request_id, ...}}`.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_… (sandbox) or sk_live_… (production) key.' },
      },
      schemas: {
        DetectRequest: detectRequestSchema(config.maxTextChars),
        DetectResponse: detectResponseSchema,
        DetectFileRequest: detectFileRequestSchema(config.maxFileBytes),
        DetectFileResponse: detectFileResponseSchema,
        FileInfo: fileInfoSchema,
        DetectAuthorRequest: detectAuthorRequestSchema(config.authorMaxMessageChars, config.authorMaxTotalChars),
        DetectAuthorResponse: detectAuthorResponseSchema,
        AuthorMessageScore: authorMessageScoreSchema,
        Error: errorSchema,
        Health: healthSchema,
        Ready: readySchema,
      },
    },
    paths: {
      '/v1/detect': {
        post: {
          operationId: 'detect',
          summary: 'Score a text',
          description:
            `A text of up to ${config.maxTextChars} characters (the document limit), counted as judged: code points, a run of whitespace as one. ` +
            'A text of 1,200 words or more is judged window by window (about 800 words each, cut at sentence ends), and the answer follows from its `windows` by one rule. ' +
            `Cost: ceil(characters / ${CHARS_PER_UNIT}) units of the key's rate limit, at least 1 (up to ${Math.ceil(config.maxTextChars / CHARS_PER_UNIT)} here), however many windows; ` +
            'a request the remaining budget cannot cover is refused with 429 and costs one unit, like any refused request. ' +
            "The answer's RateLimit-Remaining counts the units left.",
          security: [{ bearerAuth: [] }],
          parameters: [REQUEST_ID_PARAMETER],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/DetectRequest' } } } },
          responses: {
            '200': {
              description: 'The score.',
              headers: limited,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DetectResponse' } } },
            },
            '400': errorResponse('`invalid_json` (body not JSON / not UTF-8) or `invalid_request` (a field is wrong; see `param`).'),
            '401': UNAUTHORIZED,
            '403': WRONG_ENVIRONMENT,
            '408': REQUEST_TIMEOUT,
            '413': errorResponse(
              `\`text_too_long\` (more than ${config.maxTextChars} characters, counted as judged) or \`payload_too_large\` (body over the byte limit).`,
            ),
            '415': errorResponse(
              '`unsupported_media_type`: the body must be `application/json` in UTF-8; `unsupported_encoding`: the body must not be compressed (no `Content-Encoding` other than `identity`).',
            ),
            '417': EXPECTATION_FAILED,
            '422': errorResponse(
              '`unsupported_language`: the text is in neither English nor Turkish (`detected_language` says what it looks like).',
            ),
            '429': errorResponse('`rate_limited`; wait `retry_after` seconds.', RETRY_HEADERS),
            '500': INTERNAL_ERROR,
            '503': ENGINE_NOT_READY,
          },
        },
      },
      '/v1/detect/file': {
        post: {
          operationId: 'detectFile',
          summary: 'Score the text of a document (PDF, DOCX, plain text, Markdown, HTML)',
          description:
            'Send the document as multipart/form-data in the field `file`, with `mode`, `language` and `segments` as optional form fields ' +
            '(same meaning and defaults as /v1/detect). The format is told from the bytes, not the file name or declared type. ' +
            'The text is read out of the file (a PDF needs a text layer: no OCR is done; running headers, footers and page numbers repeated on the pages are left out) ' +
            'and scored like a /v1/detect text; segment offsets refer to that text and each segment carries its `text`. ' +
            `Limits: ${config.maxFileBytes} bytes per file, ${config.maxFilePages} pages per PDF, ${config.fileTimeoutMs} ms to read it, ${config.maxTextChars} characters of extracted text (counted as judged: a run of whitespace as one; a file holding more is not read past the limit). ` +
            'A document of 1,200 words or more is judged window by window, as on /v1/detect; the windows of a PDF say on which pages they lie. ' +
            `Cost: one unit of the key's rate limit per started ${CHARS_PER_UNIT} characters of extracted text (at least one), as for a /v1/detect text; a file refused before its text is read costs one unit. ` +
            'Files are held in memory only, never stored; the request log records their type, size and pages.',
          security: [{ bearerAuth: [] }],
          parameters: [REQUEST_ID_PARAMETER],
          requestBody: {
            required: true,
            content: { 'multipart/form-data': { schema: { $ref: '#/components/schemas/DetectFileRequest' } } },
          },
          responses: {
            '200': {
              description: 'The score of the text read from the file, and what was read.',
              headers: limited,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DetectFileResponse' } } },
            },
            '400': errorResponse(
              '`invalid_request`: no `file` field, an unknown field, a bad `mode`/`language`/`segments`, a malformed form, or one of more than 4 parts (see `param`).',
            ),
            '401': UNAUTHORIZED,
            '403': WRONG_ENVIRONMENT,
            '408': REQUEST_TIMEOUT,
            '413': errorResponse(
              `\`file_too_large\` (over ${config.maxFileBytes} bytes), \`too_many_pages\` (a PDF over ${config.maxFilePages} pages) or \`text_too_long\` (the extracted text is over ${config.maxTextChars} characters; reading stops there).`,
            ),
            '415': errorResponse(
              '`unsupported_file_type`: the bytes are not a PDF, DOCX, plain text, Markdown or HTML file (an image, a zip, a program…); `unsupported_media_type`: the body is not multipart/form-data.',
            ),
            '417': EXPECTATION_FAILED,
            '422': errorResponse(
              '`file_unreadable` (encrypted, damaged, unpacking to more than the server reads, or not read in time), `no_text_in_file` (e.g. a scanned PDF without a text layer: no OCR is done) or `unsupported_language` (the text is in neither English nor Turkish).',
            ),
            '429': errorResponse(
              "`rate_limited`, also when the remaining budget cannot cover this file's cost or the key already has 2 files being read or waiting for a reader; wait `retry_after` seconds.",
              RETRY_HEADERS,
            ),
            '500': INTERNAL_ERROR,
            '503': errorResponse(
              "`not_ready`: the engine is loading, the server is shutting down, or the document readers are busy with other files: this one would wait for a reader longer than the reading time limit (refused at once), or waited that long (other keys' first files go before a key's second, and keys that used the readers less before those that used them more); retry after `Retry-After` seconds.",
              { 'Retry-After': { schema: { type: 'integer' } } },
            ),
          },
        },
      },
      '/v1/detect/author': {
        post: {
          operationId: 'detectAuthor',
          summary: 'Judge one author across their recent messages',
          description:
            `Scores each of 1 to ${AUTHOR_MAX_MESSAGES} messages of one author on its own and combines them into one answer about the author; ` +
            'blank, link-only and other-language messages are skipped and reported. ' +
            `Limits: at most ${config.authorMaxMessageChars} characters per message and ${config.authorMaxTotalChars} for all messages together, counted as judged (a run of whitespace as one; 413 \`text_too_long\`). ` +
            `Cost: ceil(characters of all messages / ${CHARS_PER_UNIT}) units of the key's rate limit, at least 1 (up to ${Math.ceil(config.authorMaxTotalChars / CHARS_PER_UNIT)} here), however many messages hold them; ` +
            'a request the remaining budget cannot cover is refused with 429 and costs one unit, like any refused request. ' +
            "The answer's RateLimit-Remaining counts the units left.",
          security: [{ bearerAuth: [] }],
          parameters: [REQUEST_ID_PARAMETER],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/DetectAuthorRequest' } } },
          },
          responses: {
            '200': {
              description: "The author's combined answer, with each message's own score.",
              headers: limited,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DetectAuthorResponse' } } },
            },
            '400': errorResponse(
              '`invalid_json` (body not JSON / not UTF-8) or `invalid_request`: `messages` missing, not an array, empty, over ' +
                `${AUTHOR_MAX_MESSAGES} items, an item that is not a string (\`param\` is e.g. \`messages[3]\`), an unknown field, ` +
                "or a cost above the key's whole budget.",
            ),
            '401': UNAUTHORIZED,
            '403': WRONG_ENVIRONMENT,
            '408': REQUEST_TIMEOUT,
            '413': errorResponse(
              '`text_too_long` (a message, named by `param`, or all messages together over the limit) or `payload_too_large` (body over the byte limit).',
            ),
            '415': errorResponse(
              '`unsupported_media_type`: the body must be `application/json` in UTF-8; `unsupported_encoding`: the body must not be compressed.',
            ),
            '417': EXPECTATION_FAILED,
            '429': errorResponse(
              "`rate_limited`, also when the remaining budget cannot cover this request's cost; wait `retry_after` seconds.",
              RETRY_HEADERS,
            ),
            '500': INTERNAL_ERROR,
            '503': ENGINE_NOT_READY,
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Liveness: the process answers',
          responses: {
            '200': {
              description: 'Alive.',
              headers: limited,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } },
            },
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary:
            'Readiness: the engine is loaded; also reports Redis (`degraded`: per-instance limits) and the key file (`stale`: last good keys in force)',
          responses: {
            '200': {
              description: 'Ready.',
              headers: limited,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Ready' } } },
            },
            '503': errorResponse('`not_ready`; `error.checks` says which part is not.'),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document',
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document.',
              headers: limited,
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
    },
  };
}
