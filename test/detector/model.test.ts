import { describe, expect, it } from 'vitest';
import { readArtifact } from '../../src/detector/artifact.ts';
import { forestMargin } from '../../src/detector/gbdt.ts';
import { DEFAULT_MODEL_PATH } from '../../src/detector/index.ts';
import { LoadedModel, blendScores, linearScore, stackedInput } from '../../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../../src/detector/normalize.ts';

const TEXT =
  'The committee reviewed the proposal in detail and concluded that the projected costs were reasonable. ' +
  'However, it recommended that the timeline be extended by two months to allow for additional testing.';

describe('raw score: trees blended with the linear logit', () => {
  const { header, arrays } = readArtifact(DEFAULT_MODEL_PATH);
  const model = new LoadedModel(header, arrays);
  const features = model.features(lowerForFeatures(normalize(TEXT).text, 'en'), 'en');
  const linear = linearScore(features, model.weights);
  const trees = forestMargin(model.forest!, stackedInput(features, linear));

  it('the shipped artifact weighs both evenly, as `npm run train` writes it by default', () => {
    expect(header.forest?.linearWeight).toBe(0.5);
    expect(trees).not.toBeCloseTo(linear, 3);
    expect(model.rawLogit(features)).toBeCloseTo((trees + linear) / 2, 10);
  });

  it('an artifact without the weight (written before the blend) scores with its trees alone', () => {
    const { linearWeight: _dropped, ...forest } = header.forest!;
    const older = new LoadedModel({ ...header, forest }, arrays);
    expect(older.rawLogit(features)).toBeCloseTo(trees, 10);
  });

  it('blendScores: weight 0 is the trees, 1 the linear logit', () => {
    expect(blendScores(2, -1, 0)).toBe(2);
    expect(blendScores(2, -1, 1)).toBe(-1);
    expect(blendScores(2, -1, 0.25)).toBeCloseTo(1.25, 12);
  });
});
