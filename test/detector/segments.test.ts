import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArtifact } from '../../src/detector/artifact.ts';
import { extractFeatures, tokenize, hashedWeightSums, isWordToken } from '../../src/detector/features.ts';
import {
  createDetector,
  DEFAULT_MODEL_PATH,
  DEFAULT_SEGMENT_MODEL_PATH,
  segmentModelMismatch,
  type DetectionResult,
  type Detector,
  type Mode,
} from '../../src/detector/index.ts';
import { EVIDENCE_FLOOR_WORDS } from '../../src/contract.ts';
import { auroc } from '../../src/detector/metrics.ts';
import { LoadedModel } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import {
  CONTEXT_FEATURES,
  MAX_SEGMENTS,
  MIN_SEGMENT_WORDS,
  PASSAGE_WORDS,
  SEGMENT_FORMAT_VERSION,
  assistantSpans,
  parseSegmentModel,
  segmentRanges,
  sequencePosteriors,
  type SegmentModel,
} from '../../src/detector/segments.ts';
import { trainingDataFile } from '../helpers/training-data.ts';

/** Runs `fn` in a throw-away folder, removed after. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-seg-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

let detector: Detector;
let loaded: LoadedModel;
let segmentModel: SegmentModel;
beforeAll(async () => {
  detector = await createDetector();
  const { header, arrays } = readArtifact(DEFAULT_MODEL_PATH);
  loaded = new LoadedModel(header, arrays);
  segmentModel = parseSegmentModel(readFileSync(DEFAULT_SEGMENT_MODEL_PATH, 'utf8'));
});

// A post the way a member writes it, and a paragraph the way a chat assistant writes it.
const HUMAN =
  'ok so i finally tried that ramen place on 5th that everyone keeps talking about. honestly the broth was kinda salty for me but my friend loved it. ' +
  'we waited like 40 min to get a table which was annoying, and parking was a nightmare. probably wont go back unless someone drags me there lol.';
const GENERATED =
  'Ramen has become a beloved culinary staple around the world, celebrated for its rich flavors and comforting warmth. ' +
  'Each bowl represents a harmonious balance of savory broth, tender noodles, and carefully selected toppings. ' +
  'Whether enjoyed in a bustling city restaurant or prepared at home, ramen offers a delightful experience that brings people together. ' +
  'Its versatility allows for endless variations, ensuring that there is a perfect bowl for every palate.';
const HUMAN_2 =
  'Got my order on Tuesday, two days late. The box was crushed on one side and the charger cable was missing, so I emailed support. ' +
  'They answered the next morning and sent a new cable, which works fine. The laptop itself is quick and quiet. Battery lasts me about six hours of actual work.';

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Sentences of `r` that lie inside [start, end) of the text. */
function sentencesIn(r: DetectionResult, start: number, end: number) {
  return r.segments.filter((s) => s.start >= start && s.end <= end);
}

/** Words of a sentence as the sentence model counts them. */
function wordsOf(text: string): number {
  return tokenize(lowerForFeatures(normalize(text).text, 'en')).filter(isWordToken).length;
}

/** Every sentence's probability weighted by its words: the expected share of generated words. */
function expectedShare(r: DetectionResult): number {
  const total = r.segments.reduce((a, s) => a + wordsOf(s.text), 0);
  return r.segments.reduce((a, s) => a + s.ai_probability * wordsOf(s.text), 0) / total;
}

