/**
 * The mod-log's note when a watched channel's reviews fall under the server's precision bound
 * (adapters/chat/watch/precision.ts), with the button that applies the stricter preset. Only a
 * member with Manage Server changes anything; the bot never changes the preset on its own.
 */
import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponent } from 'discord.js';
import { isPreset } from '../../chat/watch/presets.ts';
import { type PrecisionMarkup, type Suggestion, suggestionSentence } from '../../chat/watch/precision.ts';
import type { Preset } from '../../chat/watch/types.ts';

const APPLY_PREFIX = 'watch-apply';

export const DISCORD_PRECISION_MARKUP: PrecisionMarkup = {
  channel: (id) => `<#${id}>`,
  // Shown as the member's name; the report and the note are sent with no mention allowed.
  person: (id) => `<@${id}>`,
  bold: (text) => `**${text}**`,
  presetCommand: (preset) => `\`/detect-settings preset preset:${preset}\``,
};

export function applyCustomId(preset: Preset): string {
  return `${APPLY_PREFIX}:${preset}`;
}

export function parseApplyCustomId(customId: string): Preset | undefined {
  const [prefix, preset, ...rest] = customId.split(':');
  return prefix === APPLY_PREFIX && preset && rest.length === 0 && isPreset(preset) ? preset : undefined;
}

export function suggestionPayload(suggestion: Suggestion): {
  content: string;
  components: APIActionRowComponent<APIButtonComponent>[];
} {
  return {
    content: suggestionSentence(suggestion, DISCORD_PRECISION_MARKUP),
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.Button,
            style: ButtonStyle.Primary,
            label: `Apply ${suggestion.to}`,
            custom_id: applyCustomId(suggestion.to),
          },
        ],
      },
    ],
  };
}
