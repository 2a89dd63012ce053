/**
 * Member checks: a member's recent messages in the channel, judged together
 * (`POST /v1/detect/author`). Three ways in:
 * - the user command "Check recent messages for AI" (right-click a member → Apps);
 * - `/detect user:@member`;
 * - the "Check their recent messages" button under a message check.
 * The answer is ephemeral like every check (unless DISCORD_EPHEMERAL=false).
 */
import { randomUUID } from 'node:crypto';
import {
  PermissionFlagsBits,
  PermissionsBitField,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type RepliableInteraction,
  type UserContextMenuCommandInteraction,
} from 'discord.js';
import { TimeoutError } from '../../../src/client/errors.ts';
import type { DetectAuthorResponse, Mode } from '../../../src/contract.ts';
import { DEFAULT_AUTHOR_LIMITS, historyWindowOf, selectMessages, type HistoryWindow } from '../../chat/author.ts';
import { ChatInputError, describeDetectError, errorCode } from '../../chat/errors.ts';
import { nothingToScoreSentence, queuedNotice, summarizeAuthorResult } from '../../chat/format.ts';
import { answerProblem, deferAnswer, editAnswer, guildSettings, interactionFields, isTransient, type BotContext } from '../check.ts';
import { parseAuthorCheckCustomId } from '../commands.ts';
import { describeDiscordError } from '../discord-errors.ts';
import { assertCanReadHistory, readMemberHistory, type HistoryRead } from '../history.ts';
import { authorCheckRow, authorEmbed } from '../author-reply.ts';
import { problemEmbed } from '../reply.ts';
import { mayCheckMessages } from './settings-command.ts';
import { formatPercent } from '../../../src/words.ts';

interface MemberCheck {
  memberId: string;
  /** A bot's messages are not a person's writing; refused before reading anything. */
  memberIsBot: boolean;
  /** The mode asked for; the server's (or the bot's) default when undefined. */
  mode: Mode | undefined;
  /**
   * Whether the bot must check the member-check permission itself: Discord enforces a command's
   * `default_member_permissions` only for the menu entry, not for an option of `/detect` or a button.
   */
  enforcePermission: boolean;
  trigger: 'member_menu' | 'detect_user' | 'member_button';
}

export async function handleCheckAuthorMenu(ctx: BotContext, interaction: UserContextMenuCommandInteraction): Promise<void> {
  if (!(await deferAnswer(ctx, interaction))) return;
  await runMemberCheck(ctx, interaction, {
    memberId: interaction.targetUser.id,
    memberIsBot: interaction.targetUser.bot,
    mode: undefined,
    enforcePermission: false,
    trigger: 'member_menu',
  });
}

/** `/detect user:@member [mode:…]`, after the command handler deferred it. */
export async function handleDetectUser(
  ctx: BotContext,
  interaction: ChatInputCommandInteraction,
  member: { id: string; bot: boolean },
  mode: Mode | undefined,
): Promise<void> {
  await runMemberCheck(ctx, interaction, {
    memberId: member.id,
    memberIsBot: member.bot,
    mode,
    enforcePermission: true,
    trigger: 'detect_user',
  });
}

export function isAuthorCheckButton(interaction: ButtonInteraction): boolean {
  return parseAuthorCheckCustomId(interaction.customId) !== undefined;
}

export async function handleAuthorCheckButton(ctx: BotContext, interaction: ButtonInteraction): Promise<void> {
  const parsed = parseAuthorCheckCustomId(interaction.customId);
  if (!parsed) return;
  if (!(await deferAnswer(ctx, interaction))) return;
  // The button is only offered for authors who are people (see check-message.ts).
  await runMemberCheck(ctx, interaction, {
    memberId: parsed.userId,
    memberIsBot: false,
    mode: undefined,
    enforcePermission: true,
    trigger: 'member_button',
  });
}

/** Names of the permissions in a bitfield, for the refusal sentence. */
function permissionNames(bits: string): string {
  if (bits === '0') return 'Administrator';
  return new PermissionsBitField(BigInt(bits)).toArray().join(' and ') || 'Administrator';
}

function hasPermission(interaction: RepliableInteraction, required: string | null): boolean {
  if (required === null) return true;
  const permissions = interaction.memberPermissions;
  if (!permissions) return false;
  // An empty bitfield means "administrators only" in Discord's command permissions.
  return required === '0' ? permissions.has(PermissionFlagsBits.Administrator) : permissions.has(BigInt(required));
}

/** A member check that could not run is about the member's messages, not "this text". */
const MEMBER_PROBLEM_TITLE = 'Could not check this member’s messages';

