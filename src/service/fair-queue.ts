/**
 * Fairness between keys in front of the scoring engine. At most `capacity` jobs are with the
 * engine at once (one per worker thread, or one on the main thread); the others wait here, one
 * line per key, and a freed place goes to the waiting key that has the fewest jobs running (the
 * one served longest ago among equals). One key's burst thus queues behind itself: another key's
 * call waits for at most the jobs already running, not for the whole burst. Work-conserving: a
 * key alone uses every place.
 */
interface Waiting {
  start(): void;
}

interface Line {
  waiting: Waiting[];
  running: number;
  /** Sequence number of the last job started for this key, for round-robin among equals. */
  lastStart: number;
}

export class FairQueue {
  readonly #capacity: number;
  readonly #lines = new Map<string, Line>();
  #running = 0;
  #starts = 0;
  #waiting = 0;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** Jobs waiting for a place (not yet with the engine). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Runs `job` when `owner` gets its turn; resolves or rejects with it. */
  run<T>(owner: string, job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let line = this.#lines.get(owner);
      if (!line) {
        line = { waiting: [], running: 0, lastStart: 0 };
        this.#lines.set(owner, line);
      }
      const current = line;
      current.waiting.push({
        start: () => {
          current.running++;
          this.#running++;
          let finished: Promise<T>;
          try {
            finished = job();
          } catch (err) {
            finished = Promise.reject(err);
          }
          finished.then(resolve, reject).finally(() => {
            current.running--;
            this.#running--;
            if (current.running === 0 && current.waiting.length === 0) this.#lines.delete(owner);
            // The next job starts from the event loop, not from this job's promise chain: with the
            // engine on the main thread, requests that arrived meanwhile are read first and can
            // join the lines before the next place is given.
            setImmediate(() => this.#dispatch());
          });
        },
      });
      this.#waiting++;
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#running < this.#capacity && this.#waiting > 0) {
      let next: Line | undefined;
      for (const line of this.#lines.values()) {
        if (line.waiting.length === 0) continue;
        if (!next || line.running < next.running || (line.running === next.running && line.lastStart < next.lastStart)) next = line;
      }
      if (!next) return;
      const job = next.waiting.shift()!;
      this.#waiting--;
      next.lastStart = ++this.#starts;
      job.start();
    }
  }
}
