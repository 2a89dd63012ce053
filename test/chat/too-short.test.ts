/**
 * Below the evidence floor (the engine's `too_little_evidence`) the bots say the text is too short to
 * judge and show no percentage: "Hi" used to read as 52% "Mixed", and a five-word clause as
 * "Likely human-written: 50% AI-like". The answers come from the real engine; the layouts are the
 * ones both apps send.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { authorEmbed } from '../../adapters/discord/author-reply.ts';
import { modLogLine } from '../../adapters/discord/modlog.ts';
import { resultEmbed } from '../../adapters/discord/reply.ts';
import { oneLineSummary, summarizeAuthorResult, summarizeComposition, summarizeResult } from '../../adapters/chat/format.ts';
import { buildAuthorResultMessage } from '../../adapters/slack/author-blocks.ts';
import { buildDetailsModal, buildResultMessage } from '../../adapters/slack/blocks.ts';
import type { DetectAuthorResponse, DetectResponse } from '../../src/contract.ts';
import { createDetector, type Detector } from '../../src/detector/index.ts';
import { TOO_SHORT } from '../../src/words.ts';

const TOO_SHORT_HEADLINE = `${TOO_SHORT.emoji} ${TOO_SHORT.label}`;

let detector: Detector;
beforeAll(async () => {
  detector = await createDetector();
});

const PERCENT = /\d\s*%/;

function answer(text: string, mode: DetectResponse['mode'] = 'general'): DetectResponse {
  return { ...detector.detect(text, { mode, segments: true }), request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O' } as DetectResponse;
}

describe('a text below the evidence floor', () => {
  for (const [text, mode] of [
    ['Hi', 'general'],
    ['The parties agree to this.', 'legal'],
  ] as const) {
    it(`says "${text}" is too short to judge, with no percentage, in Slack and Discord`, () => {
      const result = answer(text, mode);
      expect(result.warnings).toContain('too_little_evidence');
      const summary = summarizeResult(result);
      expect(summary.tooShort).toBe(true);
      expect(summary.headline).toBe(TOO_SHORT_HEADLINE);
      expect(summary.tooShortLine).toMatch(/^Under about 40 words the detector cannot tell/);
      // The headline says it: the warnings that only repeat it are not listed again.
      expect(summary.warningLines.join(' ')).not.toMatch(/short|too few words/i);
      expect(oneLineSummary(summary)).not.toMatch(PERCENT);
      expect(summarizeComposition(result).line).toBeUndefined();

      const slack = buildResultMessage({ result, checkId: 'c', source: { kind: 'text', words: 1 }, text });
      expect(JSON.stringify(slack)).not.toMatch(PERCENT);
      expect(JSON.stringify(slack.blocks.find((b) => b.block_id === 'verdict'))).toContain('Too short to judge');
      expect(JSON.stringify(buildDetailsModal(result))).not.toMatch(PERCENT);

      const embed = resultEmbed(result, { languageGiven: false, segments: true, source: { kind: 'text' } });
      expect(embed.title).toBe(TOO_SHORT_HEADLINE);
      expect(JSON.stringify(embed)).not.toMatch(PERCENT);
      const log = modLogLine({ userId: '1', link: 'https://discord.com/channels/1/2/3', authorId: '4', mode, outcome: { result } });
      expect(log).toContain(TOO_SHORT_HEADLINE);
      expect(log).not.toMatch(PERCENT);
    });
  }

  it('keeps the score of a text over the floor', () => {
    const result = answer(
      'The committee met on Tuesday to discuss the proposed changes to the city budget. Several members argued that the road repairs should come first, since the winter had left many streets in poor condition. Others said the library needed the money more.',
    );
    expect(result.warnings).not.toContain('too_little_evidence');
    const summary = summarizeResult(result);
    expect(summary.tooShort).toBe(false);
    expect(JSON.stringify(buildResultMessage({ result, checkId: 'c', source: { kind: 'text', words: 45 } }).blocks)).toMatch(PERCENT);
    expect(resultEmbed(result, { languageGiven: false, segments: false, source: { kind: 'text' } }).description).toMatch(PERCENT);
  });

  it('shows a member held back below the floor without a percentage', () => {
    const response = {
      ...detector.detectAuthor(['Hi', 'ok thanks, see you tomorrow']),
      request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O',
    } as DetectAuthorResponse;
    expect(response.warnings).toContain('too_little_evidence');
    const summary = summarizeAuthorResult(response, [{ excerpt: 'Hi' }, { excerpt: 'ok thanks, see you tomorrow' }], new Map());
    expect(summary.heldBack).toBe(true);
    expect(summary.heldBackLine).toMatch(/^Too little to judge/);
    expect(summary.top).toEqual([]);
    const context = { memberId: 'U1', read: 2, window: { maxMessages: 50, days: 30 }, scanLimitHit: false };
    expect(JSON.stringify(buildAuthorResultMessage(summary, context))).not.toMatch(PERCENT);
    expect(JSON.stringify(authorEmbed(summary, context))).not.toMatch(PERCENT);
  });
});
