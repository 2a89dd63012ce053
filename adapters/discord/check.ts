/**
 * One check, whatever started it (/detect, the message menu, a re-check button): acknowledge the
 * interaction at once, call the detection service, then edit the deferred reply with the verdict or
 * with a sentence the moderator can act on.
 */
import { randomUUID } from 'node:crypto';
import { MessageFlags, type APIEmbed, type RepliableInteraction } from 'discord.js';
import type { Logger } from 'pino';
import { ConnectionError, RateLimitError, ServerError, TimeoutError } from '../../src/client/errors.ts';
import type { DetectFileOptions } from '../../src/client/index.ts';
import type {
  DetectAuthorRequest,
  DetectAuthorResponse,
  DetectFileResponse,
  DetectRequest,
  DetectResponse,
  Language,
  Mode,
} from '../../src/contract.ts';
import { describeDetectError, errorCode } from '../chat/errors.ts';
import { type ExcludedCounts, queuedNotice, summarizeResult } from '../chat/format.ts';
import { prepareTextForDetection } from '../chat/message-text.ts';
import type { ChatStore, ScopeSettings } from '../chat/store/index.ts';
import type { DiscordBotSettings } from './config.ts';
import { describeDiscordError } from './discord-errors.ts';
import type { ModLog, ModLogEntry } from './modlog.ts';
import { type CheckSource, newRecheckKey, type RecheckStore } from './recheck-store.ts';
import { fitEmbeds } from './file-reply.ts';
import { problemEmbed, recheckButtons, resultEmbed } from './reply.ts';
import { memberCheckRows } from './author-reply.ts';
import type { DiscordWatchingApi } from './watch/api.ts';

/** The part of the detection client the bot uses (`DetectClient` from src/client fits it). */
export interface DetectionApi {
  detect(
    request: DetectRequest,
    options?: {
      requestId?: string;
      signal?: AbortSignal;
      /** Called while the check waits in the bots' queue (see adapters/chat/queue.ts). */
      onQueued?: (position: number) => unknown;
      /** Called each time the check goes to the service; a detector without a queue never calls it. */
      onCall?: () => void;
      /** Called when a 429 pause holds the check back in the queue. */
      onPause?: (ms: number) => void;
      onStart?: (waitedMs: number) => void;
    },
  ): Promise<DetectResponse>;
  /** Member checks (`POST /v1/detect/author`); without it the bot says member checks are unavailable. */
  detectAuthor?(request: DetectAuthorRequest, options?: Parameters<DetectionApi['detect']>[1]): Promise<DetectAuthorResponse>;
  /** Documents (`POST /v1/detect/file`); without it each document is answered as not checkable by this bot. */
  detectFile?(data: Uint8Array, options: DetectFileOptions & { background?: boolean | undefined }): Promise<DetectFileResponse>;
}

/** Everything a handler needs, built once by the bot. */
export interface BotContext {
  detect: DetectionApi;
  settings: DiscordBotSettings;
  store: RecheckStore;
  /** Re-check texts and per-server settings; SQLite or Redis (adapters/chat/store/). */
  state: ChatStore;
  logger: Logger;
  modLog: ModLog;
  /** Aborted when the bot shuts down, so pending calls end instead of holding the process open. */
  signal: AbortSignal;
  /** Watched channels and review cards (adapters/discord/watch/); set by the bot. */
  watch?: DiscordWatchingApi | undefined;
}

/** Where a server's settings live in the state store: read by every check, written by /detect-settings. */
export function guildScope(guildId: string): string {
  return `discord:${guildId}`;
}

/** A server's `/detect-settings`; empty in DMs, and when the store cannot answer (defaults apply then). */
export async function guildSettings(ctx: BotContext, guildId: string | null | undefined): Promise<ScopeSettings> {
  if (!guildId) return {};
  try {
    return await ctx.state.getSettings(guildScope(guildId));
  } catch (err) {
    ctx.logger.warn({ guildId, err: (err as Error).message }, 'could not read the server settings; using the defaults');
    return {};
  }
}

