import { beforeAll, describe, expect, it } from 'vitest';
import { ORIGINS } from '../../src/contract.ts';
import { createDetector, type DetectionResult, type Detector } from '../../src/detector/index.ts';
import { HUMAN_REST_MAX_PROBABILITY, originOf, POLISHED_THRESHOLD, restProbability, type OriginInput } from '../../src/detector/origin.ts';

// A post the way a member writes it, and paragraphs the way a chat assistant writes them.
const HUMAN =
  'ok so i finally tried that ramen place on 5th that everyone keeps talking about. honestly the broth was kinda salty for me but my friend loved it. ' +
  'we waited like 40 min to get a table which was annoying, and parking was a nightmare. probably wont go back unless someone drags me there lol.';
const GENERATED =
  'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
  'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
  'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
  'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';
const GENERATED_2 =
  'Remote work has transformed the modern workplace in profound ways. By eliminating daily commutes, it allows employees to reclaim valuable time and achieve a healthier work-life balance. ' +
  'Moreover, organizations can tap into a diverse global talent pool, fostering innovation and creativity. However, remote work also presents unique challenges, such as maintaining effective communication and cultivating a strong company culture. ' +
  'To navigate these challenges successfully, leaders must embrace flexible tools, establish clear expectations, and prioritize regular check-ins. Ultimately, when implemented thoughtfully, remote work can empower both individuals and organizations to thrive in an ever-evolving landscape.';

/** Two sentences: a human one (words 0–9) and a generated one (10–19), the second in a span. */
function halves(humanProbability: number): Required<Pick<OriginInput, 'segments' | 'generated_spans'>> {
  const human = 'one two three four five six seven eight nine ten';
  const generated = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';
  return {
    segments: [
      { start: 0, end: human.length, text: human, ai_probability: humanProbability },
      { start: human.length + 1, end: human.length + 1 + generated.length, text: generated, ai_probability: 0.97 },
    ],
    generated_spans: [{ start: human.length + 1, end: human.length + 1 + generated.length }],
  };
}

const BASE: OriginInput = { verdict: 'likely_ai', warnings: [], polished_probability: null, composition: null };

describe('originOf, the headline rule', () => {
  it('reads a likely-AI verdict as AI-written, or as polished from polished_probability ≥ 0.65', () => {
    expect(POLISHED_THRESHOLD).toBe(0.65);
    expect(originOf({ ...BASE, polished_probability: null })).toBe('ai_written');
    expect(originOf({ ...BASE, polished_probability: 0 })).toBe('ai_written');
    expect(originOf({ ...BASE, polished_probability: 0.6499 })).toBe('ai_written');
    expect(originOf({ ...BASE, polished_probability: 0.65 })).toBe('ai_polished');
    expect(originOf({ ...BASE, polished_probability: 0.93 })).toBe('ai_polished');
  });

  it('never reads polished_probability outside a likely-AI verdict', () => {
    expect(originOf({ ...BASE, verdict: 'likely_human', polished_probability: 0.9 })).toBe('human');
    expect(originOf({ ...BASE, verdict: 'mixed', polished_probability: 0.9 })).toBe('uncertain');
    expect(originOf({ ...BASE, verdict: 'likely_human' })).toBe('human');
    expect(originOf({ ...BASE, verdict: 'mixed' })).toBe('uncertain');
  });

  it('says uncertain under the evidence floor, whatever else the answer holds', () => {
    const floor = { ...BASE, warnings: ['short_text', 'too_little_evidence'] };
    expect(originOf({ ...floor, verdict: 'mixed', polished_probability: 0.9 })).toBe('uncertain');
    expect(originOf({ ...floor, verdict: 'likely_ai' })).toBe('uncertain');
    expect(originOf({ ...floor, verdict: 'likely_human' })).toBe('uncertain');
    expect(originOf({ ...floor, composition: 'partly_ai', ...halves(0.05) })).toBe('uncertain');
  });

  it('says partly_ai, whatever the verdict, when a generated part stands beside a human one', () => {
    for (const verdict of ['likely_ai', 'mixed', 'likely_human'] as const) {
      for (const polished_probability of [null, 0.2, 0.8]) {
        expect(originOf({ ...BASE, verdict, polished_probability, composition: 'partly_ai', ...halves(0.1) })).toBe('partly_ai');
      }
    }
  });

  it('keeps the plain verdict when the rest of a partly_ai composition does not read as human', () => {
    // The sentence model's span covers part of a fully generated text and leaves the rest leaning AI.
    const leaning = { ...BASE, composition: 'partly_ai' as const, ...halves(HUMAN_REST_MAX_PROBABILITY) };
    expect(originOf(leaning)).toBe('ai_written');
    expect(originOf({ ...leaning, polished_probability: 0.7 })).toBe('ai_polished');
    expect(originOf({ ...leaning, verdict: 'mixed' })).toBe('uncertain');
    expect(originOf({ ...BASE, composition: 'partly_ai', ...halves(HUMAN_REST_MAX_PROBABILITY - 0.01) })).toBe('partly_ai');
    // Every sentence inside a span: nothing human to speak of.
    const all = halves(0.1);
    expect(originOf({ ...BASE, composition: 'partly_ai', segments: all.segments, generated_spans: [{ start: 0, end: 1000 }] })).toBe(
      'ai_written',
    );
  });

  it('never says partly_ai for sentence scores from a model of the wrong language', () => {
    const partly = { ...BASE, verdict: 'mixed' as const, composition: 'partly_ai' as const, ...halves(0.1) };
    expect(originOf({ ...partly, warnings: ['language_mismatch'] })).toBe('uncertain');
    expect(originOf({ ...partly, warnings: ['language_uncertain'] })).toBe('uncertain');
  });

  it('reads the other compositions through the verdict', () => {
    expect(originOf({ ...BASE, composition: 'ai' })).toBe('ai_written');
    expect(originOf({ ...BASE, verdict: 'mixed', composition: 'ai' })).toBe('uncertain');
    expect(originOf({ ...BASE, verdict: 'likely_human', composition: 'human' })).toBe('human');
    expect(originOf({ ...BASE, verdict: 'likely_human', composition: 'uncertain' })).toBe('human');
  });

  it('weights the rest by its words', () => {
    const { segments, generated_spans } = halves(0.2);
    expect(restProbability(segments, generated_spans)).toBeCloseTo(0.2, 10);
    const more = [...segments, { start: 200, end: 230, text: 'a b c d e f g h i j k l m n o p q r s t', ai_probability: 0.5 }];
    // 10 words at 0.2 and 20 at 0.5.
    expect(restProbability(more, generated_spans)).toBeCloseTo((10 * 0.2 + 20 * 0.5) / 30, 10);
    expect(restProbability([], [])).toBeUndefined();
  });

  it('only gives values of the contract', () => {
    const seen = new Set<string>();
    for (const verdict of ['likely_ai', 'mixed', 'likely_human'] as const)
      for (const composition of [null, 'human', 'ai', 'partly_ai', 'uncertain'] as const)
        for (const polished_probability of [null, 0.1, 0.9])
          for (const warnings of [[], ['too_little_evidence']])
            seen.add(originOf({ verdict, composition, polished_probability, warnings, ...halves(0.1) }));
    expect([...seen].sort()).toEqual([...ORIGINS].sort());
  });
});

