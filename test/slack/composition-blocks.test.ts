/**
 * Issue 18 in the Slack reply: a partly generated post is called so (not "mixed"), its generated
 * passages are quoted with their share of the post, and an uncertain score says it is only
 * uncertain. Pure layout, so the result is built as the service shapes it.
 */
import { describe, expect, it } from 'vitest';
import { validateBlockKit } from '../../adapters/slack/block-limits.ts';
import { buildResultMessage } from '../../adapters/slack/blocks.ts';
import type { DetectResponse, Segment } from '../../src/contract.ts';

const HUMAN = 'Sorry for the late reply, I was stuck at the dentist all morning and my phone died.';
const GENERATED =
  'In today’s rapidly evolving landscape, it is essential to leverage innovative strategies that foster collaboration, drive efficiency and unlock sustainable value for all stakeholders.';
const TEXT = `${HUMAN} ${GENERATED} Anyway, see you at five & bring <snacks>.`;

function sentence(text: string, p: number): Segment {
  const start = TEXT.indexOf(text);
  return { start, end: start + text.length, text, ai_probability: p };
}

const PARTLY: DetectResponse = {
  ai_probability: 0.71,
  mode: 'general',
  language: 'en',
  segments: [sentence(HUMAN, 0.12), sentence(GENERATED, 0.97), sentence('Anyway, see you at five & bring <snacks>.', 0.08)],
  request_id: 'req_partly',
  model: 'm1',
  verdict: 'mixed',
  confidence: 'low',
  warnings: [],
  generated_spans: [{ start: TEXT.indexOf(GENERATED), end: TEXT.indexOf(GENERATED) + GENERATED.length, ai_probability: 0.97 }],
  generated_share: 0.55,
  composition: 'partly_ai',
  origin: 'partly_ai',
  polished_probability: null,
};

function section(blocks: unknown[], id: string): string | undefined {
  return (blocks as { block_id?: string; text?: { text: string } }[]).find((b) => b.block_id === id)?.text?.text;
}

describe('generated passages in the Slack result', () => {
  it('calls a partly generated post "Partly AI-written" with its share and quotes the passage', () => {
    const message = buildResultMessage({ result: PARTLY, checkId: 'c1', source: { kind: 'text', words: 50 }, text: TEXT });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    const verdict = section(message.blocks, 'verdict')!;
    expect(verdict.split('\n')[0]).toBe('*🟠 Partly AI-written: about 55% of the words look generated*');
    expect(verdict).toContain(
      "Partly generated: about half of the text looks AI-generated (55% of its words, one passage); the rest reads as the author's own writing.",
    );
    expect(verdict).not.toMatch(/most likely written by an AI/);
    expect(message.text).toBe(
      '🟠 Partly AI-written: about 55% of the words look generated; the whole text 71% AI-like (general, en) (low confidence). Request id: req_partly',
    );
    expect(section(message.blocks, 'generated_passages')).toBe(
      `*Passages that look AI-generated (55% of the post)*\n> “${GENERATED}”  *97%*`,
    );
  });

  it('says "unclear" for a mixed post where no passage looks generated, with no passages block', () => {
    const uncertain: DetectResponse = { ...PARTLY, generated_spans: [], generated_share: 0, composition: 'uncertain', origin: 'uncertain' };
    const message = buildResultMessage({ result: uncertain, checkId: 'c2', source: { kind: 'text', words: 50 }, text: TEXT });
    const verdict = section(message.blocks, 'verdict')!;
    expect(verdict.split('\n')[0]).toBe('*🟡 Unclear*');
    expect(verdict).toContain('No passage stands out: no passage looks AI-generated on its own.');
    expect(section(message.blocks, 'generated_passages')).toBeUndefined();
  });

  it('keeps "Reads as AI-written" for a likely-AI post whose rest does not read as the author\'s, and says polished when it is', () => {
    const written: DetectResponse = {
      ...PARTLY,
      verdict: 'likely_ai',
      confidence: 'medium',
      origin: 'ai_written',
      polished_probability: 0.21,
    };
    const writtenVerdict = section(
      buildResultMessage({ result: written, checkId: 'c4', source: { kind: 'text', words: 50 }, text: TEXT }).blocks,
      'verdict',
    )!;
    expect(writtenVerdict.split('\n')[0]).toBe('*🔴 Reads as AI-written*');
    expect(writtenVerdict).toContain(
      "Generated in places: about half of the text looks AI-generated (55% of its words, one passage), and the rest does not read clearly as the author's own.",
    );
    expect(writtenVerdict).not.toContain('Partly');
    const polished: DetectResponse = { ...written, composition: 'ai', origin: 'ai_polished', polished_probability: 0.77 };
    const message = buildResultMessage({ result: polished, checkId: 'c5', source: { kind: 'text', words: 50 }, text: TEXT });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    const polishedVerdict = section(message.blocks, 'verdict')!;
    expect(polishedVerdict.split('\n')[0]).toBe("*🟣 Reads as the author's own text, polished by an AI*");
    expect(polishedVerdict).toContain(
      "It reads as a person's own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.",
    );
    expect(message.text).toMatch(/^🟣 Reads as the author's own text, polished by an AI: 71% AI-like/);
  });

  it('escapes quoted passages so a checked text cannot become a mention or a link', () => {
    const tricky = 'Click <https://evil.example|here> & ping <!channel> now, it is totally essential for all stakeholders today.';
    const text = `${HUMAN} ${tricky}`;
    const result: DetectResponse = {
      ...PARTLY,
      segments: [],
      generated_spans: [{ start: text.indexOf(tricky), end: text.length, ai_probability: 0.9 }],
    };
    const message = buildResultMessage({ result, checkId: 'c3', source: { kind: 'text', words: 40 }, text });
    const passages = section(message.blocks, 'generated_passages')!;
    expect(passages).toContain('&lt;https://evil.example|here&gt; &amp; ping &lt;!channel&gt;');
    expect(passages).not.toContain('<!channel>');
  });
});