/** Log fields that identify an interaction without its token or any text. */
export function interactionFields(interaction: RepliableInteraction): Record<string, unknown> {
  return {
    interactionId: interaction.id,
    userId: interaction.user.id,
    guildId: interaction.guildId ?? undefined,
    channelId: interaction.channelId ?? undefined,
  };
}

/**
 * Acknowledges within Discord's 3-second window, before any slow work. False when Discord no longer
 * accepts it (expired or answered elsewhere): then nothing else can be sent for this interaction.
 */
export async function deferAnswer(ctx: BotContext, interaction: RepliableInteraction): Promise<boolean> {
  try {
    await interaction.deferReply(ctx.settings.ephemeral ? { flags: MessageFlags.Ephemeral } : {});
    return true;
  } catch (err) {
    ctx.logger.warn(
      { ...interactionFields(interaction), err: describeDiscordError(err) },
      'could not acknowledge the interaction (older than 3 s, or already answered)',
    );
    return false;
  }
}

/** Replaces the "thinking…" placeholder; failures (token expired after 15 min) can only be logged. */
export async function editAnswer(
  ctx: BotContext,
  interaction: RepliableInteraction,
  payload: Parameters<RepliableInteraction['editReply']>[0],
): Promise<void> {
  try {
    await interaction.editReply(payload);
  } catch (err) {
    ctx.logger.error({ ...interactionFields(interaction), err: describeDiscordError(err) }, 'could not edit the deferred reply');
  }
}

/** Answers a deferred interaction with a problem that needs no call to the service. */
export async function answerProblem(
  ctx: BotContext,
  interaction: RepliableInteraction,
  sentence: string,
  code: string,
  title?: string,
): Promise<void> {
  ctx.logger.info({ ...interactionFields(interaction), code }, 'check not run');
  await editAnswer(ctx, interaction, { embeds: [problemEmbed(sentence, title)], components: [] });
}

export interface CheckRequest {
  text: string;
  mode: Mode;
  language: Language | undefined;
  segments: boolean;
  source: CheckSource;
  /** Key of the remembered text when this is a re-check; a new one is made otherwise. */
  key?: string | undefined;
  /** What started the check, for logs: `detect`, `message`, `recheck`. */
  trigger: string;
  /** What the markup renderer left out of the score, noted in the reply. */
  excluded?: ExcludedCounts | undefined;
  /** The message's documents, checked meanwhile (file-check.ts): their embeds go under the text's answer. */
  fileEmbeds?: Promise<APIEmbed[]> | undefined;
}

/** Failures where the same request may succeed later, so the reply offers "Try again". */
export function isTransient(err: unknown): boolean {
  return err instanceof RateLimitError || err instanceof ServerError || err instanceof TimeoutError || err instanceof ConnectionError;
}

/** What a moderator reads when Discord's time to answer ran out while the check still waited its turn. */
export function stillQueuedSentence(position: number | undefined): string {
  const where = position === undefined ? 'in the bot’s queue' : `in the bot’s queue (position ${position})`;
  return `This check was still waiting ${where} when Discord’s time to answer ran out, so nothing was sent to the detection service. Other checks are using up the service’s rate limit: try again in a few minutes.`;
}

/**
 * The two waits of a check, each with its own bound. Waiting in the bots' queue (announced by
 * `onQueued`, or a 429 pause) may last as long as Discord still accepts an answer, less the time the
 * service may then take; once at the service (`onCall`, or from the start for a detector without a
 * queue), the service has `checkDeadlineMs`. `signal` aborts the call when the current bound passes,
 * and `expired` then says which it was.
 */
class CheckDeadline {
  readonly #controller = new AbortController();
  readonly #serviceMs: number;
  /** When the final answer must be sent at the latest. */
  readonly #answerBy: number;
  #timer: NodeJS.Timeout | undefined;
  #where: 'queue' | 'service' = 'service';
  #position: number | undefined;
  expired: { where: 'queue' | 'service'; position: number | undefined } | undefined;

