/**
 * `POST /v1/detect/file`: the text of a document (PDF, DOCX, plain text, Markdown, HTML), scored like
 * `/v1/detect`. The upload arrives as multipart/form-data (read by file-form.ts), is held in memory
 * (never written to disk, never logged: the log line gets its type, size and pages), read in reader
 * processes by src/documents, taking turns between keys in the file queue (file-queue.ts), and
 * scored by the engine. What it costs is `fileRequestCost` (src/contract.ts), charged through the
 * `limits` plugin once the text's length is known. Reading stops at the document limit
 * (MAX_TEXT_CHARS): a file holding more is answered 413 without being read to its end. When the
 * engine runs in worker threads, a document's text (up to MAX_TEXT_CHARS, far longer than most
 * /v1/detect texts) is scored by an engine lane of its own (FILE_WORKERS threads), window by window
 * in turns between keys, so other callers' short texts never wait behind a 100-page report in the
 * scoring queue, nor one key's report behind another's.
 */
import type { FastifyInstance } from 'fastify';
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
import { type FileForm, invalid, readFileForm, tooLarge } from './file-form.ts';

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

/**
 * Niceness of the threads reading and scoring documents (Linux): a document is seconds of bulk CPU
 * work that can wait a little; a /v1/detect caller's short text should not wait behind it.
 */
const FILE_THREAD_NICE = 10;
/** Room for the form's boundaries, part headers and fields around the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

function detectOptions(fields: FileForm['fields']): DetectOptions & { segments: boolean } {
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

  // The form is read in the handler (file-form.ts), not by a body parser.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));

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
      const form = await readFileForm(request, config.maxFileBytes);
      request.ctx.fileBytes = form.bytes.length;
      const options = detectOptions(form.fields);
      request.ctx.mode = options.mode;
      if (form.bytes.length === 0) {
        throw new ApiError(422, 'no_text_in_file', 'The file is empty (0 bytes); there is no text to check.', { param: 'file' });
      }
      assertEngineReady(engine);
      const owner = request.ctx.keyId ?? request.ip;
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
