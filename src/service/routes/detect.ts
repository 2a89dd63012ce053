/**
 * `POST /v1/detect`: one text, up to the document limit (MAX_TEXT_CHARS; a long one is judged window
 * by window). Its schemas are in ../schemas.ts; its validation errors name its fields; what it costs
 * is `detectRequestCost` (src/contract.ts: its characters), charged through the `limits` plugin.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { countChars, unitsForChars } from '../../contract.ts';
import type { DetectOptions, Language, Mode } from '../../detector/types.ts';
import type { EngineHost } from '../engine.ts';
import { ApiError } from '../errors.ts';
import { refuseOtherMethods } from '../plugins/envelope.ts';
import { detectRequestSchema, detectResponseSchema } from '../schemas.ts';
import { assertEngineReady, detectAnswer, hasLoneSurrogate, requireJsonBody, scoreText, textTooLong } from './common.ts';

interface DetectBody {
  text: string;
  mode?: Mode;
  language?: Language;
  segments?: boolean;
}

export interface DetectRouteOptions {
  config: { maxTextChars: number };
  engine: EngineHost;
}

const FIELD_NAMES = new Set(['text', 'mode', 'language', 'segments']);

/** Turns an ajv validation failure into a message that names the field and says what is expected. */
function validationError(error: FastifyError): ApiError {
  const first = error.validation?.[0];
  if (!first) return new ApiError(400, 'invalid_request', 'The request body does not match the API schema.');
  const path = first.instancePath.replace(/^\//, '');
  const params = first.params as Record<string, unknown>;
  const field = path.split('/')[0] || undefined;
  switch (first.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      return new ApiError(
        400,
        'invalid_request',
        `Unknown field "${name.slice(0, 100)}"; accepted fields are text, mode, language and segments.`,
        { param: name.slice(0, 100) },
      );
    }
    case 'required': {
      const name = String(params.missingProperty);
      return new ApiError(400, 'invalid_request', `The field "${name}" is required.`, { param: name });
    }
    case 'type': {
      if (!field) return new ApiError(400, 'invalid_request', 'The request body must be a JSON object such as {"text": "..."}.');
      const expected = String(params.type);
      return new ApiError(400, 'invalid_request', `The field "${field}" must be a ${expected}.`, { param: field });
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined)?.join(', ') ?? '';
      return new ApiError(400, 'invalid_request', `The field "${field}" must be one of: ${allowed}.`, { param: field ?? '' });
    }
    case 'minLength':
    case 'pattern':
      return new ApiError(400, 'invalid_request', 'The field "text" must contain at least one non-whitespace character.', {
        param: 'text',
      });
    default:
      return new ApiError(
        400,
        'invalid_request',
        `The field "${field ?? 'body'}" is invalid: ${first.message ?? 'does not match the schema'}.`,
        field && FIELD_NAMES.has(field) ? { param: field } : {},
      );
  }
}

export default async function detectRoute(app: FastifyInstance, { config, engine }: DetectRouteOptions): Promise<void> {
  app.post<{ Body: DetectBody }>(
    '/v1/detect',
    {
      config: { apiKey: true },
      // Validation errors are answered by the handler, in terms of this route's fields.
      attachValidation: true,
      schema: { body: detectRequestSchema(config.maxTextChars), response: { 200: detectResponseSchema } },
      preValidation: requireJsonBody,
    },
    async (request, reply) => {
      if (request.validationError) throw validationError(request.validationError as FastifyError);
      const { text, segments = false } = request.body;
      const mode: Mode = request.body.mode ?? 'general';
      request.ctx.mode = mode;
      request.ctx.textLength = text.length;
      if (text.includes('\u0000')) {
        throw new ApiError(400, 'invalid_request', 'The field "text" must not contain NUL (\\u0000) characters.', { param: 'text' });
      }
      if (hasLoneSurrogate(text)) {
        throw new ApiError(400, 'invalid_request', 'The field "text" contains an unpaired UTF-16 surrogate, which is not valid Unicode.', {
          param: 'text',
        });
      }
      const characters = countChars(text);
      if (characters > config.maxTextChars) throw textTooLong('text', characters, config.maxTextChars);
      assertEngineReady(engine);
      const cost = unitsForChars(characters);
      request.ctx.costUnits = cost;
      await reply.chargeUnits(cost, 'text');
      const options: DetectOptions = { mode, segments };
      if (request.body.language !== undefined) options.language = request.body.language;
      const result = await scoreText(engine, text, options, (job, weight) => request.inTurn(job, weight));
      request.ctx.language = result.language;
      return detectAnswer(result, request.id);
    },
  );
  refuseOtherMethods(app, '/v1/detect', ['POST']);
}
