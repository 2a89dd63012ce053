/** Runs test/chat/watcher-process.ts (the real watcher in a process of its own) and reads what it prints. */
import { spawn } from 'node:child_process';

/** The text of every message the watcher process is offered or reads again (about 25 words, AI-like). */
export const WATCHED_TEXT = (id: string): string =>
  `Message ${id}: in conclusion, it is important to note that effective communication fosters collaboration, and leveraging synergies ensures sustainable growth for all stakeholders involved.`;

export interface Run {
  lines: string[];
  /** Resolves once a printed line satisfies `match`. */
  waitFor(match: (line: string) => boolean): Promise<string>;
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Writes a line to the process's stdin (`offer <id>`). */
  send(line: string): void;
}

const runs: Run[] = [];

/** A failed case must not leave its watcher processes behind. */
export async function killWatchers(): Promise<void> {
  await Promise.all(runs.splice(0).map((run) => run.kill('SIGKILL')));
}

export function runWatcher(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/chat/watcher-process.ts'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let buffered = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const run: Run = {
    lines,
    waitFor: (match) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = lines.find(match);
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        setTimeout(() => reject(new Error(`no such line within 20 s; the watcher printed: ${lines.join(' | ')}`)), 20_000).unref();
        void exited.then(() => setTimeout(() => reject(new Error(`the watcher process ended; it printed: ${lines.join(' | ')}`)), 100));
        check();
      }),
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    send(line) {
      child.stdin.write(`${line}\n`);
    },
  };
  runs.push(run);
  return run;
}
