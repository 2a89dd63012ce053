import { describe, expect, it } from 'vitest';
import { EmptyTextError, TextTooLongError } from '../../adapters/chat/errors.ts';
import { countWords, normalizeText, prepareTextForDetection } from '../../adapters/chat/message-text.ts';

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

  it('rejects text over the limit, counting UTF-16 units as the service does', () => {
    expect(() => prepareTextForDetection('a'.repeat(11), 10)).toThrow(TextTooLongError);
    expect(() => prepareTextForDetection('a😀'.repeat(4), 10)).toThrow(TextTooLongError);
    expect(prepareTextForDetection('a'.repeat(10), 10)).toHaveLength(10);
  });
});
