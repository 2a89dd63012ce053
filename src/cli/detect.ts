/**
 * `textdetect "some text"` / `textdetect < file.txt`: scores one text through the API and prints
 * a readable result (or JSON with --json).
 *
 * Also holds what `score` shares with it: reading the client's flags and environment, and turning
 * client errors into exit codes and one-line messages.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { pino } from 'pino';
import {
  AbortedError,
  AuthenticationError,
  ConnectionError,
  DetectClient,
  DetectError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  TimeoutError,
  type ClientLogger,
  type DetectFileResponse,
  type DetectResponse,
  type Language,
  type Mode,
} from '../client/index.ts';
import { errorTypeFor, POLISHED_THRESHOLD } from '../contract.ts';
import { type AnswerWords, describeAnswer, fileFacts, formatPercent, passagesTitle, passagesToShow, WINDOWS_TITLE } from '../words.ts';

export const EXIT = { ok: 0, badInput: 2, auth: 3, rateLimited: 4, server: 5, interrupted: 130 } as const;

export const MODES: readonly Mode[] = ['general', 'academic', 'financial', 'legal'];
export const LANGUAGES: readonly Language[] = ['en', 'tr'];

/** Flags every command that calls the API understands. */
export const CONNECTION_OPTIONS = {
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const USAGE = `Usage: textdetect [options] "text to check"
       textdetect [options] < file.txt
       textdetect [options] --file essay.pdf   (PDF, DOCX, text, Markdown or HTML, read by the server)
       textdetect score --input in.jsonl --output out.jsonl [--local]   (see textdetect score --help)

Tells how likely a text was written by an AI system.

Options:
  --mode <mode>         general (default), academic, financial or legal
  --language <lang>     en or tr; default: detected by the server
  --file <path>         check a document: the service reads its text (a PDF needs a text layer)
                        and says how many pages and characters it read
  --segments            also score each sentence (coloured in a terminal), and show the runs of
                        sentences that look generated and what share of the text they are
  --json                print the API response as JSON
  --api-url <url>       service URL (env TEXTDETECT_API_URL; default http://127.0.0.1:8080)
  --api-key <key>       API key (env TEXTDETECT_API_KEY; prefer the variable: arguments show in ps)
  --timeout <ms>        deadline of one attempt (default 30000)
  --retries <n>         retries for 429, 5xx, timeouts and network errors (default 3)
  -h, --help            show this help

Exit codes: 0 ok, 2 bad input, 3 authentication/permission, 4 rate limited, 5 server or network,
130 interrupted.`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The exit code that tells a script what to do about `err`. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError || err instanceof InvalidRequestError) return EXIT.badInput;
  if (err instanceof AuthenticationError || err instanceof PermissionError) return EXIT.auth;
  if (err instanceof RateLimitError) return EXIT.rateLimited;
  if (err instanceof AbortedError) return EXIT.interrupted;
  return EXIT.server;
}

