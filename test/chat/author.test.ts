/**
 * Member checks, the platform-neutral part (adapters/chat/author.ts) and their wording
 * (adapters/chat/format.ts): which messages are sent, which left out and why, the window setting,
 * and what the moderator reads for each kind of answer.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_HISTORY_WINDOW,
  checkHistoryDays,
  checkHistoryMessages,
  emptyReason,
  historyWindowOf,
  looksLikeCommand,
  selectMessages,
  type MemberMessage,
} from '../../adapters/chat/author.ts';
import {
  evidenceNeededLine,
  historyScopeLine,
  leftOutLine,
  mostAiLikeMessages,
  nothingToScoreSentence,
  summarizeAuthorResult,
  summarizeComposition,
  type CompositionFields,
  type LeftOutReason,
} from '../../adapters/chat/format.ts';
import { renderDiscordMarkdown } from '../../adapters/chat/markup-discord.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';

function message(id: string, text: string, leftOut?: LeftOutReason): MemberMessage {
  return { id, at: Number(id), text, readable: text, ...(leftOut ? { leftOut } : {}) };
}

describe('looksLikeCommand', () => {
  it.each(['!rank', '?help me', '.play never gonna', '/giphy cats', ';;skip', '$balance', '-ban @x'])('treats %j as a command', (text) => {
    expect(looksLikeCommand(text)).toBe(true);
  });
  it.each(['...well, maybe', '?!', '~~struck~~ fixed', '.NET is fine', 'I think /giphy is silly', '! wow', '/ shrug', '- item one'])(
    'keeps %j as prose',
    (text) => {
      expect(looksLikeCommand(text)).toBe(false);
    },
  );
});

describe('emptyReason', () => {
  it('says why a rendered message has nothing to score', () => {
    expect(emptyReason(renderDiscordMarkdown('hello there'), 0)).toBeUndefined();
    expect(emptyReason(renderDiscordMarkdown(''), 2)).toBe('attachments_only');
    expect(emptyReason(renderDiscordMarkdown('https://example.com/x'), 0)).toBe('link_only');
    expect(emptyReason(renderDiscordMarkdown('<@123456789012345678> <:wave:123456789012345678>'), 0)).toBe('no_prose');
    expect(emptyReason(renderDiscordMarkdown('```\nconst x = 1;\n```'), 0)).toBe('no_prose');
    expect(emptyReason(renderDiscordMarkdown('   '), 0)).toBe('empty');
  });
});

describe('selectMessages', () => {
  it('sends the messages with words, newest first, and counts the rest by reason', () => {
    const selection = selectMessages([
      message('5', 'newest words'),
      message('4', '', 'command'),
      message('3', 'middle words'),
      message('2', '', 'attachments_only'),
      message('1', '', 'command'),
    ]);
    expect(selection.send.map((m) => m.id)).toEqual(['5', '3']);
    expect(Object.fromEntries(selection.leftOut)).toEqual({ command: 2, attachments_only: 1 });
  });

  it('cuts an over-long message at a word and leaves out the oldest past the total size', () => {
    const long = `${'word '.repeat(30)}end`;
    const selection = selectMessages([message('3', long), message('2', 'short one'), message('1', 'old words here')], {
      maxMessageChars: 40,
      maxTotalChars: 50,
    });
    expect(selection.send[0]?.text.length).toBeLessThanOrEqual(40);
    expect(selection.send[0]?.text).toMatch(/^word( word)*$/);
    expect(selection.send.map((m) => m.id)).toEqual(['3', '2']);
    expect(selection.leftOut.get('over_size')).toBe(1);
  });
});

describe('history window setting', () => {
  it('defaults to the last 50 messages within 30 days and clamps stored values', () => {
    expect(historyWindowOf({})).toEqual({ maxMessages: 50, days: 30 });
    expect(DEFAULT_HISTORY_WINDOW).toEqual({ maxMessages: 50, days: 30 });
    expect(historyWindowOf({ historyMessages: 120, historyDays: 7 })).toEqual({ maxMessages: 120, days: 7 });
    expect(historyWindowOf({ historyMessages: 5000, historyDays: 0 })).toEqual({ maxMessages: 200, days: 1 });
  });

  it('refuses values outside the limits with a sentence', () => {
    expect(checkHistoryMessages(4)).toEqual({ ok: false, problem: expect.stringMatching(/from 5 to 200/) });
    expect(checkHistoryMessages(201).ok).toBe(false);
    expect(checkHistoryMessages(80)).toEqual({ ok: true, value: 80 });
    expect(checkHistoryDays(366)).toEqual({ ok: false, problem: expect.stringMatching(/from 1 to 365/) });
    expect(checkHistoryDays(14)).toEqual({ ok: true, value: 14 });
  });
});

const ANSWER: DetectAuthorResponse = {
  ai_probability: 0.91,
  mode: 'general',
  language: 'en',
  verdict: 'likely_ai',
  confidence: 'medium',
  warnings: [],
  messages_used: 3,
  words_used: 612,
  evidence_needed: null,
  messages: [
    { index: 0, words: 200, ai_probability: 0.4, skipped: null },
    { index: 1, words: 0, ai_probability: null, skipped: 'link_only' },
    { index: 2, words: 212, ai_probability: 0.97, skipped: null },
    { index: 3, words: 200, ai_probability: 0.88, skipped: null },
    { index: 4, words: 0, ai_probability: null, skipped: 'other_language' },
  ],
  request_id: 'req_author',
  model: 'm1',
  origin: 'ai_written',
  polished_probability: null,
};

describe('summarizeAuthorResult', () => {
  const sent = ['zero', 'one', 'two', 'three', 'four'].map((w) => ({ excerpt: `message ${w}`, link: `https://x/${w}` }));

  it('gives the verdict over N messages and W words, the three most AI-like with links, and every reason left out', () => {
    const summary = summarizeAuthorResult(ANSWER, sent, new Map<LeftOutReason, number>([['command', 2]]));
    expect(summary.headline).toBe('🔴 Reads as AI-written');
    expect(summary.originLine).toBeUndefined();
    expect(summary.basis).toBe('over 3 messages and 612 words');
    expect(summary.heldBack).toBe(false);
    expect(summary.evidenceLine).toBeUndefined();
    expect(summary.top).toEqual([
      { position: 2, percent: '97%', excerpt: 'message two', link: 'https://x/two' },
      { position: 3, percent: '88%', excerpt: 'message three', link: 'https://x/three' },
      { position: 0, percent: '40%', excerpt: 'message zero', link: 'https://x/zero' },
    ]);
    expect(summary.leftOutLine).toBe(
      'Left out: 2 commands, 1 message with only a link and 1 message in a language the detector does not support.',
    );
  });

  it('words evidence_needed when the verdict is held back, instead of the generic warning', () => {
    const held: DetectAuthorResponse = {
      ...ANSWER,
      verdict: 'mixed',
      confidence: 'low',
      warnings: ['too_little_evidence'],
      messages_used: 3,
      words_used: 40,
      evidence_needed: { messages: 2, words: 60 },
    };
    const summary = summarizeAuthorResult(held, sent, new Map());
    expect(summary.heldBack).toBe(true);
    expect(summary.headline).toBe('🟡 Too little to judge yet');
    expect(summary.evidenceLine).toBe(
      'Held back: a verdict needs 2 more messages and 60 more words of their own writing. Check again once they have written more, or widen the window in the settings.',
    );
    expect(summary.warningLines).toEqual([]);
  });

  it('orders by score and keeps at most three', () => {
    expect(mostAiLikeMessages(ANSWER)).toEqual([2, 3, 0]);
    expect(mostAiLikeMessages(ANSWER, 1)).toEqual([2]);
  });
});

describe('member-check sentences', () => {
  it('says only the parts of evidence_needed that are missing', () => {
    expect(evidenceNeededLine(null)).toBeUndefined();
    expect(evidenceNeededLine({ messages: 0, words: 1 })).toMatch(/needs 1 more word of their own/);
    expect(evidenceNeededLine({ messages: 1, words: 0 })).toMatch(/needs 1 more message of their own/);
  });

  it('explains an empty history and a history with nothing to score', () => {
    const window = { maxMessages: 50, days: 30 };
    expect(nothingToScoreSentence(0, new Map(), window, false)).toBe(
      'This member has written no messages in this channel in the past 30 days, so there is nothing to check. Run the check in a channel where they write, or widen the window in the settings.',
    );
    expect(nothingToScoreSentence(0, new Map(), window, true)).toMatch(/newest 1,000 messages/);
    expect(nothingToScoreSentence(3, new Map<LeftOutReason, number>([['attachments_only', 3]]), window, false)).toBe(
      "None of this member's 3 messages in this channel from the past 30 days has prose to score. Left out: 3 messages with only files, images or stickers.",
    );
    expect(historyScopeLine(50, window)).toBe('Read their last 50 messages in this channel from the past 30 days.');
    expect(historyScopeLine(7, window)).toBe('Read all 7 messages of theirs in this channel from the past 30 days.');
    expect(leftOutLine(new Map())).toBeUndefined();
  });
});

describe('summarizeComposition (issue 18)', () => {
  const text =
    'I wrote this part myself, honestly. The integration of advanced methodologies facilitates robust outcomes. Anyway, see you.';
  const sentence = (s: string, ai_probability: number) => ({
    start: text.indexOf(s),
    end: text.indexOf(s) + s.length,
    text: s,
    ai_probability,
  });
  const generated = sentence('The integration of advanced methodologies facilitates robust outcomes.', 0.95);
  const segments = [sentence('I wrote this part myself, honestly.', 0.2), generated, sentence('Anyway, see you.', 0.1)];
  const base: CompositionFields = { verdict: 'mixed', segments, generated_spans: [], generated_share: null, composition: null };

  it('calls a mixed post with a generated passage "partly generated", quotes it and gives its share', () => {
    const summary = summarizeComposition(
      {
        ...base,
        composition: 'partly_ai',
        generated_spans: [{ start: generated.start, end: generated.end, ai_probability: 0.95 }],
        generated_share: 0.42,
      },
      { text },
    );
    expect(summary.line).toBe(
      "Partly generated: about half of the text looks AI-generated (42% of its words, one passage); the rest reads as the author's own writing.",
    );
    expect(summary.title).toBe('Passages that look AI-generated (42% of the post)');
    expect(summary.passages).toEqual([{ text: 'The integration of advanced methodologies facilitates robust outcomes.', percent: '95%' }]);
    expect(summary.share).toBe('42%');
  });

  it('rebuilds a passage from the sentence scores when the text is not at hand, and trims it', () => {
    const summary = summarizeComposition(
      {
        ...base,
        composition: 'partly_ai',
        generated_spans: [{ start: generated.start, end: generated.end, ai_probability: 0.95 }],
        generated_share: 0.42,
      },
      { passageChars: 20 },
    );
    expect(summary.passages[0]?.text).toBe('The integration of…');
  });

  it('quotes at most three passages, in text order, and says how many there are', () => {
    const spans = [0, 1, 2, 3].map((i) => ({ start: i * 10, end: i * 10 + 5, ai_probability: 0.9 }));
    const summary = summarizeComposition(
      { ...base, verdict: 'likely_ai', composition: 'partly_ai', generated_spans: spans.reverse(), generated_share: 0.5 },
      { text: 'aaaaa     bbbbb     ccccc     ddddd' },
    );
    expect(summary.passages.map((p) => p.text)).toEqual(['aaaaa', 'bbbbb', 'ccccc']);
    expect(summary.line).toMatch(/^Partly generated: about half of the text looks AI-generated \(50% of its words, 4 passages\)/);
    expect(summary.title).toBe('Passages that look AI-generated (50% of the post; the first 3 of 4)');
  });

  it('says of a mixed post without generated passages that none stands out, not that it is partly generated', () => {
    const summary = summarizeComposition({ ...base, composition: 'uncertain' });
    expect(summary.line).toBe('No passage stands out: no passage looks AI-generated on its own.');
    expect(summary.passages).toEqual([]);
    expect(summarizeComposition(base).line).toBeUndefined();
  });

  it('says a clear human verdict reads as human writing, and quotes nothing', () => {
    expect(summarizeComposition({ ...base, verdict: 'likely_human', composition: 'human', generated_share: 0 })).toMatchObject({
      line: 'Reads as human writing: no passage looks AI-generated.',
      passages: [],
    });
  });
});