describe('sentence scores inside a partly generated post', () => {
  for (const order of ['human first', 'generated first'] as const) {
    it(`shows the human paragraph as human and outlines the generated one (${order})`, () => {
      const text = order === 'human first' ? `${HUMAN}\n\n${GENERATED}` : `${GENERATED}\n\n${HUMAN}`;
      const humanStart = text.indexOf(HUMAN);
      const generatedStart = text.indexOf(GENERATED);
      const r = detector.detect(text, { segments: true });
      const human = sentencesIn(r, humanStart, humanStart + HUMAN.length);
      const generated = sentencesIn(r, generatedStart, generatedStart + GENERATED.length);
      expect(human.length).toBeGreaterThan(0);
      expect(generated.length).toBe(4);
      // Each sentence on its own evidence and its neighbours', not the document's: the document is
      // AI-leaning, the human sentences still look human.
      expect(r.ai_probability).toBeGreaterThan(0.5);
      for (const s of human) expect(s.ai_probability).toBeLessThan(0.5);
      for (const s of generated) expect(s.ai_probability).toBeGreaterThan(0.5);
      // One span, over the generated paragraph and nothing of the human one.
      expect(r.generated_spans).toHaveLength(1);
      const span = r.generated_spans[0]!;
      expect(span.start).toBe(generatedStart);
      expect(span.end).toBe(generatedStart + GENERATED.length);
      expect(span.confidence).toBeDefined();
      const truth = words(GENERATED) / (words(GENERATED) + words(HUMAN));
      // The expected share counts each sentence by its probability, so even a clean split reads a
      // little below the truth: within the ±0.2 of the target.
      expect(Math.abs(r.generated_share! - truth)).toBeLessThan(0.2);
      expect(r.generated_share).toBeCloseTo(expectedShare(r), 3);
      expect(r.composition).toBe('partly_ai');
      // The span is the generated paragraph scored as a document of its own.
      const alone = detector.detect(GENERATED);
      expect(span.ai_probability).toBeCloseTo(alone.ai_probability, 2);
    });
  }

  it('keeps the verdict for the document and says separately what it is made of', () => {
    const r = detector.detect(`${HUMAN}\n\n${GENERATED}`, { segments: true });
    const plain = detector.detect(`${HUMAN}\n\n${GENERATED}`);
    expect(r.ai_probability).toBe(plain.ai_probability);
    expect(r.verdict).toBe(plain.verdict);
    expect(r.confidence).toBe(plain.confidence);
    expect(plain.generated_spans).toEqual([]);
    expect(plain.generated_share).toBeNull();
    expect(plain.composition).toBeNull();
  });

  it('reads no composition from a text under the evidence floor (issue 40, item 10)', () => {
    // README's example text, and a generated one cut just under the floor: sentences scored, nothing read from them.
    const cut = GENERATED.split(/\s+/)
      .slice(0, EVIDENCE_FLOOR_WORDS - 1)
      .join(' ');
    for (const [text, mode] of [
      ['Paste a paragraph here.', 'academic'],
      [cut, 'general'],
    ] as const) {
      const r = detector.detect(text, { segments: true, mode });
      expect(r.warnings).toContain('too_little_evidence');
      expect(r.segments.length).toBeGreaterThan(0);
      expect(r.composition).toBe('uncertain');
      expect(r.generated_share).toBeNull();
      expect(r.generated_spans).toEqual([]);
      expect(r.origin).toBe('uncertain');
    }
    // At the floor itself the parts are read as usual: a share is estimated (0 without a span).
    const atFloor = detector.detect(GENERATED.split(/\s+/).slice(0, EVIDENCE_FLOOR_WORDS).join(' '), { segments: true });
    expect(atFloor.warnings).not.toContain('too_little_evidence');
    expect(typeof atFloor.generated_share).toBe('number');
  });

  it('reads a generated text as generated throughout', () => {
    const r = detector.detect(GENERATED, { segments: true });
    expect(r.composition).toBe('ai');
    expect(r.generated_spans).toHaveLength(1);
    expect(r.generated_spans[0]).toMatchObject({ start: 0, end: GENERATED.length, ai_probability: r.ai_probability });
    // The share is the expected generated words, so it stays below 1 as the sentences' probabilities do.
    expect(r.generated_share).toBeCloseTo(expectedShare(r), 3);
    expect(r.generated_share).toBeGreaterThan(0.6);
    expect(r.generated_share).toBeLessThan(1);
  });

  it('estimates the share from every sentence when there is a span, the span words otherwise', async () => {
    expect(segmentModel.spans.shareRule).toBe('expected');
    const text = `${HUMAN}\n\n${GENERATED}`;
    const r = detector.detect(text, { segments: true });
    expect(r.generated_spans.length).toBeGreaterThan(0);
    expect(r.generated_share).toBeCloseTo(expectedShare(r), 3);
    // The same model with the share read off the spans: words inside spans over all words.
    await inTempDir(async (dir) => {
      const path = join(dir, 'segments.json');
      await writeFile(path, JSON.stringify({ ...segmentModel, spans: { ...segmentModel.spans, shareRule: 'spans' } }));
      const bySpans = (await createDetector({ segmentModel: path })).detect(text, { segments: true });
      expect(bySpans.segments).toEqual(r.segments);
      expect(bySpans.generated_spans).toEqual(r.generated_spans);
      expect(bySpans.composition).toBe(r.composition);
      const inside = r.segments.filter((s) => r.generated_spans.some((g) => s.start >= g.start && s.end <= g.end));
      const spanShare = inside.reduce((a, s) => a + wordsOf(s.text), 0) / r.segments.reduce((a, s) => a + wordsOf(s.text), 0);
      expect(bySpans.generated_share).toBeCloseTo(spanShare, 3);
      expect(bySpans.generated_share).not.toBeCloseTo(r.generated_share!, 2);
    });
  });

  it('finds no generated span in human posts', async () => {
    // Read by the document model: these posts were written for the tests by an AI assistant, and the
    // assistant head (assistant.ts) reads them as what they are (HUMAN_2 as likely_ai). The sentence
    // model reads the head's weights whatever the document model (ts4), so one sentence of them is
    // at 0.80: the bound on people's own sentences is held on the dev files' people
    // ('held-out mixed documents (dev files)' below).
    const documentModel = await createDetector({ assistantHead: false });
    for (const text of [HUMAN, HUMAN_2, `${HUMAN}\n\n${HUMAN_2}`]) {
      const r = documentModel.detect(text, { segments: true });
      expect(r.generated_spans).toEqual([]);
      expect(r.generated_share).toBe(0);
      expect(r.composition).toBe('human');
    }
  });
});

