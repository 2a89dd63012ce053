/**
 * The Block Kit the app sends: a snapshot of a typical result (so layout changes are reviewed), and
 * Slack's limits checked on that and on hostile inputs (huge sentences, markup-heavy text, hundreds
 * of sentences).
 */
import { describe, expect, it } from 'vitest';
import { LIMITS, validateBlockKit, validateModal } from '../../adapters/slack/block-limits.ts';
import {
  buildAuditMessage,
  buildDetailsModal,
  buildErrorMessage,
  buildHelpMessage,
  buildResultMessage,
  decodeButtonValue,
  encodeButtonValue,
  escapeAndFit,
} from '../../adapters/slack/blocks.ts';
import { helpLines } from '../../adapters/chat/modes.ts';
import type { DetectResponse, Segment } from '../../src/client/types.ts';

function segmentsOf(sentences: string[], scores: number[]): Segment[] {
  const out: Segment[] = [];
  let start = 0;
  sentences.forEach((text, i) => {
    out.push({ start, end: start + text.length, text, ai_probability: scores[i % scores.length] ?? 0.5 });
    start += text.length + 1;
  });
  return out;
}

// The input of a pure layout function: a response shaped exactly like the service's.
const SENTENCES = [
  'The committee reviewed the proposal in detail over the course of the spring term.',
  'It is important to note that the findings suggest a significant improvement in overall outcomes.',
  'Furthermore, the results demonstrate a clear and consistent trend across every cohort.',
  'My cousin said the cafeteria still serves that awful soup on Tuesdays.',
  'In conclusion, these insights underscore the importance of continued investment.',
];
const TYPICAL: DetectResponse = {
  ai_probability: 0.8731,
  mode: 'academic',
  language: 'en',
  segments: segmentsOf(SENTENCES, [0.58, 0.998, 0.994, 0.12, 0.97]),
  request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O',
  model: 'td1-1af1a983cebe',
  verdict: 'likely_ai',
  confidence: 'medium',
  warnings: [],
  generated_spans: [],
  generated_share: null,
  composition: null,
  origin: 'ai_written',
  polished_probability: null,
};

