/**
 * `textdetect score --input in.jsonl --output out.jsonl [--local]`: scores a JSONL file, one
 * `{id?, text, mode?, language?, segments?}`, `{id?, file: "path", mode?, language?, segments?}` (a
 * document the service reads) or `{id?, messages: [...], mode?, language?}` (one author's messages,
 * judged together) a line, writing one result line per input line in input order.
 *
 * Through the API the file is streamed: up to --window lines are in the client's limiter at once and
 * results are written as soon as every earlier line is done, so memory stays flat on large files.
 * With --local the engine runs in this process (no server, no key).
 */
import { createReadStream, createWriteStream, realpathSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Readable, Writable } from 'node:stream';
import {
  AUTHOR_MAX_MESSAGES,
  DetectError,
  InvalidRequestError,
  type AuthorMessageScore,
  type Composition,
  type DetectAuthorRequest,
  type DetectClient,
  type DetectRequest,
  type DocumentWindow,
  type GeneratedSpan,
  type Language,
  type Mode,
  type Origin,
  type Segment,
} from '../client/index.ts';
import {
  CONNECTION_OPTIONS,
  EXIT,
  LANGUAGES,
  MODES,
  UsageError,
  abortOnSigint,
  clientFromFlags,
  describeError,
  errorJson,
  exitCodeFor,
  parseLanguage,
  parseMode,
  readDocument,
} from './detect.ts';

const USAGE = `Usage: textdetect score --input in.jsonl --output out.jsonl [options]

Scores every line of a JSONL file and writes one line per input line, in the same order. A line is
one text, {"id": ..., "text": "...", "mode": "...", "language": "...", "segments": true}, or one
author's messages judged together, {"id": ..., "messages": ["...", "..."], "mode": "...",
"language": "..."} (1 to ${AUTHOR_MAX_MESSAGES} messages), or a document, {"id": ..., "file": "essay.pdf",
"mode": "...", "segments": true} (PDF, DOCX, text, Markdown or HTML, read by the service; a relative
path is relative to the input file's folder, or the current one when reading standard input; not
with --local); only "text", "messages" or "file" is required. Output:
  {"id", "ai_probability", "mode", "language", "verdict", "confidence", "warnings", "origin",
   "polished_probability", "request_id"}
      a text ("origin": the headline, human, ai_polished, ai_written, partly_ai or uncertain); with "segments": true also "segments" (UTF-16 offsets, as in the API),
      "generated_spans", "generated_share" and "composition"; for a text of 1,200 words or more, judged
      window by window, also "windows" (and "generated_share", "composition"); for a "file" line also
      "file": {"name", "type", "pages", "characters"} (what the service read)
  {"id", "ai_probability", "mode", "language", "verdict", "confidence", "warnings", "origin",
   "polished_probability", "messages_used", "words_used", "evidence_needed", "messages", "request_id"}
      an author: the combined answer, and each message's own score in "messages"
With --local there is no "request_id". A line that cannot be scored becomes
{"id", "error": {"code", "message", ...}} (the message names the line number) and the run goes on.
"id" defaults to the line number (1-based). Blank lines are skipped.

Options:
  --input <file>        JSONL to read; "-" or omitted reads standard input
  --output <file>       where to write; "-" or omitted writes standard output
  --local               score in this process with the engine (no server, no API key)
  --model <file>        with --local: the model artifact (default: the engine's default)
  --mode <mode>         default mode for lines without one (${MODES.join(', ')})
  --language <lang>     default language for lines without one (${LANGUAGES.join(', ')})
  --window <n>          lines handed to the client at once (default 64)
  --redis <url>         share the key's budget with other processes (env TEXTDETECT_REDIS_URL)
  --quiet               no progress bar
  --api-url, --api-key, --timeout, --retries   as for textdetect (see textdetect --help)

A progress bar is drawn on standard error when it is a terminal. Exit codes: 0 every line scored; otherwise the code of
the first failed line (2 bad input, 3 authentication/permission — the run stops, 4 rate limited,
5 server or network); 130 interrupted.`;

