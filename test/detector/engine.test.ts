import { beforeAll, describe, expect, it } from 'vitest';
import { createDetector, MODES, UnsupportedLanguageError, type Detector } from '../../src/detector/index.ts';
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
    const text = Array.from({ length: 3000 }, (_, i) => parts[i % parts.length]).join(' ');
    const started = performance.now();
    checkSegments(text);
    expect(performance.now() - started).toBeLessThan(10_000);
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