// Paragraphs written for these tests: people's notes, and the way a chat assistant writes about the
// same things. The case: a human paragraph then a generated one sent as `general` came back
// as one span over the whole text (`composition: "ai"`), while `academic` outlined the generated
// paragraph alone. The sentence model read the mode as a feature, and the mode stood for its
// training sources (general: tweets and rewrites the document model is at chance on).
const NOTES = {
  lab: 'We ran the samples twice because the first batch sat in the fridge over the weekend. The second run gave lower counts, so we report both and flag the first.',
  lease:
    'The tenant paid rent late in March and April. The landlord sent a notice on May 2 but did not say how much was owed, and the tenant stayed.',
  committee:
    'The committee met on Tuesday to discuss the proposed changes to the city budget. Several members argued that the road repairs should come first, since the winter had left many streets in poor condition.',
  complaint:
    'Bankanızın müşteri hizmetlerine üç gündür ulaşmaya çalışıyorum ancak hiçbir sonuç alamadım. Kredi kartımdan benim yapmadığım bir harcama çekilmiş ve itiraz etmek istiyorum. ' +
    'Şubeye gittiğimde beni çağrı merkezine yönlendirdiler, çağrı merkezinde ise sürekli bekletildim.',
};
const ASSISTANT = {
  budget:
    'Effective budget planning is essential for ensuring the long-term sustainability of municipal services. By carefully evaluating community needs and prioritizing investments, local governments can allocate resources in a way that maximizes public benefit. ' +
    'Furthermore, transparent decision-making processes foster trust and encourage civic engagement. Ultimately, a balanced approach to budgeting enables cities to address immediate concerns while laying the groundwork for future growth.',
  finance:
    'Finansal okuryazarlık, bireylerin bilinçli ekonomik kararlar alabilmesi için büyük önem taşımaktadır. Bütçe planlaması, tasarruf alışkanlıkları ve yatırım araçlarının doğru anlaşılması, uzun vadeli finansal istikrarın temelini oluşturur. ' +
    'Ayrıca bankacılık hizmetlerinin şeffaf bir şekilde sunulması, müşteri güvenini artırarak sektörün sürdürülebilir büyümesine katkı sağlar.',
};
const MODES: Mode[] = ['general', 'academic', 'financial', 'legal'];

/** Parts joined by a blank line, with where each one lies in the text. */
function joined(...parts: Array<{ text: string; ai: boolean }>) {
  let text = '';
  const bounds: Array<{ start: number; end: number; ai: boolean }> = [];
  for (const part of parts) {
    if (text) text += '\n\n';
    bounds.push({ start: text.length, end: text.length + part.text.length, ai: part.ai });
    text += part.text;
  }
  return { text, bounds };
}
const human = (text: string) => ({ text, ai: false });
const generated = (text: string) => ({ text, ai: true });

