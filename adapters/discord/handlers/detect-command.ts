/**
 * `/detect text:<…> [mode:<…>] [language:<…>] [segments:<…>]`: checks pasted text;
 * `/detect user:@member [mode:<…>]`: checks the member's recent messages in the channel (check-author.ts).
 */
import type { ChatInputCommandInteraction } from 'discord.js';
import type { Language } from '../../../src/contract.ts';
import { CHAT_MODES, modeLabel } from '../../chat/format.ts';
import { renderDiscordMarkdown } from '../../chat/markup-discord.ts';
import { isMode } from '../../chat/modes.ts';
import { answerProblem, deferAnswer, guildSettings, runCheck, type BotContext } from '../check.ts';
import { handleDetectUser } from './check-author.ts';
import { DETECT_OPTIONS, LANGUAGE_CHOICES } from '../commands.ts';

function isLanguage(value: string | null): value is Language {
  return LANGUAGE_CHOICES.some((c) => c.value === value);
}

export async function handleDetectCommand(ctx: BotContext, interaction: ChatInputCommandInteraction): Promise<void> {
  if (!(await deferAnswer(ctx, interaction))) return;
  // Discord enforces the registered choices, so an unknown mode means commands registered by another
  // version of the bot: said so, not silently scored in the default mode.
  const modeOption = interaction.options.getString(DETECT_OPTIONS.mode);
  if (modeOption && !isMode(modeOption)) {
    await answerProblem(
      ctx,
      interaction,
      `“${modeOption.slice(0, 40)}” is not a mode this bot knows, so nothing was checked. Choose ${CHAT_MODES.map(modeLabel).join(', ')}; if the list Discord shows differs, ask the bot admin to run \`npm run discord:register\` again.`,
      'unknown_mode',
    );
    return;
  }
  const chosenMode = modeOption && isMode(modeOption) ? modeOption : undefined;
  const textOption = interaction.options.getString(DETECT_OPTIONS.text);
  const member = interaction.options.getUser(DETECT_OPTIONS.user);
  if (member && textOption) {
    await answerProblem(
      ctx,
      interaction,
      'Give either `text:` (a text to check) or `user:` (a member whose recent messages to check), not both.',
      'text_and_user',
    );
    return;
  }
  if (member) {
    await handleDetectUser(ctx, interaction, member, chosenMode);
    return;
  }
  if (!textOption?.trim()) {
    await answerProblem(
      ctx,
      interaction,
      'Give `text:` to check a text, or `user:` to check a member’s recent messages in this channel.',
      'missing_input',
    );
    return;
  }
  // Pasted text keeps Discord's markup (`**bold**`, `<@id>`, code fences): score the words it shows.
  const rendered = renderDiscordMarkdown(textOption);
  const languageOption = interaction.options.getString(DETECT_OPTIONS.language);
  await runCheck(ctx, interaction, {
    text: rendered.text,
    excluded: rendered.excluded,
    // No mode named: the server's (`/detect-settings mode`), else the bot's default.
    mode: chosenMode ?? (await guildSettings(ctx, interaction.guildId)).defaultMode ?? ctx.settings.messageMode,
    language: isLanguage(languageOption) ? languageOption : undefined,
    segments: interaction.options.getBoolean(DETECT_OPTIONS.segments) ?? false,
    source: { kind: 'text' },
    trigger: 'detect',
  });
}
