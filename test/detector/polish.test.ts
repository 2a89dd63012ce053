/**
 * Issue 31: `polished_probability` (the polished-vs-generated head stored in the artifact) and the
 * `likely_human` thresholds per length band that bound the AI texts it clears.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArtifact, type ArtifactArrays, type ArtifactHeader, type GroupCalibration } from '../../src/detector/artifact.ts';
import { readAuthorModel } from '../../src/detector/author.ts';
import { TextDetector, humanThresholdFor } from '../../src/detector/engine.ts';
import { DENSE_DIM, extractFeatures, HASH_DIM } from '../../src/detector/features.ts';
import { withoutAssistantHead } from '../../src/detector/assistant.ts';
import { createDetector, DEFAULT_AUTHOR_MODEL_PATH, DEFAULT_MODEL_PATH, type DetectionResult } from '../../src/detector/index.ts';
import { auroc, metricRow } from '../../src/detector/metrics.ts';
import { LoadedModel, linearScore, round4, sigmoid } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { forestMargin } from '../../src/detector/gbdt.ts';
import { POLISHED_THRESHOLD } from '../../src/detector/origin.ts';
import { POLISH_EXTRA_NAMES, polishExtras, polishHeadFrom, polishLinear, polishTreeInput } from '../../src/detector/polish.ts';
import { calibratePolish, isPolishReference, polishArtifact, polishFolds, polishLabel } from '../../scripts/lib/polish-head.ts';
import { isSampler, readJsonl, type CorpusRow } from '../../src/detector/training.ts';
import { trainingDataFile } from '../helpers/training-data.ts';

const V4_DEV = trainingDataFile('v4-dev.jsonl');

const LONG =
  'The committee met on Tuesday to review the budget for the coming year. Members raised concerns about the rising cost of maintenance, ' +
  'and several asked whether the new roof could wait another season. After a long discussion the chair proposed a smaller repair now ' +
  'and a full replacement in two years, which passed with one vote against.';
const MESSAGES = [
  'I tried the new bakery on the corner this morning and the croissants were still warm.',
  'The queue was long but it moved fast, and the staff kept everyone laughing while we waited.',
  'Next time I will go a bit earlier, because by nine they had run out of the almond ones.',
  'If anyone wants to come along on Saturday let me know and we can meet outside at eight.',
];

const headDense = new Float32Array(DENSE_DIM);
headDense[0] = 0.7;
headDense[DENSE_DIM - 1] = -0.4;
const headSparse = new Float32Array(HASH_DIM).fill(0.01);

let header: ArtifactHeader;
let arrays: ArtifactArrays;
/** The shipped artifact with a polish head of known weights (one dense feature, one hashed slot). */
let withHead: { detector: TextDetector; model: LoadedModel };
/** The shipped artifact as it is. */
let shipped: TextDetector;
beforeAll(() => {
  // The document model's polish head and thresholds, read without the assistant head, which raises
  // this file's texts (written for the tests by an AI assistant) and then says nothing of polish.
  const artifact = readArtifact(DEFAULT_MODEL_PATH);
  ({ header, arrays } = withoutAssistantHead(artifact.header, artifact.arrays));
  shipped = new TextDetector(new LoadedModel(header, arrays));
  const h: ArtifactHeader = { ...header, polish: { bias: -0.2, a: 1.3, b: 0.1 } };
  const model = new LoadedModel(h, { ...arrays, 'polish.dense': headDense, 'polish.sparse': headSparse });
  withHead = { detector: new TextDetector(model, readAuthorModel(DEFAULT_AUTHOR_MODEL_PATH)), model };
});

