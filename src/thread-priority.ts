/**
 * Lowers the scheduling priority of the calling worker thread only (Linux: a thread is a task with
 * its own id, and setpriority on that id affects that thread alone). Used by threads doing bulk
 * work (reading and scoring uploaded documents) so that, when the CPUs are short, the threads that
 * answer short calls keep their share. Elsewhere, or when not allowed, it does nothing.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux' || nice <= 0) return false;
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid === process.pid) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
