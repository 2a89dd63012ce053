/**
 * Keeps a process on this machine: every attempt to reach beyond loopback is refused before a packet
 * leaves, and recorded with the stack that asked.
 * - Name lookups of anything but loopback names (dns.lookup, dns.promises.lookup, the c-ares
 *   resolve* queries on the module and on Resolver objects) fail with ENOTFOUND.
 * - TCP connections (net.Socket#connect, which net, tls, http, https, undici, fetch and ws all go
 *   through) to anything but a loopback address are destroyed with ECONNREFUSED, before any lookup.
 *
 * `npm run demo` installs it first thing, so a library that reaches for discord.com or slack.com
 * (a default URL, a CDN) is refused and named instead of leaving the machine. Preloaded with
 * `node --import <compiled file's URL>` and `LOOPBACK_GUARD_LOG=<file>` in the environment (through
 * NODE_OPTIONS, so every node process of a tree carries it), it installs itself and appends a JSON
 * line to that file for itself and for each attempt: test/demo/demo.test.ts checks the whole
 * `npm run demo` tree with it.
 */
import dns from 'node:dns';
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net, { isIP } from 'node:net';

export interface OutsideAttempt {
  /** What asked: `dns.lookup`, `dns.promises.resolve4`, `net.connect`… */
  what: string;
  /** The name or `host:port` it asked for. */
  target: string;
  /** The first frames of the caller's stack. */
  stack: string[];
}

interface GuardState {
  readonly attempts: OutsideAttempt[];
  readonly listeners: Set<(attempt: OutsideAttempt) => void>;
}

const STATE = Symbol.for('textdetect.loopbackGuard');
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', 'ip6-localhost', 'ip6-loopback']);

/** 127.0.0.0/8, ::1 (and 127.x mapped into IPv6) and the loopback names; no host at all is net's default, localhost. */
export function isLoopback(host: unknown): boolean {
  if (host === undefined || host === null || host === '') return true;
  if (typeof host !== 'string') return false;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(h) || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

function refusal(code: string, syscall: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`refused by the loopback guard: ${message}`), { code, syscall });
}

type AnyFunction = (...args: unknown[]) => unknown;

/** Installs the guard once per process (again: the same state); returns what it has refused so far. */
export function installLoopbackGuard(): GuardState {
  const holder = globalThis as { [STATE]?: GuardState };
  const existing = holder[STATE];
  if (existing) return existing;
  const state: GuardState = { attempts: [], listeners: new Set() };
  holder[STATE] = state;

  const record = (what: string, target: string): void => {
    const stack = (new Error().stack ?? '')
      .split('\n')
      .slice(3, 12)
      .map((l) => l.trim());
    const attempt = { what, target, stack };
    state.attempts.push(attempt);
    for (const listener of state.listeners) listener(attempt);
  };

  const lookup = dns.lookup as unknown as AnyFunction;
  (dns as { lookup: unknown }).lookup = function guardedLookup(this: unknown, hostname: unknown, ...rest: unknown[]) {
    if (isLoopback(hostname)) return lookup.call(this, hostname, ...rest);
    record('dns.lookup', String(hostname));
    const callback = rest.findLast((a) => typeof a === 'function') as AnyFunction | undefined;
    process.nextTick(() => callback?.(refusal('ENOTFOUND', 'getaddrinfo', `name lookup of ${String(hostname)}`)));
    return {};
  };
  const promisesLookup = dns.promises.lookup as unknown as AnyFunction;
  (dns.promises as { lookup: unknown }).lookup = function guardedLookup(this: unknown, hostname: unknown, ...rest: unknown[]) {
    if (isLoopback(hostname)) return promisesLookup.call(this, hostname, ...rest);
    record('dns.promises.lookup', String(hostname));
    return Promise.reject(refusal('ENOTFOUND', 'getaddrinfo', `name lookup of ${String(hostname)}`));
  };

  // DNS queries never concern loopback: every one is refused.
  const refuseQueries = (target: Record<string, unknown>, label: string, promised: boolean, names: Iterable<string>): void => {
    for (const name of names) {
      if (typeof target[name] !== 'function') continue;
      target[name] = function refusedQuery(first: unknown, ...rest: unknown[]) {
        record(`${label}.${name}`, String(first));
        const error = refusal('ENOTFOUND', name, `DNS query ${name}(${String(first)})`);
        if (promised) return Promise.reject(error);
        const callback = rest.findLast((a) => typeof a === 'function') as AnyFunction | undefined;
        process.nextTick(() => callback?.(error));
        return undefined;
      };
    }
  };
  const isQuery = (name: string): boolean => /^resolve|^reverse$|^lookupService$/.test(name);
  refuseQueries(dns as unknown as Record<string, unknown>, 'dns', false, Object.keys(dns).filter(isQuery));
  refuseQueries(dns.promises as unknown as Record<string, unknown>, 'dns.promises', true, Object.keys(dns.promises).filter(isQuery));
  for (const [Resolver, promised] of [
    [dns.Resolver, false],
    [dns.promises.Resolver, true],
  ] as const) {
    const names = new Set<string>();
    for (let proto: object | null = Resolver.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const name of Object.getOwnPropertyNames(proto)) if (isQuery(name)) names.add(name);
    }
    refuseQueries(Resolver.prototype as unknown as Record<string, unknown>, 'Resolver', promised, names);
  }

  const connect = net.Socket.prototype.connect as unknown as AnyFunction;
  (net.Socket.prototype as { connect: unknown }).connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    // net.connect() hands its arguments on already normalised, as one array [options, callback].
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const options = first !== null && typeof first === 'object' ? (first as { path?: unknown; host?: unknown; port?: unknown }) : undefined;
    // A pipe or Unix socket path stays on this machine (net takes any truthy `path` as one; http passes `path: null`).
    if (options?.path || (typeof first === 'string' && Number.isNaN(Number(first)))) return connect.apply(this, args);
    const host = options ? options.host : typeof args[1] === 'string' ? args[1] : undefined;
    const port = options ? options.port : first;
    if (isLoopback(host)) return connect.apply(this, args);
    record('net.connect', `${String(host)}:${String(port)}`);
    process.nextTick(() => this.destroy(refusal('ECONNREFUSED', 'connect', `connection to ${String(host)}:${String(port)}`)));
    return this;
  };

  // ES module imports of node:dns and node:net see the guarded functions too.
  syncBuiltinESMExports();
  return state;
}

/** Preloaded with LOOPBACK_GUARD_LOG set: one line when installed (so a test sees which processes carry it), one per refusal. */
const log = process.env.LOOPBACK_GUARD_LOG;
if (log) {
  const write = (event: Record<string, unknown>): void =>
    appendFileSync(log, `${JSON.stringify({ pid: process.pid, argv: process.argv.slice(1, 3), ...event })}\n`);
  const state = installLoopbackGuard();
  write({ event: 'installed' });
  state.listeners.add((attempt) => write({ event: 'refused', ...attempt }));
}