describe('polished_probability', () => {
  it("is the head's calibrated logistic score of the text's features, at four decimals", () => {
    const r = withHead.detector.detect(LONG);
    const f = withHead.model.features(lowerForFeatures(normalize(LONG).text, 'en'), 'en');
    const w = {
      bias: -0.2,
      dense: headDense,
      sparse: headSparse,
      mean: Float64Array.from(header.dense.mean),
      std: Float64Array.from(header.dense.std),
    };
    expect(r.polished_probability).toBe(round4(sigmoid(1.3 * linearScore(f, w) + 0.1)));
  });

  it('is null under the evidence floor, and for an artifact without the head', () => {
    expect(withHead.detector.detect('Thanks, see you tomorrow at the station.').polished_probability).toBeNull();
    const plain: ArtifactHeader = { ...header };
    delete plain.polish;
    const old = new TextDetector(new LoadedModel(plain, arrays));
    expect(old.detect(LONG).polished_probability).toBeNull();
  });

  it('refuses an artifact that declares a head without its weights', () => {
    const { 'polish.dense': _d, 'polish.sparse': _s, ...withoutHead } = arrays;
    const declared: ArtifactHeader = { ...header, polish: { bias: 0, a: 1, b: 0 } };
    expect(() => new LoadedModel(declared, { ...withoutHead, 'polish.dense': headDense })).toThrow(/polish head/);
  });

  it('is read off the pooled messages for an author, and null while evidence is needed', () => {
    const few = withHead.detector.detectAuthor(['ok', 'see you at 5']);
    expect(few.evidence_needed).not.toBeNull();
    expect(few.polished_probability).toBeNull();
    const r = withHead.detector.detectAuthor(MESSAGES);
    expect(r.evidence_needed).toBeNull();
    const lower = lowerForFeatures(normalize(MESSAGES.join('\n')).text, 'en');
    const pooled = withHead.model.features(lower, 'en');
    expect(r.polished_probability).toBe(round4(withHead.model.polishedProbability(pooled, lower, withHead.model.rawLogit(pooled))!));
  });
});

