import { describe, expect, it } from 'vitest';
import {
  excludedNote,
  mostAiLikeSentences,
  oneLineSummary,
  otherModes,
  segmentLines,
  summarizeResult,
} from '../../adapters/chat/format.ts';
import { warningSentence } from '../../src/words.ts';
import type { DetectResponse } from '../../src/client/types.ts';

const result: DetectResponse = {
  ai_probability: 0.2,
  mode: 'general',
  language: 'tr',
  segments: [
    { start: 20, end: 35, text: 'Second   one.', ai_probability: 0.9 },
    { start: 0, end: 19, text: 'First sentence here.', ai_probability: 0.004 },
  ],
  request_id: 'req_A',
  model: 'm1',
  verdict: 'likely_human',
  confidence: 'low',
  warnings: ['short_text'],
  generated_spans: [],
  generated_share: null,
  composition: null,
  origin: 'human',
  polished_probability: null,
};

describe('most AI-like sentences', () => {
  const seg = (start: number, text: string, ai_probability: number) => ({ start, end: start + text.length, text, ai_probability });

  it('quotes a sentence the text repeats once, and fills the other places with the next ones', () => {
    const segments = [
      seg(0, 'We are thrilled to announce our launch.', 0.97),
      seg(40, 'Lunch was late.', 0.2),
      seg(56, 'We are thrilled to announce our launch.', 0.97),
      seg(96, 'We are  thrilled to announce our launch. ', 0.96),
      seg(137, 'Tickets are on sale now.', 0.6),
    ];
    expect(mostAiLikeSentences(segments).map((s) => [s.start, s.text])).toEqual([
      [0, 'We are thrilled to announce our launch.'],
      [40, 'Lunch was late.'],
      [137, 'Tickets are on sale now.'],
    ]);
  });

  it('quotes nothing when every sentence is the same one', () => {
    expect(mostAiLikeSentences([seg(0, 'Great launch!', 0.8), seg(14, 'Great launch!', 0.8), seg(28, 'great launch!', 0.7)])).toEqual([]);
  });
});

describe('format additions', () => {
  it('lists the other modes', () => {
    expect(otherModes('academic')).toEqual(['general', 'financial', 'legal']);
  });

  it('summarises in one line with the low-confidence note', () => {
    expect(oneLineSummary(summarizeResult(result))).toBe('🟢 Likely human-written: 20% AI-like (general, tr) (low confidence: short text)');
  });

  it('gives every sentence in text order with a clamped percentage', () => {
    expect(segmentLines(result.segments)).toEqual([
      { index: 1, percent: '1%', bar: '░░░░░', text: 'First sentence here.', ai_probability: 0.004 },
      { index: 2, percent: '90%', bar: '█████', text: 'Second one.', ai_probability: 0.9 },
    ]);
  });
});

describe('warnings', () => {
  const long = (over: Partial<DetectResponse>): DetectResponse => ({
    ...result,
    confidence: 'low',
    verdict: 'mixed',
    origin: 'uncertain',
    warnings: [],
    ...over,
  });

  it('shows no guessed reason when the engine gave none (a long text with low confidence)', () => {
    const summary = summarizeResult(long({}));
    expect(summary.lowConfidence).toBe(true);
    expect(summary.warningLines).toEqual([]);
    expect(oneLineSummary(summary)).toBe('🟡 Unclear: 20% AI-like (general, tr) (low confidence)');
  });

  it('gives one sentence per engine warning, in its order, and a sentence for codes not known yet', () => {
    const summary = summarizeResult(long({ warnings: ['language_uncertain', 'out_of_domain', 'brand_new_code', 'language_uncertain'] }));
    expect(summary.warningCodes).toEqual(['language_uncertain', 'out_of_domain', 'brand_new_code']);
    expect(summary.warningLines).toEqual([
      warningSentence('language_uncertain'),
      warningSentence('out_of_domain'),
      'The detector flagged this result (“brand_new_code”), so treat the score with extra care.',
    ]);
  });

  it('says why a score leaning AI is not called AI-written, and does not list that warning again', () => {
    const summary = summarizeResult(long({ ai_probability: 0.95, warnings: ['strict_threshold'] }));
    expect(summary.headline).toBe('🟡 Unclear');
    expect(summary.originLine).toMatch(
      /higher than most human texts get, but under the bar this server holds before it calls a text AI-written/,
    );
    expect(summary.warningLines).toEqual([]);
  });

  it('notes what was left out of the score', () => {
    expect(excludedNote({ codeBlocks: 1, mentions: 2 })).toBe(
      "Not scored: 1 code block and 2 mentions (code, names and addresses are not the author's prose).",
    );
    expect(excludedNote({ codeBlocks: 0, mentions: 1, links: 3 })).toBe(
      "Not scored: 1 mention and 3 web addresses (code, names and addresses are not the author's prose).",
    );
    expect(excludedNote({ codeBlocks: 2, mentions: 1, links: 1 })).toBe(
      "Not scored: 2 code blocks, 1 mention and 1 web address (code, names and addresses are not the author's prose).",
    );
    expect(excludedNote({ codeBlocks: 0, mentions: 0 })).toBeUndefined();
    expect(excludedNote(undefined)).toBeUndefined();
  });
});