interface InputLine {
  /** 1-based line number in the input. */
  lineNo: number;
  id: unknown;
  /** A text to score (with or without segments)… */
  request?: DetectRequest;
  /** …or one author's messages to judge together… */
  author?: DetectAuthorRequest;
  /** …or a document for the service to read (path resolved against the input's folder). */
  file?: { path: string; mode?: Mode; language?: Language; segments?: boolean };
  /** Set when the line itself is unusable. */
  problem?: DetectError;
}

type OutputLine = Record<string, unknown>;

interface Outcome {
  line: OutputLine;
  error?: unknown;
  /** With `error`: the input line it belongs to. */
  lineNo?: number;
}

export async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        input: { type: 'string', short: 'i' },
        output: { type: 'string', short: 'o' },
        local: { type: 'boolean' },
        model: { type: 'string' },
        mode: { type: 'string' },
        language: { type: 'string' },
        window: { type: 'string' },
        redis: { type: 'string' },
        quiet: { type: 'boolean', short: 'q' },
        help: { type: 'boolean', short: 'h' },
        ...CONNECTION_OPTIONS,
      },
    }));
  } catch (err) {
    process.stderr.write(`textdetect score: ${(err as Error).message}\n\n${USAGE}\n`);
    return EXIT.badInput;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);

  let input: Readable;
  let output: Writable;
  let defaults: { mode: Mode | undefined; language: Language | undefined; baseDir: string };
  let window: number;
  try {
    const inputFile = str('input');
    defaults = {
      mode: parseMode(str('mode')),
      language: parseLanguage(str('language')),
      baseDir: inputFile && inputFile !== '-' ? dirname(resolve(inputFile)) : process.cwd(),
    };
    const rawWindow = str('window');
    window = rawWindow === undefined ? 64 : Number(rawWindow);
    if (!Number.isInteger(window) || window < 1) throw new UsageError(`--window must be a whole number ≥ 1; got "${rawWindow}".`);
    ({ input, output } = await openStreams(str('input'), str('output')));
  } catch (err) {
    process.stderr.write(`textdetect score: ${describeError(err)}\n`);
    return EXIT.badInput;
  }

  const inputPath = str('input');
  const total = inputPath && inputPath !== '-' ? await countLines(inputPath) : undefined;
  const progress = new ProgressBar(total, values.quiet !== true);
  const controller = new AbortController();
  const removeSigint = abortOnSigint(controller);
  let firstFailure: unknown;
  let firstFailureLine: number | undefined;
  let stopped: unknown;
  let client: DetectClient | undefined;

  const write = async (outcome: Outcome): Promise<void> => {
    if (!output.write(`${JSON.stringify(outcome.line)}\n`)) await once(output, 'drain');
    progress.tick(outcome.error === undefined);
    if (outcome.error !== undefined && firstFailure === undefined) {
      firstFailure = outcome.error;
      firstFailureLine = outcome.lineNo;
    }
  };

  try {
    const lines = readLines(input, defaults);
    if (values.local) {
      const detector = await loadDetector(str('model'));
      for await (const line of lines) {
        if (controller.signal.aborted) break;
        await write(scoreLocally(detector, line));
      }
    } else {
      client = clientFromFlags(
        { 'api-url': str('api-url'), 'api-key': str('api-key'), timeout: str('timeout'), retries: str('retries') },
        { redis: str('redis') ?? process.env.TEXTDETECT_REDIS_URL, prefix: 'textdetect score' },
      );
      const api = client;
      // Results are written strictly in input order: the head of this queue is always the oldest line.
      const queue: Promise<Outcome>[] = [];
      const drainOne = async (): Promise<void> => {
        const outcome = await (queue.shift() as Promise<Outcome>);
        await write(outcome);
        if (isFatal(outcome.error) && !controller.signal.aborted) {
          // Every later line would fail the same way (bad or unauthorised key): stop now.
          stopped = outcome.error;
          controller.abort(outcome.error);
        }
      };
      for await (const line of lines) {
        if (controller.signal.aborted) break;
        queue.push(scoreThroughApi(api, line, controller.signal));
        while (queue.length >= window) await drainOne();
      }
      while (queue.length > 0 && !stopped) await drainOne();
    }
  } catch (err) {
    firstFailure ??= err;
    stopped ??= err;
  } finally {
    removeSigint();
    progress.finish();
    output.end();
    await once(output, 'finish').catch(() => undefined);
    await client?.close();
  }

  if (controller.signal.aborted && !stopped) {
    process.stderr.write(`textdetect score: interrupted after ${progress.done} lines; the output holds the lines finished so far.\n`);
    return EXIT.interrupted;
  }
  if (stopped) {
    process.stderr.write(`textdetect score: stopped after ${progress.done} lines: ${describeError(stopped)}\n`);
    return exitCodeFor(stopped);
  }
  if (firstFailure !== undefined) {
    process.stderr.write(
      `textdetect score: ${progress.failed} of ${progress.done} lines could not be scored (see their "error"); first: ${atLine(describeError(firstFailure), firstFailureLine)}\n`,
    );
    return exitCodeFor(firstFailure);
  }
  return EXIT.ok;
}

