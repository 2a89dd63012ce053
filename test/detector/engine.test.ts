import { beforeAll, describe, expect, it } from 'vitest';
import { createDetector, EVIDENCE_FLOOR_WORDS, MODES, UnsupportedLanguageError, type Detector } from '../../src/detector/index.ts';
import { readArtifact } from '../../src/detector/artifact.ts';
import { DEFAULT_MODEL_PATH } from '../../src/detector/index.ts';
import { calibrate } from '../../src/detector/model.ts';

let detector: Detector;
beforeAll(async () => {
  detector = await createDetector();
});

const ESSAY =
  'Climate change is one of the most pressing issues facing our planet today. Rising temperatures, melting ice caps and ' +
  'extreme weather events are affecting communities around the world. Governments, businesses and individuals all have a ' +
  'role to play in reducing greenhouse gas emissions. By investing in renewable energy, improving energy efficiency and ' +
  'protecting forests, we can limit the damage and build a more sustainable future for generations to come.';

/** Every segment must be an exact slice of the input, in order and without overlap. */
function checkSegments(text: string): void {
  const r = detector.detect(text, { segments: true, language: /[ğışİ]/.test(text) ? 'tr' : 'en' });
  expect(r.segments.length).toBeGreaterThan(0);
  let last = 0;
  for (const s of r.segments) {
    expect(s.start).toBeGreaterThanOrEqual(last);
    expect(s.end).toBeGreaterThan(s.start);
    expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(s.text.trim()).toBe(s.text);
    expect(s.ai_probability).toBeGreaterThanOrEqual(0);
    expect(s.ai_probability).toBeLessThanOrEqual(1);
    last = s.end;
  }
  // Nothing but whitespace lies outside the segments.
  let outside = text.slice(0, r.segments[0]!.start);
  for (let i = 1; i < r.segments.length; i++) outside += text.slice(r.segments[i - 1]!.end, r.segments[i]!.start);
  outside += text.slice(r.segments.at(-1)!.end);
  expect(outside.trim()).toBe('');
}

