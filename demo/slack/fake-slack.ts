/**
 * A stand-in for Slack on loopback, speaking Slack's wire protocol: the Web API (`POST /api/<method>`,
 * form-encoded with JSON-encoded object fields, bearer token, `{ ok, error }` answers with HTTP 200),
 * `response_url` endpoints (`POST /response/<id>`, JSON body), and request signing of what Slack
 * sends to an app (slash commands and interactivity payloads, `v0` HMAC-SHA256 signatures).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WAIT_MS } from '../wait.ts';
import type { FakeSlackHistory } from './fake-history.ts';

export interface RecordedCall {
  /** Web API method (`chat.postEphemeral`) or `response_url` for posts to a response URL. */
  method: string;
  /** Parsed arguments; object-valued fields (blocks, view, attachments) already JSON-decoded. */
  args: Record<string, unknown>;
  token: string | undefined;
  /** For response_url posts: the id in the URL. */
  responseId?: string;
  at: number;
  /** What the fake answered (set once it has): the Web API's JSON, or `ok` for a response_url. */
  response?: unknown;
}

export interface FakeSlackOptions {
  botToken: string;
  teamId?: string;
  /** Channels the bot is not a member of: chat.postEphemeral/postMessage answer `channel_not_found`. */
  channelsWithoutBot?: string[];
  users?: Record<string, string>;
  channels?: Record<string, string>;
  /** WebSocket URL that apps.connections.open hands out (Socket Mode). */
  socketUrl?: string;
  /** Users users.info reports as workspace admins (`is_admin: true`). */
  admins?: string[];
  /** User groups (subteam id → member ids) for usergroups.users.list. */
  usergroups?: Record<string, string[]>;
  /** Users users.info reports as bots (`is_bot: true`). */
  bots?: string[];
  /** The token's scopes, sent as `x-oauth-scopes` on every Web API answer (as Slack does). */
  scopes?: string[];
  /**
   * More Web API methods (tests, and helpers in other files such as fake-history.ts): method → answer,
   * checked before the fake's own.
   */
  methods?: Record<string, (args: Record<string, unknown>) => Record<string, unknown>>;
  /** OAuth: `oauth.v2.access` exchanges these codes for installations, with token rotation (see `FakeOAuthInstall`). */
  oauth?: FakeOAuthOptions;
  /**
   * Channel histories (fake-history.ts, whose `methods` answer conversations.history): what the app
   * posts with chat.postMessage in one of its channels is kept there too, as Slack shows it.
   */
  history?: FakeSlackHistory;
}

/** One installation the fake hands out for an OAuth code: a workspace, or a whole organisation. */
export interface FakeOAuthInstall {
  /** Workspace id; unset for an organisation-wide (Enterprise Grid) install. */
  teamId?: string;
  teamName?: string;
  enterpriseId?: string;
  enterpriseName?: string;
  /** Who clicked "Allow". */
  userId: string;
  /** Lifetime of the access token the install hands out, in seconds (short to test expiry); refreshed ones get Slack's 43,200. */
  expiresInSec?: number;
}

export interface FakeOAuthOptions {
  clientId: string;
  clientSecret: string;
  appId?: string;
  /** OAuth code → installation. */
  codes: Record<string, FakeOAuthInstall>;
}

/** An access token the fake issued through OAuth or a refresh. */
interface IssuedToken {
  install: FakeOAuthInstall;
  expiresAt: number;
  revoked: boolean;
  /** The refresh token this pair was obtained with (undefined: the OAuth code). */
  from: string | undefined;
  refreshToken: string;
}

const JSON_FIELDS = new Set(['blocks', 'attachments', 'view', 'metadata']);

