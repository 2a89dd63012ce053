/**
 * Issue 18 in the Discord reply: a partly generated post is called so (not "mixed"), its generated
 * passages are quoted with their share of the post, and an uncertain score says it is only
 * uncertain. Pure rendering, so the result is built as the service shapes it.
 */
import { describe, expect, it } from 'vitest';
import { resultEmbed } from '../../adapters/discord/reply.ts';
import type { DetectResponse, Segment } from '../../src/contract.ts';
import { ORIGIN_WORDS } from '../../src/words.ts';

const HUMAN = 'Sorry for the late reply, I was stuck at the dentist all morning and my phone died.';
const GENERATED =
  'In today’s rapidly evolving landscape, it is essential to leverage **innovative** strategies that foster collaboration and unlock sustainable value.';
const TEXT = `${HUMAN} ${GENERATED}`;

function sentence(text: string, p: number): Segment {
  const start = TEXT.indexOf(text);
  return { start, end: start + text.length, text, ai_probability: p };
}

const PARTLY: DetectResponse = {
  ai_probability: 0.7,
  mode: 'general',
  language: 'en',
  segments: [sentence(HUMAN, 0.1), sentence(GENERATED, 0.96)],
  request_id: 'req_partly',
  model: 'm1',
  verdict: 'mixed',
  confidence: 'low',
  warnings: [],
  generated_spans: [{ start: TEXT.indexOf(GENERATED), end: TEXT.length, ai_probability: 0.96 }],
  generated_share: 0.6,
  composition: 'partly_ai',
  origin: 'partly_ai',
  polished_probability: null,
};

const context = { languageGiven: false, segments: true, source: { kind: 'text' as const } };

function field(embed: { fields?: { name: string; value: string }[] }, name: string): string | undefined {
  return embed.fields?.find((f) => f.name === name)?.value;
}

describe('generated passages in the Discord result', () => {
  it('calls a partly generated post "Partly AI-written" with its share and quotes the passage, markup escaped', () => {
    const embed = resultEmbed(PARTLY, context);
    expect(embed.title).toBe('🟠 Partly AI-written: about 60% of the words look generated');
    expect(embed.color).toBe(ORIGIN_WORDS.partly_ai.colour);
    expect(embed.description).toContain(
      "Partly generated: most of the text looks AI-generated (60% of its words, one passage); the rest reads as the author's own writing.",
    );
    expect(field(embed, 'Passages that look AI-generated (60% of the post)')).toBe(
      `**96%** “${GENERATED.replace('**innovative**', '\\*\\*innovative\\*\\*')}”`,
    );
  });

  it('keeps the verdict for a mixed post with no generated passage and says it is only uncertain', () => {
    const embed = resultEmbed(
      { ...PARTLY, generated_spans: [], generated_share: 0, composition: 'uncertain', origin: 'uncertain' },
      context,
    );
    expect(embed.title).toBe('🟡 Unclear');
    expect(embed.color).toBe(ORIGIN_WORDS.uncertain.colour);
    expect(embed.description).toContain('No passage stands out: no passage looks AI-generated on its own.');
    expect(embed.fields?.some((f) => f.name.startsWith('Passages that'))).toBe(false);
  });

  it('says partly AI-written under a likely-AI verdict too, never "most likely written by an AI system" beside a share', () => {
    const embed = resultEmbed({ ...PARTLY, verdict: 'likely_ai', confidence: 'medium' }, context);
    expect(embed.title).toBe('🟠 Partly AI-written: about 60% of the words look generated');
    expect(embed.description).not.toMatch(/most likely written by an AI/);
    expect(field(embed, 'Passages that look AI-generated (60% of the post)')).toMatch(/^\*\*96%\*\* “In today’s/);
  });

  it('keeps "Reads as AI-written" when the rest of a mostly generated post does not read as the author\'s', () => {
    const embed = resultEmbed({ ...PARTLY, verdict: 'likely_ai', confidence: 'medium', origin: 'ai_written' }, context);
    expect(embed.title).toBe('🔴 Reads as AI-written');
    expect(embed.color).toBe(ORIGIN_WORDS.ai_written.colour);
    expect(embed.description).toContain(
      "Mostly generated: most of the text looks AI-generated (60% of its words, one passage), and the rest does not read clearly as the author's own.",
    );
    expect(embed.description).not.toContain("the rest reads as the author's own");
    expect(embed.fields?.some((f) => f.name.startsWith('Passages that'))).toBe(false);
  });

  it('says "Reads as the author\'s own text, polished by an AI" when polished_probability says so', () => {
    const embed = resultEmbed(
      { ...PARTLY, verdict: 'likely_ai', confidence: 'high', composition: 'ai', origin: 'ai_polished', polished_probability: 0.82 },
      context,
    );
    expect(embed.title).toBe("🟣 Reads as the author's own text, polished by an AI");
    expect(embed.description).toContain("It reads as a person's own writing that an AI system polished, edited or rewrote");
    expect(embed.description).not.toMatch(/most likely written by an AI|generated/);
    expect(embed.description).toContain(
      'AI wording in most of the text: most of the text reads as AI wording (60% of its words, one passage)',
    );
  });
});