describe('detector engine', () => {
  it('loads the committed model and reports its version', () => {
    expect(detector.model).toMatch(/^td1-[0-9a-f]{12}$/);
    const r = detector.detect(ESSAY, { mode: 'academic' });
    expect(r.model).toBe(detector.model);
    expect(r.mode).toBe('academic');
    expect(r.language).toBe('en');
    expect(['likely_human', 'mixed', 'likely_ai']).toContain(r.verdict);
    expect(['low', 'medium', 'high']).toContain(r.confidence);
    expect(r.segments).toEqual([]);
  });

  it('is deterministic: same text, same result, also across detector instances', async () => {
    const a = detector.detect(ESSAY, { mode: 'general', segments: true });
    const b = detector.detect(ESSAY, { mode: 'general', segments: true });
    const other = await createDetector();
    expect(b).toEqual(a);
    expect(other.detect(ESSAY, { mode: 'general', segments: true })).toEqual(a);
  });

  it('maps segment offsets back to ASCII input', () => {
    checkSegments(ESSAY);
    checkSegments('  Leading spaces. Dr. Smith went home. Then (he said) "no!" Done?   ');
  });

  it('maps segment offsets back to Turkish input with İ, ı, ş, ğ', () => {
    checkSegments(
      'İstanbul’da yaşıyorum. Bankanın şubesine gittiğimde ışıklar kapalıydı! Ağaçların altında beklemek zorunda kaldım. Çok üzgünüm.',
    );
    // Decomposed ş (s + U+0327) must compose without shifting offsets.
    checkSegments('Hesabımdan para çekildi. Bu s\u0327ikayetimi dikkate alın lütfen. Teşekkürler.');
  });

  it('maps segment offsets back to input with emoji and CRLF line breaks', () => {
    checkSegments('First line here 😀 with an emoji.\r\nSecond line 👨‍👩‍👧 follows.\r\n\r\nThird 🎉🎉 paragraph ends here.');
    checkSegments('A\u00a0sentence\u2003with odd\u200bspaces.\tAnother\u200d one\r\nends.');
  });

  it('segments long texts quickly and exactly', () => {
    const parts = [
      'A short one.',
      'Then a much longer sentence follows here, with commas, clauses and a few more words.',
      'İyi günler!',
      'Why not?',
    ];
    const textOf = (n: number) => Array.from({ length: n }, (_, i) => parts[i % parts.length]).join(' ');
    const timed = (n: number) => {
      const started = performance.now();
      checkSegments(textOf(n));
      return performance.now() - started;
    };
    // Linear: ten times the sentences, about ten times the time (a quadratic cut would take a hundred
    // times); a ratio measured here, so the machine's load cancels out.
    timed(300);
    const small = Math.max(timed(300), 1);
    const large = timed(3000);
    expect(large / small, `300 sentences ${small.toFixed(0)} ms, 3,000 sentences ${large.toFixed(0)} ms`).toBeLessThan(40);
  });

  it('flags short texts with low confidence and never calls them likely AI', () => {
    const r = detector.detect('This is a short note about the meeting tomorrow.', { mode: 'general' });
    expect(r.warnings).toContain('short_text');
    expect(r.confidence).toBe('low');
    expect(r.verdict).not.toBe('likely_ai');
    const long = detector.detect(`${ESSAY} ${ESSAY}`, { mode: 'general' });
    expect(long.warnings).not.toContain('short_text');
  });

  it('identifies Turkish and refuses other languages', () => {
    const tr = detector.detect(
      'Bankanın müşteri hizmetleri ile defalarca görüştüm ama sorunum hâlâ çözülmedi. Kredi kartımdan haksız yere ücret kesildi ve iade edilmedi.',
    );
    expect(tr.language).toBe('tr');
    const cases: Array<[string, string]> = [
      ['Der Hund ist nicht in dem Haus, und die Katze ist auch nicht da, aber wir haben noch eine Maus in der Küche gesehen.', 'de'],
      ['Le chat est sur la table et le chien dort dans le jardin, mais nous ne savons pas pourquoi il est si fatigué.', 'fr'],
      ['Это очень интересный текст, который написан на русском языке и не должен оцениваться как английский.', 'cyrillic'],
      ['这是一个用中文写的句子，它不应该被当作英文来评分。', 'zh'],
    ];
    for (const [text, lang] of cases) {
      let err: unknown;
      try {
        detector.detect(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UnsupportedLanguageError);
      expect((err as UnsupportedLanguageError).detected).toBe(lang);
    }
  });

  it('warns when a text is clearly in another language than the one forced, and never calls it likely AI', () => {
    const german =
      'Der Ausschuss traf sich am Dienstag, um die geplanten Änderungen am Haushalt der Stadt zu besprechen. Mehrere ' +
      'Mitglieder meinten, dass die Reparatur der Straßen Vorrang haben sollte, weil der Winter viele Straßen in einem ' +
      'schlechten Zustand hinterlassen hatte. Andere wiesen darauf hin, dass die Bibliothek seit drei Jahren auf neue ' +
      'Mittel wartet und am Wochenende nicht mehr öffnen kann.';
    // A generated English paragraph: likely_ai as English, and it was likely_ai (no warning at all)
    // when sent as Turkish, scored by the Turkish model.
    const generatedEnglish =
      'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
      'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
      'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
      'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';
    expect(detector.detect(generatedEnglish, { language: 'en', mode: 'general' }).verdict).toBe('likely_ai');
    for (const mode of MODES) {
      for (const [text, language] of [
        [german, 'en'],
        [german, 'tr'],
        [generatedEnglish, 'tr'],
      ] as const) {
        const r = detector.detect(text, { language, mode });
        expect(r.language, `${mode} ${language}`).toBe(language);
        expect(r.warnings, `${mode} ${language}`).toContain('language_mismatch');
        expect(r.warnings).not.toContain('strict_threshold');
        expect(r.verdict).not.toBe('likely_ai');
        expect(r.confidence).toBe('low');
        // Spans of such a text are never `high` either: a document of it could not be likely_ai.
        const s = detector.detect(text, { language, mode, segments: true });
        for (const span of s.generated_spans) expect(span.confidence).not.toBe('high');
      }
    }
    // The language given and the text agree, or the text is too short to tell: no warning.
    expect(detector.detect(generatedEnglish, { language: 'en' }).warnings).not.toContain('language_mismatch');
    expect(detector.detect('@Ada test', { language: 'tr' }).warnings).not.toContain('language_mismatch');
    expect(
      detector.detect('Bankanın müşteri hizmetleri ile defalarca görüştüm ama sorunum hâlâ çözülmedi.', { language: 'tr' }).warnings,
    ).not.toContain('language_mismatch');
  });

  it('has one evidence floor for single texts and for an author: below it, too little to judge', async () => {
    expect(EVIDENCE_FLOOR_WORDS).toBe(40);
    // The pair: a 3-word text was likely_human, while six messages of 56 words by one author
    // were held back as too little evidence.
    const three = detector.detect('Thanks, see you.', { mode: 'general', language: 'en' });
    expect(three.verdict).toBe('mixed');
    expect(three.confidence).toBe('low');
    expect(three.warnings).toEqual(expect.arrayContaining(['short_text', 'too_little_evidence']));
    const chat = [
      'anyone up for pizza later tonight after the match?',
      'i think the ref was blind in the second half honestly',
      'lol my cat just knocked the router off the shelf again',
      'ok who took the last charger from the office',
      'that new album is way better than i expected, the third track especially',
      'my train is late again so start without me',
    ];
    // These lines were written for the test by an AI assistant: the shipped model's assistant head keeps
    // them from being cleared, so the verdict the floor no longer holds back is the document model's.
    const documentModel = await createDetector({ assistantHead: false });
    const author = documentModel.detectAuthor(chat, { mode: 'general', language: 'en' });
    expect(author.words_used).toBeGreaterThanOrEqual(EVIDENCE_FLOOR_WORDS);
    expect(author.words_used).toBeLessThan(80);
    expect(author.evidence_needed).toBeNull();
    expect(author.warnings).not.toContain('too_little_evidence');
    expect(author.verdict).toBe('likely_human');
    // The same rule either way: held back exactly when the words (one text's, or the author's
    // used messages' together) are under the floor.
    for (let n = 1; n <= chat.length; n++) {
      const messages = chat.slice(0, n);
      const a = detector.detectAuthor(messages, { language: 'en' });
      const one = detector.detect(messages.join('\n'), { language: 'en' });
      const held = a.words_used < EVIDENCE_FLOOR_WORDS;
      expect(a.warnings.includes('too_little_evidence'), `${n} messages`).toBe(held);
      expect(one.warnings.includes('too_little_evidence'), `${n} messages as one text`).toBe(held);
      if (held) {
        expect(a.verdict).toBe('mixed');
        expect(one.verdict).toBe('mixed');
        expect(a.evidence_needed).toEqual({ messages: 0, words: EVIDENCE_FLOOR_WORDS - a.words_used });
      }
    }
  });

  it('rejects unknown modes and languages with a clear error', () => {
    expect(() => detector.detect(ESSAY, { mode: 'poetry' as never })).toThrow(/Unknown mode "poetry"/);
    expect(() => detector.detect(ESSAY, { language: 'de' as never })).toThrow(/Unknown language "de"/);
  });

  it('has a monotone calibration for every mode and language', () => {
    const { header } = readArtifact(DEFAULT_MODEL_PATH);
    for (const lang of ['en', 'tr']) {
      for (const mode of MODES) {
        const c = header.calibration[`${lang}:${mode}`] ?? header.calibration[`${lang}:*`];
        expect(c, `${lang}:${mode}`).toBeDefined();
        expect(c!.a).toBeGreaterThan(0);
        expect(c!.aiThreshold).toBeGreaterThanOrEqual(c!.humanThreshold);
        for (const band of c!.aiThresholdByLength ?? []) expect(band.threshold).toBeGreaterThanOrEqual(c!.humanThreshold);
        // "Likely human" needs four-to-one odds in every mode and length band (train.ts --human-cap).
        expect(header.training.humanCap).toBe(0.2);
        expect(c!.humanThreshold).toBeLessThanOrEqual(0.2);
        for (const band of c!.humanThresholdByLength ?? []) expect(band.threshold).toBeLessThanOrEqual(0.2);
        let prev = -1;
        for (let s = -20; s <= 20; s += 0.5) {
          const p = calibrate(s, c!);
          expect(p).toBeGreaterThanOrEqual(prev);
          prev = p;
        }
      }
    }
  });
});
