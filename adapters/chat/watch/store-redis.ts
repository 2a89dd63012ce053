/**
 * Watching's shared store in Redis, for several bot instances on one `REDIS_URL`. Scores are kept
 * in one hash per scope and UTC day (the message's posting day), with counters per day for the
 * report, and expire as a whole at that day's start plus the scope's retention, so nothing is kept
 * past it. Every change that must be made whole (queueing, claiming, recording a score with its
 * counters, a card's place, a review) is one Lua script.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Confidence, Verdict } from '../../../src/contract.ts';
import { PRESET_BITS } from './presets.ts';
import type { CardLimits, WatchStore } from './store.ts';
import {
  CARD_STATES,
  DAY_MS,
  dayOf,
  emptyCounts,
  HOUR_MS,
  itemKey,
  OUTCOMES,
  PRESETS,
  type CardReservation,
  type CardState,
  type ChannelCounts,
  type FlagRecord,
  type Outcome,
  type PendingItem,
  type Preset,
  type ReportData,
  type ReviewResult,
  type ScoreRecord,
  type WatchConfig,
  type WatchedChannel,
} from './types.ts';

const ENQUEUE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[5])
return 1`;

// Leases that ran out (an instance died while scoring) go back first; a claimed key whose item was
// deleted meanwhile is skipped.
const CLAIM = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 100)
for _, k in ipairs(expired) do
  redis.call('ZREM', KEYS[2], k)
  redis.call('ZADD', KEYS[1], 0, k)
end
for i = 1, 50 do
  local nextKeys = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
  if #nextKeys == 0 then return false end
  local k = nextKeys[1]
  redis.call('ZREM', KEYS[1], k)
  local item = redis.call('HGET', KEYS[3], k)
  if item then
    redis.call('ZADD', KEYS[2], ARGV[2], k)
    return item
  end
end
return false`;

const RELEASE = `
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
return 1`;

const DROP = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return 1`;

// ARGV: field, json, expireAt, scope, n, n stats fields, then the flag's field/value pairs.
const RECORD = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
local n = tonumber(ARGV[5])
for i = 1, n do redis.call('HINCRBY', KEYS[2], ARGV[5 + i], 1) end
redis.call('PEXPIREAT', KEYS[2], ARGV[3])
if #ARGV > 5 + n then
  local fields = {}
  for i = 6 + n, #ARGV do fields[#fields + 1] = ARGV[i] end
  redis.call('HSET', KEYS[3], unpack(fields))
  redis.call('PEXPIREAT', KEYS[3], ARGV[3])
end
redis.call('SADD', KEYS[4], ARGV[4])
return 1`;

const RESERVE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used >= tonumber(ARGV[2]) then return -2 end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return used + 1`;

// ARGV: stats key prefix, new state, card id, card channel id.
const SET_CARD = `
local old = redis.call('HGET', KEYS[1], 'card')
if not old then return 0 end
local day = redis.call('HGET', KEYS[1], 'day')
local channel = redis.call('HGET', KEYS[1], 'channelId')
redis.call('HSET', KEYS[1], 'card', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'cardId', ARGV[3], 'cardChannelId', ARGV[4]) end
local stats = ARGV[1] .. day
if redis.call('EXISTS', stats) == 1 then
  redis.call('HINCRBY', stats, channel .. '|card:' .. old, -1)
  redis.call('HINCRBY', stats, channel .. '|card:' .. ARGV[2], 1)
end
return 1`;

// ARGV: stats key prefix, outcome, reviewer, time. Returns {applied, fields...}.
const REVIEW = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if redis.call('HEXISTS', KEYS[1], 'outcome') == 1 then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('HSET', KEYS[1], 'outcome', ARGV[2], 'reviewerId', ARGV[3], 'reviewedAt', ARGV[4])
local stats = ARGV[1] .. redis.call('HGET', KEYS[1], 'day')
if redis.call('EXISTS', stats) == 1 then
  redis.call('HINCRBY', stats, redis.call('HGET', KEYS[1], 'channelId') .. '|outcome:' .. ARGV[2], 1)
end
return {1, redis.call('HGETALL', KEYS[1])}`;

const SET_CARDS_ON = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return false end
local since = string.match(v, '^(%d+)')
local updated = since .. '|' .. ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], updated)
return updated`;

interface CompactScore {
  a: string;
  p: number;
  v: Verdict;
  c: Confidence;
  m: number;
  f?: string;
}

export class RedisWatchStore implements WatchStore {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(url: string, options: { logger?: Logger | undefined; prefix?: string } = {}) {
    this.#prefix = options.prefix ?? 'textdetect:chat:watch:';
    this.#redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000 });
    let lastLogged = 0;
    this.#redis.on('error', (err: Error) => {
      if (Date.now() - lastLogged < 60_000) return;
      lastLogged = Date.now();
      options.logger?.warn({ err: err.message }, 'watch store redis error');
    });
  }

  async getConfig(scope: string): Promise<WatchConfig> {
    const [channels, exempt, config] = await Promise.all([
      this.#redis.hgetall(this.#scoped(scope, 'channels')),
      this.#redis.smembers(this.#scoped(scope, 'exempt')),
      this.#redis.hgetall(this.#scoped(scope, 'config')),
    ]);
    return {
      channels: Object.entries(channels)
        .map(([channelId, value]) => channelFrom(channelId, value))
        .sort((a, b) => a.since - b.since || a.channelId.localeCompare(b.channelId)),
      exemptIds: exempt.sort(),
      preset: (config.preset as Preset | undefined) || undefined,
      retentionDays: config.retentionDays ? Number(config.retentionDays) : undefined,
    };
  }

  async watchChannel(scope: string, channelId: string, since: number): Promise<{ channel: WatchedChannel; added: boolean }> {
    const key = this.#scoped(scope, 'channels');
    const added = (await this.#redis.hsetnx(key, channelId, `${since}|0`)) === 1;
    await this.#redis.sadd(this.#key('scopes'), scope);
    return { channel: channelFrom(channelId, (await this.#redis.hget(key, channelId)) ?? `${since}|0`), added };
  }

  async unwatchChannel(scope: string, channelId: string): Promise<boolean> {
    return (await this.#redis.hdel(this.#scoped(scope, 'channels'), channelId)) > 0;
  }

  async setCards(scope: string, channelId: string, on: boolean): Promise<WatchedChannel | undefined> {
    const updated = (await this.#redis.eval(SET_CARDS_ON, 1, this.#scoped(scope, 'channels'), channelId, on ? '1' : '0')) as string | null;
    return updated ? channelFrom(channelId, updated) : undefined;
  }

  async setExempt(scope: string, id: string, exempt: boolean): Promise<string[]> {
    const key = this.#scoped(scope, 'exempt');
    if (exempt) {
      await this.#redis.multi().sadd(key, id).sadd(this.#key('scopes'), scope).exec();
    } else {
      await this.#redis.srem(key, id);
    }
    return (await this.#redis.smembers(key)).sort();
  }

  async setPreset(scope: string, preset: Preset | null): Promise<void> {
    const key = this.#scoped(scope, 'config');
    if (preset) await this.#redis.multi().hset(key, 'preset', preset).sadd(this.#key('scopes'), scope).exec();
    else await this.#redis.hdel(key, 'preset');
  }

  async setRetention(scope: string, days: number | null, defaultDays: number, now: number): Promise<void> {
    const config = this.#scoped(scope, 'config');
    if (days === null) await this.#redis.hdel(config, 'retentionDays');
    else await this.#redis.multi().hset(config, 'retentionDays', String(days)).sadd(this.#key('scopes'), scope).exec();
    const keep = (days ?? defaultDays) * DAY_MS;
    // What is already kept follows the new retention, shorter or longer.
    for await (const keys of this.#scan(`${this.#scoped(scope, '')}*`)) {
      for (const key of keys) {
        const day = /:(?:scores|stats):(\d+)$/.exec(key)?.[1];
        const flagDay = day === undefined && key.includes(':flag:') ? await this.#redis.hget(key, 'day') : undefined;
        const bucket = day ?? flagDay;
        if (bucket === undefined || bucket === null) continue;
        const expireAt = Number(bucket) * DAY_MS + keep;
        if (expireAt <= now) await this.#redis.unlink(key);
        else await this.#redis.pexpireat(key, expireAt);
      }
    }
  }

  async scopes(): Promise<string[]> {
    return (await this.#redis.smembers(this.#key('scopes'))).sort();
  }

  async enqueue(item: PendingItem): Promise<boolean> {
    const result = await this.#redis.eval(
      ENQUEUE,
      4,
      this.#scoped(item.scope, `scores:${dayOf(item.postedAt)}`),
      this.#key('items'),
      this.#key('pending'),
      this.#key('scopes'),
      `${item.channelId}:${item.messageId}`,
      itemKey(item),
      JSON.stringify(item),
      String(item.enqueuedAt),
      item.scope,
    );
    return result === 1;
  }

  async claim(now: number, leaseMs: number): Promise<PendingItem | undefined> {
    const raw = (await this.#redis.eval(
      CLAIM,
      3,
      this.#key('pending'),
      this.#key('inflight'),
      this.#key('items'),
      String(now),
      String(now + leaseMs),
    )) as string | null;
    return raw ? (JSON.parse(raw) as PendingItem) : undefined;
  }

  async renew(keys: string[], until: number): Promise<void> {
    if (keys.length === 0) return;
    const multi = this.#redis.multi();
    for (const key of keys) multi.zadd(this.#key('inflight'), 'XX', until, key);
    await multi.exec();
  }

  async release(key: string, availableAt: number): Promise<void> {
    await this.#redis.eval(RELEASE, 3, this.#key('pending'), this.#key('inflight'), this.#key('items'), key, String(availableAt));
  }

  async complete(key: string): Promise<void> {
    await this.#redis.multi().zrem(this.#key('inflight'), key).zrem(this.#key('pending'), key).hdel(this.#key('items'), key).exec();
  }

  async drop(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return (await this.#redis.eval(DROP, 2, this.#key('pending'), this.#key('items'), itemKey({ scope, channelId, messageId }))) === 1;
  }

  async pendingCount(): Promise<number> {
    const [waiting, inflight] = await Promise.all([this.#redis.zcard(this.#key('pending')), this.#redis.zcard(this.#key('inflight'))]);
    return waiting + inflight;
  }

  async isScored(scope: string, channelId: string, messageId: string, postedAt: number): Promise<boolean> {
    return (await this.#redis.hexists(this.#scoped(scope, `scores:${dayOf(postedAt)}`), `${channelId}:${messageId}`)) === 1;
  }

  async isPending(scope: string, channelId: string, messageId: string): Promise<boolean> {
    return (await this.#redis.hexists(this.#key('items'), itemKey({ scope, channelId, messageId }))) === 1;
  }

  async recordScore(record: ScoreRecord, expiresAt: number): Promise<boolean> {
    const day = dayOf(record.postedAt);
    // Whole days expire together, at the day's start plus the retention: never later than promised.
    const expireAt = Math.min(expiresAt, day * DAY_MS + (expiresAt - record.postedAt));
    const compact: CompactScore = {
      a: record.authorId,
      p: record.probability,
      v: record.verdict,
      c: record.confidence,
      m: record.presets,
      ...(record.flagId ? { f: record.flagId } : {}),
    };
    const stats = [`${record.channelId}|scored`];
    for (const preset of PRESETS) if (record.presets & PRESET_BITS[preset]) stats.push(`${record.channelId}|preset:${preset}`);
    const flagFields: string[] = [];
    if (record.flagId) {
      const card: CardState = record.card ?? 'failed';
      stats.push(`${record.channelId}|card:${card}`);
      const flag: Record<string, string> = {
        flagId: record.flagId,
        scope: record.scope,
        channelId: record.channelId,
        messageId: record.messageId,
        authorId: record.authorId,
        postedAt: String(record.postedAt),
        probability: String(record.probability),
        verdict: record.verdict,
        requestId: record.requestId,
        card,
        day: String(day),
        ...(record.threadId ? { threadId: record.threadId } : {}),
      };
      for (const [field, value] of Object.entries(flag)) flagFields.push(field, value);
    }
    const result = await this.#redis.eval(
      RECORD,
      4,
      this.#scoped(record.scope, `scores:${day}`),
      this.#scoped(record.scope, `stats:${day}`),
      this.#scoped(record.scope, `flag:${record.flagId ?? '-'}`),
      this.#key('scopes'),
      `${record.channelId}:${record.messageId}`,
      JSON.stringify(compact),
      String(expireAt),
      record.scope,
      String(stats.length),
      ...stats,
      ...flagFields,
    );
    return result === 1;
  }

  async reserveCard(scope: string, channelId: string, authorId: string, now: number, limits: CardLimits): Promise<CardReservation> {
    const hour = Math.floor(now / HOUR_MS);
    const slot = Number(
      await this.#redis.eval(
        RESERVE,
        2,
        this.#scoped(scope, `author:${authorId}`),
        this.#scoped(scope, `hour:${channelId}:${hour}`),
        String(limits.windowMs),
        String(limits.cap),
        String(2 * HOUR_MS),
      ),
    );
    if (slot === -1) return { ok: false, reason: 'author_window' };
    if (slot === -2) return { ok: false, reason: 'cap' };
    return { ok: true, slot, cap: limits.cap, hourEndsAt: (hour + 1) * HOUR_MS };
  }

  async setCard(scope: string, flagId: string, state: CardState, card?: { cardId: string; cardChannelId: string }): Promise<void> {
    await this.#redis.eval(
      SET_CARD,
      1,
      this.#scoped(scope, `flag:${flagId}`),
      this.#scoped(scope, 'stats:'),
      state,
      card?.cardId ?? '',
      card?.cardChannelId ?? '',
    );
  }

  async getFlag(scope: string, flagId: string): Promise<FlagRecord | undefined> {
    const fields = await this.#redis.hgetall(this.#scoped(scope, `flag:${flagId}`));
    return fields.flagId ? flagFrom(fields) : undefined;
  }

  async review(scope: string, flagId: string, outcome: Outcome, reviewerId: string, at: number): Promise<ReviewResult | undefined> {
    const result = (await this.#redis.eval(
      REVIEW,
      1,
      this.#scoped(scope, `flag:${flagId}`),
      this.#scoped(scope, 'stats:'),
      outcome,
      reviewerId,
      String(at),
    )) as [number, string[]] | null;
    if (!result) return undefined;
    const [applied, flat] = result;
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
    return { applied: applied === 1, flag: flagFrom(fields) };
  }

  async report(scope: string, now: number): Promise<ReportData> {
    const today = dayOf(now);
    const multi = this.#redis.multi();
    for (let day = today - 29; day <= today; day++) multi.hgetall(this.#scoped(scope, `stats:${day}`));
    const results = (await multi.exec()) ?? [];
    const channels: ReportData['channels'] = new Map();
    results.forEach(([err, value], index) => {
      if (err || !value) return;
      const inWeek = index >= 23;
      for (const [field, raw] of Object.entries(value as Record<string, string>)) {
        const separator = field.lastIndexOf('|');
        const channelId = field.slice(0, separator);
        const entry = channels.get(channelId) ?? { week: emptyCounts(), month: emptyCounts() };
        channels.set(channelId, entry);
        addCount(entry.month, field.slice(separator + 1), Number(raw));
        if (inWeek) addCount(entry.week, field.slice(separator + 1), Number(raw));
      }
    });
    return { channels };
  }

  async sweep(): Promise<void> {
    // Redis expires scores, flags and counters by itself.
  }

  async deleteScope(scope: string): Promise<void> {
    for await (const keys of this.#scan(`${this.#scoped(scope, '')}*`)) {
      if (keys.length > 0) await this.#redis.unlink(...keys);
    }
    let cursor = '0';
    do {
      const [next, flat] = await this.#redis.hscan(this.#key('items'), cursor, 'MATCH', `${globEscape(scope)}|*`, 'COUNT', 500);
      cursor = next;
      const keys = flat.filter((_, i) => i % 2 === 0);
      if (keys.length > 0) {
        await this.#redis
          .multi()
          .hdel(this.#key('items'), ...keys)
          .zrem(this.#key('pending'), ...keys)
          .zrem(this.#key('inflight'), ...keys)
          .exec();
      }
    } while (cursor !== '0');
    await this.#redis.srem(this.#key('scopes'), scope);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  #key(name: string): string {
    return `${this.#prefix}${name}`;
  }

  /** `…s:<scope>:<name>`; the `:` after the scope keeps `discord:1` from matching `discord:12`. */
  #scoped(scope: string, name: string): string {
    return `${this.#prefix}s:${scope}:${name}`;
  }

  async *#scan(pattern: string): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, keys] = await this.#redis.scan(cursor, 'MATCH', globEscapePrefix(pattern), 'COUNT', 500);
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }
}

