/**
 * src/words.ts: the words every surface shows an answer with, and `describeAnswer`'s rules, on
 * answers built to the contract's shape (the rules over the engine's real answers:
 * contradictions.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type DetectResponse, type DocumentWindow, ORIGINS, type Origin, WARNING_CODES } from '../../src/contract.ts';
import {
  describeAnswer,
  fileFacts,
  formatPercent,
  languageName,
  modeName,
  ORIGIN_WORDS,
  originHeadline,
  originLabel,
  originOfAnswer,
  passagesToShow,
  passageWords,
  SHARE_BANDS,
  shareBand,
  TOO_SHORT,
  WARNING_SENTENCES,
  warningSentence,
} from '../../src/words.ts';

const BASE: DetectResponse = {
  ai_probability: 0.97,
  mode: 'general',
  language: 'en',
  segments: [],
  request_id: 'req_01JD3X5M9Q2W8E7R6T5Y4U3I2O',
  model: 'm1',
  verdict: 'likely_ai',
  confidence: 'high',
  warnings: [],
  generated_spans: [],
  generated_share: null,
  composition: null,
  origin: 'ai_written',
  polished_probability: 0.2,
};

const answer = (over: Partial<DetectResponse>): DetectResponse => ({ ...BASE, ...over });
const span = (confidence: 'low' | 'medium' | 'high') => ({ start: 0, end: 10, ai_probability: 0.9, confidence });

/** Everything an answer's words say, in one string. */
function said(a: DetectResponse): string {
  const w = describeAnswer(a);
  return [w.label, w.sentence, w.composition?.label, w.composition?.sentence, ...w.warnings.map((x) => x.sentence), w.windows?.summary]
    .filter(Boolean)
    .join('\n');
}

describe('the headline', () => {
  it('has one label per origin, and "Unclear" for an answer that is neither', () => {
    expect(ORIGINS.map((o) => ORIGIN_WORDS[o].label)).toEqual([
      'Likely human-written',
      "Reads as the author's own text, polished by an AI",
      'Reads as AI-written',
      'Partly AI-written',
      'Unclear',
    ]);
    expect(originLabel('partly_ai', 0.554)).toBe('Partly AI-written: about 55% of the words look generated');
    expect(originHeadline('partly_ai', 0.554)).toBe('🟠 Partly AI-written: about 55% of the words look generated');
    expect(originLabel('ai_written', 0.554)).toBe('Reads as AI-written');
  });

  it('reads an answer without origin (an older server) through its warnings, composition and verdict', () => {
    const cases: Array<[object, Origin]> = [
      [{ verdict: 'likely_ai' }, 'ai_written'],
      [{ verdict: 'mixed' }, 'uncertain'],
      [{ verdict: 'likely_human' }, 'human'],
      [{ verdict: 'mixed', composition: 'partly_ai' }, 'partly_ai'],
      [{ verdict: 'likely_ai', warnings: ['too_little_evidence'] }, 'uncertain'],
      [{ verdict: 'likely_ai', origin: 'ai_assisted' }, 'ai_written'],
    ];
    for (const [over, expected] of cases) {
      const { origin: _none, ...old } = BASE;
      expect(originOfAnswer({ ...old, ...over } as never), JSON.stringify(over)).toBe(expected);
    }
  });

  it('writes whole percents, never 0% or 100%', () => {
    expect([0, 0.0004, 0.006, 0.5, 0.873, 0.994, 0.9995, 1].map(formatPercent)).toEqual([
      '1%',
      '1%',
      '1%',
      '50%',
      '87%',
      '99%',
      '99%',
      '99%',
    ]);
  });

  it('says "too short to judge" under the evidence floor, with no confidence, composition or warning', () => {
    const w = describeAnswer(
      answer({
        verdict: 'mixed',
        origin: 'uncertain',
        warnings: ['short_text', 'too_little_evidence', 'out_of_domain'],
        composition: 'ai',
      }),
    );
    expect(w).toMatchObject({ tooShort: true, origin: 'uncertain', label: TOO_SHORT.label, sentence: TOO_SHORT.sentence, warnings: [] });
    expect(w.confidence).toBeUndefined();
    expect(w.composition).toBeUndefined();
    expect(w.sentence).toBe(
      'Under about 40 words the detector cannot tell AI-written from human writing, so it gives no verdict and no score is shown.',
    );
  });
});

