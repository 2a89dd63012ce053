/**
 * The queue in front of the document readers, and who gets a reader when one comes free.
 *
 * A free reader goes to the waiting file with, in this order: the fewest files of its own key before
 * it (being read or waiting), so any key's first file goes before any key's second; then the key that
 * used the readers least lately (reading time, halving every minute), so a key sending a small file
 * now and then goes before keys keeping the readers busy with slow ones; then the file that came
 * first. Such a key's file is thus read by the next reader to come free, and as every file being
 * read is cut at the reading time limit (FILE_TIMEOUT_MS), it starts within that limit: it is never
 * the one refused for busy readers.
 *
 * Waits are bounded by the same limit: a file that would wait longer (the files that go before it,
 * at the recent typical reading time, over the readers) is refused at once with 503 and Retry-After;
 * one that other callers' files pushed back and that is still waiting when the limit runs out, or
 * when the service shuts down, is answered 503 then. A key has at most FILES_PER_KEY files in the
 * queue (being read or waiting): a third gets 429.
 */
import type { ExtractedDocument } from '../documents/index.ts';
import { ApiError } from './errors.ts';

/** What the queue needs of the readers: `DocumentReader`, or in a test readers whose time it controls. */
export interface Readers {
  /** Files read at once. */
  readonly workers: number;
  read(bytes: Uint8Array): Promise<ExtractedDocument>;
}

/** Files one key may have being read or waiting for a reader at once. */
export const FILES_PER_KEY = 2;
/** A key's recorded reading time halves this often: what it used a few minutes ago hardly counts. */
const USAGE_HALF_LIFE_MS = 60_000;
/** Recent read times kept for the typical reading time. */
const RECENT = 8;

interface Waiter {
  owner: string;
  bytes: Uint8Array;
  /** Arrival order. */
  seq: number;
  resolve(document: ExtractedDocument): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** One key's files in the queue. */
interface Line {
  waiting: Waiter[];
  reading: number;
}

/** Where a waiting file stands: lower goes first, field by field. */
interface Rank {
  /** Files of the same key before it, being read or waiting. */
  before: number;
  /** The key's reading time lately (ms, decayed). */
  used: number;
  seq: number;
}

function goesFirst(a: Rank, b: Rank): boolean {
  if (a.before !== b.before) return a.before < b.before;
  if (a.used !== b.used) return a.used < b.used;
  return a.seq < b.seq;
}

export class FileQueue {
  readonly #readers: Readers;
  readonly #limitMs: number;
  readonly #lines = new Map<string, Line>();
  /** Each key's reading time, as of `at`. */
  readonly #used = new Map<string, { ms: number; at: number }>();
  /** When each file being read started. */
  readonly #reads = new Set<{ started: number }>();
  readonly #recent: number[] = [];
  #waiting = 0;
  #arrivals = 0;
  #closed = false;

  /** `limitMs`: the reading time limit, which is also the longest a file may wait for a reader. */
  constructor(readers: Readers, limitMs: number) {
    this.#readers = readers;
    this.#limitMs = limitMs;
  }

  /** Files waiting for a reader. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Files being read. */
  get reading(): number {
    return this.#reads.size;
  }

  /**
   * Reads `bytes` when `owner`'s file gets a reader. Throws 429 `rate_limited` when the key already
   * has FILES_PER_KEY files in the queue, 503 `not_ready` when the wait would be, or became, too long.
   */
  read(owner: string, bytes: Uint8Array): Promise<ExtractedDocument> {
    if (this.#closed) return Promise.reject(shuttingDown());
    const line = this.#lines.get(owner);
    if (line && line.reading + line.waiting.length >= FILES_PER_KEY) return Promise.reject(tooMany());
    const now = performance.now();
    const wait = this.#expectedWaitMs(owner, now);
    if (wait > this.#limitMs) return Promise.reject(wouldWait(wait, this.#limitMs));
    return new Promise<ExtractedDocument>((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        bytes,
        seq: ++this.#arrivals,
        resolve,
        reject,
        timer: setTimeout(() => this.#expire(waiter), this.#limitMs),
      };
      let own = this.#lines.get(owner);
      if (!own) {
        own = { waiting: [], reading: 0 };
        this.#lines.set(owner, own);
      }
      own.waiting.push(waiter);
      this.#waiting++;
      this.#dispatch();
    });
  }

  /** Answers every file still waiting with 503 (shutdown); files being read finish. */
  close(): void {
    this.#closed = true;
    for (const line of this.#lines.values()) {
      for (const waiter of line.waiting.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(shuttingDown());
      }
    }
    this.#waiting = 0;
  }

  #usedMs(owner: string, now: number): number {
    const used = this.#used.get(owner);
    return used ? used.ms * 2 ** (-(now - used.at) / USAGE_HALF_LIFE_MS) : 0;
  }

  #rank(owner: string, line: Line, index: number, now: number): Rank {
    return { before: line.reading + index, used: this.#usedMs(owner, now), seq: line.waiting[index]!.seq };
  }

  #dispatch(): void {
    while (this.#reads.size < this.#readers.workers && this.#waiting > 0) {
      const now = performance.now();
      let next: { owner: string; line: Line; rank: Rank } | undefined;
      for (const [owner, line] of this.#lines) {
        if (line.waiting.length === 0) continue;
        const rank = this.#rank(owner, line, 0, now);
        if (!next || goesFirst(rank, next.rank)) next = { owner, line, rank };
      }
      if (!next) return;
      this.#start(next.owner, next.line, now);
    }
  }

