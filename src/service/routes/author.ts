/**
 * `POST /v1/detect/author`: one author's messages judged together. Its schemas are in
 * ../schemas.ts; its validation errors name its fields; what it costs is `authorRequestCost`
 * (src/contract.ts: its characters), charged through the `limits` plugin.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AUTHOR_MAX_MESSAGES, authorRequestCost, countChars } from '../../contract.ts';
import type { AuthorDetectOptions, Language, Mode } from '../../detector/types.ts';
import type { ResolvedConfig } from '../config.ts';
import type { EngineHost } from '../engine.ts';
import { ApiError } from '../errors.ts';
import { refuseOtherMethods } from '../plugins/envelope.ts';
import { detectAuthorRequestSchema, detectAuthorResponseSchema } from '../schemas.ts';
import { assertEngineReady, hasLoneSurrogate, requireJsonBody } from './common.ts';

interface DetectAuthorBody {
  messages: string[];
  mode?: Mode;
  language?: Language;
}

type AuthorConfig = Pick<ResolvedConfig, 'authorMaxMessageChars' | 'authorMaxTotalChars'>;

export interface AuthorRouteOptions {
  config: AuthorConfig;
  engine: EngineHost;
}

/** Index of an item in `messages` from an ajv instance path such as `/messages/3`. */
function messageIndex(instancePath: string): number | undefined {
  const match = /^\/messages\/(\d+)/.exec(instancePath);
  return match ? Number(match[1]) : undefined;
}

/** Turns an ajv validation failure into a message about this route's fields. */
function authorValidationError(error: FastifyError, body: unknown): ApiError {
  const first = error.validation?.[0];
  if (!first) return new ApiError(400, 'invalid_request', 'The request body does not match the API schema.');
  // A single text sent here by mistake: say where it belongs rather than only that "messages" is missing.
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'text' in body) {
    return new ApiError(
      400,
      'invalid_request',
      'Unknown field "text": this endpoint takes one author\'s "messages" (an array of strings); to check one text, send it to POST /v1/detect.',
      { param: 'text' },
    );
  }
  const params = first.params as Record<string, unknown>;
  const field = first.instancePath.replace(/^\//, '').split('/')[0] || undefined;
  const index = messageIndex(first.instancePath);
  const shape = `an array of 1 to ${AUTHOR_MAX_MESSAGES} strings, such as {"messages": ["first message", "second message"]}`;
  switch (first.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty).slice(0, 100);
      return new ApiError(400, 'invalid_request', `Unknown field "${name}"; accepted fields are messages, mode and language.`, {
        param: name,
      });
    }
    case 'required':
      return new ApiError(400, 'invalid_request', `The field "messages" is required: ${shape}.`, { param: 'messages' });
    case 'type':
      if (!field) return new ApiError(400, 'invalid_request', `The request body must be a JSON object whose "messages" is ${shape}.`);
      if (index !== undefined) {
        return new ApiError(400, 'invalid_request', `Message ${index} (counting from 0) is not a string; every message must be a string.`, {
          param: `messages[${index}]`,
        });
      }
      if (field === 'messages')
        return new ApiError(400, 'invalid_request', `The field "messages" must be ${shape}.`, { param: 'messages' });
      return new ApiError(400, 'invalid_request', `The field "${field}" must be a ${String(params.type)}.`, { param: field });
    case 'minItems':
      return new ApiError(400, 'invalid_request', 'The field "messages" is empty; send at least one message.', { param: 'messages' });
    case 'maxItems':
      return new ApiError(
        400,
        'invalid_request',
        `The field "messages" holds more than ${AUTHOR_MAX_MESSAGES} messages; send the ${AUTHOR_MAX_MESSAGES} most recent ones.`,
        { param: 'messages', details: { max_messages: AUTHOR_MAX_MESSAGES } },
      );
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined)?.join(', ') ?? '';
      return new ApiError(400, 'invalid_request', `The field "${field}" must be one of: ${allowed}.`, { param: field ?? '' });
    }
    default:
      return new ApiError(
        400,
        'invalid_request',
        `The field "${field ?? 'body'}" is invalid: ${first.message ?? 'does not match the schema'}.`,
        field === 'messages' || field === 'mode' || field === 'language' ? { param: field } : {},
      );
  }
}