function isFatal(err: unknown): boolean {
  return err instanceof DetectError && (err.name === 'AuthenticationError' || err.name === 'PermissionError');
}

async function openStreams(inputPath: string | undefined, outputPath: string | undefined): Promise<{ input: Readable; output: Writable }> {
  const readsStdin = inputPath === undefined || inputPath === '-';
  const writesStdout = outputPath === undefined || outputPath === '-';
  if (readsStdin && process.stdin.isTTY) throw new UsageError(`Give --input <file> or pipe JSONL on standard input.\n\n${USAGE}`);
  if (!readsStdin && !writesStdout && sameFile(inputPath, outputPath)) {
    throw new UsageError('--output must not be the --input file: it would be overwritten while being read.');
  }
  let input: Readable = process.stdin;
  if (!readsStdin) {
    const stream = createReadStream(inputPath);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (err: NodeJS.ErrnoException) =>
        reject(new UsageError(`Cannot read --input "${inputPath}": ${err.code === 'ENOENT' ? 'no such file' : err.message}.`)),
      );
    });
    input = stream;
  }
  let output: Writable = process.stdout;
  if (!writesStdout) {
    const stream = createWriteStream(outputPath);
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (err: Error) => reject(new UsageError(`Cannot write --output "${outputPath}": ${err.message}.`)));
    });
    output = stream;
  }
  return { input, output };
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

async function countLines(path: string): Promise<number | undefined> {
  try {
    let count = 0;
    const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
    for await (const line of rl) if (line.trim() !== '') count++;
    return count;
  } catch {
    return undefined;
  }
}

async function* readLines(
  input: Readable,
  defaults: { mode: Mode | undefined; language: Language | undefined; baseDir: string },
): AsyncGenerator<InputLine> {
  const rl = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  for await (const raw of rl) {
    lineNo++;
    if (raw.trim() === '') continue;
    yield parseLine(raw, lineNo, defaults);
  }
}

function invalid(lineNo: number, id: unknown, code: string, message: string, param?: string): InputLine {
  return { lineNo, id, problem: new InvalidRequestError(`Line ${lineNo}: ${message}`, { code, param }) };
}

