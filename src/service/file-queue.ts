/**
 * The queue in front of the document readers: files are taken in turns between keys (the fair
 * queue the engine uses, one file per reader), so one key's slow files delay another key's file by
 * at most the files already being read; and a file that would wait longer than the reading time
 * limit (FILE_TIMEOUT_MS) is refused at once with 503 and Retry-After, instead of holding its
 * caller for minutes. A file still waiting when its limit runs out, or when the service shuts down,
 * is answered 503 too: nothing waits without an answer.
 */
import type { DocumentReader, ExtractedDocument } from '../documents/index.ts';
import { ApiError } from './errors.ts';
import { FairQueue } from './fair-queue.ts';

interface Waiter {
  /** Set once answered without being read (timed out waiting, or shutdown): the turn, when it comes, is skipped. */
  dropped: boolean;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class FileQueue {
  readonly #reader: DocumentReader;
  readonly #timeoutMs: number;
  readonly #turns: FairQueue;
  readonly #waiting = new Set<Waiter>();
  #closed = false;

  constructor(reader: DocumentReader, timeoutMs: number) {
    this.#reader = reader;
    this.#timeoutMs = timeoutMs;
    this.#turns = new FairQueue(reader.workers, 1);
  }

  /** Files waiting for a reader. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Files being read. */
  get reading(): number {
    return this.#turns.running;
  }

  /** Reads `bytes` when `owner` gets its turn; throws 503 `not_ready` when the wait would be, or became, too long. */
  read(owner: string, bytes: Uint8Array): Promise<ExtractedDocument> {
    if (this.#closed) return Promise.reject(shuttingDown());
    const wait = this.expectedWaitMs(owner);
    if (wait > this.#timeoutMs) return Promise.reject(busy(wait, this.#timeoutMs));
    return new Promise<ExtractedDocument>((resolve, reject) => {
      const waiter: Waiter = {
        dropped: false,
        reject,
        timer: setTimeout(() => {
          if (!this.#waiting.delete(waiter)) return;
          waiter.dropped = true;
          reject(busy(this.expectedWaitMs(owner), this.#timeoutMs));
        }, this.#timeoutMs),
      };
      this.#waiting.add(waiter);
      this.#turns
        .run(owner, async () => {
          if (waiter.dropped) return undefined;
          this.#waiting.delete(waiter);
          clearTimeout(waiter.timer);
          return this.#reader.read(bytes);
        })
        .then(
          (document) => {
            if (document) resolve(document);
          },
          (err: Error) => {
            if (!waiter.dropped) reject(err);
          },
        );
    });
  }

  /** Answers every file still waiting with 503 (shutdown); files being read finish. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting) {
      waiter.dropped = true;
      clearTimeout(waiter.timer);
      waiter.reject(shuttingDown());
    }
    this.#waiting.clear();
  }

  /**
   * How long a file `owner` sends now would wait for a reader: the files before it (those being
   * read and those that take their turn first), at the recent typical reading time, per reader.
   */
  expectedWaitMs(owner: string): number {
    const workers = this.#reader.workers;
    const before = this.#turns.running + this.#turns.waitingAhead(owner);
    if (before < workers) return 0;
    const typical = this.#reader.typicalReadMs ?? 0;
    return typical * Math.ceil((before - workers + 1) / workers);
  }
}

function busy(waitMs: number, timeoutMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(
    503,
    'not_ready',
    `The document readers are busy: this file would wait longer than ${Math.round(timeoutMs / 100) / 10} s, the reading time limit on this server, before being read. Retry in ${seconds} s.`,
    { param: 'file', retryAfter: seconds, headers: { 'Retry-After': String(seconds) } },
  );
}

function shuttingDown(): ApiError {
  return new ApiError(
    503,
    'not_ready',
    'The service is shutting down, so this file was not read; retry on another instance or in a moment.',
    {
      retryAfter: 1,
      headers: { 'Retry-After': '1', Connection: 'close' },
    },
  );
}