describe('a score that did not become a verdict', () => {
  const unclear = (p: number, warnings: string[]) =>
    answer({ verdict: 'mixed', origin: 'uncertain', confidence: 'low', ai_probability: p, warnings });

  it('says in words why a score leaning AI is not called AI-written, and lists the code no more', () => {
    const w = describeAnswer(unclear(0.95, ['strict_threshold']));
    expect(w.label).toBe('Unclear');
    expect(w.sentence).toBe(
      'The score is higher than most human texts get, but under the bar this server holds before it calls a text AI-written (set so that at most 1 in 100 human texts is called AI-written), so it is not called AI-written.',
    );
    expect(w.detail).toBe(w.sentence);
    expect(w.warnings).toEqual([]);
  });

  it('says why a score leaning human is not called human-written', () => {
    const w = describeAnswer(unclear(0.2, ['strict_human_threshold']));
    expect(w.sentence).toMatch(/^The score leans human, but not below the bar .* so it is not called human-written either\.$/);
    expect(w.warnings).toEqual([]);
  });

  it('names the warning that held the verdict back, and keeps that warning with its advice', () => {
    for (const [code, reason] of [
      ['out_of_domain', 'it is unlike the texts the detector was calibrated on'],
      ['language_mismatch', 'it was scored as another language than its own'],
      ['language_uncertain', 'its language could not be told with certainty'],
      ['calibration_fallback', 'this mode has no calibration of its own in this language'],
    ] as const) {
      const w = describeAnswer(unclear(0.91, [code]));
      expect(w.sentence, code).toBe(
        `The score leans AI, but the text is not called AI-written because ${reason}${code === 'out_of_domain' ? ', and such a text needs a clearer score' : ''}.`,
      );
      expect(w.warnings.map((x) => x.code)).toEqual([code]);
    }
    expect(describeAnswer(unclear(0.3, ['out_of_domain'])).sentence).toMatch(
      /^The score leans human, but the text is not called human-written because/,
    );
  });
});