describe('the same mixed text in every mode', () => {
  const mixed = {
    'notes, then a generated paragraph': joined(human(NOTES.lab), generated(ASSISTANT.budget)),
    'a generated paragraph, then notes': joined(generated(ASSISTANT.budget), human(NOTES.lease)),
    'notes around a generated paragraph': joined(human(NOTES.lab), generated(ASSISTANT.budget), human(NOTES.lease)),
    'a post, then a generated paragraph': joined(human(HUMAN), generated(ASSISTANT.budget)),
    'minutes, then a generated paragraph (the issue)': joined(human(NOTES.committee), generated(ASSISTANT.budget)),
    'a Turkish complaint, then a generated paragraph': joined(human(NOTES.complaint), generated(ASSISTANT.finance)),
    'a generated Turkish paragraph, then a complaint': joined(generated(ASSISTANT.finance), human(NOTES.complaint)),
  };

  for (const [name, { text }] of Object.entries(mixed)) {
    it(`reads the sentences of ${name} the same whatever the mode`, () => {
      const [first, ...others] = MODES.map((mode) => detector.detect(text, { mode, segments: true }));
      expect(first!.segments.length).toBeGreaterThan(1);
      // The mode picks the document's calibration and thresholds; which sentences look generated is
      // a property of the text. (Span confidence, and whether a run leans AI as a document of its
      // own, still follow the mode's calibration.)
      for (const r of others) expect(r.segments).toEqual(first!.segments);
    });
  }

  // The lab notes' sentences: 0.61-0.64 before the generated paragraph with the v3 models, 0.514
  // around it with the v4 models (the span started one sentence early). These "people's notes" were
  // written for the tests by an AI assistant, like the rest of these paragraphs; since the sentence
  // model reads the assistant head's weights (ts4, issue 38) it reads them as that (0.86 and 0.94 on
  // their own), and they join the span before the paragraph. Pinned as it is, the same in every
  // mode: the span takes in the generated paragraph and ends where it ends (the lease notes after it
  // stay out).
  for (const name of ['notes, then a generated paragraph', 'notes around a generated paragraph'] as const) {
    it(`outlines the generated paragraph of ${name} and ends the span with it, in every mode`, () => {
      const { text, bounds } = mixed[name];
      const ai = bounds.find((b) => b.ai)!;
      for (const mode of MODES) {
        const r = detector.detect(text, { mode, segments: true });
        const where = `${mode}: ${JSON.stringify(r.segments.map((s) => s.ai_probability))}`;
        for (const s of r.segments) {
          if (s.start >= ai.start && s.end <= ai.end) expect(s.ai_probability, where).toBeGreaterThan(0.5);
          // The lease notes' first sentence, after the paragraph.
          else if (s.start > ai.end && s.start === text.indexOf(NOTES.lease)) expect(s.ai_probability, where).toBeLessThan(0.5);
        }
        expect(
          r.generated_spans.map((g) => [g.start, g.end]),
          where,
        ).toEqual([[0, ai.end]]);
        expect(r.composition, where).toBe(ai.end === text.length ? 'ai' : 'partly_ai');
      }
    });
  }

  // English parts with clear margins: the generated paragraph alone is outlined, in every mode.
  for (const name of ['a generated paragraph, then notes', 'a post, then a generated paragraph'] as const) {
    it(`outlines the generated paragraph of ${name} and nothing else, in every mode`, () => {
      const { text, bounds } = mixed[name];
      const ai = bounds.find((b) => b.ai)!;
      for (const mode of MODES) {
        const r = detector.detect(text, { mode, segments: true });
        const where = `${mode}: ${JSON.stringify(r.segments.map((s) => s.ai_probability))}`;
        for (const s of r.segments) {
          if (s.start >= ai.start && s.end <= ai.end) expect(s.ai_probability, where).toBeGreaterThan(0.5);
          else expect(s.ai_probability, where).toBeLessThan(0.5);
        }
        expect(
          r.generated_spans.map((g) => [g.start, g.end]),
          where,
        ).toEqual([[ai.start, ai.end]]);
        expect(r.composition, where).toBe('partly_ai');
        const truth = words(ASSISTANT.budget) / bounds.reduce((a, b) => a + words(text.slice(b.start, b.end)), 0);
        expect(Math.abs(r.generated_share! - truth), where).toBeLessThan(0.2);
      }
    });
  }
});

describe('texts with next to nothing to score', () => {
  it('never reports a generated span for a few characters', () => {
    for (const text of ['a', '!!!', 'https://example.com', '😀']) {
      const r = detector.detect(text, { segments: true, language: 'en' });
      expect(r.segments).toHaveLength(1);
      expect(r.generated_spans).toEqual([]);
      // Under the evidence floor: no share is estimated and nothing is said of the parts.
      expect(r.generated_share).toBeNull();
      expect(r.composition).toBe('uncertain');
    }
  });
});

describe('bounded segments', () => {
  it('joins sentences too short to say anything to a neighbour', () => {
    const text = 'Introduction\nThe results were collected over three weeks in two schools. Thanks! We hope this helps other teachers.';
    const ranges = segmentRanges(normalize(text).text, 'en');
    const pieces = ranges.map((r) => normalize(text).text.slice(r.start, r.end));
    // The heading goes with the sentence after it, "Thanks!" with the one before.
    expect(pieces).toEqual([
      'Introduction\nThe results were collected over three weeks in two schools. Thanks!',
      'We hope this helps other teachers.',
    ]);
    for (const r of ranges) expect(r.words).toBeGreaterThanOrEqual(MIN_SEGMENT_WORDS);
  });

  it('bounds a text broken after every character (MAX_SEGMENTS per window), its segments covering it exactly', () => {
    let text = '';
    for (let i = 0; text.length < 50_000; i++) text += `${'abcdefghijklmnopqrstuvwxyz'[i % 26]}\n`;
    const r = detector.detect(text, { segments: true, language: 'en' });
    // 25,000 one-letter words are judged in windows of about 800 words (windows.ts), each capped.
    expect(r.windows.length).toBeGreaterThan(1);
    expect(r.segments.length).toBeGreaterThan(MAX_SEGMENTS / 2);
    expect(r.segments.length).toBeLessThanOrEqual(MAX_SEGMENTS * r.windows.length);
    expect(r.segments.length).toBeLessThanOrEqual(25_000 / MIN_SEGMENT_WORDS);
    let last = 0;
    for (const s of r.segments) {
      expect(s.start).toBeGreaterThanOrEqual(last);
      expect(text.slice(s.start, s.end)).toBe(s.text);
      last = s.end;
    }
    expect(text.slice(0, r.segments[0]!.start).trim()).toBe('');
    expect(text.slice(last).trim()).toBe('');
    // Every character but the line breaks is inside a segment: grouping loses nothing.
    expect(r.segments.reduce((a, s) => a + s.text.replace(/\n/g, '').length, 0)).toBe(text.replace(/\n/g, '').length);
    // The answer: the text itself plus a bounded overhead per segment and window.
    expect(JSON.stringify(r).length).toBeLessThan(2 * text.length + r.segments.length * 120 + r.windows.length * 200);
  });

  it('keeps every sentence of an ordinary long text as its own segment; the cap groups past MAX_SEGMENTS', () => {
    const sentence = 'The committee reviewed the proposal and asked for a revised budget. ';
    // Judged window by window, each window well under the cap: every sentence stays its own segment.
    expect(detector.detect(sentence.repeat(MAX_SEGMENTS + 1), { segments: true }).segments).toHaveLength(MAX_SEGMENTS + 1);
    // The cap itself, on one text's sentences.
    const norm = normalize(sentence.repeat(MAX_SEGMENTS + 1)).text;
    expect(segmentRanges(norm, 'en').length).toBeLessThanOrEqual(MAX_SEGMENTS);
    expect(segmentRanges(norm, 'en').length).toBeGreaterThanOrEqual(MAX_SEGMENTS / 2);
    expect(segmentRanges(normalize(sentence.repeat(MAX_SEGMENTS)).text, 'en')).toHaveLength(MAX_SEGMENTS);
  });
});

