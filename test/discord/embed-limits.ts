/**
 * Discord's embed limits (characters), from its "Embed Limits" table, checked on what a bot sends:
 * Discord refuses the whole message when one is passed. Lengths are counted in UTF-16 units, which
 * is never less than Discord's count.
 */
import type { APIEmbed } from 'discord.js';

const EMBED = { title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, total: 6000, perMessage: 10 };

function embedChars(embed: APIEmbed): number {
  return (
    (embed.title ?? '').length +
    (embed.description ?? '').length +
    (embed.footer?.text.length ?? 0) +
    (embed.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}

/** Every limit one embed breaks; empty when it is valid. */
export function embedProblems(embed: APIEmbed): string[] {
  const problems: string[] = [];
  const fields = embed.fields ?? [];
  if ((embed.title ?? '').length > EMBED.title) problems.push('title');
  if ((embed.description ?? '').length > EMBED.description) problems.push('description');
  if (fields.length > EMBED.fields) problems.push('fields');
  for (const f of fields)
    if (f.name.length > EMBED.fieldName || f.value.length > EMBED.fieldValue || !f.value) problems.push(`field ${f.name}`);
  const total = embedChars(embed);
  if (total > EMBED.total) problems.push(`total ${total}`);
  return problems;
}

/** Every limit the embeds of one message break, each embed's and theirs together (6,000 characters, 10 embeds). */
export function messageEmbedProblems(embeds: readonly APIEmbed[]): string[] {
  const problems = embeds.flatMap((embed, i) => embedProblems(embed).map((p) => `embed ${i}: ${p}`));
  if (embeds.length > EMBED.perMessage) problems.push(`${embeds.length} embeds`);
  const total = embeds.reduce((n, e) => n + embedChars(e), 0);
  if (total > EMBED.total) problems.push(`all embeds: ${total}`);
  return problems;
}
