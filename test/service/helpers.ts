/** Shared helpers for the service tests: a real server on a loopback port with a temporary key file. */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createApiKey } from '../../src/service/keys.ts';
import type { CreateApiKeyOptions } from '../../src/service/keys.ts';
import { startService } from '../../src/service/index.ts';
import type { RunningService, ServiceConfig } from '../../src/service/index.ts';

export interface TestService extends RunningService {
  keysFile: string;
  dir: string;
  port: number;
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Raw log output, to check that no key or text leaked into it. */
  rawLogs(): string;
  newKey(options?: Partial<CreateApiKeyOptions>): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestService(config: Partial<ServiceConfig> = {}): Promise<TestService> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-svc-'));
  const keysFile = config.apiKeysFile ?? join(dir, 'api-keys.json');
  const chunks: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString('utf8');
      chunks.push(text);
      for (const line of text.split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const service = await startService({
    port: 0,
    host: '127.0.0.1',
    apiKeysFile: keysFile,
    apiKeysRefreshMs: 0,
    rateLimitMax: 10_000,
    logger,
    ...config,
  });
  const port = Number(new URL(service.url).port);
  return {
    ...service,
    keysFile,
    dir,
    port,
    logs,
    rawLogs: () => chunks.join(''),
    async newKey(options = {}) {
      const { key } = await createApiKey(keysFile, { name: 'test', environment: config.environment ?? 'sandbox', ...options });
      return key;
    },
    async stop() {
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  service: { url: string },
  path: string,
  init: { method?: string; key?: string; body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body: string | Uint8Array | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(service.url + path, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text so the assertion shows it
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export function detect(service: { url: string }, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(service, '/v1/detect', { key, body, headers });
}

/** POST /v1/detect/file with `data` as the form's file (and `fields` before it); the answer parsed when it is JSON. */
export async function uploadFile(
  service: { url: string },
  key: string,
  data: Uint8Array | string,
  filename: string,
  fields: Record<string, string> = {},
  options: { type?: string; field?: string } = {},
): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append(
    options.field ?? 'file',
    new Blob([data as Uint8Array<ArrayBuffer>], { type: options.type ?? 'application/octet-stream' }),
    filename,
  );
  const response = await fetch(`${service.url}/v1/detect/file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** Checks the error envelope shape shared by every non-2xx answer. */
export function expectEnvelope(answer: Answer, status: number, code: string | RegExp): void {
  const types: Record<number, string> = {
    401: 'authentication_error',
    403: 'permission_error',
    429: 'rate_limit_error',
    500: 'api_error',
    503: 'api_error',
  };
  const problems: string[] = [];
  if (answer.status !== status) problems.push(`status ${answer.status} != ${status}`);
  const error = answer.body?.error;
  if (!error || typeof error !== 'object') problems.push('no error object');
  else {
    if (error.type !== (types[status] ?? 'invalid_request_error')) problems.push(`type ${error.type}`);
    if (typeof code === 'string' ? error.code !== code : !code.test(error.code)) problems.push(`code ${error.code} !~ ${code}`);
    if (typeof error.message !== 'string' || error.message.length < 10) problems.push('no message');
    if (!/^req_[0-9A-Z]{26}$/.test(error.request_id)) problems.push(`request_id ${error.request_id}`);
    if (answer.headers.get('request-id') !== error.request_id) problems.push('Request-Id header differs from body');
    if (String(answer.headers.get('content-type')).indexOf('application/json') !== 0) problems.push('not JSON');
  }
  if (problems.length) throw new Error(`bad error answer (${problems.join('; ')}): ${JSON.stringify(answer.body).slice(0, 400)}`);
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  raw: string;
}

/**
 * Sends bytes over a plain socket (for what fetch will not send: broken encodings, trickled bodies)
 * and reads until the server closes or a full response with Content-Length has arrived.
 */
export async function rawHttp(port: number, parts: Array<string | Buffer | { delayMs: number }>, timeoutMs = 15_000): Promise<RawAnswer> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const timer = setTimeout(() => finish(new Error('raw request timed out')), timeoutMs);
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err && received.length === 0) return reject(err);
      const raw = Buffer.concat(received).toString('utf8');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      const bodyText = rest.join('\r\n\r\n');
      let body: unknown = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        // keep text
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, raw });
    };
    const tryComplete = () => {
      const raw = Buffer.concat(received).toString('utf8');
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length: *(\d+)/i.exec(raw.slice(0, end))?.[1];
      if (length !== undefined && Buffer.byteLength(raw.slice(end + 4)) >= Number(length)) finish();
    };
    socket.on('data', (chunk) => {
      received.push(chunk);
      tryComplete();
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish());
    socket.on('connect', async () => {
      for (const part of parts) {
        if (settled) return;
        if (typeof part === 'object' && 'delayMs' in part && !Buffer.isBuffer(part)) {
          await new Promise((r) => setTimeout(r, part.delayMs));
        } else if (!socket.destroyed) {
          socket.write(part as string | Buffer);
        }
      }
    });
  });
}

/** Plain English prose written for these tests, long enough not to be flagged `short_text`. */
export const ENGLISH_TEXT =
  'The committee met on Tuesday to discuss the proposed changes to the city budget. Several members argued that the ' +
  'road repairs should come first, since the winter had left many streets in poor condition. Others pointed out that ' +
  'the library had been waiting for new funds for three years and could not keep its doors open on weekends. After a ' +
  'long debate, the chairman suggested a compromise that would split the money between the two projects. The vote was ' +
  'close, but the proposal passed, and the mayor said he would sign it before the end of the month.';

export const TURKISH_TEXT =
  'Bankanızın müşteri hizmetlerine üç gündür ulaşmaya çalışıyorum ancak hiçbir sonuç alamadım. Kredi kartımdan ' +
  'benim yapmadığım bir harcama çekilmiş ve itiraz etmek istiyorum. Şubeye gittiğimde beni çağrı merkezine ' +
  'yönlendirdiler, çağrı merkezinde ise sürekli bekletildim. Bu durumun bir an önce çözülmesini ve paramın iade ' +
  'edilmesini talep ediyorum. Aksi halde yasal yollara başvuracağımı bildiririm.';

export const GERMAN_TEXT =
  'Der Ausschuss traf sich am Dienstag, um die geplanten Änderungen am Haushalt der Stadt zu besprechen. Mehrere ' +
  'Mitglieder meinten, dass die Reparatur der Straßen Vorrang haben sollte, weil der Winter viele Straßen in einem ' +
  'schlechten Zustand hinterlassen hatte. Andere wiesen darauf hin, dass die Bibliothek seit drei Jahren auf neue ' +
  'Mittel wartet und am Wochenende nicht mehr öffnen kann.';