async function runMemberCheck(ctx: BotContext, interaction: RepliableInteraction, check: MemberCheck): Promise<void> {
  const fields = { ...interactionFields(interaction), trigger: check.trigger, memberId: check.memberId };
  const guildId = interaction.guildId;
  const channelId = interaction.channelId;
  if (!guildId || !channelId) {
    await answerProblem(
      ctx,
      interaction,
      'Member checks read a server channel’s messages: run this in the channel where the member writes.',
      'member_check_outside_server',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }
  const serverSettings = await guildSettings(ctx, guildId);
  if (check.enforcePermission && !hasPermission(interaction, ctx.settings.memberCheckPermission)) {
    await answerProblem(
      ctx,
      interaction,
      `Checking a member’s recent messages needs the same permission as "Check for AI text": ${permissionNames(ctx.settings.memberCheckPermission ?? '0')}.`,
      'member_check_forbidden',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }
  if (!mayCheckMessages(interaction, serverSettings.checkerId)) {
    await answerProblem(
      ctx,
      interaction,
      `In this server only members with <@&${serverSettings.checkerId}> may check messages or members (set with /detect-settings checker-role).`,
      'checker_role_required',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }
  if (check.memberIsBot) {
    await answerProblem(
      ctx,
      interaction,
      'That account is a bot: its messages are not a person’s writing, so there is nothing to judge.',
      'member_is_bot',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }
  const detectAuthor = ctx.detect.detectAuthor?.bind(ctx.detect);
  if (!detectAuthor) {
    await answerProblem(
      ctx,
      interaction,
      'This bot’s detection backend cannot check members (it has no author-level API). Tell the bot admin.',
      'member_check_unsupported',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }

  const window: HistoryWindow = historyWindowOf(serverSettings);
  let read: HistoryRead;
  const readStarted = performance.now();
  try {
    assertCanReadHistory(interaction.appPermissions);
    read = await readMemberHistory(interaction.client.rest, { guildId, channelId, memberId: check.memberId, window });
  } catch (err) {
    if (err instanceof ChatInputError) {
      await answerProblem(ctx, interaction, err.message, err.code, MEMBER_PROBLEM_TITLE);
      return;
    }
    ctx.logger.warn({ ...fields, err: describeDiscordError(err) }, 'could not read the channel history');
    await answerProblem(
      ctx,
      interaction,
      'The bot could not read this channel’s messages from Discord right now. Try again in a minute.',
      'history_failed',
      MEMBER_PROBLEM_TITLE,
    );
    return;
  }
  const readMs = Math.round(performance.now() - readStarted);
  const selection = selectMessages(read.messages, {
    ...DEFAULT_AUTHOR_LIMITS,
    maxTotalChars: Math.min(DEFAULT_AUTHOR_LIMITS.maxTotalChars, ctx.settings.maxTextChars),
  });
  if (selection.send.length === 0) {
    ctx.logger.info({ ...fields, read: read.messages.length, scanned: read.scanned, readMs }, 'member check: nothing to score');
    await editAnswer(ctx, interaction, {
      embeds: [
        problemEmbed(nothingToScoreSentence(read.messages.length, selection.leftOut, window, read.scanLimitHit), 'Nothing to check'),
      ],
      components: [],
    });
    return;
  }

  const mode = check.mode ?? serverSettings.defaultMode ?? ctx.settings.messageMode;
  const callerRequestId = randomUUID();
  const started = performance.now();
  const deadline = AbortSignal.timeout(ctx.settings.checkDeadlineMs);
  let announced = false;
  let queueWaitMs: number | undefined;
  let result: DetectAuthorResponse;
  try {
    result = await detectAuthor(
      { messages: selection.send.map((m) => m.text), mode },
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
    if (code === 'internal_error') ctx.logger.error({ ...fields, callerRequestId, err }, 'member check failed inside the bot');
    else ctx.logger.warn({ ...fields, callerRequestId, code, requestId }, 'member check failed');
    await editAnswer(ctx, interaction, {
      ...(announced ? { content: '' } : {}),
      embeds: [problemEmbed(describeDetectError(err), MEMBER_PROBLEM_TITLE)],
      // Trying again reads the history afresh, so the button of a message check serves as "Try again".
      components: isTransient(err) ? [authorCheckRow(check.memberId, 'Try again')] : [],
    });
    await recordMemberCheck(
      ctx,
      interaction,
      check.memberId,
      mode,
      `check failed (${code})${requestId ? ` · request \`${requestId}\`` : ''}`,
    );
    return;
  }

  ctx.logger.info(
    {
      ...fields,
      callerRequestId,
      requestId: result.request_id,
      verdict: result.verdict,
      read: read.messages.length,
      sent: selection.send.length,
      used: result.messages_used,
      scanned: read.scanned,
      readMs,
      queueWaitMs,
      ms: Math.round(performance.now() - started),
    },
    'member check done',
  );
  const summary = summarizeAuthorResult(
    result,
    selection.send.map((m) => ({ excerpt: m.readable, link: m.link })),
    selection.leftOut,
  );
  await editAnswer(ctx, interaction, {
    ...(announced ? { content: '' } : {}),
    embeds: [authorEmbed(summary, { memberId: check.memberId, read: read.messages.length, window, scanLimitHit: read.scanLimitHit })],
    components: [],
  });
  const outcome = `${summary.heldBack ? '🟡 too little to judge' : `${summary.headline}, ${formatPercent(result.ai_probability)}`} over ${result.messages_used} messages · request \`${result.request_id}\``;
  await recordMemberCheck(ctx, interaction, check.memberId, mode, outcome);
}

/** One mod-log line per member check, like message checks: who checked whom, where, and the outcome; never the texts. */
async function recordMemberCheck(
  ctx: BotContext,
  interaction: RepliableInteraction,
  memberId: string,
  mode: Mode,
  outcome: string,
): Promise<void> {
  const channelId = (await guildSettings(ctx, interaction.guildId)).auditChannelId ?? ctx.settings.modLogChannelId;
  if (!channelId) return;
  await ctx.modLog.post(
    channelId,
    `<@${interaction.user.id}> checked the recent messages of <@${memberId}> in <#${interaction.channelId}> in ${mode} mode: ${outcome}`,
  );
}
