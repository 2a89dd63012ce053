/**
 * `textdetect detect --file` and `score` lines with "file", as a user runs them (the package bin in
 * a child process, the compiled build) against the real service on loopback, with documents built in
 * the test.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../client/helpers.ts';
import { buildDocx, buildPdf, paragraphs } from '../helpers/documents.ts';
import { runCli as cli } from './run-cli.ts';

let svc: TestService;
let env: Record<string, string>;
let dir: string;
const SOURCE = paragraphs(900, 90, 300);

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 1000 });
  env = { TEXTDETECT_API_URL: svc.url, TEXTDETECT_API_KEY: svc.key };
  dir = await mkdtemp(join(tmpdir(), 'textdetect-cli-file-'));
  await mkdir(join(dir, 'docs'));
  await writeFile(join(dir, 'docs', 'essay.pdf'), buildPdf({ paragraphs: SOURCE, footer: 'Page {n}', linesPerPage: 30 }));
  await writeFile(join(dir, 'docs', 'essay.docx'), buildDocx({ paragraphs: SOURCE.slice(0, 3) }));
  await writeFile(join(dir, 'docs', 'scan.pdf'), buildPdf({ imageOnly: true }));
});
afterAll(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('textdetect detect --file', () => {
  it('prints what was read (name, pages, characters) and the verdict', async () => {
    const r = await cli(['detect', '--file', join(dir, 'docs', 'essay.pdf'), '--segments'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^file: essay\.pdf: PDF, [2-9] pages, [\d,]+ characters read$/m);
    expect(r.stdout).toMatch(/^AI probability: \d+\.\d% — /m);
    expect(r.stdout).toContain('Sentences:');
  });

  it('prints the API answer with --json, and exits 2 with the service sentence for a scan', async () => {
    const ok = await cli(['detect', '--json', '--file', join(dir, 'docs', 'essay.docx')], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).file).toMatchObject({ name: 'essay.docx', type: 'docx', pages: null });
    const scan = await cli(['detect', '--file', join(dir, 'docs', 'scan.pdf')], env);
    expect(scan.code).toBe(2);
    expect(scan.stderr).toMatch(/no OCR is done.*no_text_in_file, HTTP 422/);
    const missing = await cli(['detect', '--file', join(dir, 'nope.pdf')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No such file');
  });
});

describe('textdetect score with "file" lines', () => {
  it('reads each document relative to the input file, in order, with its file info', async () => {
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    const lines = [
      { id: 'pdf', file: 'docs/essay.pdf', segments: true },
      { id: 'docx', file: join(dir, 'docs', 'essay.docx'), mode: 'academic' },
      { id: 'scan', file: 'docs/scan.pdf' },
      { id: 'both', file: 'docs/essay.pdf', text: 'two inputs' },
    ];
    await writeFile(input, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const r = await cli(['score', '--quiet', '--input', input, '--output', output], env);
    const out = (await readFile(output, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(out.map((line) => line.id)).toEqual(['pdf', 'docx', 'scan', 'both']);
    expect(out[0]?.file).toMatchObject({ name: 'essay.pdf', type: 'pdf' });
    expect(out[0]?.segments.length).toBeGreaterThan(5);
    expect(out[1]).toMatchObject({ mode: 'academic', file: { type: 'docx' } });
    expect(out[2]?.error).toMatchObject({ code: 'no_text_in_file', status: 422 });
    expect(out[3]?.error).toMatchObject({ code: 'ambiguous_line' });
    expect(r.code).toBe(2);
  });
});
