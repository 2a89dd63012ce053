/**
 * A fake Discord on loopback that speaks the real protocol, for driving the real discord.js Client:
 * - REST under `/api/v10` (discord.js's `rest.api` option points at `/api`): `GET /gateway/bot`,
 *   `GET /applications/@me`, bulk command overwrite (`PUT /applications/:app[/guilds/:guild]/commands`),
 *   interaction callbacks, `PATCH /webhooks/:app/:token/messages/@original`, channel messages;
 * - a gateway WebSocket (JSON encoding, no compression, as discord.js uses without zlib-sync): HELLO,
 *   IDENTIFY → READY, heartbeats → ACK, then dispatches (INTERACTION_CREATE…).
 * Every REST call is recorded; responses can be overridden once (e.g. a 429) to test the client's
 * own handling.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { WAIT_MS } from '../wait.ts';

const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;

/** A snowflake as Discord makes them: ms since 2015 in the top bits, a counter below. */
export function snowflake(): string {
  increment = (increment + 1n) & 0xfffn;
  return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | increment).toString();
}

/** How long a nonce is remembered ("the past few minutes" of Discord's create-message docs). */
const NONCE_WINDOW_MS = 5 * 60_000;

/** A message object as Discord's REST and gateway send it; `fields` override the defaults. */
export function messageObject(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: snowflake(),
    type: 0,
    content: '',
    embeds: [],
    components: [],
    attachments: [],
    mentions: [],
    mention_roles: [],
    mention_everyone: false,
    pinned: false,
    tts: false,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    flags: 0,
    ...fields,
  };
}

/** An attachment as Discord's API documents it (the Attachment object), with its bytes served by the fake's CDN. */
export interface AttachmentObject {
  id: string;
  filename: string;
  size: number;
  url: string;
  proxy_url: string;
  content_type?: string;
  description?: string;
  flags?: number;
}

export interface ServedFileOptions {
  /** Discord's declared type; left out when undefined (as Discord does for types it cannot tell). */
  contentType?: string | undefined;
  /** The size in the payload, when it should differ from the bytes (a payload that lies). */
  declaredSize?: number;
  /** Sends the bytes in 16 KiB pieces this many ms apart, without a content-length (chunked). */
  chunkDelayMs?: number;
  /** Answers `302 Found` with this `location` instead of the bytes (a CDN sending the download elsewhere). */
  redirectTo?: string;
}

export interface RecordedRequest {
  method: string;
  /** Path after `/api/v10`, e.g. `/interactions/123/abc/callback`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
  at: number;
  /** What the fake answered (set once it has). */
  response?: { status: number; body: any };
}

export interface OverrideResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Override {
  method: string;
  path: RegExp;
  response: OverrideResponse;
}

/**
 * An extra REST route (helpers in other files add endpoints, e.g. fake-history.ts): answers and
 * returns true when the request is its own, else false.
 */
export type FakeRoute = (
  request: RecordedRequest,
  answer: (status: number, payload?: unknown, headers?: Record<string, string>) => void,
  botAuth: boolean,
) => boolean;

export interface FakeDiscordOptions {
  applicationId: string;
  token: string;
  /** The application's `flags` (GET /applications/@me and READY), e.g. the Message Content intent bits. */
  applicationFlags?: number;
  /** Shards GET /gateway/bot recommends (default 1); dispatches about a guild go to its shard's connection. */
  shards?: number;
  /** `session_start_limit.max_concurrency` (default 1). */
  maxConcurrency?: number;
}

/** A route a test adds to the fake (see `route`): answers every matching request. */
export type RouteHandler = (request: RecordedRequest, match: RegExpExecArray) => OverrideResponse;

export class FakeDiscord {
  readonly applicationId: string;
  readonly token: string;
  readonly botUser: { id: string; username: string; global_name: null; discriminator: string; avatar: null; bot: true };
  readonly requests: RecordedRequest[] = [];
  /** The messages the bot created in channels, as a channel shows them (a post Discord deduplicated is not here twice). */
  readonly created: Record<string, unknown>[] = [];
  readonly #byNonce = new Map<string, { at: number; message: Record<string, unknown> }>();
  /** The query string of each gateway connection (`v`, `encoding`, `compress`). */
  readonly gatewayQueries: URLSearchParams[] = [];
  /** The `d` of each IDENTIFY received. */
  readonly identifies: any[] = [];
  readonly sessionId = 'fake-session-1';

