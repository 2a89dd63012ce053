import { describe, expect, it } from 'vitest';
import { foldOf, stableHash } from '../../src/detector/training.ts';

describe('cross-fitting folds of mirrored texts', () => {
  it('puts every mirror in its human twin’s fold, and leaves texts without a twin where they were', () => {
    const folds = 4;
    const twins = Array.from({ length: 40 }, (_, i) => ({ id: `human-${i}` }));
    const mirrors = twins.map((t, i) => ({ id: `v5-${i}`, mirror_of: t.id }));
    for (let i = 0; i < twins.length; i++) {
      expect(foldOf(mirrors[i]!, folds)).toBe(foldOf(twins[i]!, folds));
      expect(foldOf(twins[i]!, folds)).toBe(stableHash(twins[i]!.id) % folds);
    }
    // Their own ids would have split a good share of the pairs across folds.
    expect(mirrors.filter((m, i) => stableHash(m.id) % folds !== foldOf(twins[i]!, folds)).length).toBeGreaterThan(10);
  });
});
