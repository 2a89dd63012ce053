import { describe, expect, it } from 'vitest';
import { readArtifact } from '../../src/detector/artifact.ts';
import { DENSE_NAMES, tokenIds, tokenize } from '../../src/detector/features.ts';
import { DEFAULT_MODEL_PATH } from '../../src/detector/index.ts';
import { LoadedModel } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';
import { POS_BOS, buildPosLM, tagSequence } from '../../src/detector/pos.ts';

const { header, arrays } = readArtifact(DEFAULT_MODEL_PATH);
const model = new LoadedModel(header, arrays);
const tags = header.pos!.tags;

function tagNames(text: string): string[] {
  const tokens = tokenize(lowerForFeatures(normalize(text).text, 'en'));
  return [...tagSequence(tokens, tokenIds(tokens, model.lm.vocab), model.lm.pos.tagger)].map((t) => tags[t]!);
}

describe('part-of-speech view', () => {
  it('the lexicon tagger learnt from Brown tags common words as Brown does', () => {
    expect(tagNames('The jury said that the election was fair.')).toEqual(['at', 'nn', 'vbd', 'cs', 'at', 'nn', 'bedz', 'jj', '.']);
  });

  it('unknown words get a tag from their ending, never the start tag', () => {
    const t = tagNames('The zorblaxes were glimmerfully sprocketizing.');
    expect(t[1]).toBe('nns');
    expect(t[3]).toBe('rb');
    expect(t[4]).toBe('vbg');
    expect(t).not.toContain(tags[POS_BOS]);
  });

  it('each context of a tag-trigram LM is a distribution over the real tags', () => {
    const T = 4;
    const lm = buildPosLM([Uint8Array.from([1, 2, 3, 1, 2]), Uint8Array.from([2, 2, 1])], T, { k2: 5, k1: 5 });
    for (let ctx = 0; ctx < T * T; ctx++) {
      let sum = 0;
      for (let c = 1; c < T; c++) sum += Math.exp(lm.logp[ctx * T + c]!);
      expect(sum).toBeCloseTo(1, 5);
      expect(lm.sigma2[ctx]).toBeGreaterThan(0);
    }
    // Seen continuations are likelier than unseen ones.
    expect(lm.logp[(1 * T + 2) * T + 3]!).toBeGreaterThan(lm.logp[(1 * T + 2) * T + 2]!);
  });

  it('the English-only tagger contributes nothing to Turkish texts', () => {
    const text = 'Bankamızın kredi kartı işlemleri hakkında şikayetimi iletmek istiyorum, çünkü iki aydır yanıt alamadım.';
    const f = model.features(lowerForFeatures(normalize(text).text, 'tr'), 'tr');
    for (const name of ['posH_mean', 'posA_mean', 'posD_mean', 'posD_std', 'pos_fdg_H', 'pos_fdg_A']) {
      expect(f.dense[DENSE_NAMES.indexOf(name as (typeof DENSE_NAMES)[number])]).toBe(0);
    }
  });
});
