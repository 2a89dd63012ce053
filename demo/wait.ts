/**
 * How long a caller waits for something that will happen (a reply, a log line, a process ready) before
 * it calls it missing. Only an upper bound: a passing test or a demo step does not wait for it.
 * Generous because the suite runs on 2-core machines that are busy with other work: what takes 1-3 s
 * on a quiet machine took up to 30 s at load 10.
 */
export const WAIT_MS = 90_000;
