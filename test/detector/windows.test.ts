/**
 * Whole documents, window by window (src/detector/windows.ts): where a text is cut, the one rule that
 * reads the document's answer off its windows, and that the engine's detect() in one piece gives what
 * its steps (start, detectWindow, combineWindows) give.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createDetector, type Detector, type WindowScore } from '../../src/detector/index.ts';
import { combineWindows, ONE_WINDOW_WORDS, WINDOW_WORDS, windowRanges } from '../../src/detector/windows.ts';
import { paragraphs, wordsOf } from '../helpers/documents.ts';
import { AI_PARAGRAPHS } from '../helpers/libreoffice.ts';

let detector: Detector;
beforeAll(async () => {
  detector = await createDetector();
});

const RE_WORD = /[\p{L}\p{N}]+/gu;
const wordCount = (text: string) => text.match(RE_WORD)?.length ?? 0;

describe('where a text is cut', () => {
  it('a text under ONE_WINDOW_WORDS words is one window, the whole text', () => {
    const text = paragraphs(ONE_WINDOW_WORDS - 100, 100).join('\n\n');
    expect(wordCount(text)).toBeLessThan(ONE_WINDOW_WORDS);
    expect(windowRanges(text)).toEqual([{ start: 0, end: text.length }]);
  });

  it('a longer text: round(words / WINDOW_WORDS) windows at sentence ends, covering every word once', () => {
    const text = paragraphs(10_000, 130).join('\n\n');
    const words = wordCount(text);
    const windows = windowRanges(text);
    expect(windows).toHaveLength(Math.round(words / WINDOW_WORDS));
    let covered = 0;
    windows.forEach((w, i) => {
      const slice = text.slice(w.start, w.end);
      expect(slice).toBe(slice.trim());
      covered += wordCount(slice);
      if (i < windows.length - 1) expect(slice).toMatch(/[.!?]$/);
      expect(Math.abs(wordCount(slice) - words / windows.length)).toBeLessThanOrEqual(WINDOW_WORDS / 4 + 1);
      if (i > 0) expect(text.slice(windows[i - 1]!.end, w.start).trim()).toBe('');
    });
    expect(covered).toBe(words);
  });

  it('cuts at the same words whatever the line and paragraph breaks (a PDF joins lines, a DOCX keeps paragraphs)', () => {
    const source = paragraphs(6000, 90);
    const asParagraphs = source.join('\n\n');
    const asOneLine = source.join(' ');
    const asShortLines = source.join('\n').replace(/(\S+ \S+ \S+ \S+ \S+ \S+ \S+) /g, '$1\n');
    const cuts = (text: string) => windowRanges(text).map((w) => wordsOf(text.slice(w.start, w.end)).slice(0, 6).join(' '));
    expect(cuts(asOneLine)).toEqual(cuts(asParagraphs));
    expect(cuts(asShortLines)).toEqual(cuts(asParagraphs));
  });

  it('counts words as the engine reads them: zero-width characters and soft hyphens inside a word do not split it', () => {
    // The zero_width attack of eval:attacks (U+200B after 10% of the characters) once made a 1,000-word
    // text 1,500 "words" long, judged in windows where the clean text is judged whole (max Δp 0.099).
    let seed = 7;
    const sprinkle = (text: string) =>
      text.replace(/\S/gu, (ch) => {
        seed = (seed * 16807) % 2147483647;
        return seed % 10 === 0 ? `${ch}${seed % 20 === 0 ? '\u200b' : '\u00ad'}` : ch;
      });
    const short = paragraphs(ONE_WINDOW_WORDS - 200, 100).join('\n\n');
    const shortSprinkled = sprinkle(short);
    expect(shortSprinkled.length).toBeGreaterThan(short.length * 1.05);
    expect(windowRanges(shortSprinkled)).toEqual([{ start: 0, end: shortSprinkled.length }]);
    const clean = detector.detect(short, { segments: true });
    const attacked = detector.detect(shortSprinkled, { segments: true });
    expect(attacked.windows).toEqual([]);
    expect(attacked.ai_probability).toBe(clean.ai_probability);
    expect(attacked.verdict).toBe(clean.verdict);
    const long = paragraphs(5000, 110).join('\n\n');
    const strip = (text: string) => text.replace(/[\u200b\u00ad]/gu, '');
    const cuts = (text: string) => windowRanges(text).map((w) => strip(text.slice(w.start, w.end)).split(/\s+/).slice(0, 5).join(' '));
    expect(cuts(sprinkle(long))).toEqual(cuts(long));
  });

  it('a text without sentence ends is cut between words', () => {
    const text = 'word '.repeat(3000).trim();
    const windows = windowRanges(text);
    expect(windows).toHaveLength(Math.round(3000 / WINDOW_WORDS));
    for (const w of windows) expect(text.slice(w.start, w.end)).toMatch(/^word( word)*$/);
  });
});

/** A window's score with only what the rule reads set. */
function score(words: number, ai_probability: number, verdict: WindowScore['verdict'], extra: Partial<WindowScore> = {}): WindowScore {
  return {
    words,
    ai_probability,
    verdict,
    confidence: verdict === 'mixed' ? 'low' : 'high',
    mode: 'general',
    language: 'en',
    segments: [],
    warnings: verdict === 'mixed' ? [ai_probability >= 0.5 ? 'strict_threshold' : 'strict_human_threshold'] : [],
    model: 'td1-test',
    generated_spans: [],
    generated_share: null,
    composition: null,
    polished_probability: 0.1,
    origin: verdict === 'likely_ai' ? 'ai_written' : verdict === 'likely_human' ? 'human' : 'uncertain',
    windows: [],
    ...extra,
  };
}
function combine(...scores: WindowScore[]) {
  let at = 0;
  const windows = scores.map((s) => {
    const range = { start: at, end: at + s.words * 6 };
    at = range.end + 2;
    return range;
  });
  return combineWindows({ language: 'en', languageUncertain: false, windows }, scores, {});
}

