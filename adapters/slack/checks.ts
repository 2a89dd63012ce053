/**
 * One check, whatever started it (slash command, message shortcut, button): prepare the text, call
 * /v1/detect, remember the result for the buttons, log it and write the audit line. Listeners only
 * translate Slack payloads into a `CheckRequest` and the outcome back into a reply.
 */
import { randomBytes } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { QueuedCallOptions, QueuedFileOptions } from '../chat/backend.ts';
import type {
  DetectAuthorRequest,
  DetectAuthorResponse,
  DetectFileResponse,
  DetectRequest,
  DetectResponse,
  Mode,
} from '../../src/contract.ts';
import type { ChatStore, ScopeSettings } from '../chat/store/index.ts';
import { describeDetectError, errorCode } from '../chat/errors.ts';
import { countWords, prepareTextForDetection } from '../chat/message-text.ts';
import {
  buildAuditMessage,
  buildErrorMessage,
  buildResultMessage,
  type AuditEntry,
  type CheckSource,
  type SlackMessage,
} from './blocks.ts';
import { auditChannelFor, defaultModeFor, type SlackAppConfig } from './config.ts';
import type { NameResolver } from './message-text.ts';
import type { SlackWatchingApi } from './watch/api.ts';

type WebClient = webApi.WebClient;

/** What the app detects with: the backend's queued detector (a bare DetectClient fits too, without queue notices). */
export interface Detector {
  detect(request: DetectRequest, options?: QueuedCallOptions): Promise<DetectResponse>;
  /** Member checks (`POST /v1/detect/author`); without it the app says member checks are unavailable. */
  detectAuthor?(request: DetectAuthorRequest, options?: QueuedCallOptions): Promise<DetectAuthorResponse>;
  /** Documents (`POST /v1/detect/file`); without it each document is answered as not checkable by this app. */
  detectFile?(data: Uint8Array, options: QueuedFileOptions): Promise<DetectFileResponse>;
}

/** A check the buttons of its reply can come back to. */
export interface CheckRecord {
  checkId: string;
  teamId: string | undefined;
  userId: string;
  /** The prepared text; kept in the state store only while the buttons work, never logged. */
  text: string;
  source: CheckSource;
  channelId: string | undefined;
  permalink: string | undefined;
  messageAuthorId: string | undefined;
  results: Partial<Record<Mode, DetectResponse>>;
}

/**
 * Recent checks by id, in the bots' state store (SQLite, or Redis shared by every instance) for
 * `ttlMs` after their last use: a restart or another instance behind the load balancer still finds
 * them. A click that outlives the record falls back to the text carried in the button.
 */
export class ResultCache {
  constructor(
    private readonly store: ChatStore,
    private readonly ttlMs: number,
  ) {}

  /**
   * A new record, not stored yet: runCheck saves it with its first result. Until then no button can
   * refer to it, so a check that fails keeps no text, and one store write per check is enough.
   */
  create(init: Omit<CheckRecord, 'checkId' | 'results'>): CheckRecord {
    return { ...init, checkId: randomBytes(9).toString('base64url'), results: {} };
  }

  /** Keyed under the workspace, so that an uninstall can delete the workspace's records (oauth.ts). */
  async save(record: CheckRecord): Promise<void> {
    await this.store.saveCheck(checkKey(record.checkId, record.teamId), record, this.ttlMs);
  }

  async get(checkId: string, teamId?: string): Promise<CheckRecord | undefined> {
    let value = (await this.store.loadCheck(checkKey(checkId, teamId), this.ttlMs)) as CheckRecord | undefined;
    // Records stored before they were keyed by workspace, while their buttons still work.
    if (value === undefined && teamId !== undefined)
      value = (await this.store.loadCheck(checkKey(checkId, undefined), this.ttlMs)) as CheckRecord | undefined;
    return value && typeof value.text === 'string' && typeof value.checkId === 'string' ? value : undefined;
  }
}

/** A check record's id in the state store: `slack:check:<team>:<check>` (`checkPrefixForScope` in oauth.ts matches it). */
function checkKey(checkId: string, teamId: string | undefined): string {
  return teamId ? `slack:check:${teamId}:${checkId}` : `slack:check:${checkId}`;
}