  constructor(settings: DiscordBotSettings, interaction: RepliableInteraction) {
    const now = Date.now();
    // Discord's window runs from the interaction's creation (its snowflake's time); a host clock
    // that disagrees with Discord's by more than the 3 s the deferral allows is not trusted.
    const created = Number.isFinite(interaction.createdTimestamp) ? interaction.createdTimestamp : now;
    this.#answerBy = Math.min(now, Math.max(created, now - 10_000)) + settings.answerWithinMs;
    this.#serviceMs = settings.checkDeadlineMs;
    this.atService();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The check waits in the queue (at `position`, when known). */
  queued(position: number | undefined): void {
    if (position !== undefined) this.#position = position;
    if (this.#where === 'queue') return;
    this.#where = 'queue';
    this.#arm(this.#answerBy - this.#serviceMs - Date.now());
  }

  /** The check goes to the service. */
  atService(): void {
    this.#where = 'service';
    this.#position = undefined;
    this.#arm(Math.min(this.#serviceMs, this.#answerBy - Date.now()));
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        this.expired = { where: this.#where, position: this.#position };
        this.#controller.abort(new Error(this.#where === 'queue' ? 'Discord’s time to answer ran out in the queue' : 'check deadline'));
      },
      Math.max(0, ms),
    );
  }
}

/** A request id the service gave (its `req_…` ids); the bot's own caller ids mean nothing to support. */
function serviceRequestId(id: string | undefined): string | undefined {
  return id?.startsWith('req_') ? id : undefined;
}

/** Runs a check for an interaction that `deferAnswer` has acknowledged. */
export async function runCheck(ctx: BotContext, interaction: RepliableInteraction, request: CheckRequest): Promise<void> {
  const fields = { ...interactionFields(interaction), trigger: request.trigger, mode: request.mode, language: request.language };
  let text: string;
  try {
    text = prepareTextForDetection(request.text, ctx.settings.maxTextChars, {
      subject: request.source.kind === 'message' ? 'message' : 'text',
      leftOut: request.excluded,
    });
  } catch (err) {
    if (request.fileEmbeds) {
      ctx.logger.info({ ...interactionFields(interaction), code: errorCode(err) }, 'check not run');
      await editAnswer(ctx, interaction, {
        embeds: fitEmbeds([problemEmbed(describeDetectError(err)), ...(await request.fileEmbeds)]),
        components: [],
      });
    } else {
      await answerProblem(ctx, interaction, describeDetectError(err), errorCode(err));
    }
    return;
  }
  // The documents' embeds, appended to whichever answer the text gets.
  const withFiles = async (embeds: APIEmbed[]): Promise<APIEmbed[]> =>
    request.fileEmbeds ? fitEmbeds([...embeds, ...(await request.fileEmbeds)]) : embeds;

  let key: string;
  try {
    key =
      request.key ??
      (await ctx.store.remember({
        text,
        language: request.language,
        segments: request.segments,
        source: request.source,
        ownerId: interaction.user.id,
      }));
  } catch (err) {
    // The answer matters more than its buttons (Redis holds only what may be lost): the buttons of a
    // check that could not be stored say it expired when pressed.
    ctx.logger.warn({ ...fields, err: (err as Error).message }, 'could not store the check for its buttons; they will say it expired');
    key = newRecheckKey();
  }

  // Sent as X-Request-Id: the service logs it as caller_request_id, so bot and service logs can be
  // joined even for calls that never got a req_ id (service unreachable). It is the bot's own id,
  // unknown to the service's support, so it is logged and never shown to the moderator.
  const callerRequestId = randomUUID();
  const started = performance.now();
  const deadline = new CheckDeadline(ctx.settings, interaction);
  let result: DetectResponse;
  let queueWaitMs: number | undefined;
  // Once a "queued" notice replaced the placeholder, the final answer must clear it.
  let announced = false;
  try {
    result = await ctx.detect.detect(
      {
        text,
        mode: request.mode,
        segments: request.segments,
        ...(request.language ? { language: request.language } : {}),
      },
      {
        requestId: callerRequestId,
        signal: AbortSignal.any([ctx.signal, deadline.signal]),
        onQueued: async (position) => {
          deadline.queued(position);
          announced = true;
          await editAnswer(ctx, interaction, { content: queuedNotice(position) });
        },
        onPause: () => deadline.queued(undefined),
        onCall: () => deadline.atService(),
        onStart: (waitedMs) => {
          queueWaitMs = waitedMs;
        },
      },
    );
  } catch (caught) {
    const ms = Math.round(performance.now() - started);
    const expired = deadline.expired;
    if (expired && !ctx.signal.aborted) {
      // Our own deadline surfaces from the client as an abort: say which wait ran out.
      const stillQueued = expired.where === 'queue';
      const code = stillQueued ? 'answer_window_exceeded' : 'timeout';
      ctx.logger.warn({ ...fields, callerRequestId, ms, code, queuePosition: expired.position }, 'check failed');
      await editAnswer(ctx, interaction, {
        ...(announced ? { content: '' } : {}),
        embeds: await withFiles([
          problemEmbed(
            stillQueued
              ? stillQueuedSentence(expired.position)
              : describeDetectError(new TimeoutError(`No answer within ${ctx.settings.checkDeadlineMs} ms`, { code, cause: caught })),
          ),
        ]),
        components: recheckButtons(key, request.mode, { retry: true }),
      });
      await recordInModLog(ctx, interaction, request, { errorCode: code, requestId: undefined });
      return;
    }
    const err = caught;
    const code = errorCode(err);
    const requestId = (err as { requestId?: string }).requestId;
    if (code === 'internal_error') ctx.logger.error({ ...fields, callerRequestId, ms, err }, 'check failed inside the bot');
    else ctx.logger.warn({ ...fields, callerRequestId, ms, code, requestId }, 'check failed');
    await editAnswer(ctx, interaction, {
      ...(announced ? { content: '' } : {}),
      embeds: await withFiles([problemEmbed(describeDetectError(err))]),
      components: isTransient(err) ? recheckButtons(key, request.mode, { retry: true }) : [],
    });
    await recordInModLog(ctx, interaction, request, { errorCode: code, requestId: serviceRequestId(requestId) });
    return;
  } finally {
    deadline.stop();
  }

  ctx.logger.info(
    {
      ...fields,
      callerRequestId,
      ms: Math.round(performance.now() - started),
      queueWaitMs,
      requestId: result.request_id,
      verdict: result.verdict,
    },
    'check done',
  );
  await editAnswer(ctx, interaction, {
    ...(announced ? { content: '' } : {}),
    embeds: await withFiles([
      resultEmbed(result, {
        languageGiven: request.language !== undefined,
        segments: request.segments,
        source: request.source,
        excluded: request.excluded,
      }),
    ]),
    // Too short to judge in one mode is too short in every mode: no re-check buttons that could only show a score.
    components: [...(summarizeResult(result).tooShort ? [] : recheckButtons(key, result.mode)), ...memberCheckRows(request.source)],
  });
  await recordInModLog(ctx, interaction, request, { result });
}

/** One mod-log line per message check (pasted texts are not logged), whatever its outcome. */
async function recordInModLog(
  ctx: BotContext,
  interaction: RepliableInteraction,
  request: CheckRequest,
  outcome: ModLogEntry['outcome'],
): Promise<void> {
  if (request.source.kind !== 'message') return;
  const channelId = (await guildSettings(ctx, interaction.guildId)).auditChannelId ?? ctx.settings.modLogChannelId;
  if (!channelId) return;
  await ctx.modLog.record(channelId, {
    userId: interaction.user.id,
    link: request.source.link,
    authorId: request.source.authorId,
    mode: request.mode,
    outcome,
  });
}
