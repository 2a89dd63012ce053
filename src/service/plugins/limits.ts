/**
 * Rate limits and what a call costs. Every request but those of `config: { unlimited: true }`
 * routes is counted before anything else refuses it, against its API key when `auth` found one,
 * else against the client address; a scoring route that costs more than one unit charges the rest
 * with `reply.chargeUnits(cost)`. The counting itself is @fastify/rate-limit's (in memory, or in
 * Redis through ratelimit.ts).
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AUTHOR_MESSAGES_PER_UNIT } from '../../contract.ts';
import type { ServiceConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { RedisCounters } from '../ratelimit.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Charges the units of a call beyond the one every request pays on arrival; throws 429 (or 400
     * when the cost exceeds the key's whole budget) when they do not fit.
     */
    chargeUnits(cost: number, basis?: CostBasis): Promise<void>;
  }
}

/** How a route's cost is counted, for the sentences of its refusals. Default: an author request's messages. */
export interface CostBasis {
  /** e.g. `one per 10 messages`. */
  rule: string;
  /** The request field the cost comes from. */
  param: string;
  /** What to send instead when the cost is over the whole budget, e.g. `send at most 600 messages per request`. */
  fitBudget(max: number): string;
  /** The end of a 429 sentence, e.g. `send fewer messages`. */
  lighter: string;
}

const AUTHOR_BASIS: CostBasis = {
  rule: `one per ${AUTHOR_MESSAGES_PER_UNIT} messages`,
  param: 'messages',
  fitBudget: (max) => `send at most ${max * AUTHOR_MESSAGES_PER_UNIT} messages per request`,
  lighter: 'send fewer messages',
};

export interface LimitsOptions {
  config: Pick<ServiceConfig, 'rateLimitMax'> & { rateLimitWindowMs: number };
  counters: RedisCounters | undefined;
}

export function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return ms === 1000 ? 'second' : `${ms / 1000} seconds`;
  return `${ms} ms`;
}

async function limitsPlugin(app: FastifyInstance, { config, counters }: LimitsOptions): Promise<void> {
  // The plugin supplies the counting (memory or Redis); the hook below decides the key (API key
  // id, else client address) so that failed authentications are counted per address.
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    ...(counters ? { store: counters.Store as never } : { cache: 10_000 }),
  });
  const limiter = app.createRateLimit({
    timeWindow: config.rateLimitWindowMs,
    // IPv6 addresses count per /64, as the plugin does by default: one host usually owns a whole
    // /64 and could otherwise rotate addresses to escape the per-address limit.
    keyGenerator: (req) => (req.ctx.keyId ? `key:${req.ctx.keyId}` : `ip:${normalizeIP(req.ip)}`),
    max: (req) => req.apiKey?.rate_limit_max ?? config.rateLimitMax,
  });

  const windowSeconds = Math.max(1, Math.ceil(config.rateLimitWindowMs / 1000));
  function setRateLimitHeaders(reply: FastifyReply, max: number, remaining: number, resetSeconds: number): void {
    reply.header('RateLimit-Limit', max);
    // draft-ietf-httpapi-ratelimit-headers-06: "quota;w=window-seconds", so clients learn the window
    // and do not have to assume one (a 5-second window paced as a minute is 12 times too slow).
    reply.header('RateLimit-Policy', `${max};w=${windowSeconds}`);
    reply.header('RateLimit-Remaining', remaining);
    // A fresh counter has no window yet: it would start now and last a full window.
    reply.header('RateLimit-Reset', resetSeconds > 0 ? resetSeconds : windowSeconds);
  }

  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 && request.routeOptions.config?.unlimited) {
      // Not limited (probes must always answer), but the answer still reports the address's budget.
      const budget = await limiter(request, { increment: false });
      if (!budget.isAllowed) setRateLimitHeaders(reply, budget.max, budget.remaining, budget.ttlInSeconds);
      return;
    }
    // Everything else counts: scanning unknown paths or guessing keys uses up the address's
    // budget, and every such answer carries the RateLimit-* headers.
    const limit = await limiter(request);
    if (limit.isAllowed) return;
    setRateLimitHeaders(reply, limit.max, limit.remaining, limit.ttlInSeconds);
    if (limit.isExceeded) {
      const seconds = Math.max(1, limit.ttlInSeconds);
      throw new ApiError(
        429,
        'rate_limited',
        `Too many requests: the limit is ${limit.max} per ${formatWindow(config.rateLimitWindowMs)}${request.apiKey ? ' for this key' : ' for unauthenticated requests from this address'}; retry in ${seconds} s.`,
        {
          retryAfter: seconds,
          headers: { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.max(0, limit.ttl)) },
        },
      );
    }
  });

  /**
   * The remaining budget is read first, so a request the budget cannot cover is refused having
   * cost one unit (like any refused request) instead of draining the rest of the window.
   */
  async function chargeUnits(this: FastifyReply, cost: number, basis: CostBasis = AUTHOR_BASIS): Promise<void> {
    const request: FastifyRequest = this.request;
    const extra = cost - 1;
    if (extra <= 0) return;
    const budget = await limiter(request, { increment: false });
    if (budget.isAllowed) return;
    const costSentence = `this request costs ${cost} units of the rate limit (${basis.rule})`;
    if (cost > budget.max) {
      throw new ApiError(
        400,
        'invalid_request',
        `The key's whole budget is ${budget.max} units per ${formatWindow(config.rateLimitWindowMs)}, and ${costSentence}; ${basis.fitBudget(budget.max)}.`,
        { param: basis.param, details: { cost_units: cost } },
      );
    }
    const refuse = (remaining: number, ttlMs: number) => {
      const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
      return new ApiError(
        429,
        'rate_limited',
        `Too many requests: ${costSentence}, and ${remaining} of this key's ${budget.max} per ${formatWindow(config.rateLimitWindowMs)} are left; retry in ${seconds} s or ${basis.lighter}.`,
        {
          retryAfter: seconds,
          headers: { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.max(0, ttlMs)) },
          details: { cost_units: cost },
        },
      );
    };
    if (budget.remaining < extra) throw refuse(budget.remaining, budget.ttl);
    const charges = await Promise.all(Array.from({ length: extra }, () => limiter(request)));
    // Concurrent requests of the same key may have taken the units meanwhile: the last count decides.
    let last = charges[0]!;
    for (const charge of charges) if (!charge.isAllowed && !last.isAllowed && charge.remaining < last.remaining) last = charge;
    if (last.isAllowed) return;
    setRateLimitHeaders(this, last.max, last.remaining, last.ttlInSeconds);
    if (last.isExceeded) throw refuse(last.remaining, last.ttl);
  }
  app.decorateReply('chargeUnits', chargeUnits);
}

export const limits = fp(limitsPlugin, { name: 'limits', dependencies: ['envelope', 'auth'] });