describe('the head of the second round: its own signals and trees (polish.ts)', () => {
  const TWO_SENTENCES = 'The committee met on Tuesday to review the budget. Members raised concerns about the cost of the new roof.';

  it('computes the per-sentence signals from the same LMs, passing the raw score through', () => {
    const model = withHead.model;
    const lower = lowerForFeatures(normalize(LONG).text, 'en');
    const e = polishExtras(lower, model.lm, 1.25);
    expect(e).toHaveLength(POLISH_EXTRA_NAMES.length);
    const at = (n: (typeof POLISH_EXTRA_NAMES)[number]): number => e[POLISH_EXTRA_NAMES.indexOf(n)]!;
    expect(at('raw')).toBe(1.25);
    expect(at('s_diff_min')).toBeLessThanOrEqual(at('s_diff_max'));
    expect(at('s_diff_std')).toBeGreaterThan(0);
    expect(at('s_diff_ai_share')).toBeGreaterThanOrEqual(0);
    expect(at('s_diff_ai_share')).toBeLessThanOrEqual(1);
    // One sentence: no spread, its lowest and highest are the same.
    const one = polishExtras(lowerForFeatures(normalize('The committee met on Tuesday to review the budget.').text, 'en'), model.lm, 0);
    expect(one[POLISH_EXTRA_NAMES.indexOf('s_diff_std')]).toBe(0);
    expect(one[POLISH_EXTRA_NAMES.indexOf('s_diff_min')]).toBe(one[POLISH_EXTRA_NAMES.indexOf('s_diff_max')]);
    // Words outside the vocabulary (a writer's misspellings) raise the out-of-vocabulary share.
    const typos = polishExtras(
      lowerForFeatures(normalize('The comittee mett on Tusday to reveiw the budjet. Members raised concerns about the cost.').text, 'en'),
      model.lm,
      0,
    );
    const clean = polishExtras(lowerForFeatures(normalize(TWO_SENTENCES).text, 'en'), model.lm, 0);
    expect(typos[POLISH_EXTRA_NAMES.indexOf('oov')]).toBeGreaterThan(clean[POLISH_EXTRA_NAMES.indexOf('oov')]!);
  });

  it('the shipped head reads its signals and trees: polished_probability is its calibrated blend', () => {
    const head = polishHeadFrom(header, arrays);
    expect(head?.extra?.index.length).toBeGreaterThan(0);
    expect(head?.forest?.nTrees).toBeGreaterThan(0);
    const r = shipped.detect(LONG);
    const lower = lowerForFeatures(normalize(LONG).text, 'en');
    const m = new LoadedModel(header, arrays);
    const f = m.features(lower, 'en');
    const extras = polishExtras(lower, m.lm, m.rawLogit(f));
    const lin = polishLinear(head!, f, extras);
    const blend =
      (1 - head!.forest!.linearWeight) * forestMargin(head!.forest!, polishTreeInput(head!, f, extras)) + head!.forest!.linearWeight * lin;
    expect(r.polished_probability).toBe(round4(sigmoid(head!.a * blend + head!.b)));
  });

  it('reads the tokens and word-LM evidence the features kept: the same signals, bit for bit, as tokenising again', () => {
    const m = new LoadedModel(header, arrays);
    const texts: [string, 'en' | 'tr'][] = [
      [LONG, 'en'],
      [TWO_SENTENCES, 'en'],
      ['The comittee mett on Tusday to reveiw the budjet! Members raised concerns? about the cost', 'en'],
      ['word', 'en'],
      ['Komite salı günü bütçeyi incelemek için toplandı. Üyeler yeni çatının maliyeti konusundaki endişelerini dile getirdi.', 'tr'],
    ];
    for (const [text, language] of texts) {
      const lower = lowerForFeatures(normalize(text).text, language);
      const f = m.features(lower, language);
      expect(f.tokens, text.slice(0, 30)).toBeDefined();
      const raw = m.rawLogit(f);
      expect([...polishExtras(lower, m.lm, raw, f.tokens)], text.slice(0, 30)).toEqual([...polishExtras(lower, m.lm, raw)]);
    }
    // Training keeps no tokens in its tens of thousands of vectors.
    expect(extractFeatures(lowerForFeatures(normalize(LONG).text, 'en'), 'en', m.lm).tokens).toBeUndefined();
  });

  it('survives the artifact: a head stored by polishArtifact reads back with the same scores', () => {
    const { header: ph, arrays: pa } = polishArtifact(polishHeadFrom(header, arrays)!);
    // As an artifact stores it: the header as JSON, the arrays as copies of their bytes.
    const stored = JSON.parse(JSON.stringify(ph)) as typeof ph;
    const copies = Object.fromEntries(Object.entries(pa).map(([k, v]) => [k, v.slice()]));
    const kept = Object.fromEntries(Object.entries(arrays).filter(([k]) => !k.startsWith('polish.')));
    const again = new TextDetector(new LoadedModel({ ...header, polish: stored }, { ...kept, ...copies }));
    for (const text of [LONG, `${TWO_SENTENCES} ${LONG}`])
      expect(again.detect(text).polished_probability).toBe(shipped.detect(text).polished_probability);
  });

  it('refuses a head that reads a signal this code does not compute, or declares trees without them', () => {
    const p = header.polish!;
    expect(() => new LoadedModel({ ...header, polish: { ...p, extra: { ...p.extra!, names: ['no_such_signal'] } } }, arrays)).toThrow(
      /unknown signal no_such_signal/,
    );
    const { 'polish.gb.leaf': _leaf, ...withoutTrees } = arrays;
    expect(() => new LoadedModel(header, withoutTrees)).toThrow(/trees of its polish head/);
  });
});