/** Where a workspace's settings live in the state store: read by every check, written by /detect-settings. */
export function teamScope(teamId: string): string {
  return `slack:${teamId}`;
}

/** A workspace's `/detect-settings`; empty when the store cannot answer (the environment's defaults apply). */
export async function teamSettings(ctx: SlackAppContext, teamId: string | undefined): Promise<ScopeSettings> {
  if (!teamId) return {};
  try {
    return await ctx.state.getSettings(teamScope(teamId));
  } catch (err) {
    ctx.logger.warn({ team: teamId, err: (err as Error).message }, 'could not read the workspace settings; using the defaults');
    return {};
  }
}

/** The mode of a check that names none: the workspace's setting, else the environment's. */
export async function teamDefaultMode(ctx: SlackAppContext, teamId: string | undefined): Promise<Mode> {
  return (await teamSettings(ctx, teamId)).defaultMode ?? defaultModeFor(ctx.config, teamId);
}

export type NameCache = Map<string, { name: string | undefined; until: number }>;

export interface SlackAppContext {
  config: SlackAppConfig;
  detector: Detector;
  logger: Logger;
  results: ResultCache;
  /** The state store behind `results`, settings and retry de-duplication. */
  state: ChatStore;
  /** Display names of users and channels, shared by every listener (see createNameResolver). */
  names: NameCache;
  /** Watched channels and review cards (adapters/slack/watch/); set when the app runs with watching. */
  watch?: SlackWatchingApi | undefined;
}

export interface CheckRequest {
  kind: AuditEntry['kind'];
  teamId: string | undefined;
  userId: string;
  channelId: string | undefined;
  mode: Mode;
  /** Slack client with the bot token, for the audit line. */
  client: WebClient;
  /** A record to add this mode's result to (re-check, details), or the raw text of a new check. */
  record?: CheckRecord | undefined;
  rawText?: string | undefined;
  source?: CheckSource | undefined;
  permalink?: string | undefined;
  messageAuthorId?: string | undefined;
  /** Told the check's queue position while it waits (the listener shows it to the moderator). */
  onQueued?: ((position: number) => unknown) | undefined;
}

export type CheckOutcome =
  | { ok: true; record: CheckRecord; result: DetectResponse }
  | { ok: false; message: string; code: string; requestId: string | undefined };

/** The moderator's reply to a check: the result, or the sentence that says what went wrong. */
export function outcomeMessage(outcome: CheckOutcome, recheckedFrom?: Mode): SlackMessage {
  if (!outcome.ok) return buildErrorMessage(outcome.message);
  const { record, result } = outcome;
  return buildResultMessage({ result, checkId: record.checkId, source: record.source, text: record.text, recheckedFrom });
}

/** Runs one check and never throws: failures come back as a sentence for the moderator. */
export async function runCheck(ctx: SlackAppContext, req: CheckRequest): Promise<CheckOutcome> {
  const started = performance.now();
  const log = ctx.logger.child({ kind: req.kind, team: req.teamId, user: req.userId, mode: req.mode });
  let record = req.record;
  let words: number | undefined;
  try {
    if (!record) {
      const text = prepareTextForDetection(req.rawText ?? '', ctx.config.maxTextChars, {
        subject: req.source?.kind === 'message' ? 'message' : 'text',
        leftOut: req.source?.excluded,
      });
      words = countWords(text);
      record = ctx.results.create({
        teamId: req.teamId,
        userId: req.userId,
        text,
        source: req.source ?? { kind: 'text', words },
        channelId: req.channelId,
        permalink: req.permalink,
        messageAuthorId: req.messageAuthorId,
      });
    }
    let queueWaitMs: number | undefined;
    const result = await ctx.detector.detect(
      { text: record.text, mode: req.mode, segments: true },
      {
        onQueued: req.onQueued,
        onStart: (waitedMs) => {
          queueWaitMs = waitedMs;
        },
      },
    );
    record.results[req.mode] = result;
    try {
      await ctx.results.save(record);
    } catch (err) {
      // The answer matters more than its buttons; a button later says the result expired.
      log.warn({ err: (err as Error).message }, 'could not store the result for its buttons');
    }
    log.info(
      {
        request_id: result.request_id,
        verdict: result.verdict,
        confidence: result.confidence,
        chars: record.text.length,
        queue_wait_ms: queueWaitMs,
        duration_ms: Math.round(performance.now() - started),
      },
      'check done',
    );
    await audit(ctx, req, { record, result, words });
    return { ok: true, record, result };
  } catch (err) {
    const code = errorCode(err);
    const requestId = (err as { requestId?: unknown }).requestId;
    const rid = typeof requestId === 'string' ? requestId : undefined;
    // Only name, code and status: an error's message could quote the text back.
    log.warn(
      {
        err_name: (err as Error)?.name,
        code,
        status: (err as { status?: unknown }).status,
        request_id: rid,
        duration_ms: Math.round(performance.now() - started),
      },
      'check failed',
    );
    await audit(ctx, req, { record, errorCode: code, requestId: rid, words });
    return { ok: false, message: describeDetectError(err), code, requestId: rid };
  }
}

