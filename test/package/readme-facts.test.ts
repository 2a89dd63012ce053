/**
 * Facts the README states that drift when the code changes (issue 25, item 20): the model its figures
 * name, and the API fields it explains once. The package size is checked in install.test.ts, where
 * the package is installed.
 *
 * For whoever retrains the model: the "Detector (model …)" heading must name the shipped artifact,
 * and any other `td1-…` id must be called earlier, previous, old or first (or be the raw scorer a
 * model shares) on its line, so no figure passes for the shipped model's without having been measured on it.
 *
 * Issue 40, item 12: the README gives every limit a caller meets and the main settings' defaults, and
 * its JSON example is the engine's real answer to the first start's `curl` line; each is checked here
 * against the code that enforces it, so a changed default or a retrained model fails this file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AUTHOR_MAX_MESSAGES,
  CHARS_PER_UNIT,
  DEFAULT_MAX_TEXT_CHARS,
  ERROR_CODES,
  EVIDENCE_FLOOR_WORDS,
  POLISHED_THRESHOLD,
} from '../../src/contract.ts';
import { createDetector } from '../../src/detector/index.ts';
import { MAX_SEGMENTS } from '../../src/detector/segments.ts';
import { ONE_WINDOW_WORDS, WINDOW_WORDS } from '../../src/detector/windows.ts';
import { defaultConfig, parseDuration } from '../../src/service/config.ts';
import { FILES_PER_KEY } from '../../src/service/file-queue.ts';
import { MAX_PARTS } from '../../src/service/routes/file-form.ts';
import { EXAMPLE_TEXT } from '../../src/words.ts';
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

  it('stays under 250 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThan(250);
  });

  it('shows the engine’s own answer to the first start’s curl line', async () => {
    expect(readme).toContain(`"text": "${EXAMPLE_TEXT.slice(0, 40)}`);
    const block = /^The answer to the first start's `curl` line.*\n\n```json\n([\s\S]*?)\n```/m.exec(readme);
    expect(block, 'README: the JSON example after "The answer to the first start\'s `curl` line"').not.toBeNull();
    const shown = JSON.parse(block![1]!) as Record<string, unknown> & { segments: { text: string }[] };
    const actual = (await createDetector()).detect(EXAMPLE_TEXT, { segments: true, mode: 'general' }) as unknown as Record<
      string,
      unknown
    > & {
      segments: { text: string }[];
    };
    // The sentences' texts may be elided in the README; everything else is the answer as it is.
    expect(shown.segments.map((s) => ({ ...s, text: undefined }))).toEqual(actual.segments.map((s) => ({ ...s, text: undefined })));
    for (const [i, s] of shown.segments.entries()) expect([actual.segments[i]!.text, '…']).toContain(s.text);
    const { segments: _a, request_id: id, ...rest } = shown;
    const { segments: _b, ...engine } = actual;
    expect(rest).toEqual(engine);
    expect(id).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('gives every limit a caller meets as the code enforces it', () => {
    const config = defaultConfig({});
    const n = (x: number) => x.toLocaleString('en-US');
    const row = (start: string) => readme.split('\n').find((line) => line.startsWith(`| ${start}`)) ?? '';
    expect(config.maxTextChars).toBe(DEFAULT_MAX_TEXT_CHARS);
    expect(row('text, or text read out of a file')).toContain(`${n(DEFAULT_MAX_TEXT_CHARS)} characters`);
    expect(readme).toContain(`at most ${n(DEFAULT_MAX_TEXT_CHARS)} characters (\`MAX_TEXT_CHARS\`)`);
    const calls = row('calls per key');
    expect(parseDuration(config.rateLimitWindow)).toBe(60_000);
    expect(calls).toContain(`${config.rateLimitMax} units a minute`);
    expect(calls).toContain(`one unit per started ${n(CHARS_PER_UNIT)} characters`);
    expect(readme).toContain(`\`RateLimit-Policy\` (\`${config.rateLimitMax};w=60\`)`);
    expect(config.bodyTimeoutMs).toBe(10_000);
    expect(row('request body')).toContain('the whole body within 10 s');
    expect(row('author messages')).toContain(
      `1–${AUTHOR_MAX_MESSAGES} messages, ${n(config.authorMaxMessageChars)} characters each, ${n(config.authorMaxTotalChars)} together`,
    );
    const file = row('file (');
    expect(file).toContain(`${config.maxFileBytes / 1024 / 1024} MB, ${config.maxFilePages} pages`);
    expect(file).toContain(`a DOCX unpacking to ${config.maxFileUnpackedBytes / 1024 / 1024} MB`);
    expect(file).toContain(`a form of at most ${MAX_PARTS} parts`);
    expect(row('files of one key at once')).toContain(`| ${FILES_PER_KEY} |`);
    expect(row('reading a file')).toContain(`${config.fileTimeoutMs / 1000} s to read, ${config.fileTimeoutMs / 1000} s to wait`);
    expect(readme).toContain(`A text under ${EVIDENCE_FLOOR_WORDS} words gets no verdict`);
    expect(readme).toContain(`at most ${MAX_SEGMENTS}.`);
    expect(readme).toContain(`a text of ${n(ONE_WINDOW_WORDS)} words or more is judged in windows of about ${WINDOW_WORDS} words`);
    expect(readme).toContain(`\`polished_probability\` ≥ ${POLISHED_THRESHOLD}`);
    for (const code of ERROR_CODES) expect(readme, `README "Errors" should list ${code}`).toContain(`\`${code}\``);
  });

  it('gives the settings’ defaults as .env.example has them', async () => {
    const example = await readFile(join(ROOT, '.env.example'), 'utf8');
    const defaults = new Map([...example.matchAll(/^([A-Z_]+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]));
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Docker'));
    let checked = 0;
    for (const [, names, values] of table.matchAll(/^\| ((?:`[A-Z_]+`(?: \/ )?)+) \| ([^|]+) \|/gm)) {
      const vars = [...names!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
      const given = values!.split(' / ').map((v) => v.trim());
      vars.forEach((name, i) => {
        const value = /^`([^`]*)`$/.exec(given[i] ?? '')?.[1];
        // "unset", "CPUs, at most 4" and the home-relative key file are described, not literal values.
        if (value === undefined || value.startsWith('~')) return;
        expect(defaults.get(name), `README's default of ${name}`).toBe(value);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });
});
