/**
 * Hosts the detection engine for the service: loads it (in this thread or in worker threads) and
 * tracks whether it is ready, so /readyz and /v1/detect can answer 503 while it is not.
 */
import { Worker } from 'node:worker_threads';
import type { AuthorDetectionResult, AuthorDetectOptions, DetectOptions, TextStart, WindowPlan, WindowScore } from '../detector/types.ts';
import { unitsForChars } from '../contract.ts';
import { UnsupportedLanguageError } from '../detector/types.ts';

/**
 * Worker threads do not inherit a TypeScript loader from every parent (a test runner, tsx), so from
 * sources the worker starts through a small .mjs that registers tsx; the build runs its compiled twin.
 */
const WORKER_URL = import.meta.url.endsWith('.ts')
  ? new URL('./detect-worker.mjs', import.meta.url)
  : new URL('./detect-worker.js', import.meta.url);

export type EngineState = 'loading' | 'ready' | 'failed' | 'closed';

export interface EngineHost {
  readonly state: EngineState;
  /** Model version id once loaded. */
  readonly model: string | undefined;
  /** Why loading failed, when `state === 'failed'`. */
  readonly failure: Error | undefined;
  /** Texts handed to the engine and not answered yet (queued in or being scored by the workers). */
  readonly pending: number;
  /** Resolves when loaded; rejects if loading fails. */
  readonly loaded: Promise<void>;
  /**
   * A text's answer when it is one window, else its plan (language and windows): the detector's
   * `start`. A long text's windows are then scored one job each (`detectWindow`), so other callers'
   * texts take turns between them, and combined by `combineWindows` (src/detector/windows.ts).
   */
  start(text: string, options: DetectOptions): Promise<TextStart>;
  /** One window of a plan, scored like a text of its own. */
  detectWindow(text: string, plan: WindowPlan, options: DetectOptions): Promise<WindowScore>;
  /** One author's messages judged together (validated by the caller: 1..AUTHOR_MAX_MESSAGES strings). */
  detectAuthor(messages: readonly string[], options: AuthorDetectOptions): Promise<AuthorDetectionResult>;
  close(): Promise<void>;
}

/** What the pool posts to a worker: a text to start, a window of one, or an author's messages. */
type Job =
  | { kind: 'text'; text: string; options: DetectOptions }
  | { kind: 'window'; text: string; plan: WindowPlan; options: DetectOptions }
  | { kind: 'author'; messages: readonly string[]; options: AuthorDetectOptions };
export type WorkerJob = Job & { id: number };

interface WorkerReply {
  id: number;
  result?: TextStart | WindowScore | AuthorDetectionResult;
  error?: { name: string; message: string; detected?: string };
}

/** Loads the engine in this thread: lowest latency per request, but scoring blocks the event loop. */
function inProcessEngine(modelPath: string | undefined): EngineHost {
  let state: EngineState = 'loading';
  let failure: Error | undefined;
  let detector: import('../detector/types.ts').Detector | undefined;
  const loaded = (async () => {
    try {
      const { createDetector } = await import('../detector/index.ts');
      detector = await createDetector(modelPath === undefined ? {} : { model: modelPath });
      state = 'ready';
    } catch (err) {
      state = 'failed';
      failure = err as Error;
      throw err;
    }
  })();
  loaded.catch(() => undefined);
  return {
    get state() {
      return state;
    },
    get model() {
      return detector?.model;
    },
    get failure() {
      return failure;
    },
    // Scoring here is synchronous: a text is answered before any other code runs, so none is ever
    // seen waiting.
    get pending() {
      return 0;
    },
    loaded,
    async start(text, options) {
      if (!detector || state !== 'ready') throw new Error('engine not ready');
      return detector.start(text, options);
    },
    async detectWindow(text, plan, options) {
      if (!detector || state !== 'ready') throw new Error('engine not ready');
      return detector.detectWindow(text, plan, options);
    },
    async detectAuthor(messages, options) {
      if (!detector || state !== 'ready') throw new Error('engine not ready');
      return detector.detectAuthor(messages, options);
    },
    async close() {
      state = 'closed';
    },
  };
}

/**
 * Loads one engine per worker thread and sends each text to the least busy one, so scoring uses
 * several cores while the main thread only does HTTP. A worker that dies fails only the texts it
 * was scoring and is replaced.
 */
