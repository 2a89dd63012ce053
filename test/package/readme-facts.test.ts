/**
 * Facts the README states that drift when the code changes (issue 25, item 20): the model its figures
 * name, and the API fields it explains once. The package size is checked in install.test.ts, where
 * the package is installed.
 *
 * For whoever retrains the model: the "Detector (model …)" heading must name the shipped artifact,
 * and any other `td1-…` id must be called earlier, previous, old or first (or be the raw scorer a
 * model shares) on its line, so no figure passes for the shipped model's without having been measured on it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDetector } from '../../src/detector/index.ts';
import { ROOT } from './helpers.ts';

const readme = await readFile(join(ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('names the shipped model in the detector figures, and any other model id as an earlier one', async () => {
    const shipped = (await createDetector()).model;
    const heading = /^### Detector \(model `(td1-[0-9a-f]{12})`/m.exec(readme);
    expect(heading?.[1], `README "### Detector (model …)" should name the shipped model ${shipped} (models/detector.bin)`).toBe(shipped);
    for (const line of readme.split('\n')) {
      for (const [id] of line.matchAll(/td1-[0-9a-f]{12}/g)) {
        if (id === shipped) continue;
        expect(line, `${id} is not the shipped model (${shipped}): say it is an earlier one, or re-measure`).toMatch(
          /\b(earlier|previous|old|first)\b|raw scorer of/i,
        );
      }
    }
  });

  it('gives the suite’s size on one line, with as many test files as test/ has (issue 32, item 24)', async () => {
    const lines = readme.split('\n').filter((line) => line.startsWith('Suite: '));
    expect(lines).toHaveLength(1);
    const stated = /^Suite: (\d+) test files, [\d,]+ tests; .+ under `\.ci\/run`\.$/.exec(lines[0]!);
    expect(stated, lines[0]).not.toBeNull();
    const files = (await readdir(join(ROOT, 'test'), { recursive: true })).filter((f) => f.endsWith('.test.ts'));
    expect(Number(stated![1]), 'README "Suite:" line: update its figures after the next full run').toBe(files.length);
  });

  it('explains generated_spans, generated_share and composition once', () => {
    expect(readme.match(/`composition` \(`human`, `ai`, `partly_ai`/g)).toHaveLength(1);
    expect(readme.match(/the answer also says which parts? looks? generated/g)).toHaveLength(1);
  });
});