/** Checks one input line; a bad line becomes an error result instead of stopping the run. */
export function parseLine(
  raw: string,
  lineNo: number,
  defaults: { mode?: Mode | undefined; language?: Language | undefined; baseDir?: string | undefined } = {},
): InputLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return invalid(lineNo, lineNo, 'invalid_json', 'not valid JSON; each line must be an object such as {"text": "..."}.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid(lineNo, lineNo, 'invalid_line', 'each line must be a JSON object such as {"text": "..."}.');
  }
  const entry = value as Record<string, unknown>;
  const id = entry.id ?? lineNo;
  const isAuthor = entry.messages !== undefined;
  const isFile = entry.file !== undefined;
  if ([isAuthor, isFile, entry.text !== undefined].filter(Boolean).length > 1) {
    return invalid(
      lineNo,
      id,
      'ambiguous_line',
      'give one of "text" (one text), "file" (a document) or "messages" (one author\'s messages), not several.',
    );
  }
  if (isFile) {
    if (typeof entry.file !== 'string' || entry.file.trim() === '') {
      return invalid(lineNo, id, 'invalid_file', '"file" must be the path of a document, e.g. "essays/one.pdf".', 'file');
    }
  } else if (isAuthor) {
    const problem = checkMessages(entry.messages, entry.segments);
    if (problem) return invalid(lineNo, id, problem.code, problem.message, problem.param);
  } else {
    if (typeof entry.text !== 'string') {
      return invalid(lineNo, id, 'missing_text', '"text" must be a string (or give "messages": ["...", "..."] for one author).', 'text');
    }
    if (entry.text.trim() === '') return invalid(lineNo, id, 'empty_text', '"text" is empty: nothing to check.', 'text');
  }
  // An author's "segments" was judged with its messages; a file or a text takes true or false.
  if (!isAuthor && entry.segments !== undefined && typeof entry.segments !== 'boolean') {
    return invalid(lineNo, id, 'invalid_segments', `"segments" must be true or false; got ${JSON.stringify(entry.segments)}.`, 'segments');
  }
  const mode = entry.mode ?? defaults.mode;
  if (mode !== undefined && !(MODES as readonly unknown[]).includes(mode)) {
    return invalid(lineNo, id, 'invalid_mode', `"mode" must be one of ${MODES.join(', ')}; got ${JSON.stringify(mode)}.`, 'mode');
  }
  const language = entry.language ?? defaults.language;
  if (language !== undefined && !(LANGUAGES as readonly unknown[]).includes(language)) {
    return invalid(
      lineNo,
      id,
      'invalid_language',
      `"language" must be one of ${LANGUAGES.join(', ')}; got ${JSON.stringify(language)}.`,
      'language',
    );
  }
  const options = {
    ...(mode !== undefined ? { mode: mode as Mode } : {}),
    ...(language !== undefined ? { language: language as Language } : {}),
  };
  if (isAuthor) return { lineNo, id, author: { messages: entry.messages as string[], ...options } };
  if (isFile) {
    const path = entry.file as string;
    return {
      lineNo,
      id,
      file: {
        path: isAbsolute(path) ? path : resolve(defaults.baseDir ?? process.cwd(), path),
        ...options,
        ...(entry.segments === true ? { segments: true } : {}),
      },
    };
  }
  return {
    lineNo,
    id,
    request: { text: entry.text as string, ...options, ...(entry.segments === true ? { segments: true } : {}) },
  };
}

/** What is wrong with a line's "messages" (and a "segments" beside it), or undefined. */
function checkMessages(messages: unknown, segments: unknown): { code: string; message: string; param: string } | undefined {
  if (!Array.isArray(messages)) {
    return { code: 'invalid_messages', message: `"messages" must be an array of 1 to ${AUTHOR_MAX_MESSAGES} strings.`, param: 'messages' };
  }
  if (messages.length === 0) return { code: 'invalid_messages', message: '"messages" is empty: nothing to check.', param: 'messages' };
  if (messages.length > AUTHOR_MAX_MESSAGES) {
    return {
      code: 'too_many_messages',
      message: `"messages" holds ${messages.length} messages, more than ${AUTHOR_MAX_MESSAGES}; keep the ${AUTHOR_MAX_MESSAGES} most recent.`,
      param: 'messages',
    };
  }
  const bad = messages.findIndex((m) => typeof m !== 'string');
  if (bad >= 0) {
    return {
      code: 'invalid_messages',
      message: `message ${bad} (counting from 0) of "messages" is ${JSON.stringify(messages[bad])}, not a string.`,
      param: `messages[${bad}]`,
    };
  }
  if (segments !== undefined && segments !== false) {
    return { code: 'invalid_segments', message: '"segments" applies to one text, not to an author\'s "messages".', param: 'segments' };
  }
  return undefined;
}

