/** Checks both scoring routes make before scoring. */
import type { FastifyRequest } from 'fastify';
import { type DetectionResult, UnsupportedLanguageError } from '../../detector/types.ts';
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
 * Runs one scoring and turns the engine's language refusal into the 422. The name check covers
 * errors that crossed a worker thread boundary, where the class identity is lost.
 */
export async function scoreOrRefuse(score: () => Promise<DetectionResult>): Promise<DetectionResult> {
  try {
    return await score();
  } catch (err) {
    if (err instanceof UnsupportedLanguageError || (err as Error).name === 'UnsupportedLanguageError') {
      throw unsupportedLanguage((err as UnsupportedLanguageError).detected ?? 'unknown');
    }
    throw err;
  }
}

/** The body both scoring routes answer with; the per-segment parts only when segments were asked for. */
export function detectAnswer(result: DetectionResult, segments: boolean, requestId: string) {
  return {
    ai_probability: result.ai_probability,
    mode: result.mode,
    language: result.language,
    segments: segments ? result.segments : [],
    request_id: requestId,
    model: result.model,
    verdict: result.verdict,
    confidence: result.confidence,
    warnings: result.warnings,
    generated_spans: segments ? result.generated_spans : [],
    generated_share: segments ? result.generated_share : null,
    composition: segments ? result.composition : null,
    origin: result.origin,
    polished_probability: result.polished_probability,
  };
}