  readonly #http: Server;
  readonly #wss: WebSocketServer;
  #socket: WebSocket | undefined;
  /** The identified connection of each shard. */
  readonly #shardSockets = new Map<number, WebSocket>();
  readonly #shardCount: number;
  readonly #maxConcurrency: number;
  #seq = 0;
  #overrides: Override[] = [];
  #routes: FakeRoute[] = [];
  #matchRoutes: { method: string; path: RegExp; handler: RouteHandler }[] = [];
  readonly #applicationFlags: number;
  /** Interactions sent and not yet acknowledged: token → id. */
  readonly #pending = new Map<string, string>();
  readonly #acknowledged = new Set<string>();
  #waiters: { predicate: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void }[] = [];
  #readyWaiters: (() => void)[] = [];
  readonly #listeners = new Set<(request: RecordedRequest) => void>();
  /** Attachment bytes served under `/attachments/…` (the CDN's path), by path. */
  readonly #files = new Map<
    string,
    { data: Buffer; contentType: string | undefined; chunkDelayMs: number | undefined; redirectTo?: string | undefined }
  >();
  /** Every download of an attachment: its path and when it ended (or was cut off). */
  readonly downloads: { path: string; bytesSent: number; complete: boolean }[] = [];

  private constructor(options: FakeDiscordOptions) {
    this.applicationId = options.applicationId;
    this.token = options.token;
    this.#applicationFlags = options.applicationFlags ?? 0;
    this.botUser = { id: options.applicationId, username: 'textdetect', global_name: null, discriminator: '0', avatar: null, bot: true };
    this.#shardCount = options.shards ?? 1;
    this.#maxConcurrency = options.maxConcurrency ?? 1;
    this.#http = createServer((req, res) => void this.#handle(req, res));
    this.#wss = new WebSocketServer({ server: this.#http, path: '/gateway' });
    this.#wss.on('connection', (socket, req) => this.#onGateway(socket, req));
  }

  static async start(options: FakeDiscordOptions): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    await new Promise<void>((resolve) => fake.#http.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.#http.address() as AddressInfo).port;
  }

  /** What discord.js's `rest.api` option takes. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  /**
   * The fake's CDN origin: attachment `url`s point here as Discord's point at cdn.discordapp.com, so
   * the bot must be given this origin as an allowed file host (its `fileOrigins` setting).
   */
  get cdnOrigin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Serves `data` as an attachment of `channelId` and returns the Attachment object Discord would put
   * in a message or in an interaction's `resolved.attachments`.
   */
  attachment(channelId: string, filename: string, data: Buffer, options: ServedFileOptions = {}): AttachmentObject {
    const id = snowflake();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    this.#files.set(path, { data, contentType: options.contentType, chunkDelayMs: options.chunkDelayMs, redirectTo: options.redirectTo });
    // Discord signs CDN links with an expiry (`ex`), issue time (`is`) and a hash (`hm`).
    const query = `?ex=${(Math.floor(Date.now() / 1000) + 86_400).toString(16)}&is=${Math.floor(Date.now() / 1000).toString(16)}&hm=${id}`;
    return {
      id,
      filename,
      size: options.declaredSize ?? data.length,
      url: `${this.cdnOrigin}${path}${query}`,
      proxy_url: `${this.cdnOrigin}${path}${query}`,
      ...(options.contentType ? { content_type: options.contentType } : {}),
    };
  }

  /** The next request matching `method` and `path` gets `response` instead of the normal answer. */
  overrideOnce(method: string, path: RegExp, response: OverrideResponse): void {
    this.#overrides.push({ method, path, response });
  }

  /** Adds REST endpoints, consulted before the built-in 404. */
  addRoute(route: FakeRoute): void {
    this.#routes.push(route);
  }

  /** Answers every request matching `method` and `path` with `handler` (routes the fake does not know by itself). */
  route(method: string, path: RegExp, handler: RouteHandler): void {
    this.#matchRoutes.push({ method, path, handler });
  }

