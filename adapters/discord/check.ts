/**
 * One check, whatever started it (/detect, the message menu, a re-check button): acknowledge the
 * interaction at once, call the detection service, then edit the deferred reply with the verdict or
 * with a sentence the moderator can act on.
 */
import { randomUUID } from 'node:crypto';
import { MessageFlags, type RepliableInteraction } from 'discord.js';
import type { Logger } from 'pino';
import { ConnectionError, RateLimitError, ServerError, TimeoutError } from '../../src/client/errors.ts';
import type { DetectRequest, DetectResponse, Language, Mode } from '../../src/contract.ts';
import { describeDetectError, errorCode } from '../chat/errors.ts';
import { type ExcludedCounts, queuedNotice } from '../chat/format.ts';
import { prepareTextForDetection } from '../chat/message-text.ts';
import type { ChatStore, ScopeSettings } from '../chat/store/index.ts';
import type { DiscordBotSettings } from './config.ts';
import { describeDiscordError } from './discord-errors.ts';
import type { ModLog, ModLogEntry } from './modlog.ts';
import type { CheckSource, RecheckStore } from './recheck-store.ts';
import { problemEmbed, recheckButtons, resultEmbed } from './reply.ts';
import type { DiscordWatching } from './watch/runtime.ts';

/** The part of the detection client the bot uses (`DetectClient` from src/client fits it). */
export interface DetectionApi {
  detect(
    request: DetectRequest,
    options?: {
      requestId?: string;
      signal?: AbortSignal;
      /** Called while the check waits in the bots' queue (see adapters/chat/queue.ts). */
      onQueued?: (position: number) => unknown;
      onStart?: (waitedMs: number) => void;
    },
  ): Promise<DetectResponse>;
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
  watch?: DiscordWatching | undefined;
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
export async function answerProblem(ctx: BotContext, interaction: RepliableInteraction, sentence: string, code: string): Promise<void> {
  ctx.logger.info({ ...interactionFields(interaction), code }, 'check not run');
  await editAnswer(ctx, interaction, { embeds: [problemEmbed(sentence)], components: [] });
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
}

/** Failures where the same request may succeed later, so the reply offers "Try again". */
function isTransient(err: unknown): boolean {
  return err instanceof RateLimitError || err instanceof ServerError || err instanceof TimeoutError || err instanceof ConnectionError;
}

/** Runs a check for an interaction that `deferAnswer` has acknowledged. */
export async function runCheck(ctx: BotContext, interaction: RepliableInteraction, request: CheckRequest): Promise<void> {
  const fields = { ...interactionFields(interaction), trigger: request.trigger, mode: request.mode, language: request.language };
  let text: string;
  try {
    text = prepareTextForDetection(request.text, ctx.settings.maxTextChars);
  } catch (err) {
    await answerProblem(ctx, interaction, describeDetectError(err), errorCode(err));
    return;
  }

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
    ctx.logger.error({ ...fields, err: (err as Error).message }, 'could not store the check for its buttons');
    await answerProblem(
      ctx,
      interaction,
      'The bot could not save this check (its state store is unavailable). Try again in a minute.',
      'state_unavailable',
    );
    return;
  }

  // Sent as X-Request-Id: the service logs it as caller_request_id, so bot and service logs can be
  // joined even for calls that never got a req_ id (service unreachable).
  const callerRequestId = randomUUID();
  const started = performance.now();
  const deadline = AbortSignal.timeout(ctx.settings.checkDeadlineMs);
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
        signal: AbortSignal.any([ctx.signal, deadline]),
        onQueued: async (position) => {
          announced = true;
          await editAnswer(ctx, interaction, { content: queuedNotice(position) });
        },
        onStart: (waitedMs) => {
          queueWaitMs = waitedMs;
        },
      },
    );
  } catch (caught) {
    // Our own deadline surfaces from the client as an abort; to the moderator it is a timeout.
    const err =
      deadline.aborted && !ctx.signal.aborted
        ? new TimeoutError(`No answer within ${ctx.settings.checkDeadlineMs} ms`, {
            code: 'timeout',
            requestId: callerRequestId,
            cause: caught,
          })
        : caught;
    const code = errorCode(err);
    const requestId = (err as { requestId?: string }).requestId;
    const ms = Math.round(performance.now() - started);
    if (code === 'internal_error') ctx.logger.error({ ...fields, callerRequestId, ms, err }, 'check failed inside the bot');
    else ctx.logger.warn({ ...fields, callerRequestId, ms, code, requestId }, 'check failed');
    await editAnswer(ctx, interaction, {
      ...(announced ? { content: '' } : {}),
      embeds: [problemEmbed(describeDetectError(err))],
      components: isTransient(err) ? recheckButtons(key, request.mode, { retry: true }) : [],
    });
    await recordInModLog(ctx, interaction, request, { errorCode: code, requestId });
    return;
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
    embeds: [
      resultEmbed(result, {
        languageGiven: request.language !== undefined,
        segments: request.segments,
        source: request.source,
        excluded: request.excluded,
      }),
    ],
    components: recheckButtons(key, result.mode),
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
