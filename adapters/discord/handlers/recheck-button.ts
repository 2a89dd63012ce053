/** The "Re-check as <mode>" and "Try again" buttons under a result. */
import type { ButtonInteraction } from 'discord.js';
import { answerProblem, deferAnswer, runCheck, type BotContext } from '../check.ts';
import { parseRecheckCustomId } from '../commands.ts';

/** The answer to a button whose text is no longer stored (docs/discord.md quotes it). */
export function expiredButtonSentence(ttlMinutes: number): string {
  return `This button has expired: the bot remembers a checked text for ${ttlMinutes} minutes after its last use. Run the check again.`;
}

/** True when the button is one of ours (the router leaves other buttons alone). */
export function isRecheckButton(interaction: ButtonInteraction): boolean {
  return parseRecheckCustomId(interaction.customId) !== undefined;
}

export async function handleRecheckButton(ctx: BotContext, interaction: ButtonInteraction): Promise<void> {
  const parsed = parseRecheckCustomId(interaction.customId);
  if (!parsed) return;
  if (!(await deferAnswer(ctx, interaction))) return;
  let remembered;
  try {
    remembered = await ctx.store.recall(parsed.key);
  } catch (err) {
    ctx.logger.error({ interactionId: interaction.id, err: (err as Error).message }, 'could not read the remembered check');
    await answerProblem(
      ctx,
      interaction,
      'The bot could not read this check back (its state store is unavailable). Try again in a minute.',
      'state_unavailable',
    );
    return;
  }
  if (!remembered) {
    await answerProblem(ctx, interaction, expiredButtonSentence(Math.round(ctx.settings.recheckTtlMs / 60_000)), 'recheck_expired');
    return;
  }
  if (remembered.ownerId !== interaction.user.id) {
    await answerProblem(
      ctx,
      interaction,
      'Only the person who ran this check can re-check it. Run the check yourself.',
      'recheck_not_owner',
    );
    return;
  }
  await runCheck(ctx, interaction, {
    text: remembered.text,
    mode: parsed.mode,
    language: remembered.language,
    segments: remembered.segments,
    source: remembered.source,
    key: parsed.key,
    trigger: 'recheck',
  });
}
