/**
 * Discord's rendering of a message's documents: one embed per file, under the message's own result
 * when it has text. A checked file shows its name, what was read (type, pages, characters), the
 * verdict, probability and spans as a text check does; a file that could not be checked shows its
 * name and the sentence that says why.
 */
import { escapeMarkdown, type APIEmbed } from 'discord.js';
import type { FileOutcome } from '../chat/file-checks.ts';
import { summarizeComposition, summarizeResult, truncate } from '../chat/format.ts';
import { NEUTRAL_COLOUR, windowsField } from './reply.ts';
import { fileFacts, languageName, modeName, passagesTitle } from '../../src/words.ts';

/** Discord's limits (characters): an embed title, a field value, a description, and all embeds of a message together. */
const TITLE_MAX = 256;
const FIELD_VALUE_MAX = 1024;
const DESCRIPTION_MAX = 4096;
const MESSAGE_EMBEDS_MAX_CHARS = 6000;

/** A file name as a title: markup shown as typed, never a link or a ping. */
function fileTitle(name: string, after: string): string {
  return truncate(`📄 ${escapeMarkdown(name)}: ${after}`, TITLE_MAX);
}

export function fileEmbed(outcome: FileOutcome): APIEmbed {
  if (!outcome.ok) {
    return {
      title: fileTitle(outcome.file.name, 'not checked'),
      color: NEUTRAL_COLOUR,
      description: truncate(outcome.sentence, DESCRIPTION_MAX),
    };
  }
  const { result } = outcome;
  const summary = summarizeResult(result, 200);
  const composition = summarizeComposition(result, { passageChars: 200, of: 'file' });
  const lines = [fileFacts(result.file), `${summary.bar} **${summary.percent}** probability that an AI wrote it`];
  if (summary.originLine) lines.push('', summary.originLine);
  if (composition.line) lines.push('', composition.line);
  if (summary.warningLines.length > 0) lines.push('', ...summary.warningLines.map((line) => `⚠️ ${line}`));
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: 'Mode', value: modeName(summary.mode), inline: true },
    { name: 'Language', value: `${languageName(summary.language)} (detected)`, inline: true },
    { name: 'Confidence', value: result.confidence.charAt(0).toUpperCase() + result.confidence.slice(1), inline: true },
  ];
  const map = windowsField(summary);
  if (map) fields.push(map);
  if (composition.passages.length > 0) {
    fields.push({
      name: composition.title,
      value: truncate(composition.passages.map((p) => `**${p.percent}** “${escapeMarkdown(p.text)}”`).join('\n'), FIELD_VALUE_MAX),
      inline: false,
    });
  }
  if (summary.highlights.length > 0) {
    fields.push({
      name: 'Most AI-like sentences',
      value: truncate(
        summary.highlights.map((h) => `**${h.percent}** “${escapeMarkdown(h.text.replace(/\s+/g, ' '))}”`).join('\n'),
        FIELD_VALUE_MAX,
      ),
      inline: false,
    });
  }
  fields.push({ name: 'Request ID', value: `\`${summary.requestId}\``, inline: false });
  return {
    title: fileTitle(result.file.name || outcome.file.name, summary.headline),
    color: summary.colour,
    description: truncate(lines.join('\n'), DESCRIPTION_MAX),
    fields,
    footer: { text: `model ${summary.model} · a score is evidence, not proof` },
  };
}

function embedChars(embed: APIEmbed): number {
  return (
    (embed.title?.length ?? 0) +
    (embed.description?.length ?? 0) +
    (embed.footer?.text.length ?? 0) +
    (embed.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}

/**
 * Discord refuses a message whose embeds hold more than 6,000 characters together: quoted sentences
 * and passages of the file embeds go first (from the last file), then their descriptions are cut.
 */
export function fitEmbeds(embeds: APIEmbed[]): APIEmbed[] {
  const out = embeds.map((e) => ({ ...e, fields: e.fields ? [...e.fields] : undefined }));
  const total = (): number => out.reduce((n, e) => n + embedChars(e), 0);
  const quoting = (name: string): boolean =>
    name === 'Most AI-like sentences' || name.startsWith(passagesTitle('ai_written')) || name.startsWith(passagesTitle('ai_polished'));
  for (let i = out.length - 1; i >= 0 && total() > MESSAGE_EMBEDS_MAX_CHARS; i--) {
    const embed = out[i] as APIEmbed;
    if (!embed.title?.startsWith('📄') || !embed.fields) continue;
    embed.fields = embed.fields.filter((f) => !quoting(f.name));
  }
  for (let i = out.length - 1; i >= 0 && total() > MESSAGE_EMBEDS_MAX_CHARS; i--) {
    const embed = out[i] as APIEmbed;
    if (!embed.description) continue;
    const over = total() - MESSAGE_EMBEDS_MAX_CHARS;
    embed.description = truncate(embed.description, Math.max(80, embed.description.length - over));
  }
  return out;
}
