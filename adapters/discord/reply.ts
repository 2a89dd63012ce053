/**
 * Discord's rendering of a check: an embed and a row of re-check buttons. The wording comes from
 * adapters/chat (shared with Slack); only Discord's markup and limits live here.
 */
import {
  ButtonStyle,
  ComponentType,
  escapeMarkdown,
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIEmbed,
  type APIEmbedField,
} from 'discord.js';
import type { DetectResponse, Mode } from '../../src/contract.ts';
import {
  excludedNote,
  otherModes,
  SHORT_MESSAGE_AUTHOR_HINT,
  summarizeComposition,
  summarizeResult,
  truncate,
  type ExcludedCounts,
  type ResultSummary,
} from '../chat/format.ts';
import { recheckCustomId } from './commands.ts';
import type { CheckSource } from './recheck-store.ts';
import { languageName, modeName, WINDOWS_TITLE } from '../../src/words.ts';

/** Discord's limits on embeds (characters), from its "Embed Limits" table. */
const FIELD_VALUE_MAX = 1024;
const DESCRIPTION_MAX = 4096;

/** Grey for answers that are not a verdict (errors, empty messages). */
export const NEUTRAL_COLOUR = 0x8b949e;

export interface ResultContext {
  /** Whether the moderator named the language (otherwise the service detected it). */
  languageGiven: boolean;
  /** Whether per-sentence scores were asked for. */
  segments: boolean;
  source: CheckSource;
  /** What the markup renderer left out of the score, for a note under the verdict. */
  excluded?: ExcludedCounts | undefined;
}

export function resultEmbed(result: DetectResponse, context: ResultContext): APIEmbed {
  const summary = summarizeResult(result, 300);
  const composition = summarizeComposition(result);
  const lines = [summary.tooShortLine ?? `${summary.bar} **${summary.percent}** probability that an AI wrote it`];
  if (summary.originLine) lines.push('', summary.originLine);
  if (composition.line) lines.push('', composition.line);
  const note = excludedNote(context.excluded);
  if (note) lines.push('', note);
  if (summary.warningLines.length > 0) lines.push('', ...summary.warningLines.map((line) => `⚠️ ${line}`));
  const source = context.source;
  if (source.kind === 'message' && source.authorId && !source.authorIsBot && summary.warningCodes.includes('short_text')) {
    lines.push('', `💬 ${SHORT_MESSAGE_AUTHOR_HINT} Use the button below.`);
  }

  const fields: NonNullable<APIEmbed['fields']> = [
    { name: 'Mode', value: modeName(summary.mode), inline: true },
    {
      name: 'Language',
      value: `${languageName(summary.language)}${context.languageGiven ? '' : ' (detected)'}`,
      inline: true,
    },
    { name: 'Confidence', value: result.confidence.charAt(0).toUpperCase() + result.confidence.slice(1), inline: true },
  ];
  if (context.source.kind === 'message') {
    fields.push({ name: 'Message', value: context.source.link, inline: false });
  }
  const map = windowsField(summary);
  if (map) fields.push(map);
  if (composition.passages.length > 0) {
    const value = composition.passages.map((p) => `**${p.percent}** “${escapeMarkdown(p.text)}”`).join('\n');
    fields.push({
      name: composition.title,
      value: truncate(value, FIELD_VALUE_MAX),
      inline: false,
    });
  }
  // Too short to judge: no sentence scores either, and no word about a breakdown that was never made.
  if (context.segments && !summary.tooShort) {
    const value =
      summary.highlights.length > 0
        ? // One line per sentence, its markup shown as typed (a quoted `**` must not bold the rest).
          summary.highlights.map((h) => `**${h.percent}** “${escapeMarkdown(h.text.replace(/\s+/g, ' '))}”`).join('\n')
        : 'The text is a single sentence, so there is no per-sentence breakdown.';
    fields.push({ name: 'Most AI-like sentences', value: truncate(value, FIELD_VALUE_MAX), inline: false });
  }
  fields.push({ name: 'Request ID', value: `\`${summary.requestId}\``, inline: false });

  return {
    title: summary.headline,
    color: summary.colour,
    description: truncate(lines.join('\n'), DESCRIPTION_MAX),
    fields,
    footer: { text: `model ${summary.model} · a score is evidence, not proof` },
  };
}

/**
 * A long document's map as an embed field: one emoji per window in text order, and the summary that
 * names where the parts that read as an AI's work are, within a field's 1,024 characters.
 */
export function windowsField(summary: Pick<ResultSummary, 'windows'>): APIEmbedField | undefined {
  if (!summary.windows) return undefined;
  const strip = truncate(summary.windows.strip, 300);
  return { name: WINDOWS_TITLE, value: truncate(`${strip}\n${summary.windows.summary}`, FIELD_VALUE_MAX), inline: false };
}

export function problemEmbed(sentence: string, title = 'Could not check this text'): APIEmbed {
  return { title, color: NEUTRAL_COLOUR, description: truncate(sentence, DESCRIPTION_MAX) };
}

/**
 * One button per other mode, so a moderator can see whether the verdict holds under another
 * calibration; with `retry`, the current mode too (after a transient failure).
 */
export function recheckButtons(
  key: string,
  currentMode: Mode,
  options: { retry?: boolean } = {},
): APIActionRowComponent<APIButtonComponent>[] {
  const buttons: APIButtonComponent[] = [];
  if (options.retry) {
    buttons.push({
      type: ComponentType.Button,
      style: ButtonStyle.Primary,
      label: 'Try again',
      custom_id: recheckCustomId(currentMode, key),
    });
  } else {
    for (const mode of otherModes(currentMode)) {
      buttons.push({
        type: ComponentType.Button,
        style: ButtonStyle.Secondary,
        label: `Re-check as ${modeName(mode)}`,
        custom_id: recheckCustomId(mode, key),
      });
    }
  }
  return [{ type: ComponentType.ActionRow, components: buttons }];
}
