/**
 * Reads documents in child processes, off the service's event loop, one file per process at a time.
 *
 * Processes, not worker threads: pdf.js inflates a PDF's streams into buffers outside the JavaScript
 * heap, which a thread's heap limit does not cover, and memory a terminated thread used stays with
 * the service (the allocator keeps it): a few decompression bombs took the service from 0.5 to 6.8 GB.
 * A process's whole memory goes back to the system when it exits. So each reader's resident memory
 * (heap, buffers, everything) is watched while it reads: past `maxMemoryMb` it is killed and the
 * caller gets `file_unreadable`; a reader left holding more than it started with after a file, or
 * that has read `recycleAfter` files, is replaced once it is idle. The service's own memory never
 * holds what a file inflates to.
 *
 * Each file has a time limit: a reader still reading when it runs out is killed (pdf.js cannot be
 * interrupted any other way) and replaced. A replacement takes a second or more to start (pdf.js
 * warms up), so one reader more than `workers` is kept started and idle, the spare: a reader killed
 * or replaced hands its place to the spare at once, and a new spare starts in the background. Files
 * wait in a queue, in arrival order, while every reader is busy (the service puts its per-key queue
 * in front, see src/service/file-queue.ts).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FileType } from '../contract.ts';
import { DocumentError, type DocumentErrorCode, type ExtractedDocument, type ExtractLimits, type ReadSoFar } from './types.ts';

/** From sources the reader starts through a loader shim (see worker.mjs); the build starts worker.js. */
const WORKER_URL = import.meta.url.endsWith('.ts') ? new URL('./worker.mjs', import.meta.url) : new URL('./worker.js', import.meta.url);

export interface ExtractJob {
  id: number;
  bytes: Uint8Array;
}

export type ExtractReply =
  | { id: number; document: ExtractedDocument; error?: undefined }
  | {
      id: number;
      document?: undefined;
      error: {
        code: DocumentErrorCode;
        message: string;
        type?: FileType | undefined;
        pages?: number | null;
        read?: ReadSoFar | undefined;
      };
    };

export interface DocumentReaderOptions extends ExtractLimits {
  /** Reader processes reading files at once (at least 1). */
  workers: number;
  /** Most ms one file may take to read, from the moment a reader takes it. */
  timeoutMs: number;
  /** Heap ceiling of each reader in MB (V8 old generation). Default 256. */
  maxHeapMb?: number;
  /**
   * Most resident memory of one reader process in MB, everything included (heap, the buffers pdf.js
   * inflates streams into, code). A file taking it past this is refused and the process killed.
   * Default 512.
   */
  maxMemoryMb?: number;
  /** Files a reader reads before it is replaced (memory fragmentation cannot build up). Default 200. */
  recycleAfter?: number;
  /** Niceness of the reader processes (Linux, macOS), so reading files yields the CPUs to short calls. Default 0. */
  nice?: number;
}

interface Queued {
  id: number;
  bytes: Uint8Array;
  resolve(document: ExtractedDocument): void;
  reject(error: Error): void;
}

interface Slot {
  child: ChildProcess | undefined;
  job: (Queued & { timer: NodeJS.Timeout; watch: NodeJS.Timeout | undefined }) | undefined;
  reads: number;
}

/** A reader process, in a slot or spare. */
interface Process {
  /** Resolves once it has started and warmed up (or exited). */
  ready: Promise<void>;
  started: boolean;
  /** Resident KB once warmed up: what it may go back to after a file. */
  baselineKb: number;
}

/** How often a reading process's memory is looked at. */
const WATCH_MS = 20;
/** Growth a reader may keep after a file (KB) before it is replaced: pdf.js's caches, a larger heap. */
const KEEP_KB = 48 * 1024;
/** Pause before starting again a reader that exited before it was ready. */
const RESPAWN_PAUSE_MS = 1000;