function channelFrom(channelId: string, value: string): WatchedChannel {
  const [since, cards] = value.split('|');
  return { channelId, since: Number(since), cards: cards === '1' };
}

function addCount(counts: ChannelCounts, field: string, value: number): void {
  if (field === 'scored') counts.scored += value;
  else if (field.startsWith('preset:')) {
    const preset = field.slice(7) as Preset;
    if (preset in counts.byPreset) counts.byPreset[preset] += value;
  } else if (field.startsWith('card:')) {
    const state = field.slice(5) as CardState;
    if ((CARD_STATES as readonly string[]).includes(state)) counts.cards[state] += value;
  } else if (field.startsWith('outcome:')) {
    const outcome = field.slice(8) as Outcome;
    if ((OUTCOMES as readonly string[]).includes(outcome)) counts.outcomes[outcome] += value;
  }
}

function flagFrom(fields: Record<string, string>): FlagRecord {
  return {
    flagId: fields.flagId!,
    scope: fields.scope!,
    channelId: fields.channelId!,
    messageId: fields.messageId!,
    threadId: fields.threadId || undefined,
    authorId: fields.authorId!,
    postedAt: Number(fields.postedAt),
    probability: Number(fields.probability),
    verdict: fields.verdict as Verdict,
    requestId: fields.requestId!,
    card: (fields.card ?? 'failed') as CardState,
    cardId: fields.cardId || undefined,
    cardChannelId: fields.cardChannelId || undefined,
    outcome: (fields.outcome as Outcome | undefined) || undefined,
    reviewerId: fields.reviewerId || undefined,
    reviewedAt: fields.reviewedAt ? Number(fields.reviewedAt) : undefined,
  };
}

/** Escapes Redis glob characters in an id (scopes are platform ids, but a stray `*` must not widen a deletion). */
function globEscape(value: string): string {
  return value.replace(/[*?[\]\\]/g, '\\$&');
}

/** Escapes everything but a trailing `*`. */
function globEscapePrefix(pattern: string): string {
  return pattern.endsWith('*') ? `${globEscape(pattern.slice(0, -1))}*` : globEscape(pattern);
}
