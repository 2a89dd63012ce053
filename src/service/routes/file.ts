/**
 * `POST /v1/detect/file`: the text of a document (PDF, DOCX, plain text, Markdown, HTML), scored like
 * `/v1/detect`. The upload arrives as multipart/form-data (@fastify/multipart, in this plugin's scope
 * only), is held in memory (never written to disk, never logged: the log line gets its type, size
 * and pages), read in worker threads by src/documents, and scored by the engine. What it costs is
 * `fileRequestCost` (src/contract.ts), charged through the `limits` plugin once the text's length is
 * known; a key has at most FILES_PER_KEY files being read at once, so one caller cannot fill the
 * readers' queue. Reading stops at the document limit (MAX_TEXT_CHARS): a file holding more is
 * answered 413 without being read to its end. When the engine runs in worker threads, a document's
 * text (up to MAX_TEXT_CHARS, far longer than most /v1/detect texts) is scored by an engine lane of
 * its own (FILE_WORKERS threads), window by window in turns between keys, so other callers' short
 * texts never wait behind a 100-page report in the scoring queue, nor one key's report behind another's.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type DocumentWindow, countChars, FILE_ERRORS, fileRequestCost, LANGUAGES, MODES } from '../../contract.ts';
import type { DetectOptions, Language, Mode } from '../../detector/types.ts';
import { DocumentError, DocumentReader, type ExtractedDocument } from '../../documents/index.ts';
import type { ResolvedConfig } from '../config.ts';
import { createEngineHost, type EngineHost } from '../engine.ts';
import { FileQueue } from '../file-queue.ts';
import { ApiError } from '../errors.ts';
import { FairQueue } from '../fair-queue.ts';
import { refuseOtherMethods } from '../plugins/envelope.ts';
import { detectFileResponseSchema } from '../schemas.ts';
import { assertEngineReady, detectAnswer, scoreText, type Turn, textTooLong } from './common.ts';

type FileConfig = Pick<
  ResolvedConfig,
  | 'maxTextChars'
  | 'maxFileBytes'
  | 'maxFilePages'
  | 'maxFileUnpackedBytes'
  | 'fileWorkers'
  | 'fileWorkerMemoryMb'
  | 'fileTimeoutMs'
  | 'fileWorkersAtStart'
  | 'workers'
  | 'modelPath'
>;

export interface FileRouteOptions {
  config: FileConfig;
  engine: EngineHost;
  /** Told the queue in front of the readers and the scoring lane's turns once they exist (for the queue-depth metrics and tests). */
  onQueue?: (queue: FileQueue, lane: FairQueue) => void;
}

/** Files one key may have being read (or waiting for a reader) at once. */
export const FILES_PER_KEY = 2;
/**
 * Niceness of the threads reading and scoring documents (Linux): a document is seconds of bulk CPU
 * work that can wait a little; a /v1/detect caller's short text should not wait behind it.
 */
const FILE_THREAD_NICE = 10;
/** Room for the form's boundaries, part headers and fields around the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const FIELDS = ['mode', 'language', 'segments'] as const;

interface FormInput {
  name: string;
  bytes: Buffer;
  fields: Partial<Record<(typeof FIELDS)[number], string>>;
}

function invalid(message: string, param?: string): ApiError {
  return new ApiError(400, 'invalid_request', message, param ? { param } : {});
}

function tooLarge(maxFileBytes: number): ApiError {
  return new ApiError(
    413,
    'file_too_large',
    `The file is larger than ${formatMb(maxFileBytes)}, the limit on this server; send a smaller file or the part to check.`,
    { param: 'file', details: { max_bytes: maxFileBytes }, headers: { Connection: 'close' } },
  );
}

function formatMb(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}

/**
 * Characters a name shown back must not carry: controls, bidirectional overrides and isolates (which
 * can make "gpj.exe" read as "exe.jpg"), line and paragraph separators (which break a log or a chat
 * line), and lone surrogates.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\p{Zl}\p{Zp}\p{Cs}]/gu;

/** The name as echoed back: its last path part, without unsafe characters, at most 255 code points (never half a character). */
export function cleanName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  const clean = Array.from(base.replace(UNSAFE_IN_NAME, '').trim()).slice(0, 255).join('').trim();
  return clean || 'file';
}

