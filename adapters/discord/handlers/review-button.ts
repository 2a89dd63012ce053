/**
 * Confirm / False positive / Dismiss on a review card. The first moderator's answer is recorded
 * (outcome, who, when) and shown on the card, which is edited in place and loses its buttons; a
 * moderator who pressed a moment later sees the card as answered and is told, privately, by whom.
 * Nothing happens in the watched channel.
 */
import { MessageFlags, PermissionFlagsBits, Routes, type APIEmbed, type APIGuildMember, type ButtonInteraction } from 'discord.js';
import { guildScope, guildSettings, interactionFields, type BotContext } from '../check.ts';
import { describeDiscordError } from '../discord-errors.ts';
import { mayCheckMessages } from './settings-command.ts';
import { OUTCOME_DONE, parseReviewCustomId, plainPerson, REVIEW_FIELD, reviewedEmbed } from '../watch/card.ts';
import { parseApplyCustomId, suggestionPayload } from '../watch/suggestion.ts';
import { presetApplied } from '../../chat/watch/learning.ts';
import { suggestionToPost } from '../../chat/watch/precision.ts';
import { DEFAULT_PRESET, PRESET_DESCRIPTIONS } from '../../chat/watch/presets.ts';
import { DAY_MS } from '../../chat/watch/types.ts';

/** A review card's buttons, and the Apply button under a stricter-preset suggestion. */
export function isReviewButton(interaction: ButtonInteraction): boolean {
  return parseReviewCustomId(interaction.customId) !== undefined || parseApplyCustomId(interaction.customId) !== undefined;
}

function memberName(interaction: ButtonInteraction): string {
  const member = interaction.member as { nick?: string | null; nickname?: string | null } | null;
  return member?.nickname || member?.nick || interaction.user.globalName || interaction.user.username;
}

/** `✅ Confirmed by Admin (123…)` as the answered card already shows it (its Review field, without the time). */
function answeredOnCard(embed: APIEmbed): string | undefined {
  const value = (embed.fields ?? []).find((f) => f.name === REVIEW_FIELD)?.value;
  return value?.split(' · <t:')[0];
}

/**
 * The name of whoever recorded the answer: the presser's own, or (a late press) the first reviewer's
 * as the server shows it, so a late press never renames them "member". Undefined when Discord cannot say.
 */
async function reviewerName(ctx: BotContext, interaction: ButtonInteraction, reviewerId: string): Promise<string | undefined> {
  if (reviewerId === interaction.user.id) return memberName(interaction);
  if (!interaction.guildId) return undefined;
  try {
    const member = (await interaction.client.rest.get(Routes.guildMember(interaction.guildId, reviewerId))) as APIGuildMember;
    return member.nick || member.user?.global_name || member.user?.username || undefined;
  } catch (err) {
    ctx.logger.warn({ ...interactionFields(interaction), err: describeDiscordError(err) }, 'could not read the first reviewer’s name');
    return undefined;
  }
}