describe('training the head (scripts/lib/polish-head.ts)', () => {
  const row = (source: string, generator: string, contribution?: CorpusRow['contribution'], text = 'x'): CorpusRow =>
    ({
      id: `${source}-${generator}-${text.length}`,
      text,
      label: 'ai',
      mode: 'general',
      language: 'en',
      source,
      generator,
      ...(contribution ? { contribution } : {}),
    }) as CorpusRow;

  it('labels polished and rewritten texts 1, AI-written and humanised ones 0; the rewrite sources only when asked', () => {
    expect(polishLabel(row('imbd-revised', 'gpt-4o', 'rewritten'))).toBe(1);
    expect(polishLabel(row('gede-essays', 'gpt-4o-mini', 'humanized'))).toBe(0);
    expect(polishLabel(row('mixset-revised', 'gpt-4 (word-level polish of human text)'))).toBe(1);
    expect(polishLabel(row('mixset-revised', 'gpt-4 (humanize of AI text) [source model Dolly]'))).toBe(0);
    expect(polishLabel(row('l2r-general', 'gpt-4o'))).toBe(0);
    expect(polishLabel(row('l2r-general', 'gpt-4o'), true)).toBe(1);
    expect(polishLabel(row('tr-satire-rewrite', 'LLM (not named in the repository)'), true)).toBe(1);
    expect(polishLabel(row('detectrl-yelp', 'gpt-3.5-turbo + LLM polish'), true)).toBe(0);
  });

  it('puts the AI texts made from one human original in one fold, whatever their ids', () => {
    const original =
      'The harbour authority announced on Monday that ferry services between the islands would resume after repairs to the northern pier were finished';
    const rows = [
      row('imbd-revised', 'gpt-4o', 'polished', original),
      row('imbd-revised', 'qwen2-7b-instruct', 'rewritten', `${original}, officials said, thanking residents for their patience`),
      row(
        'imbd-revised',
        'llama-3-8b-instruct',
        'generated',
        `Ferry services between the islands would resume after the northern pier repairs, the harbour authority announced on Monday`,
      ),
    ];
    for (let seed = 0; seed < 8; seed++) {
      const folds = polishFolds(
        rows.map((r) => ({ ...r, id: `${r.id}-${seed}` })),
        4,
      );
      expect(new Set(folds).size, `seed ${seed}`).toBe(1);
    }
  });

  it('sets the operating point on the reference texts only', () => {
    // Scores 0..9; labels: the reference polished texts score 6..9, the others 1 and 2.
    const oof = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const labels = [0, 1, 1, 0, 0, 0, 1, 1, 1, 1];
    const reference = [false, false, false, false, false, false, true, true, true, true];
    const w = oof.map(() => 1);
    const on = (ref: boolean[]): number => {
      const { a, b } = calibratePolish(oof, labels, w, 0.75, ref);
      return -b / a; // the score at 0.5
    };
    expect(on(reference)).toBeCloseTo(7, 6);
    expect(on(labels.map((y) => y === 1))).toBeCloseTo(2, 6);
  });

  it('takes an assistant family’s polishes (mirror_of) to train on, not to set the operating point', () => {
    const polished = row('mixset-revised', 'gpt-4 (word-level polish of human text)');
    const familyPolish = { ...row('v5-aita-comments', 'frontier-chat-2026', 'polished'), mirror_of: 'aita-1' };
    expect(polishLabel(familyPolish)).toBe(1);
    expect(isPolishReference(polished)).toBe(true);
    expect(isPolishReference(familyPolish)).toBe(false);
    expect(isPolishReference(row('gede-essays', 'gpt-4o-mini', 'generated'))).toBe(false);
  });
});

