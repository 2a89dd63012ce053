import { beforeAll, describe, expect, it } from 'vitest';
import { createDetector, type Detector } from '../../src/detector/index.ts';
import { normalize } from '../../src/detector/normalize.ts';

let detector: Detector;
beforeAll(async () => {
  detector = await createDetector();
});

const CLEAN =
  'The committee reviewed the proposal carefully and concluded that the project should proceed. However, several members ' +
  'raised concerns about the budget and the timeline. They asked for a detailed plan before the next meeting, so that the ' +
  'risks could be assessed properly and the costs kept under control.';

describe('evasion normalisation', () => {
  it('folds Cyrillic/Greek homoglyphs inside Latin text', () => {
    const attacked = CLEAN.replace(/a/g, '\u0430').replace(/o/g, '\u03bf').replace(/e/g, '\u0435');
    expect(normalize(attacked).text).toBe(CLEAN);
    expect(detector.detect(attacked).ai_probability).toBe(detector.detect(CLEAN).ai_probability);
  });

  it('keeps real Cyrillic text (so it is refused, not scored as English)', () => {
    expect(normalize('Привет, как дела?').text).toBe('Привет, как дела?');
  });

  it('removes zero-width and invisible format characters', () => {
    const attacked = CLEAN.split(' ')
      .map((w) => w.split('').join('\u200b'))
      .join(' \u200d')
      .replace(/m/g, 'm\u00ad\u2060\ufeff');
    expect(normalize(attacked).text).toBe(CLEAN);
    expect(detector.detect(attacked).ai_probability).toBe(detector.detect(CLEAN).ai_probability);
  });

  it('collapses odd whitespace', () => {
    const attacked = CLEAN.replace(/ /g, (_, i: number) => ['\u00a0', '  ', '\u2003', '\t', '\u3000', ' \u2009 '][i % 6]!);
    expect(normalize(attacked).text).toBe(CLEAN);
    expect(detector.detect(attacked).ai_probability).toBe(detector.detect(CLEAN).ai_probability);
  });

  it('ignores swapped case', () => {
    const swapped = [...CLEAN].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
    const upper = CLEAN.toUpperCase();
    const base = detector.detect(CLEAN).ai_probability;
    expect(detector.detect(swapped).ai_probability).toBe(base);
    expect(detector.detect(upper).ai_probability).toBe(base);
  });

  it('applies NFKC (full-width letters, ligatures, decomposed accents)', () => {
    expect(normalize('ｆｕｌｌｗｉｄｔｈ ﬁne').text).toBe('fullwidth fine');
    expect(normalize('s\u0327ikayet').text).toBe('şikayet');
  });

  it('keeps a map from every normalised character to its origin', () => {
    const input = 'a\u200bb  c\r\nd😀e';
    const { text, map } = normalize(input);
    expect(text).toBe('ab c\nd😀e');
    expect(map.length).toBe(text.length + 1);
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      const low = ch.charCodeAt(0) >= 0xdc00 && ch.charCodeAt(0) <= 0xdfff;
      if (ch !== ' ' && ch !== '\n' && !low) expect(input.codePointAt(map[i]!)).toBe(text.codePointAt(i));
    }
    expect(map[text.length]).toBe(input.length);
  });
});
