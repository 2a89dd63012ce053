import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/eval.ts';
import { createDetector } from '../../src/detector/index.ts';

const HUMAN = [
  'i think that students should be allowed to use there phones in school because sometimes you need to call your mom or look something up for class and the teachers dont always let you',
  'My grandfather kept bees for forty years. Every August we would help him pull the frames, and the whole kitchen smelled of wax for a week. He never wore gloves, and he was stung maybe twice a summer.',
];
const AI = [
  'In conclusion, the integration of technology in education offers numerous benefits, including enhanced engagement, personalized learning experiences, and improved access to information. However, it is essential to address potential challenges to ensure equitable outcomes for all students.',
  'Overall, effective time management is a crucial skill that enables individuals to achieve their goals, reduce stress, and maintain a healthy work-life balance. By prioritizing tasks and setting realistic deadlines, one can significantly enhance productivity.',
];

let dir: string;
let out: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'td-eval-'));
  out = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('textdetect eval', () => {
  it('prints overall and per-group metrics for a labelled file', async () => {
    const file = join(dir, 'in.jsonl');
    const lines = [
      ...HUMAN.map((text) => ({ text, label: 'human', mode: 'academic', source: 'a' })),
      ...AI.map((text) => ({ text, label: 'ai', mode: 'general', source: 'b' })),
      { text: 'Der Hund ist nicht in dem Haus, und die Katze ist auch nicht da, aber wir haben noch eine Maus gesehen.', label: 'human' },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(await run(['--input', file, '--by', 'source,mode', '--markdown'])).toBe(0);
    const text = out.join('\n');
    const detector = await createDetector();
    expect(text).toContain(`model ${detector.model}; 5 lines, 4 scored, 1 in an unsupported language`);
    expect(text).toMatch(/\| all \| 4 \| 2 \| 2 \|/);
    expect(text).toMatch(/\| a\/academic \| 2 \| 2 \| 0 \|/);
    // Lines without "language" are grouped under the one identified (issue 32, item 25), never "?".
    expect(text).toMatch(/\| en:general \| 2 \| 0 \| 2 \|/);
    expect(text).not.toMatch(/\| \?/);
    out.length = 0;
    expect(await run(['--input', file, '--by', 'language', '--markdown'])).toBe(0);
    expect(out.join('\n')).toMatch(/\| en \| 4 \| 2 \| 2 \|/);
    expect(out.join('\n')).not.toMatch(/\| \? \|/);
  });

  it('rejects bad input with exit code 2 and a clear message', async () => {
    expect(await run([])).toBe(2);
    expect(out.join('\n')).toContain('--input FILE.jsonl is required');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"text": "hello", "label": "maybe"}\n');
    out = [];
    expect(await run(['--input', bad])).toBe(2);
    expect(out.join('\n')).toContain('bad.jsonl:1: "label" must be "human" or "ai"');
    out = [];
    expect(await run(['--input', bad, '--by', 'colour'])).toBe(2);
    expect(out.join('\n')).toContain('--by must be one of source, mode, language, generator');
    out = [];
    expect(await run(['--input', join(dir, 'missing.jsonl')])).toBe(2);
    expect(out.join('\n')).toContain(`Cannot read ${join(dir, 'missing.jsonl')}: there is no such file.`);
    expect(out.join('\n')).not.toContain('Training data');
    // The README's command on a checkout without the training data: a sentence that says where it is described.
    out = [];
    expect(await run(['--input', join(dir, 'shared', 'data', 'corpus-dev.jsonl')])).toBe(2);
    expect(out[0]).toBe(
      `Cannot read ${join(dir, 'shared', 'data', 'corpus-dev.jsonl')}: there is no such file. It is part of the project's training data, which is not in the repository: README.md, "Training data", says what it is and where it goes.`,
    );
    expect(out.join('\n')).not.toContain('ENOENT');
  });

  it('reports an unreadable model artifact clearly', async () => {
    const file = join(dir, 'in.jsonl');
    writeFileSync(file, JSON.stringify({ text: HUMAN[0], label: 'human' }));
    const notModel = join(dir, 'model.bin');
    writeFileSync(notModel, 'not a model');
    expect(await run(['--input', file, '--model', notModel])).toBe(2);
    expect(out.join('\n')).toMatch(/Cannot read the model artifact/);
  });
});
