/**
 * Reads documents in worker threads, off the service's event loop, one file per worker at a time.
 * Each file has a time limit: a worker still reading when it runs out is terminated (pdf.js cannot be
 * interrupted any other way) and replaced, and the caller gets `file_unreadable`. A worker that dies
 * (out of memory on a hostile file) fails only its own file. Files wait in a queue, in arrival order,
 * while every worker is busy.
 */
import { Worker } from 'node:worker_threads';
import type { FileErrorCode, FileType } from '../contract.ts';
import { DocumentError, type ExtractedDocument, type ExtractLimits } from './types.ts';

/** See detect-worker.mjs in src/service: from sources the worker starts through a loader shim. */
const WORKER_URL = import.meta.url.endsWith('.ts') ? new URL('./worker.mjs', import.meta.url) : new URL('./worker.js', import.meta.url);

export interface ExtractJob {
  id: number;
  bytes: ArrayBuffer;
}

export type ExtractReply =
  | { id: number; document: ExtractedDocument; error?: undefined }
  | {
      id: number;
      document?: undefined;
      error: { code: FileErrorCode; message: string; type?: FileType | undefined; pages?: number | null };
    };

export interface DocumentReaderOptions extends ExtractLimits {
  /** Worker threads reading files at once (at least 1). */
  workers: number;
  /** Most ms one file may take to read, from the moment a worker takes it. */
  timeoutMs: number;
  /** Heap ceiling of each worker in MB (V8 old generation); a file needing more kills only its worker. */
  maxHeapMb?: number;
  /** Niceness of the worker threads (Linux), so reading files yields the CPUs to short calls. Default 0. */
  nice?: number;
}

interface Queued {
  id: number;
  bytes: ArrayBuffer;
  resolve(document: ExtractedDocument): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker | undefined;
  ready: Promise<void>;
  job: (Queued & { timer: NodeJS.Timeout }) | undefined;
}

export class DocumentReader {
  private readonly options: DocumentReaderOptions;
  private readonly slots: Slot[] = [];
  private readonly queue: Queued[] = [];
  /** Workers that finished starting and take files. */
  private readonly started = new WeakSet<Worker>();
  private nextId = 1;
  private closed = false;

  constructor(options: DocumentReaderOptions) {
    this.options = { ...options, workers: Math.max(1, Math.floor(options.workers)) };
    for (let i = 0; i < this.options.workers; i++) {
      const slot: Slot = { worker: undefined, ready: Promise.resolve(), job: undefined };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  /** Files waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Files being read now. */
  get active(): number {
    return this.slots.filter((slot) => slot.job).length;
  }

  /** Resolves once every worker has started (and warmed up). */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.ready));
  }

  /**
   * Reads one file. The bytes are copied once into a buffer that is then moved (not copied) to the
   * worker, so the caller's buffer can be dropped at once.
   */
  read(bytes: Uint8Array): Promise<ExtractedDocument> {
    if (this.closed) return Promise.reject(new Error('the document reader is closed'));
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, bytes: copy.buffer, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing = new Error('the document reader is closed');
    for (const job of this.queue.splice(0)) job.reject(closing);
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.job) {
          clearTimeout(slot.job.timer);
          slot.job.reject(closing);
          slot.job = undefined;
        }
        const worker = slot.worker;
        slot.worker = undefined;
        await worker?.terminate();
      }),
    );
  }

  private spawn(slot: Slot): void {
    const worker = new Worker(WORKER_URL, {
      workerData: {
        limits: { maxPages: this.options.maxPages, maxUnpackedBytes: this.options.maxUnpackedBytes },
        nice: this.options.nice ?? 0,
      },
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 256 },
    });
    slot.ready = new Promise<void>((resolve) => {
      const onFirst = (message: { ready?: boolean }): void => {
        if (!message.ready) return;
        worker.off('message', onFirst);
        if (slot.worker !== worker) {
          resolve();
          return;
        }
        worker.on('message', (reply: ExtractReply) => this.finish(slot, worker, reply));
        this.started.add(worker);
        resolve();
        this.pump();
      };
      worker.on('message', onFirst);
      worker.once('exit', () => resolve());
    });
    worker.on('error', () => {
      // Reported through 'exit', which follows.
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      slot.job = undefined;
      if (job) {
        clearTimeout(job.timer);
        job.reject(
          new DocumentError(
            'file_unreadable',
            `The file could not be read: reading it needed more memory than this server allows (worker exit ${code}); it may be damaged or built to exhaust readers.`,
          ),
        );
      }
      if (!this.closed) this.spawn(slot);
    });
    slot.worker = worker;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job || !slot.worker || !this.started.has(slot.worker)) continue;
      const job = this.queue.shift() as Queued;
      const worker = slot.worker;
      const timer = setTimeout(() => {
        if (slot.job?.id !== job.id) return;
        slot.job = undefined;
        job.reject(
          new DocumentError(
            'file_unreadable',
            `The file took longer than ${Math.round(this.options.timeoutMs / 100) / 10} s to read, the limit on this server; it is damaged or too complex. Send a simpler export of it.`,
          ),
        );
        // Terminating is the only way to stop pdf.js mid-file. The slot gets a fresh worker at once,
        // so files queued behind this one do not land on the dying one.
        slot.worker = undefined;
        void worker.terminate();
        if (!this.closed) this.spawn(slot);
      }, this.options.timeoutMs);
      slot.job = { ...job, timer };
      worker.postMessage({ id: job.id, bytes: job.bytes } satisfies ExtractJob, [job.bytes]);
    }
  }

  private finish(slot: Slot, worker: Worker, reply: ExtractReply): void {
    const job = slot.job;
    if (slot.worker !== worker || !job || job.id !== reply.id) return;
    clearTimeout(job.timer);
    slot.job = undefined;
    if (reply.document) job.resolve(reply.document);
    else job.reject(new DocumentError(reply.error.code, reply.error.message, { type: reply.error.type, pages: reply.error.pages ?? null }));
    this.pump();
  }
}