/**
 * Refuses NUL characters, lone surrogates and a message over the limit (characters counted as
 * judged, `countChars`), naming the message; returns the characters of all messages together.
 */
function checkMessages(messages: readonly string[], maxMessageChars: number): number {
  let totalChars = 0;
  for (const [index, message] of messages.entries()) {
    if (message.includes('\u0000')) {
      throw new ApiError(
        400,
        'invalid_request',
        `Message ${index} (counting from 0) contains a NUL (\\u0000) character, which is not allowed.`,
        {
          param: `messages[${index}]`,
        },
      );
    }
    if (hasLoneSurrogate(message)) {
      throw new ApiError(
        400,
        'invalid_request',
        `Message ${index} (counting from 0) contains an unpaired UTF-16 surrogate, which is not valid Unicode.`,
        { param: `messages[${index}]` },
      );
    }
    const chars = countChars(message);
    if (chars > maxMessageChars) {
      throw new ApiError(
        413,
        'text_too_long',
        `Message ${index} (counting from 0) is longer than ${maxMessageChars} characters; shorten it, leave it out, or check it alone with POST /v1/detect.`,
        { param: `messages[${index}]`, details: { max_chars: maxMessageChars } },
      );
    }
    totalChars += chars;
  }
  return totalChars;
}

export default async function authorRoute(app: FastifyInstance, { config, engine }: AuthorRouteOptions): Promise<void> {
  app.post<{ Body: DetectAuthorBody }>(
    '/v1/detect/author',
    {
      config: { apiKey: true },
      // Validation errors are answered by the handler, in terms of this route's fields.
      attachValidation: true,
      schema: {
        body: detectAuthorRequestSchema(config.authorMaxMessageChars, config.authorMaxTotalChars),
        response: { 200: detectAuthorResponseSchema },
      },
      preValidation: requireJsonBody,
    },
    async (request, reply) => {
      if (request.validationError) throw authorValidationError(request.validationError as FastifyError, request.body);
      const { messages } = request.body;
      const mode: Mode = request.body.mode ?? 'general';
      request.ctx.mode = mode;
      request.ctx.messageCount = messages.length;
      const totalChars = checkMessages(messages, config.authorMaxMessageChars);
      request.ctx.textLength = totalChars;
      if (totalChars > config.authorMaxTotalChars) {
        throw new ApiError(
          413,
          'text_too_long',
          `The messages hold ${totalChars} characters together, more than ${config.authorMaxTotalChars}; send fewer or shorter messages (the most recent ones).`,
          { param: 'messages', details: { max_total_chars: config.authorMaxTotalChars } },
        );
      }
      assertEngineReady(engine);
      const cost = authorRequestCost(messages);
      request.ctx.costUnits = cost;
      await reply.chargeUnits(cost, 'messages');
      const options: AuthorDetectOptions = { mode };
      if (request.body.language !== undefined) options.language = request.body.language;
      const result = await request.inTurn(() => engine.detectAuthor(messages, options));
      request.ctx.language = result.language;
      request.ctx.messagesUsed = result.messages_used;
      request.ctx.wordsUsed = result.words_used;
      return {
        ai_probability: result.ai_probability,
        mode: result.mode,
        language: result.language,
        verdict: result.verdict,
        confidence: result.confidence,
        warnings: result.warnings,
        messages_used: result.messages_used,
        words_used: result.words_used,
        evidence_needed: result.evidence_needed,
        messages: result.messages,
        request_id: request.id,
        model: result.model,
        origin: result.origin,
        polished_probability: result.polished_probability,
      };
    },
  );
  refuseOtherMethods(app, '/v1/detect/author', ['POST']);
}