/** One line for a person: the message, plus the code and request id to quote to support. */
export function describeError(err: unknown): string {
  if (err instanceof DetectError) {
    const facts = [
      err.code,
      err.status !== undefined ? `HTTP ${err.status}` : undefined,
      err.requestId ? `request ${err.requestId}` : undefined,
    ];
    // The service's 429 message already says "retry in N s"; saying it twice reads as a glitch.
    const saysWait = /\b(?:retry|try again) in \d+ s\b/i.test(err.message);
    const wait =
      err instanceof RateLimitError && err.retryAfterMs > 0 && !saysWait ? ` Try again in ${Math.ceil(err.retryAfterMs / 1000)} s.` : '';
    return `${err.message}${wait} (${facts.filter(Boolean).join(', ')})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The machine-readable form of an error, for --json output and score's error lines. */
/**
 * The `error.type` printed for a failure: the API's own (`invalid_request_error`, `rate_limit_error`…,
 * as the service answers it), not the client's class name; failures that never reached the service
 * (timeout, connection, abort) get a type of the same form naming what happened.
 */
function apiErrorType(err: DetectError): string {
  if (err.status !== undefined) return errorTypeFor(err.status);
  if (err instanceof AuthenticationError) return 'authentication_error';
  if (err instanceof PermissionError) return 'permission_error';
  if (err instanceof InvalidRequestError) return 'invalid_request_error';
  if (err instanceof RateLimitError) return 'rate_limit_error';
  if (err instanceof TimeoutError) return 'timeout_error';
  if (err instanceof ConnectionError) return 'connection_error';
  if (err instanceof AbortedError) return 'aborted_error';
  return 'api_error';
}

export function errorJson(err: unknown): { type: string; code: string; message: string; status?: number; request_id?: string } {
  if (err instanceof DetectError) {
    return {
      type: apiErrorType(err),
      code: err.code,
      message: err.message,
      ...(err.status !== undefined ? { status: err.status } : {}),
      ...(err.requestId ? { request_id: err.requestId } : {}),
    };
  }
  if (err instanceof UsageError) return { type: 'usage_error', code: 'bad_usage', message: err.message };
  return { type: 'internal_error', code: 'unexpected_error', message: err instanceof Error ? err.message : String(err) };
}

export function parseMode(value: string | undefined): Mode | undefined {
  if (value === undefined) return undefined;
  if (!(MODES as readonly string[]).includes(value)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}; got "${value}".`);
  return value as Mode;
}

export function parseLanguage(value: string | undefined): Language | undefined {
  if (value === undefined) return undefined;
  if (!(LANGUAGES as readonly string[]).includes(value)) {
    throw new UsageError(`--language must be one of ${LANGUAGES.join(', ')} (or omitted to detect it); got "${value}".`);
  }
  return value as Language;
}

