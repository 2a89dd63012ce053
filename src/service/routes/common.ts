/** Checks the scoring routes make before scoring, and how a text is scored and answered. */
import type { FastifyRequest } from 'fastify';
import { unitsForChars } from '../../contract.ts';
import { type DetectionResult, type DetectOptions, UnsupportedLanguageError } from '../../detector/types.ts';
import { combineWindows } from '../../detector/windows.ts';
import type { EngineHost } from '../engine.ts';
import { ApiError } from '../errors.ts';
import { isJsonContentType } from '../plugins/envelope.ts';

/** Both scoring routes take JSON only (a preValidation hook). */
export async function requireJsonBody(request: FastifyRequest): Promise<void> {
  if (!isJsonContentType(request.headers['content-type'])) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with the header Content-Type: application/json.');
  }
}

export function assertEngineReady(engine: EngineHost): void {
  if (engine.state !== 'ready') {
    throw new ApiError(503, 'not_ready', 'The detection engine is not loaded yet; retry in a few seconds.', {
      retryAfter: 5,
      headers: { 'Retry-After': '5' },
    });
  }
}

export function hasLoneSurrogate(text: string): boolean {
  return !(text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** The 422 for a text in a language the engine does not score. */
export function unsupportedLanguage(detected: string): ApiError {
  return new ApiError(
    422,
    'unsupported_language',
    `The text appears to be in "${detected}"; only English (en) and Turkish (tr) are supported. If it is one of them, say so with "language".`,
    { param: 'language', details: { detected_language: detected } },
  );
}

/**
 * The 413 for a text over the document limit (MAX_TEXT_CHARS), pasted (`param` text) or read out of
 * a file (`param` file; `characters` undefined when reading stopped at the limit).
 */
export function textTooLong(param: 'text' | 'file', characters: number | undefined, maxChars: number): ApiError {
  const what = param === 'file' ? 'The text read from the file' : 'The text';
  const has =
    characters === undefined
      ? `${what} is longer than the ${maxChars.toLocaleString('en-US')} characters this server judges in one request (reading stopped there)`
      : `${what} has ${characters.toLocaleString('en-US')} characters, more than the ${maxChars.toLocaleString('en-US')} this server judges in one request`;
  return new ApiError(
    413,
    'text_too_long',
    `${has}; runs of whitespace count as one character. Send at most ${maxChars.toLocaleString('en-US')} characters: the part of the document to check.`,
    { param, details: characters === undefined ? { max_chars: maxChars } : { max_chars: maxChars, characters } },
  );
}

/** Runs a job with the engine when the caller gets its turn; `weight`: the job's units of work. */
export type Turn = <T>(job: () => Promise<T>, weight: number) => Promise<T>;

/**
 * Scores a text: a text of one window in one job; a longer one in one job per window, each taking
 * its own turn (`turn`), so other callers' texts are scored between a document's windows instead of
 * after all of them, then combined by the one rule of src/detector/windows.ts (the same answer the
 * engine's `detect` gives in one piece). Every job weighs what the whole text does: a document's
 * windows are heavy jobs, which, while other keys call, start only on a free worker and leave one
 * worker to the others (fair-queue.ts), as the document did in one piece. The engine's language
 * refusal becomes the 422; the name check covers errors that crossed a worker thread boundary,
 * where the class identity is lost.
 */
export async function scoreText(engine: EngineHost, text: string, options: DetectOptions, turn: Turn): Promise<DetectionResult> {
  const weight = unitsForChars(text.length);
  try {
    const started = await turn(() => engine.start(text, options), weight);
    if ('result' in started) return started.result;
    const { plan } = started;
    const scores = await Promise.all(
      plan.windows.map(({ start, end }) => turn(() => engine.detectWindow(text.slice(start, end), plan, options), weight)),
    );
    return combineWindows(plan, scores, options);
  } catch (err) {
    if (err instanceof UnsupportedLanguageError || (err as Error).name === 'UnsupportedLanguageError') {
      throw unsupportedLanguage((err as UnsupportedLanguageError).detected ?? 'unknown');
    }
    throw err;
  }
}

/** The body the text routes answer with (the engine leaves the per-sentence parts empty unless they were asked for). */
export function detectAnswer(result: DetectionResult, requestId: string) {
  return {
    ai_probability: result.ai_probability,
    mode: result.mode,
    language: result.language,
    segments: result.segments,
    request_id: requestId,
    model: result.model,
    verdict: result.verdict,
    confidence: result.confidence,
    warnings: result.warnings,
    generated_spans: result.generated_spans,
    generated_share: result.generated_share,
    composition: result.composition,
    origin: result.origin,
    polished_probability: result.polished_probability,
    windows: result.windows,
  };
}