describe('the composition box', () => {
  it('says "nearly all", "most", "about half" and "part" only of shares that big', () => {
    expect(SHARE_BANDS.map((b) => [b.min, b.words])).toEqual([
      [0.9, 'Nearly all'],
      [0.6, 'Most'],
      [0.4, 'About half'],
      [0.15, 'Part'],
      [0, 'A small part'],
    ]);
    expect([0.95, 0.9, 0.71, 0.6, 0.5, 0.2, 0.05].map((s) => shareBand(s).words)).toEqual([
      'Nearly all',
      'Nearly all',
      'Most',
      'Most',
      'About half',
      'Part',
      'A small part',
    ]);
    const seventy = describeAnswer(answer({ composition: 'ai', generated_share: 0.71, generated_spans: [span('medium')] }));
    expect(seventy.composition).toEqual({
      label: 'Mostly generated',
      sentence:
        "Most of the text looks AI-generated (71% of its words, one passage), and the rest does not read clearly as the author's own.",
    });
    const all = describeAnswer(answer({ composition: 'ai', generated_share: 0.95, generated_spans: [span('high')] }));
    expect(all.composition).toEqual({
      label: 'Generated throughout',
      sentence: 'Nearly all of the text looks AI-generated (95% of its words, one passage).',
    });
  });

  it('never says "generated" beside a polished headline', () => {
    for (const share of [0.95, 0.71, 0.45]) {
      for (const composition of ['ai', 'partly_ai', 'uncertain'] as const) {
        const a = answer({
          origin: 'ai_polished',
          polished_probability: 0.8,
          composition,
          generated_share: share,
          generated_spans: [span(composition === 'uncertain' ? 'low' : 'medium')],
        });
        expect(said(a), `${composition} ${share}`).not.toMatch(/generated/i);
        expect(describeAnswer(a).composition?.sentence).toMatch(/reads as AI wording/);
      }
    }
    expect(passageWords('high', 0.9, 'ai_polished')).toBe('Passage that clearly reads as AI wording, 90%');
    expect(passageWords('medium', 0.9, 'ai_written')).toBe('Passage that probably looks AI-generated, 90%');
  });

  it('says how a human headline and sentences leaning AI are both true', () => {
    const human = answer({
      verdict: 'likely_human',
      origin: 'human',
      ai_probability: 0.08,
      composition: 'uncertain',
      generated_share: 0.45,
      generated_spans: [span('low'), span('low')],
    });
    expect(describeAnswer(human).composition).toEqual({
      label: 'No clearly generated passage',
      sentence:
        'About half of the text leans AI (45% of its words, 2 passages), but no passage clearly enough to count as generated, and the text as a whole reads as human-written.',
    });
    const looks = describeAnswer({ ...human, composition: 'partly_ai', generated_spans: [span('high')] });
    expect(looks.composition?.sentence).toMatch(/looks AI-generated .*, but the text as a whole reads as human-written/);
    expect(describeAnswer({ ...human, composition: 'human', generated_share: 0, generated_spans: [] }).composition).toEqual({
      label: 'Reads as human writing',
      sentence: 'No passage looks AI-generated.',
    });
  });

  it('never says the rest is the author’s own under an AI-written headline', () => {
    for (const composition of ['ai', 'partly_ai', 'uncertain'] as const) {
      for (const spans of [[span('medium')], [span('low')], []]) {
        const text = said(answer({ composition, generated_share: 0.55, generated_spans: spans }));
        expect(text).not.toMatch(/rest reads as the author's own|No passage looks AI-generated/);
      }
    }
    expect(describeAnswer(answer({ composition: 'uncertain', generated_share: 0, generated_spans: [] })).composition?.sentence).toBe(
      'No single passage looks AI-generated, but the text as a whole reads as AI-written: the whole text weighs more evidence than any one sentence.',
    );
  });

  it('says of generated-looking sentences under an unclear headline why the text is not called AI-written', () => {
    const w = describeAnswer(
      answer({
        verdict: 'mixed',
        origin: 'uncertain',
        confidence: 'low',
        warnings: ['strict_threshold'],
        composition: 'ai',
        generated_share: 0.95,
        generated_spans: [span('medium')],
      }),
    );
    expect(w.composition).toEqual({
      label: 'Generated-looking throughout',
      sentence:
        'Nearly all of the text looks AI-generated (95% of its words, one passage), but the text as a whole is not called AI-written (the line above says why).',
    });
    expect(describeAnswer(answer({ composition: 'brand_new' as never })).composition?.sentence).toBe(
      'The service described the text as “brand_new”.',
    );
  });
});

describe('warnings', () => {
  it('has a sentence for every code, and one naming a code added later without its markup', () => {
    for (const code of WARNING_CODES) {
      expect(warningSentence(code)).toBe(WARNING_SENTENCES[code]);
      expect(warningSentence(code)).toMatch(/^[A-Z].*\.$/);
      expect(warningSentence(code)).not.toContain(code);
    }
    expect(warningSentence('<@U1>*x*')).toBe('The detector flagged this result (“U1x”), so treat the score with extra care.');
  });
});

describe('the map of a long document', () => {
  const window = (
    start: number,
    end: number,
    words: number,
    origin: Origin,
    p: number,
    pages: DocumentWindow['pages'] = null,
  ): DocumentWindow => ({
    start,
    end,
    words,
    pages,
    ai_probability: p,
    verdict: origin === 'human' ? 'likely_human' : origin === 'uncertain' || origin === 'partly_ai' ? 'mixed' : 'likely_ai',
    confidence: 'medium',
    origin,
  });

  it('quotes and counts only the passages inside parts that read as AI-touched, as the headline and share count them', () => {
    const stray = { start: 100, end: 400, ai_probability: 0.8, confidence: 'medium' as const };
    const inAi = { start: 5100, end: 5600, ai_probability: 0.99, confidence: 'high' as const };
    const late = { start: 12_000, end: 12_300, ai_probability: 0.7, confidence: 'low' as const };
    const windows = [
      window(0, 5000, 900, 'human', 0.05),
      window(5002, 10_000, 900, 'ai_written', 0.97),
      window(10_002, 15_000, 900, 'uncertain', 0.6),
    ];
    const document = answer({
      origin: 'partly_ai',
      verdict: 'mixed',
      composition: 'partly_ai',
      generated_share: 0.33,
      generated_spans: [late, inAi, stray],
      windows,
    });
    expect(passagesToShow(document)).toEqual([inAi]);
    expect(describeAnswer(document).composition?.sentence).toMatch(/\(33% of its words, one passage\)/);
    // A text of one window shows every span, in text order.
    expect(passagesToShow(answer({ generated_spans: [late, stray] }))).toEqual([stray, late]);
  });

  it('has no map for a text of one window', () => {
    expect(describeAnswer(answer({ windows: [] })).windows).toBeUndefined();
    expect(describeAnswer(answer({ windows: [window(0, 100, 20, 'human', 0.1)] })).windows).toBeUndefined();
    expect(describeAnswer(answer({})).windows).toBeUndefined();
  });

  it('names where the parts that read as an AI’s are, by page, runs of neighbours merged', () => {
    const pages = (a: number, b: number) => ({ first: a, last: b });
    const windows = [
      window(0, 5000, 900, 'human', 0.05, pages(1, 3)),
      window(5002, 10000, 900, 'ai_written', 0.97, pages(4, 6)),
      window(10002, 15000, 900, 'ai_written', 0.95, pages(6, 9)),
      window(15002, 20000, 900, 'uncertain', 0.6, pages(9, 12)),
      window(20002, 25000, 900, 'ai_polished', 0.93, pages(12, 12)),
    ];
    const map = describeAnswer(answer({ verdict: 'mixed', origin: 'uncertain', windows })).windows;
    expect(map?.strip).toBe('🟢🔴🔴🟡🟣');
    expect(map?.windows.map((w) => [w.where, w.percent, w.label])).toEqual([
      ['pages 1–3', '5%', 'Likely human-written'],
      ['pages 4–6', '97%', 'Reads as AI-written'],
      ['pages 6–9', '95%', 'Reads as AI-written'],
      ['pages 9–12', '60%', 'Unclear'],
      ['page 12', '93%', "Reads as the author's own text, polished by an AI"],
    ]);
    expect(map?.summary).toBe(
      "2 of 5 parts read as AI-written (pages 4–9), 1 as the author's own text, polished by an AI (page 12), 1 unclear and 1 as human-written. Each part is judged alone, so a part can read differently from the document as a whole, which the headline judges.",
    );
  });

  it('places parts by their words without pages, by their characters when they overlap, and lists at most four places', () => {
    const byWords = describeAnswer(
      answer({ windows: [window(0, 10, 900, 'ai_written', 0.9), window(12, 20, 850, 'ai_written', 0.9)] }),
    ).windows;
    expect(byWords?.windows.map((w) => w.where)).toEqual(['words 1–900', 'words 901–1,750']);
    expect(byWords?.summary).toBe('2 of 2 parts read as AI-written (words 1–1,750).');
    const overlapping = describeAnswer(
      answer({ windows: [window(0, 5000, 900, 'human', 0.1), window(4000, 9000, 900, 'human', 0.1)] }),
    ).windows;
    expect(overlapping?.windows.map((w) => w.where)).toEqual(['characters 1–5,000', 'characters 4,001–9,000']);
    const scattered = Array.from({ length: 12 }, (_, i) =>
      window(i * 10, i * 10 + 9, 100, i % 2 ? 'human' : 'ai_written', i % 2 ? 0.1 : 0.9),
    );
    const many = describeAnswer(answer({ origin: 'partly_ai', verdict: 'mixed', windows: scattered })).windows;
    expect(many?.summary).toMatch(
      /^6 of 12 parts read as AI-written \(words 1–100, words 201–300, words 401–500, words 601–700, and 2 more\) and 6 as human-written\. Each part is judged alone/,
    );
  });
});

describe('the labels of the other fields', () => {
  it('names languages, modes and what was read out of a file', () => {
    expect(['en', 'tr', 'de', 'unknown', 'x-y'].map(languageName)).toEqual([
      'English',
      'Turkish',
      'German',
      'a language that could not be identified',
      '“x-y”',
    ]);
    expect(modeName('financial')).toBe('Financial');
    expect(fileFacts({ type: 'pdf', pages: 12, characters: 31877 })).toBe('PDF, 12 pages, 31,877 characters read');
    expect(fileFacts({ type: 'docx', pages: null, characters: 800 })).toBe('Word document, 800 characters read');
    expect(fileFacts({ type: 'epub', pages: null, characters: 1 })).toBe('EPUB, 1 character read');
  });

  it('imports nothing but the contract, so the page can be served it beside contract.js', async () => {
    const source = await readFile(new URL('../../src/words.ts', import.meta.url), 'utf8');
    expect([...source.matchAll(/^import[\s\S]*?from '([^']+)';/gm)].map((m) => m[1])).toEqual(['./contract.ts']);
  });
});