/** The scope each method needs (Slack's method reference), for fakes started with `scopes`. */
const METHOD_SCOPES: Record<string, string> = {
  'users.info': 'users:read',
  'conversations.info': 'channels:read',
  'usergroups.users.list': 'usergroups:read',
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A shared file as Slack's Web API and message payloads describe it (the file object). */
export interface SlackFileObject {
  id: string;
  created: number;
  timestamp: number;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  pretty_type: string;
  user: string;
  user_team: string;
  editable: boolean;
  size: number;
  mode: string;
  is_external: boolean;
  external_type: string;
  is_public: boolean;
  public_url_shared: boolean;
  display_as_bot: boolean;
  username: string;
  url_private: string;
  url_private_download: string;
  permalink: string;
  permalink_public: string;
  has_rich_preview: boolean;
  file_access: string;
}

export class FakeSlack {
  readonly calls: RecordedCall[] = [];
  private lastPostMicros = 0;
  private readonly listeners = new Set<(call: RecordedCall) => void>();
  /** Shared files' bytes, served under `/files-pri/…` (Slack's file host), by path. */
  private readonly files = new Map<
    string,
    {
      data: Buffer;
      mimetype: string;
      object: SlackFileObject;
      hold?: Promise<unknown> | undefined;
      serveAs?: { html: true } | { redirectTo: string } | undefined;
    }
  >();
  /** Every request for a shared file's bytes, with the Authorization header it carried. */
  readonly fileDownloads: { path: string; authorization: string | undefined; served: boolean }[] = [];
  private fileSeq = 0;
  private server: Server | undefined;
  private port = 0;
  private viewSeq = 0;
  private waiters: { predicate: (c: RecordedCall) => boolean; resolve: (c: RecordedCall) => void }[] = [];
  /** Access tokens issued through OAuth and refreshes, by token. */
  private readonly issued = new Map<string, IssuedToken>();
  private tokenSeq = 0;
  /** Every `oauth.v2.access` with `grant_type=refresh_token` answered ok. */
  refreshes = 0;

  constructor(private readonly options: FakeSlackOptions) {}

  /** True while `token` works: the bot token, or an issued token not expired, not revoked, not superseded. */
  isTokenValid(token: string | undefined): boolean {
    if (token === undefined) return false;
    if (token === this.options.botToken) return true;
    const t = this.issued.get(token);
    return t !== undefined && !t.revoked && t.expiresAt > Date.now();
  }

  /** The valid issued tokens of a workspace or organisation (what an uninstall revokes). */
  tokensOf(id: string): string[] {
    return [...this.issued]
      .filter(([token, t]) => (t.install.teamId ?? t.install.enterpriseId) === id && this.isTokenValid(token))
      .map(([token]) => token);
  }

  /** Every access and refresh token the fake ever issued, valid or not. */
  issuedSecrets(): string[] {
    return [...this.issued].flatMap(([token, t]) => [token, t.refreshToken]);
  }

  /** What Slack does on an uninstall: every token of the workspace or organisation stops working. */
  revokeAll(id: string): void {
    for (const t of this.issued.values()) if ((t.install.teamId ?? t.install.enterpriseId) === id) t.revoked = true;
  }

  private issue(install: FakeOAuthInstall, from: string | undefined): { token: string; issued: IssuedToken; lifetimeSec: number } {
    const lifetimeSec = from === undefined ? (install.expiresInSec ?? 43_200) : 43_200;
    const n = ++this.tokenSeq;
    const id = install.teamId ?? install.enterpriseId ?? 'X';
    const token = `xoxe.xoxb-1-${id}-${n}-${randomBytes(6).toString('hex')}`;
    const issued: IssuedToken = {
      install,
      expiresAt: Date.now() + lifetimeSec * 1000,
      revoked: false,
      from,
      refreshToken: `xoxe-1-${id}-${n}-${randomBytes(6).toString('hex')}`,
    };
    this.issued.set(token, issued);
    return { token, issued, lifetimeSec };
  }

  /**
   * oauth.v2.access (a code, or `grant_type=refresh_token`). A refresh token can be exchanged more
   * than once, as Slack does, but each exchange revokes the pair an earlier exchange of the same
   * refresh token gave: of two concurrent refreshes, one stored pair is dead.
   */
  private oauthAccess(args: Record<string, unknown>, basic: string | undefined): Record<string, unknown> {
    const oauth = this.options.oauth;
    if (!oauth) return { ok: false, error: 'invalid_client_id' };
    const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
    if ((args.client_id ?? basicId) !== oauth.clientId) return { ok: false, error: 'invalid_client_id' };
    if ((args.client_secret ?? basicSecret) !== oauth.clientSecret) return { ok: false, error: 'bad_client_secret' };
    let install: FakeOAuthInstall | undefined;
    let from: string | undefined;
    if (args.grant_type === 'refresh_token') {
      from = String(args.refresh_token);
      const owner = [...this.issued.values()].find((t) => t.refreshToken === from);
      if (!owner || owner.revoked) return { ok: false, error: 'invalid_refresh_token' };
      for (const t of this.issued.values()) if (t.from === from) t.revoked = true;
      install = owner.install;
      this.refreshes += 1;
    } else {
      install = oauth.codes[String(args.code)];
      if (!install) return { ok: false, error: 'invalid_code' };
    }
    const { token, issued, lifetimeSec } = this.issue(install, from);
    const org = install.teamId === undefined;
    const common = {
      ok: true,
      access_token: token,
      token_type: 'bot',
      refresh_token: issued.refreshToken,
      expires_in: lifetimeSec,
    };
    if (from !== undefined)
      return {
        ...common,
        team: install.teamId ? { id: install.teamId } : null,
        enterprise: install.enterpriseId ? { id: install.enterpriseId } : null,
      };
    return {
      ...common,
      scope: 'commands,chat:write,users:read,channels:read,groups:read,usergroups:read',
      bot_user_id: `U0BOT${install.teamId ?? install.enterpriseId}`,
      app_id: oauth.appId ?? 'A0FAKEAPP',
      team: org ? null : { id: install.teamId, name: install.teamName ?? install.teamId },
      enterprise: install.enterpriseId ? { id: install.enterpriseId, name: install.enterpriseName ?? install.enterpriseId } : null,
      is_enterprise_install: org,
      authed_user: { id: install.userId },
    };
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /** The fake's file host (Slack's is https://files.slack.com): the app must be given it as an allowed file origin. */
  get filesOrigin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** True when the bot token may read files: the scopes the fake reports include `files:read` (or none are set). */
  private mayReadFiles(): boolean {
    return this.options.scopes === undefined || this.options.scopes.includes('files:read');
  }

  /**
   * Shares `data` as a file by `user` and returns Slack's file object for a message's `files`. Its
   * `url_private` and `url_private_download` are served only with a valid bot token that has
   * `files:read`; otherwise, as Slack does, with its sign-in page (HTTP 200, HTML).
   */
  shareFile(
    name: string,
    data: Buffer,
    options: {
      mimetype: string;
      filetype: string;
      user?: string;
      size?: number;
      /** The bytes are sent once this settles: a slow file host, without any clock in the test. */
      hold?: Promise<unknown>;
      /** Served to any token as a web page (`html`) or a `302` to this address, instead of the bytes. */
      serveAs?: { html: true } | { redirectTo: string };
    },
  ): SlackFileObject {
    const id = `F0${String(++this.fileSeq).padStart(8, '0')}`;
    const base = `/files-pri/${this.teamId}-${id}`;
    const encoded = encodeURIComponent(name);
    const now = Math.floor(Date.now() / 1000);
    const object: SlackFileObject = {
      id,
      created: now,
      timestamp: now,
      name,
      title: name,
      mimetype: options.mimetype,
      filetype: options.filetype,
      pretty_type: options.filetype.toUpperCase(),
      user: options.user ?? 'U0AUTHOR',
      user_team: this.teamId,
      editable: false,
      size: options.size ?? data.length,
      mode: 'hosted',
      is_external: false,
      external_type: '',
      is_public: true,
      public_url_shared: false,
      display_as_bot: false,
      username: '',
      url_private: `${this.filesOrigin}${base}/${encoded}`,
      url_private_download: `${this.filesOrigin}${base}/download/${encoded}`,
      permalink: `https://test.slack.com/files/${options.user ?? 'U0AUTHOR'}/${id}/${encoded}`,
      permalink_public: `https://slack-files.com/${this.teamId}-${id}-0123456789`,
      has_rich_preview: false,
      file_access: 'visible',
    };
    const entry = { data, mimetype: options.mimetype, object, hold: options.hold, serveAs: options.serveAs };
    this.files.set(`${base}/${encoded}`, entry);
    this.files.set(`${base}/download/${encoded}`, entry);
    return object;
  }

  private async serveFile(path: string, authorization: string | undefined, res: ServerResponse): Promise<void> {
    const file = this.files.get(path);
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    const allowed = file !== undefined && this.isTokenValid(token) && this.mayReadFiles();
    this.fileDownloads.push({ path, authorization, served: allowed });
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('file_not_found');
      return;
    }
    if (!allowed) {
      // What Slack answers a file address without a token that may read it: its sign-in page.
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>');
      return;
    }
    await file.hold;
    if (file.serveAs && 'redirectTo' in file.serveAs) {
      res.writeHead(302, { location: file.serveAs.redirectTo }).end();
      return;
    }
    if (file.serveAs) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html><body>Not available</body></html>');
      return;
    }
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(file.data.length) }).end(file.data);
  }

  get teamId(): string {
    return this.options.teamId ?? 'T0TEST';
  }

  /** A fresh response_url, as Slack puts in every command and interaction payload. */
  responseUrl(): string {
    return `http://127.0.0.1:${this.port}/response/${randomBytes(6).toString('hex')}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Resolves with the first call (already made or future) matching `predicate`. */
  waitFor(predicate: (c: RecordedCall) => boolean, timeoutMs = WAIT_MS): Promise<RecordedCall> {
    const existing = this.calls.find(predicate);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(
          new Error(`fake Slack: no matching call within ${timeoutMs} ms; calls so far: ${this.calls.map((c) => c.method).join(', ')}`),
        );
      }, timeoutMs);
      const done = (c: RecordedCall): void => {
        clearTimeout(timer);
        resolve(c);
      };
      this.waiters.push({ predicate, resolve: done });
    });
  }

  /** Calls `listener` with every call once it has been answered (the demo's page draws from them). */
  onCall(listener: (call: RecordedCall) => void): void {
    this.listeners.add(listener);
  }

  private answered(call: RecordedCall, response: unknown): void {
    call.response = response;
    for (const listener of this.listeners) listener(call);
  }

  private record(call: RecordedCall): void {
    this.calls.push(call);
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(call)) {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        waiter.resolve(call);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname.startsWith('/files-pri/')) {
      await this.serveFile(url.pathname, req.headers.authorization, res);
      return;
    }
    const raw = await readBody(req);
    const reply = (status: number, body: unknown, type = 'application/json'): void => {
      res.writeHead(status, { 'content-type': type, ...(this.options.scopes ? { 'x-oauth-scopes': this.options.scopes.join(',') } : {}) });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };

    const response = /^\/response\/([0-9a-f]+)$/.exec(url.pathname);
    if (response && req.method === 'POST') {
      // Slack's response_url takes JSON and answers a plain `ok`.
      const call: RecordedCall = {
        method: 'response_url',
        args: JSON.parse(raw) as Record<string, unknown>,
        token: undefined,
        responseId: response[1],
        at: Date.now(),
      };
      this.record(call);
      reply(200, 'ok', 'text/plain');
      this.answered(call, 'ok');
      return;
    }

    const api = /^\/api\/([a-zA-Z0-9.]+)$/.exec(url.pathname);
    if (!api || req.method !== 'POST') {
      reply(404, { ok: false, error: 'unknown_method' });
      return;
    }
    const method = api[1] ?? '';
    const args: Record<string, unknown> = {};
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.includes('application/json')) {
      Object.assign(args, JSON.parse(raw || '{}'));
    } else {
      for (const [key, value] of new URLSearchParams(raw)) {
        args[key] = JSON_FIELDS.has(key) ? JSON.parse(value) : value;
      }
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : typeof args.token === 'string' ? args.token : undefined;
    const call: RecordedCall = { method, args, token, at: Date.now() };
    this.record(call);

    if (method === 'oauth.v2.access') {
      reply(200, this.oauthAccess(args, auth?.startsWith('Basic ') ? auth.slice(6) : undefined));
      return;
    }
    const issued = token === undefined ? undefined : this.issued.get(token);
    if (issued && !this.isTokenValid(token)) {
      reply(200, { ok: false, error: issued.revoked ? 'token_revoked' : 'token_expired' });
      return;
    }
    if (!this.isTokenValid(token) && !(method === 'apps.connections.open' && token?.startsWith('xapp-'))) {
      reply(200, { ok: false, error: 'invalid_auth' });
      return;
    }
    if (issued && method === 'auth.test') {
      const { install } = issued;
      reply(200, {
        ok: true,
        url: install.teamId
          ? `https://${install.teamId.toLowerCase()}.slack.com/`
          : `https://${String(install.enterpriseId).toLowerCase()}.enterprise.slack.com/`,
        team: install.teamName ?? install.teamId ?? install.enterpriseName,
        user: 'textdetect',
        team_id: install.teamId ?? install.enterpriseId,
        enterprise_id: install.enterpriseId,
        user_id: `U0BOT${install.teamId ?? install.enterpriseId}`,
        bot_id: `B0BOT${install.teamId ?? install.enterpriseId}`,
        is_enterprise_install: install.teamId === undefined,
      });
      return;
    }
    const answer = this.answer(method, args);
    reply(200, answer);
    this.answered(call, answer);
  }

  private answer(method: string, args: Record<string, unknown>): Record<string, unknown> {
    // As Slack does: a method the token's scopes do not cover answers `missing_scope`, naming the scope.
    const needed = METHOD_SCOPES[method];
    if (needed && this.options.scopes && !this.options.scopes.includes(needed)) {
      return { ok: false, error: 'missing_scope', needed, provided: this.options.scopes.join(',') };
    }
    const own = this.options.methods?.[method];
    if (own) return own(args);
    const notIn = new Set(this.options.channelsWithoutBot ?? []);
    switch (method) {
      case 'apps.connections.open':
        return this.options.socketUrl ? { ok: true, url: this.options.socketUrl } : { ok: false, error: 'not_allowed_token_type' };
      case 'auth.test':
        return {
          ok: true,
          url: 'https://test.slack.com/',
          team: 'Test',
          user: 'textdetect',
          team_id: this.teamId,
          user_id: 'U0BOT',
          bot_id: 'B0BOT',
          is_enterprise_install: false,
        };
      case 'chat.postEphemeral':
        if (notIn.has(String(args.channel))) return { ok: false, error: 'channel_not_found' };
        return { ok: true, message_ts: `${Math.floor(Date.now() / 1000)}.000100` };
      case 'chat.postMessage': {
        if (notIn.has(String(args.channel))) return { ok: false, error: 'not_in_channel' };
        // The time in seconds with six decimals, unique and increasing, as Slack's are.
        this.lastPostMicros = Math.max(this.lastPostMicros + 1, Date.now() * 1000);
        const ts = `${Math.floor(this.lastPostMicros / 1_000_000)}.${String(this.lastPostMicros % 1_000_000).padStart(6, '0')}`;
        const message: Record<string, unknown> = { type: 'message', user: 'U0BOT', bot_id: 'B0BOT', app_id: 'A0TEST', text: args.text, ts };
        if (args.blocks) message.blocks = args.blocks;
        if (args.metadata) message.metadata = args.metadata;
        this.options.history?.appPost(String(args.channel), message);
        const { metadata: _metadata, ...shown } = message;
        return { ok: true, channel: args.channel, ts, message: shown };
      }
      case 'chat.getPermalink':
        return {
          ok: true,
          channel: args.channel,
          permalink: `https://test.slack.com/archives/${String(args.channel)}/p${String(args.message_ts).replace('.', '')}`,
        };
      case 'views.open':
      case 'views.update': {
        // Slack opens a window only for a trigger it issued (digits.digits.hex, as triggerId() makes).
        if (method === 'views.open' && !/^\d+\.\d+\.[0-9a-f]+$/.test(String(args.trigger_id ?? '')))
          return { ok: false, error: 'invalid_trigger_id' };
        const id = method === 'views.open' ? `V${++this.viewSeq}` : String(args.view_id);
        return { ok: true, view: { id, hash: `h${Date.now()}`, ...(args.view as object) } };
      }
      case 'users.info': {
        const name = this.options.users?.[String(args.user)];
        const isAdmin = this.options.admins?.includes(String(args.user)) ?? false;
        const isBot = this.options.bots?.includes(String(args.user)) ?? false;
        return name
          ? {
              ok: true,
              user: {
                id: args.user,
                name: name.toLowerCase(),
                is_admin: isAdmin,
                is_owner: false,
                is_bot: isBot,
                profile: { display_name: name },
              },
            }
          : { ok: false, error: 'user_not_found' };
      }
      case 'conversations.info': {
        const name = this.options.channels?.[String(args.channel)];
        return name ? { ok: true, channel: { id: args.channel, name } } : { ok: false, error: 'channel_not_found' };
      }
      case 'files.info': {
        if (!this.mayReadFiles())
          return { ok: false, error: 'missing_scope', needed: 'files:read', provided: this.options.scopes?.join(',') };
        const found = [...this.files.values()].find((f) => f.object.id === args.file);
        return found ? { ok: true, file: found.object } : { ok: false, error: 'file_not_found' };
      }
      case 'usergroups.users.list': {
        const members = this.options.usergroups?.[String(args.usergroup)];
        return members ? { ok: true, users: members } : { ok: false, error: 'no_such_subteam' };
      }
      default: {
        const extra = this.options.methods?.[method];
        return extra ? extra(args) : { ok: false, error: 'unknown_method' };
      }
    }
  }
}

/** Headers Slack adds to every request it sends an app: timestamp and `v0=` HMAC-SHA256 of `v0:ts:body`. */
export function signSlackRequest(
  signingSecret: string,
  body: string,
  timestampSec = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const signature = createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${body}`).digest('hex');
  return {
    'x-slack-request-timestamp': String(timestampSec),
    'x-slack-signature': `v0=${signature}`,
  };
}

export function triggerId(): string {
  return `${Date.now()}.${Math.floor(Math.random() * 1e9)}.${randomBytes(8).toString('hex')}`;
}