/** Resident memory of a process in KB from /proc (Linux), undefined elsewhere or once it is gone. */
export function residentKb(pid: number | undefined): number | undefined {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export class DocumentReader {
  private readonly options: DocumentReaderOptions;
  private readonly slots: Slot[] = [];
  private readonly queue: Queued[] = [];
  private readonly processes = new Map<ChildProcess, Process>();
  /** A started reader waiting to take the place of one that is killed or replaced. */
  private spare: ChildProcess | undefined;
  private nextId = 1;
  private closed = false;
  private startedReaders = false;

  /** The reader processes start with the first file or `ready()`, not before: a service that reads no file runs none. */
  constructor(options: DocumentReaderOptions) {
    this.options = { ...options, workers: Math.max(1, Math.floor(options.workers)) };
    for (let i = 0; i < this.options.workers; i++) {
      this.slots.push({ child: undefined, job: undefined, reads: 0 });
    }
  }

  private start(): void {
    if (this.startedReaders || this.closed) return;
    this.startedReaders = true;
    for (const slot of this.slots) slot.child = this.launch();
    this.spare = this.launch();
  }

  /** Files waiting for a reader. */
  get queued(): number {
    return this.queue.length;
  }

  /** Files being read now. */
  get active(): number {
    return this.slots.filter((slot) => slot.job).length;
  }

  /** Reader processes (at least 1). */
  get workers(): number {
    return this.options.workers;
  }

  /** Process ids of the readers now running, the spare's included (to measure their memory). */
  get pids(): number[] {
    return [...this.processes.keys()].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  /** Starts the readers if they are not running yet; resolves once every one has started (and warmed up). */
  async ready(): Promise<void> {
    this.start();
    await Promise.all([...this.processes.values()].map((reader) => reader.ready));
  }

  /** Reads one file. The bytes are copied to the reader process; the caller's buffer can be dropped. */
  read(bytes: Uint8Array): Promise<ExtractedDocument> {
    if (this.closed) return Promise.reject(new Error('the document reader is closed'));
    this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, bytes, resolve, reject });
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
          this.clearJob(slot.job);
          slot.job.reject(closing);
          slot.job = undefined;
        }
        const child = slot.child;
        slot.child = undefined;
        if (child) await stop(child);
      }),
    );
    const spare = this.spare;
    this.spare = undefined;
    if (spare) await stop(spare);
  }

  /** Starts a reader process; it takes files once it says it is ready. */
  private launch(): ChildProcess {
    const heapMb = this.options.maxHeapMb ?? 256;
    const child = fork(fileURLToPath(WORKER_URL), [], {
      // Not the parent's flags (a test runner's loaders, an inspector port): the shim registers what it needs.
      execArgv: [`--max-old-space-size=${heapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      // A reader needs no secret of the service's; it gets none (PATH and TMPDIR only, for the loader's cache).
      env: { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '', TEXTDETECT_READER_LIMITS: JSON.stringify(this.limits()) },
    });
    if (this.options.nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.options.nice);
      } catch {
        // Not allowed here: the reader runs at normal priority.
      }
    }
    let markReady = (): void => undefined;
    const reader: Process = { ready: new Promise<void>((resolve) => (markReady = resolve)), started: false, baselineKb: 0 };
    this.processes.set(child, reader);
    child.on('message', (message: ExtractReply | { ready: true }) => {
      if ('ready' in message) {
        reader.baselineKb = residentKb(child.pid) ?? 0;
        reader.started = true;
        markReady();
        this.pump();
        return;
      }
      const slot = this.slots.find((candidate) => candidate.child === child);
      if (slot) this.finish(slot, child, message);
    });
    child.on('error', () => {
      // Reported through 'exit', which follows.
    });
    child.once('exit', (code, signal) => {
      markReady();
      this.processes.delete(child);
      this.exited(child, reader.started, code ?? signal);
    });
    return child;
  }

  /** A reader ended by itself (a crash, the system's OOM killer), not because it was stopped. */
  private exited(child: ChildProcess, started: boolean, status: number | string | null): void {
    if (child === this.spare) {
      this.spare = undefined;
      // A reader that dies before it is ready (a broken install) is started again after a pause, not in a loop.
      const again = (): void => {
        if (!this.closed && !this.spare) this.spare = this.launch();
      };
      if (!this.closed) setTimeout(again, started ? 0 : RESPAWN_PAUSE_MS).unref();
      return;
    }
    const slot = this.slots.find((candidate) => candidate.child === child);
    if (!slot) return;
    slot.child = undefined;
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      this.clearJob(job);
      job.reject(
        new DocumentError(
          'file_unreadable',
          `The file could not be read: reading it needed more memory than this server allows (reader exit ${status}); it may be damaged or built to exhaust readers.`,
        ),
      );
    }
    if (this.closed) return;
    if (started) this.replace(slot);
    else setTimeout(() => !this.closed && !slot.child && this.replace(slot), RESPAWN_PAUSE_MS).unref();
  }

  /** Gives the slot the spare (a new one starts for the next time), or a new reader when there is none. */
  private replace(slot: Slot): void {
    slot.child = this.spare ?? this.launch();
    slot.reads = 0;
    this.spare = this.launch();
    this.pump();
  }

  private limits(): ExtractLimits {
    return { maxPages: this.options.maxPages, maxUnpackedBytes: this.options.maxUnpackedBytes, maxChars: this.options.maxChars };
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job || !slot.child || !this.processes.get(slot.child)?.started) continue;
      const job = this.queue.shift() as Queued;
      const child = slot.child;
      const timer = setTimeout(() => {
        if (slot.job?.id !== job.id) return;
        this.giveUp(
          slot,
          child,
          new DocumentError(
            'file_unreadable',
            `The file took longer than ${Math.round(this.options.timeoutMs / 100) / 10} s to read, the limit on this server; it is damaged or too complex. Send a simpler export of it.`,
          ),
        );
      }, this.options.timeoutMs);
      const maxKb = (this.options.maxMemoryMb ?? 512) * 1024;
      const watch =
        process.platform === 'linux'
          ? setInterval(() => {
              const kb = residentKb(child.pid);
              if (kb === undefined || kb <= maxKb || slot.job?.id !== job.id) return;
              this.giveUp(
                slot,
                child,
                new DocumentError(
                  'file_unreadable',
                  `The file could not be read: reading it needed more than ${this.options.maxMemoryMb ?? 512} MB of memory, the limit on this server (it unpacks to far more than it weighs, as a decompression bomb does); it was not read to the end. Send a simpler export of it.`,
                ),
              );
            }, WATCH_MS)
          : undefined;
      slot.job = { ...job, timer, watch };
      child.send({ id: job.id, bytes: job.bytes } satisfies ExtractJob);
    }
  }

  /** Fails the slot's file and kills its reader (the only way to stop pdf.js mid-file); a fresh one takes the slot at once. */
  private giveUp(slot: Slot, child: ChildProcess, error: DocumentError): void {
    const job = slot.job;
    if (!job || slot.child !== child) return;
    this.clearJob(job);
    slot.job = undefined;
    job.reject(error);
    slot.child = undefined;
    child.kill('SIGKILL');
    if (!this.closed) this.replace(slot);
  }

  private clearJob(job: NonNullable<Slot['job']>): void {
    clearTimeout(job.timer);
    if (job.watch) clearInterval(job.watch);
  }

  private finish(slot: Slot, child: ChildProcess, reply: ExtractReply): void {
    const job = slot.job;
    if (slot.child !== child || !job || job.id !== reply.id) return;
    this.clearJob(job);
    slot.job = undefined;
    slot.reads++;
    // A reader that kept memory from this file (a large inflated stream the allocator holds on to),
    // or has read many files, is replaced now, while idle, so the memory goes back to the system.
    const kb = residentKb(child.pid);
    const baselineKb = this.processes.get(child)?.baselineKb ?? 0;
    if (slot.reads >= (this.options.recycleAfter ?? 200) || (kb !== undefined && baselineKb > 0 && kb > baselineKb + KEEP_KB)) {
      slot.child = undefined;
      void stop(child);
      if (!this.closed) this.replace(slot);
    }
    if (reply.document) job.resolve(reply.document);
    else
      job.reject(
        new DocumentError(reply.error.code, reply.error.message, {
          type: reply.error.type,
          pages: reply.error.pages ?? null,
          read: reply.error.read,
        }),
      );
    this.pump();
  }
}

/** Ends a reader and resolves once it is gone. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