describe('the sentence model', () => {
  it('is fitted to the raw scores of the committed document model', () => {
    expect(segmentModelMismatch(loaded, segmentModel)).toBeUndefined();
    expect(segmentModel.version).toMatch(new RegExp(`^ts${SEGMENT_FORMAT_VERSION}-[0-9a-f]{12}$`));
    expect(segmentModel.formatVersion).toBe(SEGMENT_FORMAT_VERSION);
  });

  it('refuses segments from a sentence model fitted to another document model, but still scores documents', async () => {
    const other = structuredClone(segmentModel);
    other.scorer.probes[0]!.rawLogit += 0.5;
    other.scorer.model = 'td1-000000000000';
    await inTempDir(async (dir) => {
      const path = join(dir, 'segments.json');
      await writeFile(path, JSON.stringify(other));
      const d = await createDetector({ segmentModel: path });
      expect(d.detect(GENERATED).ai_probability).toBe(detector.detect(GENERATED).ai_probability);
      expect(() => d.detect(GENERATED, { segments: true })).toThrow(/fitted to the raw scores of td1-000000000000.*npm run train:segments/);
      await writeFile(path, '{"format":"something else"}');
      await expect(createDetector({ segmentModel: path })).rejects.toThrow(/not a sentence model/);
      // A file of the format before the context model (or a later one) is refused by name, not misread.
      for (const formatVersion of [1, SEGMENT_FORMAT_VERSION + 1]) {
        await writeFile(path, JSON.stringify({ ...segmentModel, formatVersion }));
        await expect(createDetector({ segmentModel: path })).rejects.toThrow(
          new RegExp(`format ${formatVersion}; this code reads format ${SEGMENT_FORMAT_VERSION}.*npm run train:segments`),
        );
      }
      // Trees built over another set of sentence features are refused too.
      await writeFile(path, JSON.stringify({ ...segmentModel, context: { ...segmentModel.context, features: CONTEXT_FEATURES - 1 } }));
      await expect(createDetector({ segmentModel: path })).rejects.toThrow(/not a sentence model/);
    });
  });

  it('reads the assistant head’s weights, and refuses segments from a sentence model fitted with another head', async () => {
    // The probes pin the head: the committed sentence model reads the committed head.
    expect(segmentModel.scorer.probes.every((p) => typeof p.familySum === 'number' && p.familySum !== 0)).toBe(true);
    const other = structuredClone(segmentModel);
    other.scorer.probes[1]!.familySum! += 0.5;
    await inTempDir(async (dir) => {
      const path = join(dir, 'segments.json');
      await writeFile(path, JSON.stringify(other));
      const d = await createDetector({ segmentModel: path });
      expect(() => d.detect(GENERATED, { segments: true })).toThrow(/reads the assistant head of .*npm run train:segments/);
      // Read without its head, the artifact's sentence model still reads the head's weights: the
      // sentences score as with the head (only the runs scored as documents are not lifted).
      const bare = await createDetector({ assistantHead: false });
      const a = bare.detect(`${HUMAN}\n\n${GENERATED}`, { segments: true });
      const b = detector.detect(`${HUMAN}\n\n${GENERATED}`, { segments: true });
      expect(a.segments.map((x) => x.ai_probability)).toEqual(b.segments.map((x) => x.ai_probability));
    });
  });

  it('pools hashed-feature weights exactly as the document features hash them', () => {
    // Every word and character n-gram distinct, so tf = 1 and the normalised features are 1/√n per block.
    const lower = lowerForFeatures(normalize('Quick brown fox jumps.').text, 'en');
    const tokens = tokenize(lower);
    const sums = hashedWeightSums(lower, tokens, loaded.weights.sparse);
    const f = extractFeatures(lower, 'en', loaded.lm);
    let viaFeatures = 0;
    for (let i = 0; i < f.idx.length; i++) viaFeatures += loaded.weights.sparse[f.idx[i]!]! * f.val[i]!;
    expect(sums.word / Math.sqrt(sums.wordN) + sums.char / Math.sqrt(sums.charN)).toBeCloseTo(viaFeatures, 5);
  });

  it('follows a change of author and is not fooled by a text that leans one way throughout', () => {
    const e = segmentModel.emission;
    const b = e.bands.length - 2;
    const w = e.bands[b]! + 1;
    const human = e.muHuman[b]!;
    const ai = e.muAi[b]!;
    const changed = Float64Array.from([human, human, human, human, ai, ai, ai, ai]);
    const post = sequencePosteriors(segmentModel, changed, new Array(8).fill(w));
    // The two sentences next to the change share some doubt (ts3-40f1cbc00d96: 0.291 / 0.709;
    // ts3-42c6ffa0603f, whose band means are 2.00 apart instead of 2.15: 0.307 / 0.693); the
    // others are clear (at most 0.18 / at least 0.82 with either).
    for (let i = 0; i < 3; i++) expect(post[i]).toBeLessThan(0.25);
    for (let i = 5; i < 8; i++) expect(post[i]).toBeGreaterThan(0.75);
    expect(post[3]).toBeLessThan(0.35);
    expect(post[4]).toBeGreaterThan(0.65);
    // Every sentence a little above the human mean: the document's shift explains part of it, so
    // it is not read as confidently generated.
    const leaning = new Float64Array(8).fill(human + 0.6 * (ai - human));
    const withShift = sequencePosteriors(segmentModel, leaning, new Array(8).fill(w));
    const noShift = sequencePosteriors(
      { ...segmentModel, sequence: { ...segmentModel.sequence, offsetSd: 0 } },
      leaning,
      new Array(8).fill(w),
    );
    expect(withShift[4]!).toBeLessThan(noShift[4]!);
  });
});

