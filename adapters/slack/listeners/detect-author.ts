/**
 * Member checks: a member's recent messages in the channel, judged together
 * (`POST /v1/detect/author`). Two ways in, both answered ephemerally through the request's
 * response_url:
 * - `/detect @member` (or `/detect legal @member`): the command text is a single user mention;
 * - the "Check their recent messages" button under a message check (the message shortcut).
 */
import type { App, BlockAction, ButtonAction, RespondFn, webApi } from '@slack/bolt';
import type { DetectAuthorResponse, Mode } from '../../../src/contract.ts';
import { DEFAULT_AUTHOR_LIMITS, historyWindowOf, selectMessages } from '../../chat/author.ts';
import { ChatInputError, describeDetectError, errorCode } from '../../chat/errors.ts';
import { mostAiLikeMessages, nothingToScoreSentence, queuedNotice, summarizeAuthorResult } from '../../chat/format.ts';
import { SLACK_LIMITED_NOTE, buildAuthorAuditLine, buildAuthorResultMessage } from '../author-blocks.ts';
import { ACTION_AUTHOR_CHECK, decodeAuthorButton } from '../author-button.ts';
import { buildErrorMessage, type SlackMessage } from '../blocks.ts';
import { createNameResolver, slackErrorCode, teamSettings, type SlackAppContext } from '../checks.ts';
import { auditChannelFor, defaultModeFor } from '../config.ts';
import { fallbackPermalink, readMemberHistory, type HistoryRead } from '../history.ts';
import { mayCheckMessages } from '../settings.ts';
import { AUTHOR_HELD_BACK_LABEL, formatPercent, originLabel } from '../../../src/words.ts';

type WebClient = webApi.WebClient;

/**
 * What `/detect` text asks for when it names a member: `<@U0123|name>` (the manifest declares
 * `/detect` with `should_escape: true`, so a picked or typed @name arrives as an id). A lone plain
 * `@name` means an app installed from an older manifest, where Slack sends no id.
 */
export function memberTarget(text: string): { kind: 'member'; userId: string } | { kind: 'unescaped' } | undefined {
  const trimmed = text.trim();
  const id = /^<@([UW][A-Z0-9]+)(?:\|[^>]*)?>$/.exec(trimmed)?.[1];
  if (id) return { kind: 'member', userId: id };
  if (/^@[\p{L}\p{N}._-]+$/u.test(trimmed)) return { kind: 'unescaped' };
  return undefined;
}

export const UNESCAPED_MEMBER =
  'Slack sent the name without the member’s id, so the app cannot tell who is meant. Ask a workspace admin to update the app from its manifest (`/detect` needs “Escape channels, users, and links”, `should_escape: true`) and reinstall it; then pick the member from the list after typing @.';

export interface MemberCheckRequest {
  teamId: string | undefined;
  teamDomain: string | undefined;
  userId: string;
  channelId: string;
  memberId: string;
  /** Named in the command; the workspace's (or the app's) default otherwise. */
  mode: Mode | undefined;
  client: WebClient;
  onQueued?: ((position: number) => unknown) | undefined;
}

