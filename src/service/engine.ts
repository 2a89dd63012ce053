/**
 * Hosts the detection engine for the service: loads it (in this thread or in worker threads) and
 * tracks whether it is ready, so /readyz and /v1/detect can answer 503 while it is not.
 */
import { Worker } from 'node:worker_threads';
import type { DetectionResult, DetectOptions } from '../detector/types.ts';
import { UnsupportedLanguageError } from '../detector/types.ts';

export type EngineState = 'loading' | 'ready' | 'failed' | 'closed';

export interface EngineHost {
  readonly state: EngineState;
  /** Model version id once loaded. */
  readonly model: string | undefined;
  /** Why loading failed, when `state === 'failed'`. */
  readonly failure: Error | undefined;
  /** Resolves when loaded; rejects if loading fails. */
  readonly loaded: Promise<void>;
  detect(text: string, options: DetectOptions): Promise<DetectionResult>;
  close(): Promise<void>;
}

interface WorkerReply {
  id: number;
  result?: DetectionResult;
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
    get state() { return state; },
    get model() { return detector?.model; },
    get failure() { return failure; },
    loaded,
    async detect(text, options) {
      if (!detector || state !== 'ready') throw new Error('engine not ready');
      return detector.detect(text, options);
    },
    async close() {
      state = 'closed';
    },
  };
}

/**
 * Loads one engine per worker thread and sends each text to the least busy one, so scoring uses
 * several cores while the main thread only does HTTP.
 */
function workerPoolEngine(modelPath: string | undefined, size: number): EngineHost {
  let state: EngineState = 'loading';
  let failure: Error | undefined;
  let model: string | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve(r: DetectionResult): void; reject(e: Error): void; worker: number }>();
  const busy = new Array<number>(size).fill(0);
  const workers: Worker[] = [];

  const failAllOf = (index: number, err: Error) => {
    for (const [id, entry] of pending) {
      if (entry.worker === index) {
        pending.delete(id);
        entry.reject(err);
      }
    }
  };

  const loaded = (async () => {
    try {
      const starts = Array.from({ length: size }, (_, index) => {
        const worker = new Worker(new URL('./detect-worker.mjs', import.meta.url), {
          workerData: { modelPath },
        });
        workers.push(worker);
        return new Promise<string>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('message', (message: { ready?: string; error?: string }) => {
            worker.off('error', reject);
            if (message.ready !== undefined) resolve(message.ready);
            else reject(new Error(message.error ?? 'worker failed to load the engine'));
            worker.on('message', (reply: WorkerReply) => {
              const entry = pending.get(reply.id);
              if (!entry) return;
              pending.delete(reply.id);
              busy[index] = (busy[index] ?? 1) - 1;
              if (reply.result) entry.resolve(reply.result);
              else if (reply.error?.name === 'UnsupportedLanguageError') entry.reject(new UnsupportedLanguageError(reply.error.detected ?? 'unknown', reply.error.message));
              else entry.reject(new Error(reply.error?.message ?? 'engine error'));
            });
            worker.on('error', (err) => {
              failAllOf(index, err);
              if (state === 'ready') {
                state = 'failed';
                failure = err;
              }
            });
          });
        });
      });
      const models = await Promise.all(starts);
      model = models[0];
      state = 'ready';
    } catch (err) {
      state = 'failed';
      failure = err as Error;
      await Promise.all(workers.map((w) => w.terminate()));
      throw err;
    }
  })();
  loaded.catch(() => undefined);

  return {
    get state() { return state; },
    get model() { return model; },
    get failure() { return failure; },
    loaded,
    detect(text, options) {
      if (state !== 'ready') return Promise.reject(new Error('engine not ready'));
      let index = 0;
      for (let i = 1; i < size; i++) if ((busy[i] ?? 0) < (busy[index] ?? 0)) index = i;
      busy[index] = (busy[index] ?? 0) + 1;
      const id = nextId++;
      return new Promise<DetectionResult>((resolve, reject) => {
        pending.set(id, { resolve, reject, worker: index });
        workers[index]!.postMessage({ id, text, options });
      });
    },
    async close() {
      state = 'closed';
      await Promise.all(workers.map((w) => w.terminate()));
      for (const [id, entry] of pending) {
        pending.delete(id);
        entry.reject(new Error('engine closed'));
      }
    },
  };
}

export function createEngineHost(modelPath: string | undefined, workers: number): EngineHost {
  return workers > 0 ? workerPoolEngine(modelPath, workers) : inProcessEngine(modelPath);
}
