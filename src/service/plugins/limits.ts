/**
 * Rate limits, what a call costs, and fairness between keys. Every request but those of
 * `config: { unlimited: true }` routes is charged one unit on arrival, before anything else
 * refuses it, against its API key when `auth` found one, else against the client address. A
 * scoring route charges the rest of its cost with `reply.chargeUnits(cost, param)` once its body is known,
 * and hands its work to the engine with `request.inTurn(job)`, which keeps one key's burst from
 * holding every worker. Each charge is checked and made in one step (counters.ts; a Lua script
 * with Redis), so concurrent calls of a key pass as long as their units fit and no longer.
 */
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { CHARS_PER_UNIT } from '../../contract.ts';
import type { ServiceConfig } from '../config.ts';
import { MemoryCounters } from '../counters.ts';
import type { Charge } from '../counters.ts';
import { ApiError } from '../errors.ts';
import { FairQueue } from '../fair-queue.ts';
import type { RedisCounters } from '../ratelimit.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Charges the units of a call beyond the one every request pays on arrival, all or none;
     * throws 429 when they do not fit in what is left, 400 when they exceed the key's whole budget
     * (naming `param`, the request field the cost comes from).
     */
    chargeUnits(cost: number, param: string): Promise<void>;
  }
  interface FastifyInstance {
    /** The lines of calls waiting for the engine (for the queue-depth metric). */
    scoringQueue: FairQueue;
  }
  interface FastifyRequest {
    /** Runs `job` (a call to the engine) when this request's key gets its turn, weighed by `weight` units (default `ctx.costUnits`). */
    inTurn<T>(job: () => Promise<T>, weight?: number): Promise<T>;
  }
}

export interface LimitsOptions {
  config: Pick<ServiceConfig, 'rateLimitMax' | 'workers'> & { rateLimitWindowMs: number };
  counters: RedisCounters | undefined;
}

export function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  if (ms % 1000 === 0) return ms === 1000 ? 'second' : `${ms / 1000} seconds`;
  return `${ms} ms`;
}

async function limitsPlugin(app: FastifyInstance, { config, counters }: LimitsOptions): Promise<void> {
  const store = counters ? counters.store : new MemoryCounters(10_000);
  const windowMs = config.rateLimitWindowMs;
  // IPv6 addresses count per /64, as @fastify/rate-limit does: one host usually owns a whole /64
  // and could otherwise rotate addresses to escape the per-address limit.
  const counterKey = (request: FastifyRequest) => (request.ctx.keyId ? `key:${request.ctx.keyId}` : `ip:${normalizeIP(request.ip)}`);
  const maxOf = (request: FastifyRequest) => request.apiKey?.rate_limit_max ?? config.rateLimitMax;
  const charge = async (request: FastifyRequest, cost: number, always = false) => {
    const max = maxOf(request);
    const result: Charge = await store.charge(counterKey(request), cost, max, windowMs, always);
    return { ...result, max, remaining: Math.max(0, max - result.current) };
  };

  const windowSeconds = Math.max(1, Math.ceil(windowMs / 1000));
  function setRateLimitHeaders(reply: FastifyReply, max: number, remaining: number, ttlMs: number): void {
    reply.header('RateLimit-Limit', max);
    // draft-ietf-httpapi-ratelimit-headers-06: "quota;w=window-seconds", so clients learn the window
    // and do not have to assume one (a 5-second window paced as a minute is 12 times too slow).
    reply.header('RateLimit-Policy', `${max};w=${windowSeconds}`);
    reply.header('RateLimit-Remaining', remaining);
    // A fresh counter has no window yet: it would start now and last a full window.
    reply.header('RateLimit-Reset', ttlMs > 0 ? Math.ceil(ttlMs / 1000) : windowSeconds);
  }
  const retryHeaders = (ttlMs: number) => {
    const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
    return { seconds, headers: { 'Retry-After': String(seconds), 'Retry-After-Ms': String(Math.max(0, ttlMs)) } };
  };

  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 && request.routeOptions.config?.unlimited) {
      // Not limited (probes must always answer), but the answer still reports the address's budget.
      const budget = await charge(request, 0);
      setRateLimitHeaders(reply, budget.max, budget.remaining, budget.ttlMs);
      return;
    }
    // Everything else counts: scanning unknown paths or guessing keys uses up the address's
    // budget, and every such answer carries the RateLimit-* headers. Refused requests count too.
    const limit = await charge(request, 1, true);
    setRateLimitHeaders(reply, limit.max, limit.remaining, limit.ttlMs);
    if (limit.charged) return;
    const { seconds, headers } = retryHeaders(limit.ttlMs);
    throw new ApiError(
      429,
      'rate_limited',
      `Too many requests: the limit is ${limit.max} per ${formatWindow(windowMs)}${request.apiKey ? ' for this key' : ' for unauthenticated requests from this address'}; retry in ${seconds} s.`,
      { retryAfter: seconds, headers },
    );
  });

  async function chargeUnits(this: FastifyReply, cost: number, param: string): Promise<void> {
    const request: FastifyRequest = this.request;
    const extra = cost - 1;
    if (extra <= 0) return;
    const max = maxOf(request);
    const costSentence = `this request costs ${cost} units of the rate limit (one per started ${CHARS_PER_UNIT} characters)`;
    if (cost > max) {
      throw new ApiError(
        400,
        'invalid_request',
        `The key's whole budget is ${max} units per ${formatWindow(windowMs)}, and ${costSentence}; send at most ${max * CHARS_PER_UNIT} characters per request.`,
        { param, details: { cost_units: cost } },
      );
    }
    // All the units or none: a call that does not fit has cost only its arrival unit.
    const result = await charge(request, extra);
    setRateLimitHeaders(this, result.max, result.remaining, result.ttlMs);
    if (result.charged) return;
    const { seconds, headers } = retryHeaders(result.ttlMs);
    throw new ApiError(
      429,
      'rate_limited',
      `Too many requests: ${costSentence}, and ${result.remaining} of this key's ${result.max} per ${formatWindow(windowMs)} are left; retry in ${seconds} s or send less text.`,
      { retryAfter: seconds, headers, details: { cost_units: cost } },
    );
  }
  app.decorateReply('chargeUnits', chargeUnits);

  const turns = new FairQueue(config.workers);
  app.decorate('scoringQueue', turns);
  app.decorateRequest('inTurn', function inTurn<T>(this: FastifyRequest, job: () => Promise<T>, weight?: number): Promise<T> {
    return turns.run(counterKey(this), job, weight ?? this.ctx.costUnits ?? 1);
  });
}

export const limits = fp(limitsPlugin, { name: 'limits', dependencies: ['envelope', 'auth'] });
