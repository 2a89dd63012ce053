/**
 * API keys: routes marked `config: { apiKey: true }` need `Authorization: Bearer <key>` with a key
 * of this server's environment from the key file. The outcome is only recorded here: `limits`
 * counts the request first (against the key, or the address when there is none), and
 * `envelopeGate` then answers a failure, so guessing keys uses up the address's budget.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ServiceConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { KeyCheck, KeyFileError, KeyStore, StoredApiKey } from '../keys.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key, once checked. */
    apiKey: StoredApiKey | undefined;
    /** Why the key was refused; answered after the request is counted. */
    authFailure: ApiError | undefined;
  }
}

export interface AuthOptions {
  config: Pick<ServiceConfig, 'environment'>;
  keys: KeyStore;
}

async function authPlugin(app: FastifyInstance, { config, keys }: AuthOptions): Promise<void> {
  const logger = app.log;
  keys.onError = (err, status) => {
    // The message names the file and what is wrong with it, never a key (the file holds digests only).
    logger.error(
      { err: { message: err.message, code: (err as KeyFileError).code }, keys: status },
      status === 'stale' ? 'API key file unreadable; serving with the last good keys until it is fixed' : 'API key file unreadable',
    );
  };
  keys.onStatusChange = (status, previous) => {
    // Once per change, not per request: a deleted file otherwise only shows as a stream of 401s.
    if (status === 'missing') {
      logger.warn({ keys_file: keys.file, keys: status }, 'API key file is missing: every API key is refused until it is back');
    } else if (previous === 'missing') {
      logger.info({ keys_file: keys.file, keys: status, count: keys.size }, 'API key file found: its keys are in force');
    }
  };

  app.decorateRequest('apiKey', undefined);
  app.decorateRequest('authFailure', undefined);

  app.addHook('onRequest', async (request) => {
    if (request.is404 || !request.routeOptions.config?.apiKey) return;
    const outcome = await authenticate(request);
    request.authFailure = outcome.failure;
    if (outcome.key) {
      request.apiKey = outcome.key;
      request.ctx.keyId = outcome.key.id;
    }
  });

  async function authenticate(request: FastifyRequest): Promise<{ key?: StoredApiKey; failure?: ApiError }> {
    const header = request.headers.authorization;
    const challenge = { 'WWW-Authenticate': 'Bearer realm="textdetect"' };
    if (header === undefined || header.trim() === '') {
      return {
        failure: new ApiError(401, 'missing_api_key', 'Send your API key in the header Authorization: Bearer <key>.', {
          headers: challenge,
        }),
      };
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) {
      return {
        failure: new ApiError(401, 'invalid_api_key', 'The Authorization header must be "Bearer <key>".', {
          headers: { 'WWW-Authenticate': 'Bearer realm="textdetect", error="invalid_request"' },
        }),
      };
    }
    let result: KeyCheck;
    try {
      await keys.refresh();
      result = keys.check(match[1]!);
      if (!result.ok && result.reason === 'unknown') {
        // A key created since the last check (`keys create` then a request at once) is in the file
        // already: look again (a stat, plus a read if the file changed) before refusing it.
        await keys.refresh(true);
        result = keys.check(match[1]!);
      }
    } catch (err) {
      // Without a readable key file we cannot tell revoked keys from good ones: refuse, loudly.
      request.log.error({ err: { message: (err as Error).message, code: (err as KeyFileError).code } }, 'API key file unreadable');
      throw new ApiError(500, 'internal_error', 'The server cannot check API keys right now; try again later and quote the request_id.');
    }
    const invalid = (message: string) =>
      new ApiError(401, 'invalid_api_key', message, {
        headers: { 'WWW-Authenticate': 'Bearer realm="textdetect", error="invalid_token"' },
      });
    if (result.ok) return { key: result.key };
    switch (result.reason) {
      case 'wrong_environment': {
        const accepted = config.environment === 'sandbox' ? 'sk_test_' : 'sk_live_';
        const given = result.keyEnvironment === 'production' ? 'a live (sk_live_)' : 'a test (sk_test_)';
        return {
          failure: new ApiError(
            403,
            'wrong_environment',
            `This is a ${config.environment} server and only accepts ${accepted} keys; you sent ${given} key.`,
          ),
        };
      }
      case 'revoked':
        return { failure: invalid('This API key has been revoked.') };
      case 'expired':
        return { failure: invalid('This API key has expired.') };
      case 'malformed':
        return {
          failure: invalid('This is not a textdetect API key: keys look like sk_test_ or sk_live_ followed by 32 letters and digits.'),
        };
      default:
        return { failure: invalid('This API key is not valid.') };
    }
  }
}

export const auth = fp(authPlugin, { name: 'auth', dependencies: ['envelope'] });