describe('the engine answers with the headline', () => {
  let detector: Detector;
  beforeAll(async () => {
    detector = await createDetector();
  });

  const consistent = (r: DetectionResult) => expect(r.origin).toBe(originOf(r));

  it('calls generated paragraphs AI-written, with and without sentence scores', () => {
    for (const text of [GENERATED, GENERATED_2, `${GENERATED}\n\n${GENERATED_2}`]) {
      for (const segments of [true, false]) {
        const r = detector.detect(text, { segments });
        consistent(r);
        expect(r.verdict).toBe('likely_ai');
        expect(r.origin).toBe('ai_written');
        expect(r.polished_probability === null || typeof r.polished_probability === 'number').toBe(true);
      }
    }
  });

  it('calls a post followed by a generated paragraph partly AI-written, only when the sentences were scored', () => {
    const text = `${HUMAN}\n\n${GENERATED}`;
    const r = detector.detect(text, { segments: true });
    consistent(r);
    expect(r.composition).toBe('partly_ai');
    expect(r.origin).toBe('partly_ai');
    expect(r.generated_share).toBeGreaterThan(0.3);
    expect(r.generated_share).toBeLessThan(0.9);
    const plain = detector.detect(text);
    consistent(plain);
    expect(plain.origin).not.toBe('partly_ai');
  });

  it('calls the post human and a line too short to judge uncertain', async () => {
    // The document model's reading: the post was written for this test by an AI assistant, and
    // the assistant head (assistant.ts) does not clear it (its own tests are in assistant.test.ts): the post is read by the document model alone.
    const human = (await createDetector({ assistantHead: false })).detect(HUMAN, { segments: true });
    consistent(human);
    expect(human.origin).toBe('human');
    expect(detector.detect(HUMAN).verdict).not.toBe('likely_ai');
    const short = detector.detect('ok see you all at eight then', { segments: true });
    consistent(short);
    expect(short.warnings).toContain('too_little_evidence');
    expect(short.origin).toBe('uncertain');
    expect(short.polished_probability).toBeNull();
  });

  it('gives an author the same rule, without partly_ai', () => {
    const ai = detector.detectAuthor([GENERATED, GENERATED_2]);
    expect(ai.verdict).toBe('likely_ai');
    expect(ai.origin).toBe(originOf(ai));
    expect(ai.origin).toBe(
      ai.polished_probability !== null && ai.polished_probability >= POLISHED_THRESHOLD ? 'ai_polished' : 'ai_written',
    );
    const few = detector.detectAuthor(['hi', 'ok see you then']);
    expect(few.evidence_needed).not.toBeNull();
    expect(few.origin).toBe('uncertain');
    expect(few.polished_probability).toBeNull();
  });
});
