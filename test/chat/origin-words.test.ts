/**
 * The headline (`origin`, issue 31) says the same thing everywhere: the bots' wording
 * (adapters/chat/origin-words.ts), the CLI's and the web page's, for every origin; and the bots'
 * summaries follow the answer's origin, whether `polished_probability` is a number or null.
 */
import { describe, expect, it } from 'vitest';
import { summarizeAuthorResult, summarizeComposition, summarizeResult } from '../../adapters/chat/format.ts';
import { ORIGIN_WORDS, originHeadline, originLabel, originOfAnswer } from '../../adapters/chat/origin-words.ts';
import { ORIGIN_WORDS as CLI_WORDS, originLabel as cliLabel, originOfAnswer as cliOrigin } from '../../src/cli/detect.ts';
import { ORIGINS, type DetectAuthorResponse, type DetectResponse, type Origin } from '../../src/contract.ts';
import { originOf } from '../../src/detector/origin.ts';

interface PageWording {
  ORIGINS: Record<Origin, { label: string; sentence: string }>;
  originOf(answer: object): Origin;
  originWords(answer: object): { label: string; sentence: string };
  compositionWords(answer: object): { label: string; sentence: string } | undefined;
}
const page = (await import(new URL('../../src/service/playground/assets/wording.js', import.meta.url).href)) as PageWording;

const TEXT = 'I wrote this part myself. The integration of advanced methodologies facilitates robust outcomes.';
const BASE: DetectResponse = {
  ai_probability: 0.97,
  mode: 'general',
  language: 'en',
  segments: [
    { start: 0, end: 25, text: 'I wrote this part myself.', ai_probability: 0.1 },
    { start: 26, end: TEXT.length, text: TEXT.slice(26), ai_probability: 0.96 },
  ],
  request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O',
  model: 'm1',
  verdict: 'likely_ai',
  confidence: 'high',
  warnings: [],
  generated_spans: [],
  generated_share: null,
  composition: null,
  origin: 'ai_written',
  polished_probability: null,
};

/** The answer as the engine would head it, from its own fields. */
function answer(over: Partial<DetectResponse>): DetectResponse {
  const r = { ...BASE, ...over };
  return { ...r, origin: originOf(r) };
}

describe('one wording for the bots, the CLI and the page', () => {
  it('has the same label and sentence for every origin, the page keeping its "Unclear"', () => {
    for (const origin of ORIGINS) {
      expect(CLI_WORDS[origin], origin).toEqual({ label: ORIGIN_WORDS[origin].label, sentence: ORIGIN_WORDS[origin].sentence });
      if (origin === 'uncertain') expect(page.ORIGINS[origin].label).toBe('Unclear');
      else expect(page.ORIGINS[origin], origin).toEqual({ label: ORIGIN_WORDS[origin].label, sentence: ORIGIN_WORDS[origin].sentence });
    }
    expect(ORIGIN_WORDS.ai_written.label).toBe('Reads as AI-written');
    expect(ORIGIN_WORDS.ai_written.sentence).toBe('This text was most likely written by an AI system.');
    expect(ORIGIN_WORDS.ai_polished.label).toBe("Reads as the author's own text, polished by an AI");
  });

  it('words the partly headline with its share the same way in all three', () => {
    const partly = answer({
      verdict: 'mixed',
      composition: 'partly_ai',
      generated_share: 0.554,
      generated_spans: [{ start: 26, end: TEXT.length, ai_probability: 0.96 }],
    });
    expect(partly.origin).toBe('partly_ai');
    const label = 'Partly AI-written: about 55% of the words look generated';
    expect(originLabel(partly.origin, partly.generated_share)).toBe(label);
    expect(cliLabel(partly.origin, partly.generated_share)).toBe(label);
    expect(page.originWords(partly).label).toBe(label);
    expect(originHeadline(partly.origin, partly.generated_share)).toBe(`🟠 ${label}`);
  });

  it('reads an answer without origin (an older server) through its verdict and composition, alike in all three', () => {
    const cases: Array<[Partial<DetectResponse>, Origin]> = [
      [{ verdict: 'likely_ai' }, 'ai_written'],
      [{ verdict: 'mixed' }, 'uncertain'],
      [{ verdict: 'likely_human' }, 'human'],
      [{ verdict: 'mixed', composition: 'partly_ai' }, 'partly_ai'],
    ];
    for (const [over, expected] of cases) {
      const { origin: _drop, ...old } = { ...BASE, ...over };
      expect(originOfAnswer(old), JSON.stringify(over)).toBe(expected);
      expect(cliOrigin(old), JSON.stringify(over)).toBe(expected);
      expect(page.originOf(old), JSON.stringify(over)).toBe(expected);
    }
    // A value newer than this build is never shown raw.
    expect(originOfAnswer({ ...BASE, origin: 'ai_assisted' as Origin })).toBe('ai_written');
    expect(page.originOf({ ...BASE, origin: 'ai_assisted' })).toBe('ai_written');
  });
});

