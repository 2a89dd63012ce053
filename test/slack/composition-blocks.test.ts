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
  it('calls a mixed but partly generated post "Partly AI-generated" and quotes the passage with its share', () => {
    const message = buildResultMessage({ result: PARTLY, checkId: 'c1', source: { kind: 'text', words: 50 }, text: TEXT });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    const verdict = section(message.blocks, 'verdict')!;
    expect(verdict.split('\n')[0]).toBe('*🟠 Partly AI-generated*');
    expect(verdict).toContain(
      "Partly generated: One passage looks AI-written (55% of the post); the rest reads as the author's own writing.",
    );
    expect(section(message.blocks, 'generated_passages')).toBe(`*Generated passages* (55% of the post)\n> “${GENERATED}”  *97%*`);
  });

  it('says "uncertain" for a mixed post where no passage looks generated, with no passages block', () => {
    const uncertain: DetectResponse = { ...PARTLY, generated_spans: [], generated_share: 0, composition: 'uncertain' };
    const message = buildResultMessage({ result: uncertain, checkId: 'c2', source: { kind: 'text', words: 50 }, text: TEXT });
    const verdict = section(message.blocks, 'verdict')!;
    expect(verdict.split('\n')[0]).toBe('*🟡 Mixed or uncertain*');
    expect(verdict).toContain(
      'Uncertain: the score falls between the thresholds, so the detector cannot tell either way. No passage stands out',
    );
    expect(section(message.blocks, 'generated_passages')).toBeUndefined();
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
