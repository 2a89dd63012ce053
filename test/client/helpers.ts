/**
 * Test fixtures for the client and CLI suites: the real service on a loopback port with a private
 * key file, and a small real HTTP proxy in front of it that records every attempt and can inject
 * the faults the real service cannot produce on demand (5xx, hangs, dropped connections).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApiKey, revokeApiKey, startService, type ServiceConfig } from '../../src/service/index.ts';

/** Over 40 words (the evidence floor), so it gets a verdict and a score. */
export const SAMPLE_TEXT =
  'The committee reviewed the proposal in detail and concluded that the budget was realistic. ' +
  'However, several members asked for a clearer timeline before the final vote next month. ' +
  'The chair agreed to circulate a revised schedule by Friday. Two members abstained, and one was away on holiday.';

export interface TestService {
  url: string;
  port: number;
  keysFile: string;
  /** A sandbox key with the server's default limit. */
  key: string;
  newKey(options?: { rateLimitMax?: number; environment?: 'sandbox' | 'production'; expiresAt?: string }): Promise<string>;
  revoke(key: string): Promise<void>;
  /** Stops the server (the key file stays, so `restart` brings the same keys back on the same port). */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestService(config: Partial<ServiceConfig> = {}): Promise<TestService> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-client-test-'));
  const keysFile = join(dir, 'api-keys.json');
  const key = (await createApiKey(keysFile, { name: 'client tests' })).key;
  const base: Partial<ServiceConfig> = {
    host: '127.0.0.1',
    port: 0,
    apiKeysFile: keysFile,
    apiKeysRefreshMs: 0,
    logger: pino({ level: 'silent' }),
    shutdownTimeoutMs: 2_000,
    ...config,
  };
  let running: Awaited<ReturnType<typeof startService>> | undefined = await startService(base);
  const port = Number(new URL(running.url).port);
  const handle: TestService = {
    url: running.url,
    port,
    keysFile,
    key,
    async newKey(options = {}) {
      return (await createApiKey(keysFile, { name: 'client tests', ...options })).key;
    },
    async revoke(k) {
      await revokeApiKey(keysFile, k);
    },
    async stop() {
      const current = running;
      running = undefined;
      await current?.close();
    },
    async restart() {
      await handle.stop();
      running = await startService({ ...base, port });
    },
    async close() {
      await handle.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

export interface ProxyRecord {
  /** Date.now() when the request reached the proxy. */
  at: number;
  requestId: string | undefined;
  status?: number | undefined;
  /** Response headers, as forwarded (or as injected). */
  headers?: IncomingHttpHeaders | undefined;
  injected?: Fault['kind'] | undefined;
}

/** What the proxy does with one request instead of forwarding it untouched. */
export type Fault =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Wait, then forward. */
  | { kind: 'delay'; ms: number }
  /** Cut the connection without an answer. */
  | { kind: 'destroy' };

export interface RecordingProxy {
  url: string;
  records: ProxyRecord[];
  /** Decides the fault for the n-th request (0-based); return undefined to forward. */
  setFaults(plan: ((n: number, requestId: string | undefined) => Fault | undefined) | undefined): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<RecordingProxy> {
  const targetUrl = new URL(target);
  const records: ProxyRecord[] = [];
  let plan: ((n: number, requestId: string | undefined) => Fault | undefined) | undefined;
  let count = 0;
  const sockets = new Set<Socket>();
  const pending = new Set<ServerResponse>();

  const server: Server = createServer((req, res) => {
    const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : undefined;
    const record: ProxyRecord = { at: Date.now(), requestId };
    records.push(record);
    const fault = plan?.(count++, requestId);
    record.injected = fault?.kind;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (fault?.kind === 'hang') {
        pending.add(res);
        return;
      }
      if (fault?.kind === 'destroy') {
        req.socket.destroy();
        return;
      }
      if (fault?.kind === 'status') {
        const body = JSON.stringify(
          fault.body ?? { error: { type: 'api_error', code: 'injected', message: 'Injected by the test proxy.' } },
        );
        const headers = { 'content-type': 'application/json', ...fault.headers };
        record.status = fault.status;
        record.headers = headers;
        res.writeHead(fault.status, headers).end(body);
        return;
      }
      const forward = (): void => {
        const upstream = httpRequest(
          {
            host: targetUrl.hostname,
            port: targetUrl.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: targetUrl.host },
          },
          (upRes) => {
            record.status = upRes.statusCode;
            record.headers = upRes.headers;
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            upRes.pipe(res);
          },
        );
        upstream.on('error', () => req.socket.destroy());
        upstream.end(Buffer.concat(chunks));
      };
      if (fault?.kind === 'delay') setTimeout(forward, fault.ms);
      else forward();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    setFaults(next) {
      plan = next;
      count = 0;
    },
    async close() {
      for (const res of pending) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves with the elapsed ms and the settled outcome of `promise`. */
export async function timed<T>(promise: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}