/** Runs one member check and returns the reply; never throws (failures are sentences). */
export async function runMemberCheck(ctx: SlackAppContext, req: MemberCheckRequest): Promise<SlackMessage> {
  const log = ctx.logger.child({ kind: 'member', team: req.teamId, user: req.userId, member: req.memberId });
  const settings = await teamSettings(ctx, req.teamId);
  if (!(await mayCheckMessages(req.client, req.userId, settings.checkerId))) {
    log.info({ code: 'checker_group_required' }, 'member check not run');
    return buildErrorMessage(
      `In this workspace only members of <!subteam^${settings.checkerId}> (and admins) may check messages or members (set with /detect-settings checkers).`,
    );
  }
  const detectAuthor = ctx.detector.detectAuthor?.bind(ctx.detector);
  if (!detectAuthor)
    return buildErrorMessage('This app’s detection backend cannot check members (it has no author-level API). Tell the app admin.');
  const names = createNameResolver(req.client, ctx.names);
  const member = await req.client.users.info({ user: req.memberId }).then(
    (r) => r.user,
    () => undefined,
  );
  if (member?.is_bot)
    return buildErrorMessage('That account is a bot: its messages are not a person’s writing, so there is nothing to judge.');

  const window = historyWindowOf(settings);
  const readStarted = performance.now();
  let read: HistoryRead;
  try {
    read = await readMemberHistory(req.client, { channelId: req.channelId, memberId: req.memberId, window, names });
  } catch (err) {
    if (err instanceof ChatInputError) {
      log.info({ code: err.code }, 'member check not run');
      return buildErrorMessage(err.message);
    }
    log.warn({ slack_error: slackErrorCode(err) }, 'could not read the channel history');
    return buildErrorMessage('The app could not read this channel’s messages from Slack right now. Try again in a minute.');
  }
  const readMs = Math.round(performance.now() - readStarted);
  const selection = selectMessages(read.messages, {
    ...DEFAULT_AUTHOR_LIMITS,
    maxTotalChars: Math.min(DEFAULT_AUTHOR_LIMITS.maxTotalChars, ctx.config.maxTextChars),
  });
  if (selection.send.length === 0) {
    log.info({ read: read.messages.length, scanned: read.scanned, read_ms: readMs }, 'member check: nothing to score');
    const sentence = nothingToScoreSentence(read.messages.length, selection.leftOut, window, read.scanLimitHit);
    return buildErrorMessage(read.slackLimited ? `${sentence} ${SLACK_LIMITED_NOTE(read.scanned)}` : sentence);
  }

  const mode = req.mode ?? settings.defaultMode ?? defaultModeFor(ctx.config, req.teamId);
  const started = performance.now();
  let result: DetectAuthorResponse;
  let queueWaitMs: number | undefined;
  try {
    result = await detectAuthor(
      { messages: selection.send.map((m) => m.text), mode },
      {
        onQueued: req.onQueued,
        onStart: (waitedMs) => {
          queueWaitMs = waitedMs;
        },
      },
    );
  } catch (err) {
    const code = errorCode(err);
    const requestId = (err as { requestId?: unknown }).requestId;
    log.warn(
      { err_name: (err as Error)?.name, code, request_id: typeof requestId === 'string' ? requestId : undefined },
      'member check failed',
    );
    await audit(ctx, req, mode, `check failed (${code})`);
    return buildErrorMessage(describeDetectError(err));
  }
  log.info(
    {
      request_id: result.request_id,
      verdict: result.verdict,
      read: read.messages.length,
      sent: selection.send.length,
      used: result.messages_used,
      scanned: read.scanned,
      read_ms: readMs,
      queue_wait_ms: queueWaitMs,
      duration_ms: Math.round(performance.now() - started),
    },
    'member check done',
  );
  // Permalinks only for the messages quoted: one call each, and the fallback needs no call.
  const links = new Map<number, string | undefined>();
  await Promise.all(
    mostAiLikeMessages(result).map(async (position) => {
      const ts = selection.send[position]?.id;
      if (!ts) return;
      const link = await req.client.chat.getPermalink({ channel: req.channelId, message_ts: ts }).then(
        (r) => r.permalink,
        () => fallbackPermalink(req.teamDomain, req.channelId, ts),
      );
      links.set(position, link);
    }),
  );
  const summary = summarizeAuthorResult(
    result,
    selection.send.map((m, i) => ({ excerpt: m.readable, link: links.get(i) })),
    selection.leftOut,
  );
  const outcome = `${summary.heldBack ? AUTHOR_HELD_BACK_LABEL.toLowerCase() : `${originLabel(summary.origin, null)}, ${formatPercent(result.ai_probability)}`} over ${result.messages_used} messages · request id ${result.request_id}`;
  await audit(ctx, req, mode, outcome);
  return buildAuthorResultMessage(summary, {
    memberId: req.memberId,
    read: read.messages.length,
    window,
    scanLimitHit: read.scanLimitHit,
    slackLimited: read.slackLimited,
    scanned: read.scanned,
  });
}

async function audit(ctx: SlackAppContext, req: MemberCheckRequest, mode: Mode, outcome: string): Promise<void> {
  const channel = (await teamSettings(ctx, req.teamId)).auditChannelId ?? auditChannelFor(ctx.config, req.teamId);
  if (!channel) return;
  const resolver = createNameResolver(req.client, ctx.names);
  const [userName, memberName] = await Promise.all([resolver.user?.(req.userId), resolver.user?.(req.memberId)]);
  const line = buildAuthorAuditLine({
    userId: req.userId,
    userName,
    memberId: req.memberId,
    memberName,
    channelId: req.channelId,
    mode,
    outcome,
  });
  try {
    await req.client.chat.postMessage({ channel, text: line.text, blocks: line.blocks, unfurl_links: false, unfurl_media: false });
  } catch (err) {
    ctx.logger.warn({ channel, slack_error: slackErrorCode(err) }, 'audit post failed (is the bot a member of the audit channel?)');
  }
}

/** Answers through response_url: a queued notice first when the check waits, replaced by the result. */
export async function answerMemberCheck(
  ctx: SlackAppContext,
  respond: RespondFn,
  req: Omit<MemberCheckRequest, 'onQueued'>,
): Promise<void> {
  let announced = false;
  const reply = await runMemberCheck(ctx, {
    ...req,
    onQueued: async (position: number) => {
      announced = true;
      await respond({ response_type: 'ephemeral', replace_original: false, text: queuedNotice(position) });
    },
  });
  try {
    await respond({ response_type: 'ephemeral', replace_original: announced, text: reply.text, blocks: reply.blocks });
  } catch (err) {
    ctx.logger.error(
      { slack_error: slackErrorCode(err), team: req.teamId, user: req.userId },
      'could not answer a member check through response_url',
    );
  }
}

/** "Check their recent messages" under a message check. */
export function registerAuthorCheckAction(app: App, ctx: SlackAppContext): void {
  app.action<BlockAction<ButtonAction>>(ACTION_AUTHOR_CHECK, async ({ ack, body, action, respond, client }) => {
    await ack();
    const value = decodeAuthorButton(action.value);
    const channelId = body.channel?.id ?? body.container?.channel_id;
    if (!value || !channelId) {
      ctx.logger.warn({ action_id: action.action_id }, 'unreadable member-check button');
      return;
    }
    // A new ephemeral message, so the message check it came from stays readable above it.
    const respondBelow: RespondFn = (message) => respond(typeof message === 'string' ? message : { ...message, replace_original: false });
    await answerMemberCheck(ctx, respondBelow, {
      teamId: body.team?.id ?? body.user.team_id,
      teamDomain: body.team?.domain,
      userId: body.user.id,
      channelId,
      memberId: value.u,
      mode: undefined,
      client,
    });
  });
}
