/**
 * `/detect text:<…> [mode:<…>] [language:<…>] [segments:<…>]`: checks pasted text;
 * `/detect file:<document> [text:<…>] [mode:<…>] …`: checks an uploaded document (file-check.ts), and the text beside it;
 * `/detect user:@member [mode:<…>]`: checks the member's recent messages in the channel (check-author.ts).
 */
import type { ChatInputCommandInteraction } from 'discord.js';
import type { Language } from '../../../src/contract.ts';
import { CHAT_MODES } from '../../chat/format.ts';
import { renderDiscordMarkdown } from '../../chat/markup-discord.ts';
import { isMode } from '../../chat/modes.ts';
import { answerProblem, deferAnswer, editAnswer, guildSettings, runCheck, type BotContext } from '../check.ts';
import { fileEmbeds } from '../file-check.ts';
import { fitEmbeds } from '../file-reply.ts';
import { chatFileOf } from '../message-files.ts';
import { handleDetectUser } from './check-author.ts';
import { DETECT_OPTIONS, LANGUAGE_CHOICES } from '../commands.ts';
import { modeName } from '../../../src/words.ts';

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
      `“${modeOption.slice(0, 40)}” is not a mode this bot knows, so nothing was checked. Choose ${CHAT_MODES.map(modeName).join(', ')}; if the list Discord shows differs, ask the bot admin to run \`npm run discord:register\` again.`,
      'unknown_mode',
    );
    return;
  }
  const chosenMode = modeOption && isMode(modeOption) ? modeOption : undefined;
  const textOption = interaction.options.getString(DETECT_OPTIONS.text);
  const member = interaction.options.getUser(DETECT_OPTIONS.user);
  const upload = interaction.options.getAttachment(DETECT_OPTIONS.file);
  if (member && (textOption || upload)) {
    await answerProblem(
      ctx,
      interaction,
      'Give either `text:` or `file:` (a text or a document to check) or `user:` (a member whose recent messages to check), not both.',
      'text_and_user',
    );
    return;
  }
  if (member) {
    await handleDetectUser(ctx, interaction, member, chosenMode);
    return;
  }
  if (!textOption?.trim() && !upload) {
    await answerProblem(
      ctx,
      interaction,
      'Give `text:` to check a text, `file:` to check a document, or `user:` to check a member’s recent messages in this channel.',
      'missing_input',
    );
    return;
  }
  const languageOption = interaction.options.getString(DETECT_OPTIONS.language);
  const language = isLanguage(languageOption) ? languageOption : undefined;
  // No mode named: the server's (`/detect-settings mode`), else the bot's default.
  const mode = chosenMode ?? (await guildSettings(ctx, interaction.guildId)).defaultMode ?? ctx.settings.messageMode;
  const file = upload ? chatFileOf(upload) : undefined;
  // A document's answer quotes its most AI-like sentences unless `segments:false` was chosen.
  const documents = file
    ? fileEmbeds(ctx, interaction, [file], {
        mode,
        language,
        segments: interaction.options.getBoolean(DETECT_OPTIONS.segments) ?? true,
        source: { kind: 'text' },
      })
    : undefined;
  if (!textOption?.trim()) {
    await editAnswer(ctx, interaction, { embeds: fitEmbeds(await (documents ?? Promise.resolve([]))), components: [] });
    return;
  }
  // Pasted text keeps Discord's markup (`**bold**`, `<@id>`, code fences): score the words it shows.
  const rendered = renderDiscordMarkdown(textOption);
  await runCheck(ctx, interaction, {
    text: rendered.text,
    excluded: rendered.excluded,
    mode,
    language,
    segments: interaction.options.getBoolean(DETECT_OPTIONS.segments) ?? false,
    source: { kind: 'text' },
    trigger: 'detect',
    fileEmbeds: documents,
  });
}