describe('result message', () => {
  it('matches the reviewed snapshot and Block Kit limits', async () => {
    const message = buildResultMessage({
      result: TYPICAL,
      checkId: 'chk_fixed',
      source: { kind: 'message', authorId: 'U0AUTHOR', permalink: 'https://test.slack.com/archives/C1/p1700000000000100' },
      text: SENTENCES.join(' '),
    });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    expect(message.blocks.length).toBeLessThanOrEqual(LIMITS.messageBlocks);
    await expect(`${JSON.stringify(message, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/result-message.json');
  });

  it('quotes the three most AI-like sentences in text order, and the verdict, bar and percentage', () => {
    const message = buildResultMessage({ result: TYPICAL, checkId: 'c', source: { kind: 'text', words: 60 } });
    const json = JSON.stringify(message.blocks);
    expect(json).toContain('`█████████░`  *87%*');
    const highlights = (message.blocks.find((b) => b.block_id === 'highlights') as { text: { text: string } }).text.text;
    const lines = highlights.split('\n').slice(1);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^> “It is important to note .*” {2}\*99%\*$/);
    expect(lines[1]).toMatch(/^> “Furthermore, the results .*” {2}\*99%\*$/);
    expect(lines[2]).toMatch(/^> “In conclusion, these .*” {2}\*97%\*$/);
    expect(message.text).toBe('🔴 Reads as AI-written: 87% AI-like (academic, en). Request id: req_01JD3X5M9Q2W8E7R6T5Y4U3I2O');
  });

  it('warns about short texts and shows no highlights for a single sentence', () => {
    const short: DetectResponse = { ...TYPICAL, segments: TYPICAL.segments.slice(0, 1), confidence: 'low', warnings: ['short_text'] };
    const message = buildResultMessage({ result: short, checkId: 'c', source: { kind: 'text', words: 14 } });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    expect(JSON.stringify(message.blocks)).toContain('weak guess');
    expect(message.blocks.some((b) => b.block_id === 'highlights')).toBe(false);
  });

  it('stays within limits with enormous, markup-heavy sentences and escapes them', () => {
    const nasty = `<!channel> & <@U123> *bold* ${'&<>'.repeat(2000)}`;
    const result: DetectResponse = {
      ...TYPICAL,
      segments: segmentsOf(
        [1, 2, 3, 4].map((n) => `${nasty} ${n}`),
        [0.9, 0.8, 0.7, 0.6],
      ),
    };
    const long = 'x'.repeat(60_000);
    const message = buildResultMessage({ result, checkId: 'c', source: { kind: 'text', words: 9000 }, text: long });
    expect(validateBlockKit(message.blocks)).toEqual([]);
    const json = JSON.stringify(message.blocks);
    expect(json).not.toContain('<!channel>');
    expect(json).toContain('&lt;!channel&gt;');
    // The text did not fit in the buttons, so they carry only the check id.
    for (const b of (message.blocks.at(-1) as { elements: { value: string }[] }).elements) {
      expect(decodeButtonValue(b.value)?.t).toBeUndefined();
    }
  });
});

describe('details modal', () => {
  it('lists every sentence for a typical result', () => {
    const view = buildDetailsModal(TYPICAL);
    expect(validateModal(view as unknown as Record<string, unknown>)).toEqual([]);
    const json = JSON.stringify(view);
    for (const [i, s] of SENTENCES.entries()) {
      expect(json).toContain(`*${i + 1}.*`);
      expect(json).toContain(s);
    }
  });

  it('stops at 100 blocks for a very long text and says how many sentences it left out', () => {
    const many = Array.from({ length: 800 }, (_, i) => `Sentence number ${i} says something ${'long '.repeat(80)}here.`);
    const view = buildDetailsModal({ ...TYPICAL, segments: segmentsOf(many, [0.1, 0.5, 0.9]) });
    expect(validateModal(view as unknown as Record<string, unknown>)).toEqual([]);
    expect(view.blocks.length).toBe(LIMITS.modalBlocks);
    expect(JSON.stringify(view.blocks.at(-1))).toMatch(/\d+ more sentences are not shown/);
  });

  it('explains when there are no per-sentence scores', () => {
    const view = buildDetailsModal({ ...TYPICAL, segments: [] });
    expect(validateModal(view as unknown as Record<string, unknown>)).toEqual([]);
    expect(JSON.stringify(view)).toContain('no per-sentence scores');
  });
});

describe('other messages', () => {
  it('help, errors and audit lines are valid Block Kit', () => {
    const help = buildHelpMessage(helpLines({ command: '/detect', defaultMode: 'general', messageAction: 'Check for AI text' }));
    expect(validateBlockKit(help.blocks)).toEqual([]);
    const error = buildErrorMessage('The detection service is busy (rate limit reached). Try again in 42 s.');
    expect(validateBlockKit(error.blocks)).toEqual([]);
    const audit = buildAuditMessage({
      userId: 'U1',
      userName: 'Grace <H>',
      channelId: 'C1',
      kind: 'command',
      mode: 'general',
      result: TYPICAL,
      words: 60,
    });
    expect(validateBlockKit(audit.blocks)).toEqual([]);
    expect(audit.text).toBe(
      ':mag: Grace &lt;H&gt; (U1) checked a pasted text (60 words) in <#C1>: 🔴 Reads as AI-written (87%, general mode) · request id `req_01JD3X5M9Q2W8E7R6T5Y4U3I2O`',
    );
    const failed = buildAuditMessage({
      userId: 'U1',
      kind: 'shortcut',
      mode: 'legal',
      permalink: 'https://x.slack.com/archives/C1/p1',
      messageAuthorId: 'U2',
      errorCode: 'rate_limited',
      requestId: 'req_X',
    });
    expect(failed.text).toBe(
      ':mag: user U1 checked <https://x.slack.com/archives/C1/p1|a message> by user U2: failed: `rate_limited` (legal mode) · request id `req_X`',
    );
  });

  it('the validator catches what Slack would reject', () => {
    expect(validateBlockKit([{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3001) } }])).toHaveLength(1);
    expect(validateBlockKit(Array.from({ length: 51 }, () => ({ type: 'divider' })))).toHaveLength(1);
    expect(
      validateBlockKit([
        { type: 'actions', elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'y'.repeat(76) } }] },
      ]),
    ).toHaveLength(1);
    expect(
      validateModal({ type: 'modal', title: { type: 'plain_text', text: 'A title that is far too long' }, blocks: [{ type: 'divider' }] }),
    ).toHaveLength(1);
  });
});

describe('escaping and button values', () => {
  it('escapeAndFit never exceeds the limit after escaping', () => {
    for (const max of [1, 2, 5, 50]) {
      const out = escapeAndFit('&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&', max);
      expect(Array.from(out).length).toBeLessThanOrEqual(max);
    }
    expect(escapeAndFit('a < b', 100)).toBe('a &lt; b');
  });

  it('round-trips the text through a button value when it fits', () => {
    const value = encodeButtonValue({ c: 'abc', m: 'legal', t: 'Some "quoted" text' });
    expect(decodeButtonValue(value)).toEqual({ c: 'abc', m: 'legal', t: 'Some "quoted" text' });
    expect(decodeButtonValue('not json')).toBeUndefined();
  });
});
