/**
 * Fairness between keys in front of the scoring engine. Jobs wait here, one line per key, and a
 * free place goes to the waiting key that has the fewest jobs running (the one served longest ago
 * among equals). One key's burst thus queues behind itself: another key's call waits for the jobs
 * already with the engine, not for the whole burst. Work-conserving: a key alone uses every place.
 *
 * How many jobs the engine holds at once: with worker threads, up to two per worker, so a worker
 * finds its next text at once instead of idling while the main thread hands it over (short texts
 * take a few ms). While more than one key has called within the last minute, heavy jobs (more than
 * one unit of cost) start only while fewer than one job per worker is with the engine, and hold at
 * most all workers but one: another key's call then finds a worker without a heavy job. A key
 * alone keeps every worker and the full depth. On the main thread (no workers) one job at a time,
 * and the next starts from the event loop so requests that arrived meanwhile are read first.
 */

/** A key counts as active this long after its last call. */
const ACTIVE_MS = 60_000;
interface Waiting {
  weight: number;
  start(): void;
}

interface Line {
  waiting: Waiting[];
  running: number;
  /** Sequence number of the last job started for this key, for round-robin among equals. */
  lastStart: number;
}

export class FairQueue {
  readonly #slots: number;
  readonly #capacity: number;
  readonly #onMainThread: boolean;
  readonly #lines = new Map<string, Line>();
  /** Last call of each key, for "more than one key is active". */
  readonly #seen = new Map<string, number>();
  #running = 0;
  #heavyRunning = 0;
  #starts = 0;
  #waiting = 0;

  /** `workers`: the engine's worker threads; 0 when it scores on the main thread. */
  constructor(workers: number) {
    this.#onMainThread = workers <= 0;
    this.#slots = Math.max(1, workers);
    this.#capacity = this.#onMainThread ? 1 : 2 * this.#slots;
  }

  /** Jobs waiting for a place (not yet with the engine). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Jobs started and not finished. */
  get running(): number {
    return this.#running;
  }

  /** Runs `job` when `owner` gets its turn; resolves or rejects with it. `weight`: the call's units. */
  run<T>(owner: string, job: () => Promise<T>, weight = 1): Promise<T> {
    this.#seen.delete(owner);
    this.#seen.set(owner, Date.now());
    return new Promise<T>((resolve, reject) => {
      let line = this.#lines.get(owner);
      if (!line) {
        line = { waiting: [], running: 0, lastStart: 0 };
        this.#lines.set(owner, line);
      }
      const current = line;
      current.waiting.push({
        weight,
        start: () => {
          current.running++;
          this.#running++;
          if (weight > 1) this.#heavyRunning++;
          let finished: Promise<T>;
          try {
            finished = job();
          } catch (err) {
            finished = Promise.reject(err);
          }
          finished.then(resolve, reject).finally(() => {
            current.running--;
            this.#running--;
            if (weight > 1) this.#heavyRunning--;
            if (current.running === 0 && current.waiting.length === 0) this.#lines.delete(owner);
            // On the main thread the next job starts from the event loop, not from this job's
            // promise chain, so requests that arrived meanwhile are read and can join the lines.
            if (this.#onMainThread) setImmediate(() => this.#dispatch());
            else this.#dispatch();
          });
        },
      });
      this.#waiting++;
      this.#dispatch();
    });
  }

  /** True when another key than the one just seen has called within ACTIVE_MS. */
  #othersActive(): boolean {
    const since = Date.now() - ACTIVE_MS;
    // Oldest first (each call moves its key to the end): drop the keys that went quiet.
    for (const [owner, at] of this.#seen) {
      if (at >= since) break;
      this.#seen.delete(owner);
    }
    return this.#seen.size > 1;
  }

  #dispatch(): void {
    // A key alone has nobody to be fair to: its heavy jobs may queue at the workers like light ones.
    const shared = this.#othersActive();
    const heavyLimit = !shared ? this.#capacity : this.#slots > 1 ? this.#slots - 1 : this.#slots;
    while (this.#running < this.#capacity && this.#waiting > 0) {
      const heavyFits = this.#heavyRunning < heavyLimit && (!shared || this.#running < this.#slots);
      let next: Line | undefined;
      for (const line of this.#lines.values()) {
        if (line.waiting.length === 0) continue;
        if (!heavyFits && line.waiting[0]!.weight > 1) continue;
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
