/** `/detect text:<…> mode:<…> [language:<…>] [segments:<…>]`: checks pasted text. */
import type { ChatInputCommandInteraction } from 'discord.js';
import type { Language } from '../../../src/contract.ts';
import { renderDiscordMarkdown } from '../../chat/markup-discord.ts';
import { isMode } from '../../chat/modes.ts';
import { deferAnswer, runCheck, type BotContext } from '../check.ts';
import { DETECT_OPTIONS, LANGUAGE_CHOICES } from '../commands.ts';

function isLanguage(value: string | null): value is Language {
  return LANGUAGE_CHOICES.some((c) => c.value === value);
}

export async function handleDetectCommand(ctx: BotContext, interaction: ChatInputCommandInteraction): Promise<void> {
  if (!(await deferAnswer(ctx, interaction))) return;
  // Pasted text keeps Discord's markup (`**bold**`, `<@id>`, code fences): score the words it shows.
  const rendered = renderDiscordMarkdown(interaction.options.getString(DETECT_OPTIONS.text) ?? '');
  // Discord enforces the registered choices; the fallbacks cover a stale registration only.
  const modeOption = interaction.options.getString(DETECT_OPTIONS.mode);
  const languageOption = interaction.options.getString(DETECT_OPTIONS.language);
  await runCheck(ctx, interaction, {
    text: rendered.text,
    excluded: rendered.excluded,
    mode: modeOption && isMode(modeOption) ? modeOption : 'general',
    language: isLanguage(languageOption) ? languageOption : undefined,
    segments: interaction.options.getBoolean(DETECT_OPTIONS.segments) ?? false,
    source: { kind: 'text' },
    trigger: 'detect',
  });
}