const CORPUS_DEV = trainingDataFile('corpus-dev.jsonl');
const EXTRA_DEV = trainingDataFile('extra-dev.jsonl');
interface Row {
  text: string;
  label: 'human' | 'ai';
  mode: Mode;
  language: 'en' | 'tr';
  source: string;
}

describe.skipIf(!existsSync(CORPUS_DEV) || !existsSync(EXTRA_DEV))('held-out mixed documents (dev files)', () => {
  it('separates human from generated sentences inside them, and keeps pure human texts free of confident spans', () => {
    const rows = [CORPUS_DEV, EXTRA_DEV].flatMap((p) =>
      readFileSync(p, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row),
    );
    const bySource = new Map<string, { h: Row[]; a: Row[] }>();
    for (const r of rows) {
      if (r.source === 'tweepfake-tweets') continue;
      const g = bySource.get(`${r.source}|${r.mode}`) ?? { h: [], a: [] };
      (r.label === 'ai' ? g.a : g.h).push(r);
      bySource.set(`${r.source}|${r.mode}`, g);
    }
    const scores: number[] = [];
    const labels: number[] = [];
    let humanHigh = 0;
    let humans = 0;
    for (const { h, a } of bySource.values()) {
      for (let k = 0; k < Math.min(4, h.length, a.length); k++) {
        const [first, second] = k % 2 === 0 ? [h[k]!, a[k]!] : [a[k]!, h[k]!];
        const text = `${first.text}\n\n${second.text}`;
        const r = detector.detect(text, { mode: first.mode, language: first.language, segments: true });
        for (const s of r.segments) {
          const y = (s.start < first.text.length ? first : second).label === 'ai' ? 1 : 0;
          scores.push(s.ai_probability);
          labels.push(y);
          if (y === 0) {
            humans++;
            if (s.ai_probability >= 0.8) humanHigh++;
          }
        }
        const alone = detector.detect(h[k]!.text, { mode: h[k]!.mode, language: h[k]!.language, segments: true });
        expect(alone.generated_spans.filter((s) => s.confidence === 'high')).toEqual([]);
      }
    }
    // The baseline (each sentence blended with the document's score) was at 0.65 and 18%.
    expect(auroc(scores, labels)).toBeGreaterThan(0.85);
    expect(humanHigh / humans).toBeLessThan(0.05);
  });
});

/**
 * The spans the assistant head finds (issue 38) in a text only it makes `likely_ai`, or one it keeps
 * from being cleared: the sentence model never saw that family, so the head reads the text's
 * passages on its own (`assistantSpans`).
 */