describe('the bots follow the origin', () => {
  it('heads a likely-AI answer by polished_probability: polished from 0.65, AI-written below it or without one', () => {
    const polished = summarizeResult(answer({ polished_probability: 0.82 }));
    expect(polished.origin).toBe('ai_polished');
    expect(polished.headline).toBe("🟣 Reads as the author's own text, polished by an AI");
    expect(polished.colour).toBe(ORIGIN_WORDS.ai_polished.colour);
    expect(polished.originLine).toBe(ORIGIN_WORDS.ai_polished.sentence);
    for (const p of [0.64, 0.5, 0, null]) {
      const written = summarizeResult(answer({ polished_probability: p }));
      expect(written.headline, String(p)).toBe('🔴 Reads as AI-written');
      expect(written.originLine).toBeUndefined();
    }
  });

  it('heads a post with a generated part beside a human one as partly AI-written, whatever its verdict', () => {
    for (const verdict of ['likely_ai', 'mixed', 'likely_human'] as const) {
      const r = answer({
        verdict,
        polished_probability: 0.9,
        composition: 'partly_ai',
        generated_share: 0.5,
        generated_spans: [{ start: 26, end: TEXT.length, ai_probability: 0.96 }],
      });
      const summary = summarizeResult(r);
      expect(summary.headline, verdict).toBe('🟠 Partly AI-written: about 50% of the words look generated');
      const composition = summarizeComposition(r, { text: TEXT });
      expect(composition.kind).toBe('partly_generated');
      expect(composition.line).toBe("One passage looks AI-written; the rest reads as the author's own writing.");
      expect([summary.headline, summary.originLine, composition.line].join(' ')).not.toMatch(/most likely written by an AI/);
    }
  });

  it('says "too short to judge" under the evidence floor, not a headline', () => {
    const short = summarizeResult(
      answer({ verdict: 'mixed', confidence: 'low', warnings: ['short_text', 'too_little_evidence'], polished_probability: null }),
    );
    expect(short.origin).toBe('uncertain');
    expect(short.headline).toBe('⚪ Too short to judge');
    expect(short.originLine).toBeUndefined();
  });

  it('heads a member check by its origin, polished or written', () => {
    const author: DetectAuthorResponse = {
      ai_probability: 0.95,
      mode: 'general',
      language: 'en',
      verdict: 'likely_ai',
      confidence: 'high',
      warnings: [],
      messages_used: 12,
      words_used: 700,
      evidence_needed: null,
      messages: [{ index: 0, words: 700, ai_probability: 0.95, skipped: null }],
      request_id: 'req_author',
      model: 'm1',
      origin: 'ai_polished',
      polished_probability: 0.71,
    };
    const polished = summarizeAuthorResult(author, [{ excerpt: 'x' }], new Map());
    expect(polished.headline).toBe("🟣 Reads as the author's own text, polished by an AI");
    expect(polished.originLine).toMatch(/^Their messages read as their own writing that an AI system polished/);
    const written = summarizeAuthorResult({ ...author, origin: 'ai_written', polished_probability: 0.2 }, [{ excerpt: 'x' }], new Map());
    expect(written.headline).toBe('🔴 Reads as AI-written');
    expect(written.originLine).toBeUndefined();
    const held = summarizeAuthorResult(
      { ...author, verdict: 'mixed', origin: 'uncertain', polished_probability: null, evidence_needed: { messages: 0, words: 12 } },
      [{ excerpt: 'x' }],
      new Map(),
    );
    expect(held.origin).toBe('uncertain');
    expect(held.headline).toBe('🟡 Too little to judge yet');
  });
});

describe('the page follows the origin', () => {
  it("never says the rest is the author's own when the headline stays AI-written", () => {
    const mostly = {
      ...BASE,
      composition: 'partly_ai' as const,
      generated_share: 0.8,
      generated_spans: [{ start: 26, end: TEXT.length, ai_probability: 0.96 }],
      origin: 'ai_written' as const,
    };
    expect(page.originWords(mostly).label).toBe('Reads as AI-written');
    expect(page.compositionWords(mostly)).toEqual({
      label: 'Mostly generated',
      sentence:
        "About 80% of the words look AI-generated (one passage, outlined below), and the rest does not read clearly as the author's own writing.",
    });
    expect(page.originWords({ ...mostly, origin: 'ai_polished', polished_probability: 0.66 }).label).toBe(
      "Reads as the author's own text, polished by an AI",
    );
  });
});