async function tellPrivately(ctx: BotContext, interaction: ButtonInteraction, content: string): Promise<void> {
  try {
    if (interaction.replied || interaction.deferred)
      await interaction.followUp({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
    else await interaction.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  } catch (err) {
    ctx.logger.warn({ ...interactionFields(interaction), err: describeDiscordError(err) }, 'could not answer a review button');
  }
}

/** Apply under a suggestion: Manage Server only, as `/detect-settings preset`. */
async function handleApplyButton(ctx: BotContext, interaction: ButtonInteraction): Promise<void> {
  const preset = parseApplyCustomId(interaction.customId);
  const store = ctx.watch?.store;
  if (!preset || !interaction.guildId || !store) return;
  const fields = { ...interactionFields(interaction), preset };
  if (interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) !== true) {
    ctx.logger.info({ ...fields, code: 'settings_forbidden' }, 'preset change refused');
    await tellPrivately(ctx, interaction, 'Only members with Manage Server can change the flagging preset.');
    return;
  }
  const scope = guildScope(interaction.guildId);
  try {
    await store.setPreset(scope, preset === DEFAULT_PRESET ? null : preset);
  } catch (err) {
    ctx.logger.error({ ...fields, err: (err as Error).message }, 'could not save the preset');
    await tellPrivately(
      ctx,
      interaction,
      'The preset could not be saved (the bot’s store is unavailable). Nothing was changed; try again in a minute.',
    );
    return;
  }
  ctx.watch?.watcher?.invalidate(scope);
  ctx.logger.info(fields, 'watch preset changed from a suggestion');
  await tellPrivately(
    ctx,
    interaction,
    presetApplied(preset, PRESET_DESCRIPTIONS[preset], (text) => `**${text}**`),
  );
}

export async function handleReviewButton(ctx: BotContext, interaction: ButtonInteraction): Promise<void> {
  if (parseApplyCustomId(interaction.customId)) return handleApplyButton(ctx, interaction);
  const parsed = parseReviewCustomId(interaction.customId);
  if (!parsed || !interaction.guildId) return;
  const fields = { ...interactionFields(interaction), flagId: parsed.flagId, outcome: parsed.outcome };
  const store = ctx.watch?.store;
  if (!store) {
    await tellPrivately(ctx, interaction, 'Watching is not set up in this bot, so this card cannot be answered here. Ask the bot admin.');
    return;
  }
  const checker = (await guildSettings(ctx, interaction.guildId)).checkerId;
  const moderator =
    interaction.memberPermissions?.has(PermissionFlagsBits.ManageMessages) === true ||
    (checker !== undefined && mayCheckMessages(interaction, checker));
  if (!moderator) {
    ctx.logger.info({ ...fields, code: 'review_forbidden' }, 'review refused');
    await tellPrivately(ctx, interaction, 'Only moderators (Manage Messages, or the checker role) can answer review cards.');
    return;
  }
  const now = Date.now();
  let result: Awaited<ReturnType<typeof store.review>>;
  try {
    result = await store.review(guildScope(interaction.guildId), parsed.flagId, parsed.outcome, interaction.user.id, now, {
      clearForMs: (ctx.watch?.settings.clearDays ?? 0) * DAY_MS,
    });
  } catch (err) {
    ctx.logger.error({ ...fields, err: (err as Error).message }, 'could not record a review');
    await tellPrivately(
      ctx,
      interaction,
      'The answer could not be saved (the bot’s store is unavailable). Nothing was recorded; try again in a minute.',
    );
    return;
  }
  if (!result) {
    await tellPrivately(
      ctx,
      interaction,
      'This flag is no longer kept (records are deleted after the server’s retention period, or with `/detect-settings delete-data`), so the answer was not recorded.',
    );
    return;
  }
  const flag = result.flag;
  const embed = (interaction.message.embeds[0]?.toJSON() ?? {}) as APIEmbed;
  const answered = (embed.fields ?? []).some((f) => f.name === REVIEW_FIELD);
  // A late press on a card already showing the answer leaves it as it is; the card is (re)written
  // by the press that recorded the outcome, or when an earlier edit of it failed.
  const reviewerId = flag.reviewerId ?? interaction.user.id;
  const shown = answered ? answeredOnCard(embed) : undefined;
  // Asked of Discord only when neither the presser nor the card can tell (a late press on a card not yet showing the answer).
  const name = shown === undefined || reviewerId === interaction.user.id ? await reviewerName(ctx, interaction, reviewerId) : undefined;
  // A late press rewrites a card not yet showing the answer (the first press's edit failed, or has
  // not landed yet in a burst) only when it can name the first reviewer: unnamed, it would rename them.
  if (result.applied || (!answered && name !== undefined)) {
    const edited = reviewedEmbed(embed, {
      outcome: flag.outcome ?? parsed.outcome,
      reviewerId,
      reviewerName: name,
      at: flag.reviewedAt ?? now,
    });
    try {
      await interaction.update({ embeds: [edited], components: [], allowedMentions: { parse: [] } });
    } catch (err) {
      ctx.logger.warn({ ...fields, err: describeDiscordError(err) }, 'could not edit the review card');
    }
  }
  if (result.applied) {
    ctx.logger.info(fields, 'flag reviewed');
    await postSuggestion(ctx, interaction, flag.channelId, now);
  } else {
    await tellPrivately(
      ctx,
      interaction,
      `This flag was already answered: ${shown ?? `${OUTCOME_DONE[flag.outcome ?? parsed.outcome]} by ${name === undefined ? `<@${reviewerId}>` : plainPerson(name, reviewerId)}`}. Your answer was not recorded.`,
    );
  }
}

/** The channel's precision, told to the mod-log when this answer took it under the bound. */
async function postSuggestion(ctx: BotContext, interaction: ButtonInteraction, channelId: string, now: number): Promise<void> {
  const store = ctx.watch?.store;
  if (!store || !interaction.guildId) return;
  try {
    const scope = guildScope(interaction.guildId);
    const suggestion = await suggestionToPost(store, scope, channelId, await store.getConfig(scope), now);
    if (!suggestion) return;
    await interaction.followUp({ ...suggestionPayload(suggestion), allowedMentions: { parse: [] } });
    ctx.logger.info({ ...interactionFields(interaction), channelId, suggested: suggestion.to }, 'stricter preset suggested');
  } catch (err) {
    ctx.logger.warn({ ...interactionFields(interaction), err: describeDiscordError(err) }, 'could not suggest a stricter preset');
  }
}