describe('assistantSpans', () => {
  // Twelve sentences of 30 words: passages of 100+ words are sentences 0–3, 4–7 and 8–11.
  const sentences = (n: number) => Array.from({ length: n }, (_, i) => ({ start: i * 100, end: i * 100 + 99, words: 30 }));
  const ranges = sentences(12);
  const words = ranges.map((r) => r.words);
  const reader = (firing: number[]) => {
    const read: Array<[number, number]> = [];
    const fn = (start: number, end: number) => {
      read.push([start, end]);
      const passage = ['0-399', '400-799', '800-1199'].indexOf(`${start}-${end}`);
      // A run of passages, read whole: 0.995.
      if (passage < 0) return { probability: 0.995, fires: true };
      return { probability: firing.includes(passage) ? 0.99 : 0.2, fires: firing.includes(passage) };
    };
    return { read, fn };
  };

  it('gathers sentences into passages of PASSAGE_WORDS words or more, a short remainder joined to the last', () => {
    expect(PASSAGE_WORDS).toBe(100);
    const { read, fn } = reader([]);
    assistantSpans(ranges, words, 0.97, fn);
    expect(read).toEqual([
      [0, 399],
      [400, 799],
      [800, 1199],
    ]);
    const ten = reader([]);
    assistantSpans(sentences(10), words.slice(0, 10), 0.97, ten.fn);
    expect(ten.read).toEqual([
      [0, 399],
      [400, 999],
    ]);
  });

  it('makes a high span of each run of passages the head fires on, scored as a document of its own', () => {
    const run = reader([1, 2]);
    expect(assistantSpans(ranges, words, 0.97, run.fn)).toEqual([{ first: 4, last: 11, probability: 0.995, confidence: 'high' }]);
    // The run of two passages is read once more, whole.
    expect(run.read.at(-1)).toEqual([400, 1199]);
    const { read, fn } = reader([0, 2]);
    expect(assistantSpans(ranges, words, 0.97, fn)).toEqual([
      { first: 0, last: 3, probability: 0.99, confidence: 'high' },
      { first: 8, last: 11, probability: 0.99, confidence: 'high' },
    ]);
    expect(read).toHaveLength(3);
    // Every passage: the whole text, with the document's own probability.
    expect(assistantSpans(ranges, words, 0.97, reader([0, 1, 2]).fn)).toEqual([
      { first: 0, last: 11, probability: 0.97, confidence: 'high' },
    ]);
  });

  it('reads a text of one passage whole, and says low when the head fires on no passage alone', () => {
    const { read, fn } = reader([]);
    expect(assistantSpans(sentences(5), words.slice(0, 5), 0.98, fn)).toEqual([
      { first: 0, last: 4, probability: 0.98, confidence: 'high' },
    ]);
    expect(read).toHaveLength(0);
    expect(assistantSpans(ranges, words, 0.97, reader([]).fn)).toEqual([{ first: 0, last: 11, probability: 0.97, confidence: 'low' }]);
    expect(assistantSpans([], [], 0.97, reader([]).fn)).toEqual([]);
  });

  it('in a text the head only vetoes, shows the passages it fires on and nothing else', () => {
    expect(assistantSpans(ranges, words, 0.3, reader([1]).fn, false)).toEqual([
      { first: 4, last: 7, probability: 0.99, confidence: 'high' },
    ]);
    expect(assistantSpans(ranges, words, 0.3, reader([]).fn, false)).toEqual([]);
    // Every passage, read as a run, is scored as a document of its own, not given the document's probability.
    expect(assistantSpans(ranges, words, 0.3, reader([0, 1, 2]).fn, false)).toEqual([
      { first: 0, last: 11, probability: 0.995, confidence: 'high' },
    ]);
    const { read, fn } = reader([0]);
    expect(assistantSpans(sentences(5), words.slice(0, 5), 0.3, fn, false)).toEqual([]);
    expect(read).toHaveLength(0);
  });
});

const V5_DEV = trainingDataFile('v5-dev.jsonl');

