import { beforeAll, describe, expect, it } from 'vitest';
import { createDetector, UnsupportedLanguageError, WARNING_CODES, WARNING_MESSAGES, type Detector } from '../../src/detector/index.ts';
import { evidenceWords, identifyLanguage } from '../../src/detector/language.ts';
import { normalize } from '../../src/detector/normalize.ts';

const guess = (text: string): ReturnType<typeof identifyLanguage> => identifyLanguage(normalize(text).text);

const GERMAN =
  'Köln ist mit über einer Million Einwohnern die größte Stadt in Nordrhein-Westfalen und die viertgrößte Gemeinde ' +
  'Deutschlands. Die Stadt liegt am Rhein und wurde von den Römern gegründet. Der Kölner Dom ist seit 1996 ein ' +
  'Weltkulturerbe der UNESCO und gehört zu den meistbesuchten Sehenswürdigkeiten des Landes.';
// biome-ignore lint/suspicious/noTemplateCurlyInString: the ${…} is JavaScript source inside the test text, not a template meant here.
const CODE = '```js\nconst total = items.reduce((sum, item) => sum + item.price, 0);\nconsole.log(`total: ${total}`);\n```';

let detector: Detector;
beforeAll(async () => {
  detector = await createDetector();
});

describe('language identification', () => {
  it('does not take a mention and one word as Indonesian', () => {
    expect(guess('@Ada test')).toEqual({ language: 'en', supported: true, certain: false });
    const r = detector.detect('@Ada test');
    expect(r.language).toBe('en');
    expect(r.warnings).toEqual(expect.arrayContaining(['language_uncertain', 'short_text']));
    expect(r.verdict).not.toBe('likely_ai');
    expect(r.confidence).toBe('low');
  });

  it('leans Turkish on a Turkish greeting but says the evidence is thin', () => {
    expect(guess('Merhaba, nasılsın?')).toEqual({ language: 'tr', supported: true, certain: false });
    const r = detector.detect('Merhaba, nasılsın?');
    expect(r.language).toBe('tr');
    expect(r.warnings).toContain('language_uncertain');
  });

  it('refuses a German paragraph (a Wikipedia-style article) instead of scoring it as English', () => {
    expect(guess(GERMAN)).toMatchObject({ language: 'de', supported: false, certain: true });
    expect(() => detector.detect(GERMAN)).toThrow(UnsupportedLanguageError);
    // Names, links and mentions in it change nothing.
    expect(guess(`@Köln_Info ${GERMAN} https://de.wikipedia.org/wiki/K%C3%B6ln #Köln`).language).toBe('de');
  });

  it('ignores code: a code block alone is scored as the default language with a warning', () => {
    expect(evidenceWords(CODE)).toEqual([]);
    expect(guess(CODE)).toEqual({ language: 'en', supported: true, certain: false });
    const r = detector.detect(CODE);
    expect(r.warnings).toContain('language_uncertain');
    // English prose around the same code block is plain English.
    expect(guess(`Here is the function that I wrote for the shop, and it is the one that fails:\n${CODE}`)).toMatchObject({
      language: 'en',
      certain: true,
    });
  });

  it('scores emoji-only text as the requested language with warnings instead of refusing it', () => {
    const r = detector.detect('😀🎉👍🔥', { language: 'tr' });
    expect(r.language).toBe('tr');
    const d = detector.detect('😀🎉👍🔥');
    expect(d.language).toBe('en');
    expect(d.warnings).toEqual(expect.arrayContaining(['language_uncertain', 'short_text']));
    expect(d.verdict).not.toBe('likely_ai');
  });

  it('ignores names inside a sentence but keeps sentence-initial words', () => {
    expect(evidenceWords('The meeting with Ada Lovelace was at noon. Then we left.')).toEqual([
      'the',
      'meeting',
      'with',
      'was',
      'at',
      'noon',
      'then',
      'we',
      'left',
    ]);
    expect(evidenceWords('Mail me at ada@example.com or see https://example.com, @bob #tag')).toEqual(['mail', 'me', 'at', 'or', 'see']);
  });

  it('still decides clear English, Turkish and other languages on short sentences', () => {
    expect(guess('This is a short note about the meeting tomorrow.')).toMatchObject({ language: 'en', certain: true });
    expect(guess('Bankanın müşteri hizmetleri ile defalarca görüştüm ama sorunum hâlâ çözülmedi.')).toMatchObject({
      language: 'tr',
      certain: true,
    });
    expect(guess('Le chat est sur la table et le chien dort dans le jardin.')).toMatchObject({
      language: 'fr',
      supported: false,
      certain: true,
    });
    expect(guess('Это очень интересный текст на русском языке.')).toMatchObject({ language: 'cyrillic', supported: false, certain: true });
  });

  it('has a one-line explanation for every warning code', () => {
    for (const code of WARNING_CODES) {
      expect(WARNING_MESSAGES[code].length).toBeGreaterThan(20);
      expect(WARNING_MESSAGES[code]).not.toContain('\n');
    }
  });
});