function wholeNumber(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}; got "${value}".`);
  return n;
}

/** CLI logs go to stderr, quiet unless TEXTDETECT_LOG_LEVEL asks (e.g. `warn` shows retries). */
export function cliLogger(): ClientLogger {
  const level = process.env.TEXTDETECT_LOG_LEVEL ?? 'silent';
  return pino({ level, base: undefined }, pino.destination(2));
}

export function clientFromFlags(
  values: { 'api-url'?: string | undefined; 'api-key'?: string | undefined; timeout?: string | undefined; retries?: string | undefined },
  extra: { redis?: string | undefined; maxConcurrent?: number | undefined; prefix?: string | undefined } = {},
): DetectClient {
  const apiKey = values['api-key'] ?? process.env.TEXTDETECT_API_KEY;
  if (!apiKey) {
    throw new AuthenticationError(
      'No API key: set TEXTDETECT_API_KEY (or pass --api-key). `textdetect keys create --name NAME` makes one for a local service.',
      {
        code: 'missing_api_key',
      },
    );
  }
  return new DetectClient({
    apiKey,
    baseUrl: values['api-url'] ?? process.env.TEXTDETECT_API_URL,
    timeoutMs: wholeNumber(values.timeout, '--timeout', 1),
    maxRetries: wholeNumber(values.retries, '--retries', 0),
    redis: extra.redis,
    limiter: extra.maxConcurrent !== undefined ? { maxConcurrent: extra.maxConcurrent } : undefined,
    logger: cliLogger(),
    userAgent: 'textdetect-cli',
    onRateLimitWait: rateLimitNotice(extra.prefix ?? 'textdetect'),
  });
}

/**
 * Says on stderr why the CLI goes quiet after a 429: once per pause, not once per queued text (a
 * batch that hits the limit has many calls waiting on the same pause).
 */
export function rateLimitNotice(
  prefix: string,
  write: (line: string) => void = (line) => process.stderr.write(line),
): (event: { waitMs: number }) => void {
  let pauseEndsAt = 0;
  return ({ waitMs }) => {
    const endsAt = Date.now() + waitMs;
    // The same pause seen by another call ends at (nearly) the same time.
    if (endsAt <= pauseEndsAt + 1000) return;
    pauseEndsAt = endsAt;
    write(`${prefix}: rate limited: waiting ${Math.max(1, Math.ceil(waitMs / 1000))} s\n`);
  };
}

/** Cancels `controller` on the first Ctrl-C; a second one exits at once. Returns the remover. */
export function abortOnSigint(controller: AbortController): () => void {
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    controller.abort(new AbortedError('Interrupted (Ctrl-C).', { code: 'aborted' }));
  };
  process.on('SIGINT', onSigint);
  return () => process.off('SIGINT', onSigint);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether to colour stdout: a terminal, unless NO_COLOR is set; FORCE_COLOR forces it. */
export function useColour(stream: NodeJS.WriteStream = process.stdout): boolean {
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0') return true;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}

function paint(probability: number, text: string, colour: boolean): string {
  if (!colour) return text;
  // Red for AI-like, yellow for uncertain, green for human-like; same bands as the segment bar.
  const code = probability >= 0.7 ? 31 : probability >= 0.4 ? 33 : 32;
  return `\u001b[${code}m${text}\u001b[0m`;
}

/** One decimal, never 0.0% or 100.0%: a detector cannot be certain (the bots and the page round to whole percents, formatPercent in src/words.ts). */
export function percent(probability: number): string {
  return `${Math.min(99.9, Math.max(0.1, Math.round(probability * 1000) / 10)).toFixed(1)}%`;
}

/** What the service read out of a file, as one line. */
export function fileLine(file: DetectFileResponse['file']): string {
  return `file: ${file.name}: ${fileFacts(file)}`;
}

/**
 * Reads a document for `--file` (and score's `"file"` lines), refusing what is plainly not a file
 * before anything is sent.
 */
export async function readDocument(path: string): Promise<{ data: Buffer; filename: string }> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `No such file: ${path}` : `Cannot read ${path} (${code ?? (err as Error).message}).`);
  }
  if (!info.isFile()) throw new UsageError(`${path} is not a file.`);
  return { data: await readFile(path), filename: basename(path) };
}

/**
 * The human-readable result, in the words of every surface (src/words.ts decides what to say), with
 * the CLI's own figures: one decimal, never 0.0% or 100.0%.
 */
export function formatResult(result: DetectResponse | DetectFileResponse, colour: boolean): string {
  const words = describeAnswer(result);
  const lines = [...('file' in result && result.file ? [fileLine(result.file)] : [])];
  // Below the evidence floor there is no verdict, and a percentage next to "too short" would still
  // read as one (`--json` keeps every number).
  if (words.tooShort) {
    lines.push(`${words.label}. ${words.sentence}`, `mode: ${result.mode}   language: ${result.language}   model: ${result.model}`);
    lines.push(`request_id: ${result.request_id}`);
    return lines.join('\n');
  }
  lines.push(
    `AI probability: ${paint(result.ai_probability, percent(result.ai_probability), colour)} — ${words.label} (${words.confidence?.toLowerCase()})`,
    words.sentence,
  );
  if (result.verdict === 'likely_ai' && typeof result.polished_probability === 'number') {
    lines.push(
      `Polished by an AI rather than written by one: ${percent(result.polished_probability)} probability (read as polished from ${formatPercent(POLISHED_THRESHOLD)})`,
    );
  }
  lines.push(`mode: ${result.mode}   language: ${result.language}   model: ${result.model}`, `request_id: ${result.request_id}`);
  for (const warning of words.warnings) lines.push(`warning: ${warning.sentence}`);
  if (words.windows) {
    lines.push('', `${WINDOWS_TITLE}: ${words.windows.summary}`);
    const width = Math.max(...words.windows.windows.map((w) => w.where.length));
    for (const w of words.windows.windows) lines.push(`  ${w.where.padEnd(width)}  ${percent(w.probability).padStart(6)}  ${w.label}`);
  }
  if (result.segments.length > 0) {
    lines.push('', 'Sentences:');
    for (const segment of result.segments) {
      const score = percent(segment.ai_probability).padStart(6);
      const text = segment.text.replace(/\s+/g, ' ').trim();
      lines.push(`  ${paint(segment.ai_probability, score, colour)}  ${paint(segment.ai_probability, text, colour)}`);
    }
  }
  lines.push(...formatSpans(result, colour, words));
  return lines.join('\n');
}

/** Longest quote of a span; the rest is elided, the offsets say where it is. */
const SPAN_QUOTE_CHARS = 120;

/**
 * What the text is made of and its generated-looking spans (answers with segments only). A span is
 * a run of whole sentences, so its text is quoted from the sentences inside it.
 */
export function formatSpans(result: DetectResponse, colour: boolean, words: AnswerWords = describeAnswer(result)): string[] {
  if (!words.composition) return [];
  const lines = ['', `Composition: ${words.composition.label}. ${words.composition.sentence}`];
  const spans = passagesToShow(result);
  if (spans.length === 0) return lines;
  lines.push(`${passagesTitle(words.origin)} (${spans.length}):`);
  for (const span of spans) {
    const inside = result.segments.filter((segment) => segment.start >= span.start && segment.end <= span.end);
    let quote = inside
      .map((segment) => segment.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (quote.length > SPAN_QUOTE_CHARS) quote = `${quote.slice(0, SPAN_QUOTE_CHARS - 1).trimEnd()}…`;
    const where = `characters ${span.start}–${span.end}`;
    const score = percent(span.ai_probability).padStart(6);
    lines.push(
      `  ${paint(span.ai_probability, score, colour)}  ${where}${quote ? `: "${paint(span.ai_probability, quote, colour)}"` : ''}`,
    );
  }
  return lines;
}

export async function run(argv: string[]): Promise<number> {
  let values: {
    json?: boolean | undefined;
    segments?: boolean | undefined;
    file?: string | undefined;
    mode?: string | undefined;
    language?: string | undefined;
    help?: boolean | undefined;
    'api-url'?: string | undefined;
    'api-key'?: string | undefined;
    timeout?: string | undefined;
    retries?: string | undefined;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        segments: { type: 'boolean' },
        file: { type: 'string', short: 'f' },
        mode: { type: 'string' },
        language: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...CONNECTION_OPTIONS,
      },
    }));
  } catch (err) {
    process.stderr.write(`textdetect: ${(err as Error).message}\n\n${USAGE}\n`);
    return EXIT.badInput;
  }
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const json = values.json === true;
  const fail = (err: unknown): number => {
    if (json) process.stdout.write(`${JSON.stringify({ error: errorJson(err) })}\n`);
    else process.stderr.write(`textdetect: ${describeError(err)}\n`);
    return exitCodeFor(err);
  };

  let client: DetectClient | undefined;
  const controller = new AbortController();
  const removeSigint = abortOnSigint(controller);
  try {
    const mode = parseMode(values.mode);
    const language = parseLanguage(values.language);
    if (values.file !== undefined) {
      if (positionals.length > 0) throw new UsageError('Give either --file or a text, not both.');
      const { data, filename } = await readDocument(values.file);
      client = clientFromFlags(values);
      const result = await client.detectFile(data, {
        filename,
        ...(mode ? { mode } : {}),
        ...(language ? { language } : {}),
        ...(values.segments ? { segments: true } : {}),
        signal: controller.signal,
      });
      process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${formatResult(result, useColour())}\n`);
      return EXIT.ok;
    }
    let text: string;
    if (positionals.length > 0 && !(positionals.length === 1 && positionals[0] === '-')) {
      text = positionals.join(' ');
    } else if (process.stdin.isTTY) {
      throw new UsageError(`Give the text as an argument or on standard input.\n\n${USAGE}`);
    } else {
      text = await readStdin();
    }
    if (text.trim() === '') throw new UsageError('The text is empty: nothing to check.');
    client = clientFromFlags(values);
    const result = await client.detect(
      {
        text,
        ...(mode ? { mode } : {}),
        ...(language ? { language } : {}),
        ...(values.segments ? { segments: true } : {}),
      },
      { signal: controller.signal },
    );
    process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${formatResult(result, useColour())}\n`);
    return EXIT.ok;
  } catch (err) {
    return fail(err);
  } finally {
    removeSigint();
    await client?.close();
  }
}