function workerPoolEngine(modelPath: string | undefined, size: number, onWorkerExit?: (err: Error) => void, nice = 0): EngineHost {
  let state: EngineState = 'loading';
  let failure: Error | undefined;
  let model: string | undefined;
  let nextId = 1;
  // Each entry resolves with what its job type returns (see `submit`).
  const pending = new Map<number, { resolve(r: unknown): void; reject(e: Error): void; worker: number; units: number }>();
  const busy = new Array<number>(size).fill(0);
  const workers: Array<Worker | undefined> = new Array(size).fill(undefined);

  const failAllOf = (index: number, err: Error) => {
    for (const [id, entry] of pending) {
      if (entry.worker === index) {
        pending.delete(id);
        entry.reject(err);
      }
    }
    busy[index] = 0;
  };

  /** Starts worker `index`; resolves with the model id once its engine is loaded. */
  const spawnWorker = (index: number): Promise<string> => {
    const worker = new Worker(WORKER_URL, { workerData: { modelPath, nice } });
    return new Promise<string>((resolve, reject) => {
      let loaded = false;
      worker.on('message', (message: WorkerReply & { ready?: string; error?: unknown }) => {
        if (!loaded) {
          loaded = true;
          if (typeof message.ready === 'string') {
            workers[index] = worker;
            resolve(message.ready);
          } else {
            reject(new Error(typeof message.error === 'string' ? message.error : 'worker failed to load the engine'));
            void worker.terminate();
          }
          return;
        }
        const entry = pending.get(message.id);
        if (!entry) return;
        pending.delete(message.id);
        busy[index] = Math.max(0, (busy[index] ?? entry.units) - entry.units);
        if (message.result) entry.resolve(message.result);
        else if (
          message.error &&
          typeof message.error === 'object' &&
          (message.error as { name?: string }).name === 'UnsupportedLanguageError'
        ) {
          const e = message.error as { detected?: string; message: string };
          entry.reject(new UnsupportedLanguageError(e.detected ?? 'unknown', e.message));
        } else entry.reject(new Error((message.error as { message?: string } | undefined)?.message ?? 'engine error'));
      });
      worker.on('error', (err) => {
        if (!loaded) {
          loaded = true;
          reject(err);
        }
      });
      worker.on('exit', (code) => {
        if (workers[index] !== worker) return;
        workers[index] = undefined;
        const err = new Error(`scoring worker ${index} exited with code ${code}`);
        failAllOf(index, err);
        if (state !== 'ready') return;
        onWorkerExit?.(err);
        spawnWorker(index).catch((spawnErr: Error) => {
          state = 'failed';
          failure = spawnErr;
        });
      });
    });
  };

  const loaded = (async () => {
    try {
      const models = await Promise.all(Array.from({ length: size }, (_, index) => spawnWorker(index)));
      model = models[0];
      state = 'ready';
    } catch (err) {
      state = 'failed';
      failure = err as Error;
      await Promise.all(workers.map((w) => w?.terminate()));
      throw err;
    }
  })();
  loaded.catch(() => undefined);

  /**
   * Posts a job to the least busy worker, busy counted in units of work (characters), so a short
   * text goes to a worker without a long one ahead of it; resolves with the worker's result.
   */
  const submit = <T>(job: Job): Promise<T> => {
    if (state !== 'ready') return Promise.reject(new Error('engine not ready'));
    const units = unitsForChars(job.kind === 'author' ? job.messages.reduce((sum, m) => sum + m.length, 0) : job.text.length);
    let index = -1;
    for (let i = 0; i < size; i++) {
      if (workers[i] && (index < 0 || (busy[i] ?? 0) < (busy[index] ?? 0))) index = i;
    }
    const worker = index >= 0 ? workers[index] : undefined;
    if (!worker) return Promise.reject(new Error('no scoring worker is running'));
    busy[index] = (busy[index] ?? 0) + units;
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (r: unknown) => void, reject, worker: index, units });
      worker.postMessage({ ...job, id });
    });
  };

  return {
    get state() {
      return state;
    },
    get model() {
      return model;
    },
    get failure() {
      return failure;
    },
    get pending() {
      return pending.size;
    },
    loaded,
    start(text, options) {
      return submit<TextStart>({ kind: 'text', text, options });
    },
    detectWindow(text, plan, options) {
      return submit<WindowScore>({ kind: 'window', text, plan, options });
    },
    detectAuthor(messages, options) {
      return submit<AuthorDetectionResult>({ kind: 'author', messages, options });
    },
    async close() {
      state = 'closed';
      const running = workers.splice(0, workers.length);
      await Promise.all(running.map((w) => w?.terminate()));
      for (const [id, entry] of pending) {
        pending.delete(id);
        entry.reject(new Error('engine closed'));
      }
    },
  };
}

/** `workers` 0 scores on the calling thread; more starts that many worker threads. */
/**
 * `nice` (Linux, worker threads only): a niceness for the workers' threads, for a pool doing bulk
 * work that must yield the CPUs to the pool answering short calls (the file route's lane).
 */
export function createEngineHost(
  modelPath: string | undefined,
  workers: number,
  onWorkerExit?: (err: Error) => void,
  nice = 0,
): EngineHost {
  return workers > 0 ? workerPoolEngine(modelPath, workers, onWorkerExit, nice) : inProcessEngine(modelPath);
}
