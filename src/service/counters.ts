/**
 * Rate-limit counters that charge a call's whole cost in one step: the units are added only if
 * the count stays within the limit, and the answer is a snapshot taken in that same step. Counting
 * first and checking afterwards (what @fastify/rate-limit's stores do: `incr` always adds one, and
 * its memory store hands back its live counter) let concurrent calls of one key all see the final
 * total and all be refused, or, with several units per call, pass more than the limit.
 */

/** What a charge did. */
export interface Charge {
  /** The count stays within the limit with these units: they were added (false for a read, `cost` 0). */
  charged: boolean;
  /** The key's count in its window after this step. */
  current: number;
  /** Milliseconds left in the key's window; 0 when the key has no window yet. */
  ttlMs: number;
}

export interface CounterStore {
  /**
   * Adds `cost` units to `key`'s count if the count stays at most `max`, starting a window of
   * `windowMs` on the first units; `cost` 0 only reads. With `always`, the units are added even
   * when they do not fit (a request's arrival unit: refused requests count too), and `charged`
   * says whether the count stayed within `max`.
   */
  charge(key: string, cost: number, max: number, windowMs: number, always?: boolean): Promise<Charge>;
}

/** Counters of this process; at most `maxKeys` keys are kept (the oldest window is dropped first). */
export class MemoryCounters implements CounterStore {
  readonly #windows = new Map<string, { count: number; end: number }>();
  readonly #maxKeys: number;

  constructor(maxKeys = 10_000) {
    this.#maxKeys = maxKeys;
  }

  /** Synchronous underneath: nothing can run between the check and the charge. */
  chargeNow(key: string, cost: number, max: number, windowMs: number, always = false): Charge {
    const now = Date.now();
    let window = this.#windows.get(key);
    if (window && window.end <= now) {
      this.#windows.delete(key);
      window = undefined;
    }
    const current = window?.count ?? 0;
    const fits = current + cost <= max;
    if (cost <= 0 || (!fits && !always)) return { charged: false, current, ttlMs: window ? window.end - now : 0 };
    if (!window) {
      window = { count: 0, end: now + windowMs };
      this.#windows.set(key, window);
      if (this.#windows.size > this.#maxKeys) this.#windows.delete(this.#windows.keys().next().value!);
    }
    window.count += cost;
    return { charged: fits, current: window.count, ttlMs: window.end - now };
  }

  async charge(key: string, cost: number, max: number, windowMs: number, always = false): Promise<Charge> {
    return this.chargeNow(key, cost, max, windowMs, always);
  }
}

/**
 * The same check-and-charge in Redis, as one script (atomic there). Keys: the counter. Args: cost,
 * max, window in ms, 1 to add the units even when they do not fit. Returns {count, ttl ms, 1 if
 * within the limit}. The counter is a plain integer string
 * with a PX expiry, as @fastify/rate-limit's Redis store kept it, so counts carry over an upgrade.
 */
export const CHARGE_LUA = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
local fits = current + cost <= tonumber(ARGV[2])
if cost <= 0 or (not fits and ARGV[4] ~= '1') then
  if ttl < 0 then ttl = 0 end
  return {current, ttl, 0}
end
current = redis.call('INCRBY', KEYS[1], cost)
if ttl <= 0 then
  ttl = tonumber(ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
if fits then return {current, ttl, 1} end
return {current, ttl, 0}
`;