/** Reads the form: one file in the field `file`, and the optional fields; refuses anything else. */
async function readForm(request: FastifyRequest, maxFileBytes: number): Promise<FormInput> {
  const fields: FormInput['fields'] = {};
  let file: { name: string; bytes: Buffer } | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          throw invalid(
            `Unknown file field "${part.fieldname.slice(0, 100)}"; send the document in the field "file".`,
            part.fieldname.slice(0, 100),
          );
        }
        file = { name: cleanName(part.filename), bytes: await part.toBuffer() };
      } else {
        const name = part.fieldname as (typeof FIELDS)[number];
        if (!FIELDS.includes(name)) {
          throw invalid(
            `Unknown field "${part.fieldname.slice(0, 100)}"; accepted fields are file, mode, language and segments.`,
            part.fieldname.slice(0, 100),
          );
        }
        if (fields[name] !== undefined) throw invalid(`The field "${name}" was sent twice; send it once.`, name);
        fields[name] = String(part.value);
      }
    }
  } catch (err) {
    // The rest of a refused form is not parsed: busboy would otherwise go on reading it part by part
    // on the event loop (a megabyte of empty parts kept every caller waiting), and the connection
    // closes once the answer is sent instead of draining it.
    request.raw.unpipe();
    const close = request.raw.complete ? {} : { headers: { Connection: 'close' } };
    if (err instanceof ApiError) {
      if (!request.raw.complete) err.options.headers = { ...err.options.headers, Connection: 'close' };
      throw err;
    }
    switch ((err as { code?: string }).code) {
      case 'FST_REQ_FILE_TOO_LARGE':
        throw tooLarge(maxFileBytes);
      case 'FST_FILES_LIMIT':
        throw new ApiError(400, 'invalid_request', 'Send one file per request, in the field "file".', { param: 'file', ...close });
      case 'FST_PARTS_LIMIT':
      case 'FST_FIELDS_LIMIT':
      case 'FST_PROTO_VIOLATION':
        throw new ApiError(400, 'invalid_request', 'The form has more fields than file, mode, language and segments.', close);
      default:
        throw new ApiError(
          400,
          'invalid_request',
          'The multipart/form-data body is malformed or was cut short; send the form again.',
          close,
        );
    }
  }
  if (!file) throw invalid('The form has no file: send the document in the field "file" (multipart/form-data).', 'file');
  return { ...file, fields };
}

function detectOptions(fields: FormInput['fields']): DetectOptions & { segments: boolean } {
  const mode = fields.mode ?? 'general';
  if (!MODES.includes(mode as Mode)) throw invalid(`The field "mode" must be one of: ${MODES.join(', ')}.`, 'mode');
  const options: DetectOptions & { segments: boolean } = { mode: mode as Mode, segments: false };
  if (fields.language !== undefined) {
    if (!LANGUAGES.includes(fields.language as Language)) {
      throw invalid(`The field "language" must be one of: ${LANGUAGES.join(', ')}.`, 'language');
    }
    options.language = fields.language as Language;
  }
  if (fields.segments !== undefined) {
    if (fields.segments !== 'true' && fields.segments !== 'false') throw invalid('The field "segments" must be true or false.', 'segments');
    options.segments = fields.segments === 'true';
  }
  return options;
}