describe('the one rule: a document from its windows', () => {
  it('likely_ai only when windows called likely_ai hold more than half of the words', () => {
    const most = combine(score(800, 0.99, 'likely_ai'), score(800, 0.99, 'likely_ai'), score(800, 0.03, 'likely_human'));
    expect(most).toMatchObject({ verdict: 'likely_ai', ai_probability: 0.99, generated_share: 0.6667, composition: 'partly_ai' });
    // The human window reads as the author's own: a partly generated document, whatever the verdict.
    expect(most.origin).toBe('partly_ai');
    const half = combine(score(800, 0.99, 'likely_ai'), score(800, 0.03, 'likely_human'));
    expect(half.verdict).toBe('mixed');
    expect(half.origin).toBe('partly_ai');
    // The lower median: half of the words at 0.03 or under.
    expect(half.ai_probability).toBe(0.03);
    const one = combine(score(800, 0.99, 'likely_ai'), ...Array.from({ length: 9 }, () => score(800, 0.02, 'likely_human')));
    expect(one).toMatchObject({ verdict: 'mixed', ai_probability: 0.02, generated_share: 0.1, origin: 'partly_ai' });
  });

  it('never flags a document whose windows are not flagged, however close they come', () => {
    const close = combine(score(800, 0.95, 'mixed'), score(800, 0.96, 'mixed'), score(800, 0.9, 'mixed'));
    expect(close).toMatchObject({ verdict: 'mixed', generated_share: 0, composition: 'uncertain', origin: 'uncertain', confidence: 'low' });
    expect(close.warnings).toEqual(['strict_threshold']);
  });

  it('likely_human when no window is flagged and human windows hold most of the words', () => {
    const human = combine(score(800, 0.02, 'likely_human'), score(800, 0.3, 'mixed'), score(800, 0.05, 'likely_human'));
    expect(human).toMatchObject({
      verdict: 'likely_human',
      ai_probability: 0.05,
      generated_share: 0,
      composition: 'human',
      origin: 'human',
    });
    expect(human.confidence).toBe('high');
    expect(human.warnings).toEqual([]);
    const less = combine(score(800, 0.02, 'likely_human'), score(800, 0.3, 'mixed'), score(800, 0.4, 'mixed'));
    expect(less).toMatchObject({ verdict: 'mixed', composition: 'uncertain', origin: 'uncertain' });
    expect(less.warnings).toEqual(['strict_human_threshold']);
  });

  it('generated throughout from 90% of the words; polished when the flagged windows read as polished', () => {
    const all = combine(...Array.from({ length: 10 }, () => score(800, 0.99, 'likely_ai', { polished_probability: 0.9 })));
    expect(all).toMatchObject({ verdict: 'likely_ai', generated_share: 1, composition: 'ai', origin: 'ai_polished', confidence: 'high' });
    // A rest that leans AI too keeps the plain AI headline, not "partly".
    const rest = combine(
      ...Array.from({ length: 6 }, () => score(800, 0.99, 'likely_ai')),
      score(800, 0.8, 'mixed'),
      score(800, 0.7, 'mixed'),
    );
    expect(rest).toMatchObject({ verdict: 'likely_ai', composition: 'partly_ai', origin: 'ai_written' });
  });

  it('warnings of every window, in the contract order; spans and segments move to the whole text', () => {
    const spanned = score(800, 0.6, 'mixed', {
      warnings: ['out_of_domain'],
      segments: [{ start: 0, end: 10, text: 'x'.repeat(10), ai_probability: 0.9 }],
      generated_spans: [{ start: 0, end: 10, ai_probability: 0.9, confidence: 'medium' }],
    });
    const doc = combineWindows(
      {
        language: 'en',
        languageUncertain: false,
        windows: [
          { start: 0, end: 4800 },
          { start: 4802, end: 9600 },
        ],
      },
      [score(800, 0.02, 'likely_human', { warnings: ['language_mismatch'] }), spanned],
      { segments: true },
    );
    expect(doc.warnings).toEqual(['out_of_domain', 'language_mismatch', 'strict_human_threshold']);
    expect(doc.segments).toEqual([{ start: 4802, end: 4812, text: 'x'.repeat(10), ai_probability: 0.9 }]);
    expect(doc.generated_spans).toEqual([{ start: 4802, end: 4812, ai_probability: 0.9, confidence: 'medium' }]);
    expect(doc.windows.map((w) => [w.start, w.end, w.words, w.pages])).toEqual([
      [0, 4800, 800, null],
      [4802, 9600, 800, null],
    ]);
  });
});