describe.skipIf(!existsSync(V5_DEV) || !existsSync(CORPUS_DEV) || !existsSync(EXTRA_DEV))('the assistant head’s passages (v5-dev)', () => {
  type Row = { id: string; text: string; mode: Mode; language: 'en' | 'tr'; label: string; task?: string };
  const read = (file: string): Row[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);
  let bare: Detector;
  beforeAll(async () => {
    bare = await createDetector({ assistantHead: false });
  });
  const confident = (r: DetectionResult) => r.generated_spans.filter((s) => s.confidence !== 'low');

  it('a text only the head makes likely_ai gets spans the head confirms; the document model’s spans stay', () => {
    let lifted = 0;
    let withSpan = 0;
    let generatedThroughout = 0;
    let sentenceSpansBefore = 0;
    let nothingStandsOut = 0;
    for (const row of read(V5_DEV)) {
      const a = detector.detect(row.text, { mode: row.mode, language: row.language, segments: true });
      const b = bare.detect(row.text, { mode: row.mode, language: row.language, segments: true });
      // The sentences' own scores are the sentence model's, with or without the head.
      expect(a.segments).toEqual(b.segments);
      // The document model's spans stay; the head only adds to them (a run or a passage it confirms).
      for (const s of confident(b)) expect(a.generated_spans.some((t) => t.start <= s.start && t.end >= s.end)).toBe(true);
      if (a.verdict === 'likely_ai' && b.verdict !== 'likely_ai') {
        lifted++;
        if (confident(b).length > 0) sentenceSpansBefore++;
        if (a.generated_spans.length > 0) withSpan++;
        if (a.composition === 'ai') generatedThroughout++;
        // No passage stands out: the low span over the whole text does not count its words whole
        // (the share is the sentences' own estimate, as for any span, not 1).
        if (a.composition === 'uncertain') {
          nothingStandsOut++;
          expect(a.generated_share).toBeLessThan(1);
        }
      }
    }
    expect(lifted).toBeGreaterThan(50);
    expect(withSpan).toBe(lifted);
    // Read by the document model alone, few of them show a span; with the head most are generated
    // throughout (the head's passages, and the sentence model's runs the head confirms), and a text
    // where no part stands out is `uncertain` (none since the sentence model reads the head's weights).
    expect(sentenceSpansBefore / lifted).toBeLessThan(0.2);
    expect(generatedThroughout / lifted).toBeGreaterThan(0.75);
    expect(nothingStandsOut / lifted).toBeLessThan(0.05);
  });

  it('in a person’s text with the assistant’s after or before it, shows the assistant’s passages and not the person’s', () => {
    const people = [...read(CORPUS_DEV), ...read(EXTRA_DEV)].filter((r) => r.label === 'human' && r.language === 'en');
    const mirrors = read(V5_DEV).filter((r) => r.language === 'en' && r.task !== 'polish' && r.text.split(/\s+/).length >= 150);
    const words = { mirror: 0, mirrorInSpans: 0, person: 0, personInSpans: 0 };
    const sentences: { s: number[]; y: number[] } = { s: [], y: [] };
    let shown = 0;
    mirrors.forEach((row, i) => {
      const person = people[(i * 7) % people.length]!.text;
      const text = i % 2 === 0 ? `${person}\n\n${row.text}` : `${row.text}\n\n${person}`;
      const mirrorStart = i % 2 === 0 ? person.length + 2 : 0;
      const a = detector.detect(text, { mode: row.mode, language: row.language, segments: true });
      if (a.verdict === 'likely_ai') return;
      const spans = confident(a);
      for (const seg of a.segments) {
        sentences.s.push(seg.ai_probability);
        sentences.y.push(seg.start >= mirrorStart && seg.start < mirrorStart + row.text.length ? 1 : 0);
      }
      const b = confident(bare.detect(text, { mode: row.mode, language: row.language, segments: true }));
      if (spans.length > b.length) shown++;
      for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
        const inSpans = spans.some((s) => m.index >= s.start && m.index < s.end) ? 1 : 0;
        if (m.index >= mirrorStart && m.index < mirrorStart + row.text.length) {
          words.mirror++;
          words.mirrorInSpans += inSpans;
        } else {
          words.person++;
          words.personInSpans += inSpans;
        }
      }
    });
    expect(shown).toBeGreaterThan(10);
    // The sentence model reads the head's weights sentence by sentence: the assistant's sentences
    // rank above the person's (0.64 before it read them, `npm run eval:mirrors -- --spans`).
    expect(auroc(sentences.s, sentences.y)).toBeGreaterThan(0.85);
    // The spans take in far more of the assistant's words than of the person's.
    expect(words.mirrorInSpans / words.mirror).toBeGreaterThan(10 * (words.personInSpans / words.person));
  });

  it('shows no part of a dev human text as generated (medium or high) that the document model alone did not', () => {
    let scanned = 0;
    let lowAdded = 0;
    const people = [...read(CORPUS_DEV), ...read(EXTRA_DEV)].filter((r) => r.label === 'human');
    for (const row of people) {
      const a = detector.detect(row.text, { mode: row.mode, language: row.language, segments: true });
      const b = bare.detect(row.text, { mode: row.mode, language: row.language, segments: true });
      if (a.verdict !== 'likely_ai' && a.verdict !== b.verdict) scanned++;
      expect(confident(a), row.id).toEqual(confident(b));
      // A text the head keeps from being cleared, read whole at the probability it lifted: a `low`
      // span, which shows nothing (composition `uncertain`, as the veto already made it).
      if (a.generated_spans.length > b.generated_spans.length) lowAdded++;
    }
    expect(lowAdded / people.length).toBeLessThan(0.01);
    // Texts the head vetoes (and so reads passage by passage when long enough) are among them.
    expect(scanned).toBeGreaterThan(10);
  });
});