/** The fields every text line carries, and the sentence-level ones when segments were asked for. */
interface TextAnswer {
  ai_probability: number;
  mode: Mode;
  language: Language;
  verdict: string;
  confidence: string;
  warnings: readonly string[];
  segments: readonly Segment[];
  generated_spans: readonly GeneratedSpan[];
  generated_share: number | null;
  composition: Composition | null;
  origin: Origin;
  polished_probability: number | null;
  /** A long text's windows (empty or absent for a text of one window). */
  windows?: readonly DocumentWindow[];
}

function textLine(id: unknown, r: TextAnswer, segments: boolean, requestId?: string): OutputLine {
  return {
    id,
    ai_probability: r.ai_probability,
    mode: r.mode,
    language: r.language,
    verdict: r.verdict,
    confidence: r.confidence,
    warnings: r.warnings,
    origin: r.origin,
    polished_probability: r.polished_probability,
    ...(segments
      ? { segments: r.segments, generated_spans: r.generated_spans, generated_share: r.generated_share, composition: r.composition }
      : {}),
    // A long text judged window by window: its windows, and the share and composition read off them.
    ...(r.windows && r.windows.length > 0 ? { windows: r.windows, generated_share: r.generated_share, composition: r.composition } : {}),
    ...(requestId !== undefined ? { request_id: requestId } : {}),
  };
}

interface AuthorAnswer {
  ai_probability: number;
  mode: Mode;
  language: Language;
  verdict: string;
  confidence: string;
  warnings: readonly string[];
  messages_used: number;
  words_used: number;
  evidence_needed: { messages: number; words: number } | null;
  messages: readonly AuthorMessageScore[];
  origin: Origin;
  polished_probability: number | null;
}

function authorLine(id: unknown, r: AuthorAnswer, requestId?: string): OutputLine {
  return {
    id,
    ai_probability: r.ai_probability,
    mode: r.mode,
    language: r.language,
    verdict: r.verdict,
    confidence: r.confidence,
    warnings: r.warnings,
    origin: r.origin,
    polished_probability: r.polished_probability,
    messages_used: r.messages_used,
    words_used: r.words_used,
    evidence_needed: r.evidence_needed,
    messages: r.messages,
    ...(requestId !== undefined ? { request_id: requestId } : {}),
  };
}

/** Prefixes a message with its input line, unless it already names it. */
function atLine(message: string, lineNo: number | undefined): string {
  return lineNo === undefined || message.startsWith('Line ') ? message : `Line ${lineNo}: ${message}`;
}

/** The output line of an input line that could not be scored; the message names the input line. */
function errorLine(line: InputLine, err: unknown): Outcome {
  const error = {
    ...errorJson(err),
    // Which field of the line is wrong, e.g. "messages[3]", as the service names it.
    ...(err instanceof InvalidRequestError && err.param !== undefined ? { param: err.param } : {}),
  };
  return { line: { id: line.id, error: { ...error, message: atLine(error.message, line.lineNo) } }, error: err, lineNo: line.lineNo };
}

async function scoreThroughApi(client: DetectClient, line: InputLine, signal: AbortSignal): Promise<Outcome> {
  try {
    if (line.author) {
      const r = await client.detectAuthor(line.author, { signal });
      return { line: authorLine(line.id, r, r.request_id) };
    }
    if (line.file) {
      const { path, ...options } = line.file;
      const { data, filename } = await readDocument(path);
      const r = await client.detectFile(data, { filename, ...options, signal });
      return { line: { ...textLine(line.id, r, options.segments === true, r.request_id), file: r.file } };
    }
    if (!line.request) return errorLine(line, line.problem);
    const r = await client.detect(line.request, { signal });
    return { line: textLine(line.id, r, line.request.segments === true, r.request_id) };
  } catch (err) {
    return errorLine(line, err);
  }
}