async function audit(
  ctx: SlackAppContext,
  req: CheckRequest,
  info: {
    record?: CheckRecord | undefined;
    result?: DetectResponse;
    errorCode?: string;
    requestId?: string | undefined;
    words?: number | undefined;
  },
): Promise<void> {
  const channel = (await teamSettings(ctx, req.teamId)).auditChannelId ?? auditChannelFor(ctx.config, req.teamId);
  if (!channel) return;
  const record = info.record;
  const authorId = record?.messageAuthorId ?? req.messageAuthorId;
  const resolver = createNameResolver(req.client, ctx.names);
  const [userName, messageAuthorName] = await Promise.all([resolver.user?.(req.userId), authorId ? resolver.user?.(authorId) : undefined]);
  const message = buildAuditMessage({
    userId: req.userId,
    userName,
    messageAuthorName,
    channelId: record?.channelId ?? req.channelId,
    permalink: record?.permalink ?? req.permalink,
    messageAuthorId: authorId,
    kind: req.kind,
    mode: req.mode,
    result: info.result,
    errorCode: info.errorCode,
    requestId: info.requestId,
    words: info.words ?? (record ? countWords(record.text) : undefined),
  });
  try {
    await req.client.chat.postMessage({ channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false });
  } catch (err) {
    ctx.logger.warn({ channel, slack_error: slackErrorCode(err) }, 'audit post failed (is the bot a member of the audit channel?)');
  }
}

/** Slack's `error` string (e.g. `not_in_channel`) from a Web API failure, or the error's code. */
export function slackErrorCode(err: unknown): string {
  const e = err as { data?: { error?: unknown }; code?: unknown };
  if (typeof e?.data?.error === 'string') return e.data.error;
  if (typeof e?.code === 'string') return e.code;
  return 'unknown';
}

/**
 * Names for mentions through users.info / conversations.info, cached for an hour: a message that
 * mentions ten people should not cost ten calls twice. Failures (missing scope, deleted user) give
 * undefined and the renderer writes a neutral word.
 */
export function createNameResolver(client: WebClient, cache: NameCache): NameResolver {
  const cached = async (key: string, load: () => Promise<string | undefined>): Promise<string | undefined> => {
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.name;
    let name: string | undefined;
    try {
      name = await load();
    } catch {
      name = undefined;
    }
    if (cache.size > 5_000) cache.clear();
    cache.set(key, { name, until: Date.now() + 3_600_000 });
    return name;
  };
  return {
    user: (id) =>
      cached(`u:${id}`, async () => {
        const res = await client.users.info({ user: id });
        const u = res.user;
        return u?.profile?.display_name || u?.profile?.real_name || u?.real_name || u?.name || undefined;
      }),
    channel: (id) =>
      cached(`c:${id}`, async () => {
        const res = await client.conversations.info({ channel: id });
        return res.channel?.name || undefined;
      }),
  };
}