  /** Resolves with the first recorded request (past or future) that matches. */
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs = WAIT_MS): Promise<RecordedRequest> {
    const seen = this.requests.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(new Error(`fake Discord: no matching request within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (r: RecordedRequest): void => {
        clearTimeout(timer);
        resolve(r);
      };
      this.#waiters.push({ predicate, resolve: done });
    });
  }

  /** Calls `listener` with every REST request once it has been answered (the demo's page draws from them). */
  onRequest(listener: (request: RecordedRequest) => void): void {
    this.#listeners.add(listener);
  }

  /** Resolves once a client has identified and been sent READY. */
  waitForReady(): Promise<void> {
    if (this.identifies.length > 0 && this.#socket) return Promise.resolve();
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /** Discord's shard of a guild: `(guild_id >> 22) % shards`. */
  shardOf(guildId: string): number {
    return Number((BigInt(guildId) >> 22n) % BigInt(this.#shardCount));
  }

  /** Shards with an identified, open connection. */
  connectedShards(): number[] {
    return [...this.#shardSockets.keys()].sort((a, b) => a - b);
  }

  /** Resolves once every shard in `ids` has identified and is connected. */
  async waitForShards(ids: number[], timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ids.every((id) => this.#shardSockets.has(id))) {
      if (Date.now() > deadline)
        throw new Error(`fake Discord: shards ${ids.join(', ')} not all connected (connected: ${this.connectedShards().join(', ')})`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Sends a gateway dispatch (op 0): to `shardId`'s connection when given; with several shards, to
   * the shard of the payload's `guild_id` (as Discord routes); else to the last connected client.
   */
  dispatch(t: string, d: unknown, shardId?: number): void {
    const guildId = (d as { guild_id?: unknown } | null)?.guild_id;
    const shard = shardId ?? (this.#shardCount > 1 && typeof guildId === 'string' ? this.shardOf(guildId) : undefined);
    const socket = shard === undefined ? this.#socket : this.#shardSockets.get(shard);
    if (!socket) throw new Error(`fake Discord: no gateway client connected${shard === undefined ? '' : ` for shard ${shard}`}`);
    this.#seq += 1;
    socket.send(JSON.stringify({ op: 0, t, s: this.#seq, d }));
  }

  /** Dispatches an INTERACTION_CREATE and remembers its token, so callbacks can be checked like Discord does. */
  sendInteraction(interaction: { id: string; token: string }): void {
    this.#pending.set(interaction.token, interaction.id);
    this.dispatch('INTERACTION_CREATE', interaction);
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #onGateway(socket: WebSocket, req: IncomingMessage): void {
    this.gatewayQueries.push(new URL(req.url ?? '/', 'http://localhost').searchParams);
    this.#socket = socket;
    const send = (payload: unknown): void => socket.send(JSON.stringify(payload));
    send({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null });
    socket.on('message', (raw) => {
      const payload = JSON.parse(raw.toString()) as { op: number; d: any };
      switch (payload.op) {
        case 1: // heartbeat
          send({ op: 11, d: null, s: null, t: null });
          break;
        case 2: {
          // identify
          this.identifies.push(payload.d);
          if (payload.d?.token !== this.token) {
            socket.close(4004, 'Authentication failed.');
            return;
          }
          {
            const shardId = Array.isArray(payload.d.shard) ? Number(payload.d.shard[0]) : 0;
            this.#shardSockets.set(shardId, socket);
            socket.once('close', () => {
              if (this.#shardSockets.get(shardId) === socket) this.#shardSockets.delete(shardId);
            });
          }
          this.#seq += 1;
          send({
            op: 0,
            t: 'READY',
            s: this.#seq,
            d: {
              v: 10,
              user_settings: {},
              user: { ...this.botUser, flags: 0, mfa_enabled: false, verified: true, email: null },
              guilds: [],
              session_id: this.sessionId,
              resume_gateway_url: this.gatewayUrl,
              shard: payload.d.shard ?? [0, 1],
              application: { id: this.applicationId, flags: this.#applicationFlags },
            },
          });
          for (const resolve of this.#readyWaiters.splice(0)) resolve();
          break;
        }
        default:
          break;
      }
    });
  }

  /** The CDN: an attachment's bytes (no token needed: Discord's links are signed instead). */
  #serveFile(path: string, res: ServerResponse): void {
    const file = this.#files.get(decodeURIComponent(path).replace(/[^/]+$/, (n) => encodeURIComponent(n)));
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('This content is no longer available.');
      return;
    }
    const record = { path, bytesSent: 0, complete: false };
    this.downloads.push(record);
    if (file.redirectTo) {
      res.writeHead(302, { location: file.redirectTo }).end();
      return;
    }
    const type = file.contentType ?? 'application/octet-stream';
    if (file.chunkDelayMs === undefined) {
      res.writeHead(200, { 'content-type': type, 'content-length': String(file.data.length) }).end(file.data, () => {
        record.bytesSent = file.data.length;
        record.complete = true;
      });
      return;
    }
    res.writeHead(200, { 'content-type': type });
    let offset = 0;
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      const piece = file.data.subarray(offset, offset + 16_384);
      offset += piece.length;
      record.bytesSent = offset;
      if (offset >= file.data.length) {
        clearInterval(timer);
        record.complete = true;
        res.end(piece);
      } else res.write(piece);
    }, file.chunkDelayMs);
    res.on('close', () => clearInterval(timer));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      this.#serveFile(url.pathname, res);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    // discord.js percent-encodes `@original`; Discord routes on the decoded path.
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      query: url.searchParams,
      headers: req.headers,
      body,
      at: Date.now(),
    };
    this.requests.push(record);

    const answer = (status: number, payload?: unknown, headers: Record<string, string> = {}): void => {
      if (payload === undefined) {
        res.writeHead(status, headers).end();
      } else {
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
      }
      record.response = { status, body: payload };
      // Notified after answering, so a test sees the request once the client has its response.
      for (const listener of this.#listeners) listener(record);
      for (const waiter of this.#waiters.filter((w) => w.predicate(record))) {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        waiter.resolve(record);
      }
    };

    const override = this.#overrides.find((o) => o.method === record.method && o.path.test(path));
    if (override) {
      this.#overrides = this.#overrides.filter((o) => o !== override);
      answer(override.response.status, override.response.body, override.response.headers);
      return;
    }

    for (const route of this.#matchRoutes) {
      const match = route.method === record.method ? route.path.exec(path) : null;
      if (match) {
        const response = route.handler(record, match);
        answer(response.status, response.body, response.headers);
        return;
      }
    }

    const botAuth = req.headers.authorization === `Bot ${this.token}`;
    const unauthorized = (): void => answer(401, { message: '401: Unauthorized', code: 0 });
    const on = (method: string, pattern: RegExp): RegExpExecArray | null => (record.method === method ? pattern.exec(path) : null);
    let m: RegExpExecArray | null;

    if (record.method === 'GET' && path === '/gateway/bot') {
      if (!botAuth) return unauthorized();
      return answer(200, {
        url: this.gatewayUrl,
        shards: this.#shardCount,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: this.#maxConcurrency },
      });
    }
    if (record.method === 'GET' && path === '/applications/@me') {
      if (!botAuth) return unauthorized();
      return answer(200, {
        id: this.applicationId,
        name: 'textdetect',
        icon: null,
        description: '',
        bot_public: true,
        bot_require_code_grant: false,
        flags: this.#applicationFlags,
      });
    }
    m = on('PUT', /^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/);
    if (m) {
      if (!botAuth) return unauthorized();
      if (m[1] !== this.applicationId) return answer(403, { message: 'Missing Access', code: 50001 });
      const guildId = m[2];
      const commands = (body as any[]).map((c) => ({
        id: snowflake(),
        application_id: this.applicationId,
        version: snowflake(),
        type: 1,
        description: '',
        default_member_permissions: null,
        ...(guildId ? { guild_id: guildId } : {}),
        ...c,
      }));
      return answer(200, commands);
    }
    m = on('POST', /^\/interactions\/(\d+)\/([^/]+)\/callback$/);
    if (m) {
      // Discord checks the pair (id, token) and accepts one initial response per interaction.
      if (this.#pending.get(m[2]!) !== m[1]) return answer(404, { message: 'Unknown interaction', code: 10062 });
      if (this.#acknowledged.has(m[2]!)) return answer(400, { message: 'Interaction has already been acknowledged.', code: 40060 });
      this.#acknowledged.add(m[2]!);
      return answer(204);
    }
    m = on('PATCH', /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/);
    if (m) {
      if (m[1] !== this.applicationId || !this.#acknowledged.has(m[2]!)) {
        return answer(404, { message: 'Unknown Webhook', code: 10015 });
      }
      const edit = (body ?? {}) as Record<string, unknown>;
      return answer(
        200,
        messageObject({
          type: 20,
          channel_id: snowflake(),
          author: this.botUser,
          content: edit.content ?? '',
          embeds: edit.embeds ?? [],
          components: edit.components ?? [],
          edited_timestamp: new Date().toISOString(),
          flags: 64,
          application_id: this.applicationId,
          webhook_id: this.applicationId,
        }),
      );
    }
    m = on('POST', /^\/channels\/(\d+)\/messages$/);
    if (m) {
      if (!botAuth) return unauthorized();
      const sent = (body ?? {}) as Record<string, unknown>;
      // Discord's enforce_nonce: the same author's message with the same nonce in the past few
      // minutes is returned, and no new message is created.
      const nonce = typeof sent.nonce === 'string' || typeof sent.nonce === 'number' ? String(sent.nonce) : undefined;
      const earlier = nonce && sent.enforce_nonce === true ? this.#byNonce.get(nonce) : undefined;
      if (earlier && Date.now() - earlier.at < NONCE_WINDOW_MS) return answer(200, earlier.message);
      const message = messageObject({
        channel_id: m[1],
        author: this.botUser,
        content: sent.content ?? '',
        embeds: sent.embeds ?? [],
        components: sent.components ?? [],
        ...(nonce ? { nonce } : {}),
      });
      if (nonce) this.#byNonce.set(nonce, { at: Date.now(), message });
      this.created.push(message);
      return answer(200, message);
    }
    for (const route of this.#routes) if (route(record, answer, botAuth)) return;
    answer(404, { message: '404: Not Found', code: 0 });
  }
}