describe('likely_human thresholds per length band', () => {
  it('takes the band of the text length, else the group threshold', () => {
    const c: GroupCalibration = {
      a: 1,
      b: 0,
      aiThreshold: 0.96,
      humanThreshold: 0.5,
      nHuman: 100,
      nAi: 100,
      humanThresholdByLength: [
        { minWords: 0, threshold: 0.3, nAi: 50 },
        { minWords: 80, threshold: 0.2, nAi: 50 },
      ],
    };
    expect(humanThresholdFor(c, 50)).toBe(0.3);
    expect(humanThresholdFor(c, 200)).toBe(0.2);
    const { humanThresholdByLength: _, ...plain } = c;
    expect(humanThresholdFor(plain, 200)).toBe(0.5);
  });

  it('holds a human-leaning text above the band threshold back as mixed, with strict_human_threshold', () => {
    // Every text scores sigmoid(-1) ≈ 0.269 under this calibration; the band threshold decides.
    const withThreshold = (threshold: number): TextDetector => {
      const calibration = Object.fromEntries(
        Object.entries(header.calibration).map(([k, c]) => {
          const { plattByLength: _, ...rest } = c;
          return [k, { ...rest, a: 0, b: -1, humanThresholdByLength: [{ minWords: 0, threshold, nAi: 100 }] }];
        }),
      );
      return new TextDetector(new LoadedModel({ ...header, calibration }, arrays));
    };
    const held = withThreshold(0.2).detect(LONG);
    expect(held.ai_probability).toBe(round4(sigmoid(-1)));
    expect(held.verdict).toBe('mixed');
    expect(held.warnings).toContain('strict_human_threshold');
    const cleared = withThreshold(0.3).detect(LONG);
    expect(cleared.verdict).toBe('likely_human');
    expect(cleared.warnings).not.toContain('strict_human_threshold');
  });

  it('reports the share of AI and human texts called likely_human among those with a verdict', () => {
    const m = metricRow([
      { p: 0.1, y: 1, flagged: false, likelyHuman: true, verdictGiven: true },
      { p: 0.9, y: 1, flagged: true, likelyHuman: false, verdictGiven: true },
      { p: 0.4, y: 1, flagged: false, likelyHuman: false, verdictGiven: false },
      { p: 0.1, y: 0, flagged: false, likelyHuman: true, verdictGiven: true },
    ]);
    expect(m.aiLikelyHuman).toBe(0.5);
    expect(m.humanLikelyHuman).toBe(1);
    expect(metricRow([{ p: 0.1, y: 1, flagged: false }]).aiLikelyHuman).toBeUndefined();
  });
});

/**
 * The shipped model on v4-dev (td1-68ecc14e4ba8, the second-round polish head on the document model
 * of td1-cfc9afcbf95f: polished + rewritten vs generated AUROC 0.896, was 0.819; 8 of 90 polished
 * texts shown as AI-written at POLISHED_THRESHOLD, was 5; instruction-tuned AI texts called
 * likely_human at most 5.7% of a source, APT-Eval's polished texts; no human text likely_ai).
 * Floors under those figures: the targets, AUROC ≥ 0.85 and ≤ 20% shown as AI-written.
 */
describe.skipIf(!existsSync(V4_DEV))('v4-dev', () => {
  let scored: Array<{ row: CorpusRow; r: DetectionResult }>;
  beforeAll(async () => {
    const detector = await createDetector();
    scored = readJsonl<CorpusRow>(V4_DEV).map((row) => ({ row, r: detector.detect(row.text, { mode: row.mode }) }));
  });
  const polished = (row: CorpusRow): boolean => row.contribution === 'polished' || row.contribution === 'rewritten';

  it('tells polished and rewritten texts from AI-written ones, and rarely shows them as AI-written', () => {
    const ai = scored.filter((x) => x.row.label === 'ai' && x.r.polished_probability !== null);
    const y = ai.map((x) => (polished(x.row) ? 1 : 0));
    expect(y.filter((v) => v === 1).length).toBeGreaterThan(50);
    expect(
      auroc(
        ai.map((x) => x.r.polished_probability!),
        y,
      ),
    ).toBeGreaterThanOrEqual(0.85);
    const pol = scored.filter((x) => polished(x.row));
    const shownWritten = pol.filter((x) => x.r.verdict === 'likely_ai' && x.r.polished_probability! < POLISHED_THRESHOLD).length;
    expect(shownWritten / pol.length).toBeLessThanOrEqual(0.2);
  });

  it('clears few instruction-tuned AI texts of any source as likely_human, and flags no human text', () => {
    const bySource = new Map<string, { n: number; human: number }>();
    for (const { row, r } of scored) {
      if (row.label === 'human') expect(r.verdict, row.id).not.toBe('likely_ai');
      if (row.label !== 'ai' || isSampler(row.generator) || r.warnings.includes('too_little_evidence')) continue;
      const e = bySource.get(row.source) ?? { n: 0, human: 0 };
      e.n++;
      if (r.verdict === 'likely_human') e.human++;
      bySource.set(row.source, e);
    }
    expect(bySource.size).toBeGreaterThan(3);
    for (const [source, e] of bySource) if (e.n >= 20) expect(e.human / e.n, source).toBeLessThanOrEqual(0.06);
  });
});
