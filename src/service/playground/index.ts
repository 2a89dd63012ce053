/**
 * The web page that checks a text (`GET /`, off with PLAYGROUND=0; see docs/playground.md).
 * Its files come from ./assets and are served from memory. The page itself calls
 * `POST /v1/detect` with the key the user keeps in the browser, exactly like any other client, so
 * authentication, rate limits and request logs apply to it unchanged.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceConfig } from '../config.ts';
import { ApiError, genericError } from '../errors.ts';
import { detectRequestSchema } from '../schemas.ts';
import { loadAssets } from './assets.ts';
import type { Asset } from './assets.ts';
import { PAGE_SECURITY_HEADERS } from './headers.ts';

export interface PlaygroundOptions {
  config: Pick<ServiceConfig, 'maxTextChars' | 'environment' | 'maxFileBytes'>;
}

const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export default async function playground(app: FastifyInstance, { config }: PlaygroundOptions): Promise<void> {
  const modeSchema = detectRequestSchema(config.maxTextChars).properties.mode;
  const assets = await loadAssets({
    maxTextChars: config.maxTextChars,
    defaultMode: modeSchema.default,
    modes: modeSchema.enum,
    environment: config.environment,
    maxFileBytes: config.maxFileBytes,
  });

  // Encapsulated (no fastify-plugin): these headers go on the page's answers only, not on the API's.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(PAGE_SECURITY_HEADERS);
    return payload;
  });

  // The page is small and changes with each deployment: always revalidate it (cheap with the ETag).
  app.get('/', async (request, reply) => send(request, reply, assets.page, 'no-cache'));

  // Files live under a path holding their version, so they can be cached for good: a new
  // deployment changes the path in the page, and the modules' relative imports follow it.
  app.get<{ Params: { version: string; file: string } }>('/playground/:version/:file', async (request, reply) => {
    const asset = assets.files.get(request.params.file);
    if (!asset) throw genericError(404);
    const current = request.params.version === assets.version;
    return send(request, reply, asset, current ? 'public, max-age=31536000, immutable' : 'no-cache');
  });

  app.route({
    method: OTHER_METHODS,
    url: '/',
    onRequest: async () => {
      throw new ApiError(405, 'method_not_allowed', 'The page at / accepts GET only; the API is POST /v1/detect.', {
        headers: { Allow: 'GET, HEAD' },
      });
    },
    handler: async () => undefined,
  });
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string): FastifyReply {
  reply.header('Cache-Control', cacheControl).header('ETag', asset.etag);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === asset.etag)) {
    return reply.code(304).send();
  }
  return reply.type(asset.type).send(asset.body);
}