  #start(owner: string, line: Line, now: number): void {
    const waiter = line.waiting.shift()!;
    this.#waiting--;
    clearTimeout(waiter.timer);
    line.reading++;
    const read = { started: now };
    this.#reads.add(read);
    let reading: Promise<ExtractedDocument>;
    try {
      reading = this.#readers.read(waiter.bytes);
    } catch (err) {
      reading = Promise.reject(err);
    }
    reading.then(waiter.resolve, waiter.reject).finally(() => {
      const end = performance.now();
      this.#reads.delete(read);
      line.reading--;
      this.#record(owner, Math.min(end - read.started, this.#limitMs), end);
      this.#forgetIfIdle(owner, line);
      this.#dispatch();
    });
  }

  /** A file still waiting when the limit runs out: answered 503, and its place given up. */
  #expire(waiter: Waiter): void {
    const line = this.#lines.get(waiter.owner);
    const index = line?.waiting.indexOf(waiter) ?? -1;
    if (!line || index < 0) return;
    line.waiting.splice(index, 1);
    this.#waiting--;
    this.#forgetIfIdle(waiter.owner, line);
    waiter.reject(waited(this.#limitMs, this.#expectedWaitMs(waiter.owner, performance.now())));
  }

  #forgetIfIdle(owner: string, line: Line): void {
    if (line.reading === 0 && line.waiting.length === 0 && this.#lines.get(owner) === line) this.#lines.delete(owner);
  }

  #record(owner: string, ms: number, now: number): void {
    this.#recent.push(ms);
    if (this.#recent.length > RECENT) this.#recent.shift();
    this.#used.set(owner, { ms: this.#usedMs(owner, now) + ms, at: now });
    // Keys whose reading time has faded and that have nothing in the queue are forgotten.
    for (const key of this.#used.keys()) {
      if (!this.#lines.has(key) && this.#usedMs(key, now) < 1) this.#used.delete(key);
    }
  }

  /**
   * How long a file `owner` sends now would wait for a reader: the files that go before it, each at
   * the recent typical reading time, handed to the readers as they come free (a file being read
   * frees its reader after the typical time, and by the time limit at the latest).
   */
  #expectedWaitMs(owner: string, now: number): number {
    const own = this.#lines.get(owner);
    const mine: Rank = {
      before: own ? own.reading + own.waiting.length : 0,
      used: this.#usedMs(owner, now),
      seq: this.#arrivals + 1,
    };
    let ahead = 0;
    for (const [other, line] of this.#lines) {
      for (let i = 0; i < line.waiting.length; i++) if (goesFirst(this.#rank(other, line, i, now), mine)) ahead++;
    }
    const typical = this.#recent.length === 0 ? 0 : this.#recent.reduce((sum, ms) => sum + ms, 0) / this.#recent.length;
    const free: number[] = [];
    for (const read of this.#reads) {
      const elapsed = now - read.started;
      free.push(Math.max(0, Math.min(typical - elapsed, this.#limitMs - elapsed)));
    }
    while (free.length < this.#readers.workers) free.push(0);
    for (let i = 0; i < ahead; i++) {
      free.sort((a, b) => a - b);
      free[0] = free[0]! + typical;
    }
    return Math.min(...free);
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function retryHeaders(retryMs: number): { retryAfter: number; headers: Record<string, string> } {
  return { retryAfter: seconds(retryMs), headers: { 'Retry-After': String(seconds(retryMs)) } };
}

/** Refused on arrival: the files before it would keep it waiting longer than the limit. */
function wouldWait(waitMs: number, limitMs: number): ApiError {
  return new ApiError(
    503,
    'not_ready',
    `The document readers are busy with other files: this one would wait about ${formatSeconds(waitMs)} for a reader, more than the ${formatSeconds(limitMs)} a file may wait on this server, so it was not queued. Retry in ${seconds(waitMs)} s.`,
    { param: 'file', ...retryHeaders(waitMs) },
  );
}

/** Refused after waiting the whole limit: other callers' files went first. */
function waited(limitMs: number, retryMs: number): ApiError {
  return new ApiError(
    503,
    'not_ready',
    `The document readers are busy with other files: this one waited ${formatSeconds(limitMs)} for a reader, the most a file may wait on this server, and was not read. Retry in ${seconds(retryMs)} s.`,
    { param: 'file', ...retryHeaders(retryMs) },
  );
}

function tooMany(): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    `This key already has ${FILES_PER_KEY} files being read or waiting for a reader; send the next one when one of them is answered.`,
    retryHeaders(1000),
  );
}

function shuttingDown(): ApiError {
  return new ApiError(
    503,
    'not_ready',
    'The service is shutting down, so this file was not read; retry on another instance or in a moment.',
    { retryAfter: 1, headers: { 'Retry-After': '1', Connection: 'close' } },
  );
}
