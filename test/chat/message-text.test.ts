import { describe, expect, it } from 'vitest';
import { EmptyTextError, TextTooLongError } from '../../adapters/chat/errors.ts';
import { countWords, normalizeText, prepareTextForDetection } from '../../adapters/chat/message-text.ts';

function refusal(raw: string, context?: Parameters<typeof prepareTextForDetection>[2]): string {
  try {
    prepareTextForDetection(raw, undefined, context);
  } catch (err) {
    expect(err).toBeInstanceOf(EmptyTextError);
    return (err as Error).message;
  }
  throw new Error('expected EmptyTextError');
}

describe('normalizeText', () => {
  it('removes invisibles, tidies spaces and keeps paragraph breaks', () => {
    expect(normalizeText('  Hello\u200B   world\u00A0!\r\n\r\n\r\n\tNext\u2060 para  \n')).toBe('Hello world !\n\nNext para');
  });
});

describe('countWords', () => {
  it('counts words in English and Turkish, ignoring punctuation', () => {
    expect(countWords("It's a well-known fact — isn't it?")).toBe(6);
    expect(countWords('Çalışmalar güçlü bir eğilim gösteriyor.')).toBe(5);
    expect(countWords(' … !!! ')).toBe(0);
  });
});

describe('prepareTextForDetection', () => {
  it('returns the normalised text', () => {
    expect(prepareTextForDetection('  Some text  ')).toBe('Some text');
  });

  it('rejects empty and punctuation-only input', () => {
    expect(() => prepareTextForDetection(' \n\u200B ')).toThrow(EmptyTextError);
    expect(() => prepareTextForDetection('!!! ...')).toThrow(EmptyTextError);
  });

  it('says what a text without words holds instead of the generic “no text”', () => {
    // Unicode emoji, as Discord's picker and phone keyboards send them (flags and ZWJ sequences too).
    expect(refusal('🎉🔥 👍🏽 🇹🇷 👩‍💻')).toBe(
      'This text has only emoji, so there is nothing to check: the detector scores the words a person wrote.',
    );
    // What the renderer left out: Slack's `:tada::rocket:`, mentions, code.
    expect(refusal('', { subject: 'message', leftOut: { emoji: 2, mentions: 0, codeBlocks: 0 } })).toBe(
      'That message has only emoji, so there is nothing to check: the detector scores the words a person wrote.',
    );
    expect(refusal('!', { leftOut: { emoji: 1, mentions: 2, codeBlocks: 1, links: 1 } })).toBe(
      'This text has only emoji, mentions, code blocks and web addresses, so there is nothing to check: the detector scores the words a person wrote.',
    );
    expect(refusal('!!! ...')).toBe('This text has no words, only symbols or punctuation, so there is nothing to check.');
    expect(refusal(' \n ')).toMatch(/^There is no text to check/);
  });

  it('rejects text over the limit, counting characters as the service does (code points, a whitespace run as one)', () => {
    expect(() => prepareTextForDetection('a'.repeat(11), 10)).toThrow(TextTooLongError);
    expect(() => prepareTextForDetection('a😀'.repeat(6), 10)).toThrow(TextTooLongError);
    expect(prepareTextForDetection('a😀'.repeat(5), 10)).toBe('a😀'.repeat(5));
    expect(prepareTextForDetection('a'.repeat(10), 10)).toHaveLength(10);
    expect(prepareTextForDetection(`four${' '.repeat(200)}five`, 10)).toBe('four five');
  });
});
