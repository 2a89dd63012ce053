import { describe, expect, it } from 'vitest';
import { languageLabel, modeLabel, oneLineSummary, otherModes, segmentLines, summarizeResult } from '../../adapters/chat/format.ts';
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
};

describe('format additions', () => {
  it('lists the other modes and labels', () => {
    expect(otherModes('academic')).toEqual(['general', 'financial', 'legal']);
    expect(modeLabel('financial')).toBe('Financial');
    expect(languageLabel('tr')).toBe('Turkish');
    expect(languageLabel('xx')).toBe('xx');
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