/** Each window's first and last page, from the offsets where the PDF's pages begin in its text. */
export function withPages(windows: DocumentWindow[], pageStarts: readonly number[] | null): DocumentWindow[] {
  if (!pageStarts || pageStarts.length === 0) return windows;
  const pageAt = (offset: number): number => {
    // The last page that begins at or before the offset (binary search: pageStarts ascends).
    let lo = 0;
    let hi = pageStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (pageStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return windows.map((w) => ({ ...w, pages: { first: pageAt(w.start), last: pageAt(Math.max(w.start, w.end - 1)) } }));
}

export default async function fileRoute(app: FastifyInstance, { config, engine, onQueue }: FileRouteOptions): Promise<void> {
  const reader = new DocumentReader({
    workers: config.fileWorkers,
    timeoutMs: config.fileTimeoutMs,
    maxPages: config.maxFilePages,
    maxUnpackedBytes: config.maxFileUnpackedBytes,
    maxChars: config.maxTextChars,
    maxMemoryMb: config.fileWorkerMemoryMb,
    nice: FILE_THREAD_NICE,
  });
  const queue = new FileQueue(reader, config.fileTimeoutMs);
  // The lane's windows taken in turns between keys, as the shared engine's are (fair-queue.ts).
  const laneTurns = new FairQueue(config.fileWorkers);
  onQueue?.(queue, laneTurns);
  // The file lane's engine, started on the first file (or with the service, see fileWorkersAtStart).
  let lane: EngineHost | undefined;
  const laneEngine = (): EngineHost => {
    if (config.workers === 0) return engine;
    if (!lane) {
      lane = createEngineHost(
        config.modelPath,
        config.fileWorkers,
        (err) => app.log.error({ err: { message: err.message } }, 'a file scoring worker exited; it is replaced'),
        FILE_THREAD_NICE,
      );
      lane.loaded.catch((err: Error) => app.log.error({ err: { message: err.message } }, 'the file scoring lane failed to load'));
    }
    return lane;
  };
  /** The lane when it is loaded, else the shared engine (while the lane loads, or if it cannot). */
  const scorer = async (): Promise<EngineHost> => {
    const own = laneEngine();
    if (own === engine) return engine;
    // Loaded (every file after the first): no wait, and no 5 s timer per request.
    if (own.state !== 'ready') {
      try {
        await Promise.race([own.loaded, new Promise((_, reject) => setTimeout(reject, 5_000).unref())]);
      } catch {
        return engine;
      }
    }
    return own.state === 'ready' ? own : engine;
  };
  if (config.fileWorkersAtStart) {
    // Not awaited: the service answers /v1/detect while pdf.js and the lane warm up.
    app.addHook('onReady', async () => {
      void reader.ready();
      laneEngine();
    });
  }
  // Before the server stops taking requests and waits for those in flight: files still waiting for
  // a reader are answered 503 now rather than cut off at the shutdown deadline.
  app.addHook('preClose', async () => {
    queue.close();
  });
  app.addHook('onClose', async () => {
    await Promise.all([reader.close(), lane?.close()]);
  });

  await app.register(multipart, {
    limits: {
      fileSize: config.maxFileBytes,
      files: 1,
      fields: FIELDS.length,
      parts: FIELDS.length + 1,
      fieldSize: 100,
      fieldNameSize: 100,
      headerPairs: 20,
    },
    throwFileSizeLimit: true,
  });

  const inFlight = new Map<string, number>();

  app.post(
    '/v1/detect/file',
    {
      config: { apiKey: true },
      schema: { response: { 200: detectFileResponseSchema } },
      onRequest: async (request) => {
        const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
        if (type !== 'multipart/form-data') {
          throw new ApiError(
            415,
            'unsupported_media_type',
            'Send the document as multipart/form-data (Content-Type: multipart/form-data), in the field "file"; e.g. curl -F file=@essay.pdf.',
          );
        }
        // An upload announced as too large is refused before a byte of it is read.
        const length = Number(request.headers['content-length']);
        if (Number.isFinite(length) && length > config.maxFileBytes + FORM_OVERHEAD_BYTES) throw tooLarge(config.maxFileBytes);
      },
    },
    async (request, reply) => {
      const form = await readForm(request, config.maxFileBytes);
      request.ctx.fileBytes = form.bytes.length;
      const options = detectOptions(form.fields);
      request.ctx.mode = options.mode;
      if (form.bytes.length === 0) {
        throw new ApiError(422, 'no_text_in_file', 'The file is empty (0 bytes); there is no text to check.', { param: 'file' });
      }
      assertEngineReady(engine);
      const owner = request.ctx.keyId ?? request.ip;
      const mine = inFlight.get(owner) ?? 0;
      if (mine >= FILES_PER_KEY) {
        throw new ApiError(
          429,
          'rate_limited',
          `This key already has ${FILES_PER_KEY} files being read; send the next one when one of them is answered.`,
          { retryAfter: 1, headers: { 'Retry-After': '1' } },
        );
      }
      inFlight.set(owner, mine + 1);
      let document: ExtractedDocument;
      try {
        document = await queue.read(owner, form.bytes);
      } catch (err) {
        if (err instanceof DocumentError) {
          request.ctx.fileType = err.type;
          request.ctx.filePages = err.pages;
          if (err.code === 'text_too_long')
            throw textTooLong('file', err.read?.whole ? err.read.characters : undefined, config.maxTextChars);
          throw new ApiError(FILE_ERRORS[err.code], err.code, err.message, { param: 'file' });
        }
        throw err;
      } finally {
        const left = (inFlight.get(owner) ?? 1) - 1;
        if (left <= 0) inFlight.delete(owner);
        else inFlight.set(owner, left);
      }
      request.ctx.fileType = document.type;
      request.ctx.filePages = document.pages;
      const text = document.text;
      request.ctx.textLength = text.length;
      const characters = countChars(text);
      if (characters > config.maxTextChars) throw textTooLong('file', characters, config.maxTextChars);
      const cost = fileRequestCost(characters);
      request.ctx.costUnits = cost;
      await reply.chargeUnits(cost, 'file');
      const scoring = await scorer();
      // The shared engine is taken in turns between keys (the limits plugin's fair queue); the file
      // lane has its own threads and turns, and a key may have only FILES_PER_KEY files in it.
      const turn: Turn =
        scoring === engine ? (job, weight) => request.inTurn(job, weight) : (job, weight) => laneTurns.run(owner, job, weight);
      const result = await scoreText(scoring, text, options, turn);
      request.ctx.language = result.language;
      return {
        ...detectAnswer({ ...result, windows: withPages(result.windows, document.pageStarts) }, request.id),
        file: { name: form.name, type: document.type, pages: document.pages, characters: text.length },
      };
    },
  );
  refuseOtherMethods(app, '/v1/detect/file', ['POST']);
}