describe('the engine on a long text', () => {
  it('detect() in one piece gives what its steps give, and sentence offsets point into the whole text', () => {
    const text = [...paragraphs(3000, 120, 500), ...AI_PARAGRAPHS, ...paragraphs(1500, 120, 9000)].join('\n\n');
    const whole = detector.detect(text, { segments: true });
    const started = detector.start(text, { segments: true });
    expect('plan' in started).toBe(true);
    if (!('plan' in started)) return;
    const scores = started.plan.windows.map((w) => detector.detectWindow(text.slice(w.start, w.end), started.plan, { segments: true }));
    expect(combineWindows(started.plan, scores, { segments: true })).toEqual(whole);
    expect(whole.windows.length).toBe(started.plan.windows.length);
    expect(whole.windows.reduce((sum, w) => sum + w.words, 0)).toBeGreaterThan(4800);
    for (const s of whole.segments) expect(text.slice(s.start, s.end)).toBe(s.text);
    for (const span of whole.generated_spans) expect(span.end).toBeGreaterThan(span.start);
    // Each window alone, as a text of its own, is what the window says.
    const second = whole.windows[1]!;
    const alone = detector.detect(text.slice(second.start, second.end), { language: 'en' });
    expect([second.ai_probability, second.verdict]).toEqual([alone.ai_probability, alone.verdict]);
  });

  it('a text of one window is answered as before, with no windows', () => {
    const text = paragraphs(600, 100).join('\n\n');
    const started = detector.start(text);
    expect('result' in started && started.result.windows).toEqual([]);
  });
});