/** The engine's surface this command uses; typed here so the API path never loads the engine. */
interface LocalDetector {
  detect(text: string, options?: { mode?: Mode; language?: Language; segments?: boolean }): TextAnswer;
  detectAuthor(messages: readonly string[], options?: { mode?: Mode; language?: Language }): AuthorAnswer;
}

async function loadDetector(model: string | undefined): Promise<LocalDetector> {
  const engine = await import('../detector/index.ts');
  try {
    return await engine.createDetector(model !== undefined ? { model } : {});
  } catch (err) {
    throw new UsageError(
      `Cannot load the detection model${model ? ` "${model}"` : ''}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function scoreLocally(detector: LocalDetector, line: InputLine): Outcome {
  try {
    if (line.author) {
      const { messages, mode, language } = line.author;
      return {
        line: authorLine(line.id, detector.detectAuthor(messages, { ...(mode ? { mode } : {}), ...(language ? { language } : {}) })),
      };
    }
    if (line.file) {
      // An error line in the API's terms (type invalid_request_error, a documented code, the field), as every other line's.
      return errorLine(
        line,
        new InvalidRequestError(`Line ${line.lineNo}: "file" lines need the service, which reads the document; run without --local.`, {
          code: 'invalid_request',
          param: 'file',
        }),
      );
    }
    if (!line.request) return errorLine(line, line.problem);
    const { text, mode, language, segments = false } = line.request;
    const r = detector.detect(text, { ...(mode ? { mode } : {}), ...(language ? { language } : {}), ...(segments ? { segments } : {}) });
    return { line: textLine(line.id, r, segments) };
  } catch (err) {
    // The engine signals text in an unsupported language by a named error; it is an input problem.
    const name = err instanceof Error ? err.name : '';
    const message = err instanceof Error ? err.message : String(err);
    // Worded as the service answers the same line (src/service/routes/common.ts), hint and param
    // included, so a file scored with --local and through the API reads the same.
    const detected = (err as { detected?: string }).detected ?? 'unknown';
    const wrapped =
      name === 'UnsupportedLanguageError'
        ? new InvalidRequestError(
            `Line ${line.lineNo}: The text appears to be in "${detected}"; only English (en) and Turkish (tr) are supported. If it is one of them, say so with "language".`,
            { code: 'unsupported_language', param: 'language', status: 422 },
          )
        : new DetectError(`Line ${line.lineNo}: the engine failed: ${message}`, { code: 'engine_error' });
    return errorLine(line, wrapped);
  }
}

/**
 * The progress bar on stderr, drawn in place and only on a terminal: where stderr is a file, a pipe
 * or a CI log, a redrawn bar would be a line per update, and the summary lines say what matters.
 */
export class ProgressBar {
  done = 0;
  failed = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  private readonly draws: boolean;

  constructor(
    private readonly total: number | undefined,
    wanted: boolean,
    private readonly stream: Pick<NodeJS.WriteStream, 'isTTY' | 'write'> = process.stderr,
  ) {
    this.draws = wanted && stream.isTTY === true;
  }

  tick(ok: boolean): void {
    this.done++;
    if (!ok) this.failed++;
    if (!this.draws) return;
    const now = Date.now();
    if (now - this.lastDraw >= 100) {
      this.lastDraw = now;
      this.stream.write(`\r${this.render()}\u001b[K`);
    }
  }

  finish(): void {
    if (this.draws) this.stream.write(`\r${this.render()}\u001b[K\n`);
  }

  private render(): string {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const failed = this.failed > 0 ? `  failed ${this.failed}` : '';
    if (!this.total) return `scoring ${this.done} lines  ${rate.toFixed(1)}/s${failed}`;
    const fraction = Math.min(1, this.done / this.total);
    const cells = 24;
    const filled = Math.round(fraction * cells);
    const eta = rate > 0 ? formatDuration((this.total - this.done) / rate) : '?';
    return `scoring [${'#'.repeat(filled)}${'-'.repeat(cells - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${this.done}/${this.total}  ${rate.toFixed(1)}/s  ETA ${eta}${failed}`;
  }
}

function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
