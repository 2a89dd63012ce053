/**
 * `textdetect score` lines with "messages" (one author) and "segments": true, and the spans that
 * `textdetect --segments` prints, run as a user runs them (the package bin, in a child process)
 * against the real service on loopback.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DetectResponse } from '../../src/client/index.ts';
import { formatSpans } from '../../src/cli/detect.ts';
import { describeAnswer, passagesTitle } from '../../src/words.ts';
import { SAMPLE_TEXT, startTestService, type TestService } from '../client/helpers.ts';
import { runCli as cli } from './run-cli.ts';

/** A paragraph of casual writing followed by one in the manner of a chat assistant, both written for this test. */
const MIXED_TEXT =
  'ok so I tried the recipe my gran used to make and honestly it came out a bit burnt on the bottom. ' +
  'the oven in this flat runs hot, I keep forgetting. still tasted fine with loads of custard.\n\n' +
  'Baking the perfect crumble requires a careful balance of ingredients and technique. ' +
  'First, it is essential to select fresh, seasonal fruit, as this forms the foundation of the dish. ' +
  'Additionally, chilling the butter before rubbing it into the flour ensures a light, crisp topping. ' +
  'Finally, baking at a moderate temperature allows the fruit to soften while the topping turns golden brown.';

const MESSAGES = [
  'anyone know if the 8:15 is running today? station board says nothing',
  'got my bike back from the shop, new chain and brakes, rides like a dream',
  'the quiz at the Crown is on Thursday this week not Wednesday fyi',
  'just burnt the toast for the third time this week, this toaster is cursed',
  'is it me or is the wifi in the library slower than usual today',
  'lost a grey scarf near the park gates yesterday evening, shout if you find it',
];

async function readJsonl(path: string): Promise<Array<Record<string, any>>> {
  return (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

let svc: TestService;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 1000, authorMaxMessageChars: 400 });
  env = { TEXTDETECT_API_URL: svc.url, TEXTDETECT_API_KEY: svc.key };
  dir = await mkdtemp(join(tmpdir(), 'textdetect-cli-author-'));
});
afterAll(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const TEXT_KEYS = ['ai_probability', 'confidence', 'id', 'language', 'mode', 'origin', 'polished_probability', 'verdict', 'warnings'];
const SEGMENT_KEYS = ['composition', 'generated_share', 'generated_spans', 'segments'];
const AUTHOR_KEYS = [
  'ai_probability',
  'confidence',
  'evidence_needed',
  'id',
  'language',
  'messages',
  'messages_used',
  'mode',
  'origin',
  'polished_probability',
  'verdict',
  'warnings',
  'words_used',
];

describe('textdetect score with "messages" and "segments"', () => {
  const good = [
    JSON.stringify({ id: 'plain', text: SAMPLE_TEXT }),
    JSON.stringify({ id: 'seg', text: MIXED_TEXT, segments: true }),
    JSON.stringify({ id: 'author', messages: [...MESSAGES, '', 'https://example.com/a'], language: 'en' }),
    JSON.stringify({ id: 'few', messages: MESSAGES.slice(0, 2), mode: 'academic' }),
  ];

  it('writes the combined answer of an author on one line, and confidence, warnings and segments on every text line', async () => {
    const bad = [
      JSON.stringify({ id: 'many', messages: Array.from({ length: 201 }, () => 'hi') }),
      JSON.stringify({ id: 'nonstring', messages: ['fine', 42] }),
      JSON.stringify({ id: 'empty', messages: [] }),
      JSON.stringify({ id: 'notarray', messages: 'one text' }),
      JSON.stringify({ id: 'both', text: SAMPLE_TEXT, messages: ['x'] }),
      JSON.stringify({ id: 'authorseg', messages: ['x'], segments: true }),
      JSON.stringify({ id: 'segyes', text: SAMPLE_TEXT, segments: 'yes' }),
      JSON.stringify({ id: 'toolong', messages: ['x'.repeat(401)] }),
    ];
    const input = join(dir, 'author-in.jsonl');
    const output = join(dir, 'author-out.jsonl');
    await writeFile(input, `${[...good, '', ...bad].join('\n')}\n`);
    const r = await cli(['score', '--input', input, '--output', output], env);
    const out = await readJsonl(output);
    expect(out.map((o) => o.id)).toEqual([
      'plain',
      'seg',
      'author',
      'few',
      'many',
      'nonstring',
      'empty',
      'notarray',
      'both',
      'authorseg',
      'segyes',
      'toolong',
    ]);

    const [plain, seg, author, few] = out as [Record<string, any>, Record<string, any>, Record<string, any>, Record<string, any>];
    expect(Object.keys(plain).sort()).toEqual([...TEXT_KEYS, 'request_id'].sort());
    expect(['low', 'medium', 'high']).toContain(plain.confidence);
    expect(Array.isArray(plain.warnings)).toBe(true);

    expect(Object.keys(seg).sort()).toEqual([...TEXT_KEYS, ...SEGMENT_KEYS, 'request_id'].sort());
    expect(seg.segments.length).toBeGreaterThanOrEqual(5);
    for (const segment of seg.segments) expect(MIXED_TEXT.slice(segment.start, segment.end)).toBe(segment.text);
    for (const span of seg.generated_spans) {
      expect(span.start).toBeGreaterThanOrEqual(0);
      expect(span.end).toBeLessThanOrEqual(MIXED_TEXT.length);
    }
    expect(seg.generated_share).toBeGreaterThanOrEqual(0);
    expect(seg.generated_share).toBeLessThanOrEqual(1);
    expect(['human', 'ai', 'partly_ai', 'uncertain']).toContain(seg.composition);

    expect(Object.keys(author).sort()).toEqual([...AUTHOR_KEYS, 'request_id'].sort());
    expect(author.messages.map((m: { index: number }) => m.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(author.messages[6].skipped).toBe('empty');
    expect(author.messages[7].skipped).toBe('link_only');
    expect(author.messages_used).toBe(MESSAGES.length);
    expect(author.language).toBe('en');
    expect(few.mode).toBe('academic');
    expect(few.verdict).toBe('mixed');
    expect(few.warnings).toContain('too_little_evidence');
    expect(few.evidence_needed.words).toBeGreaterThan(0);

    // Every bad line says which line it is and what is wrong, and the run goes on.
    const errors = Object.fromEntries(out.slice(4).map((o) => [o.id, o.error]));
    expect(errors.many).toMatchObject({ code: 'too_many_messages', param: 'messages' });
    expect(errors.many.message).toMatch(/^Line 6: "messages" holds 201 messages, more than 200/);
    expect(errors.nonstring).toMatchObject({ code: 'invalid_messages', param: 'messages[1]' });
    expect(errors.nonstring.message).toMatch(/^Line 7: message 1 .* is 42, not a string/);
    expect(errors.empty).toMatchObject({ code: 'invalid_messages', message: 'Line 8: "messages" is empty: nothing to check.' });
    expect(errors.notarray.message).toMatch(/^Line 9: "messages" must be an array of 1 to 200 strings/);
    expect(errors.both).toMatchObject({ code: 'ambiguous_line' });
    expect(errors.authorseg).toMatchObject({ code: 'invalid_segments', param: 'segments' });
    expect(errors.segyes).toMatchObject({ code: 'invalid_segments', message: 'Line 12: "segments" must be true or false; got "yes".' });
    // Refused by the server: its error, named by the line.
    expect(errors.toolong).toMatchObject({ type: 'invalid_request_error', code: 'text_too_long', status: 413, param: 'messages[0]' });
    expect(errors.toolong.message).toMatch(/^Line 13: Message 0 .* longer than 400 characters/);
    expect(errors.toolong.request_id).toMatch(/^req_/);

    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/8 of 12 lines could not be scored .* first: Line 6: /);
  });

  it('gives the same answers with --local as through the API', async () => {
    const input = join(dir, 'author-local-in.jsonl');
    const apiOut = join(dir, 'author-api-out.jsonl');
    const localOut = join(dir, 'author-local-out.jsonl');
    await writeFile(input, `${good.join('\n')}\n`);
    const api = await cli(['score', '-i', input, '-o', apiOut, '--quiet'], env);
    const local = await cli(['score', '--local', '-i', input, '-o', localOut, '--quiet'], { TEXTDETECT_API_KEY: '' });
    expect(api.code, api.stderr).toBe(0);
    expect(local.code, local.stderr).toBe(0);
    const fromApi = await readJsonl(apiOut);
    const fromLocal = await readJsonl(localOut);
    expect(Object.keys(fromLocal[0]!).sort()).toEqual(TEXT_KEYS);
    expect(Object.keys(fromLocal[1]!).sort()).toEqual([...TEXT_KEYS, ...SEGMENT_KEYS].sort());
    expect(Object.keys(fromLocal[2]!).sort()).toEqual(AUTHOR_KEYS);
    for (const [i, row] of fromLocal.entries()) {
      const { request_id: _, ...apiRow } = fromApi[i]!;
      expect(row).toEqual(apiRow);
    }
  });
});

describe('textdetect --segments', () => {
  it('prints the composition, the generated share and each generated-looking span, as the API answers them', async () => {
    const json = await cli(['--json', '--segments'], env, MIXED_TEXT);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout) as DetectResponse;
    const readable = await cli(['--segments'], env, MIXED_TEXT);
    expect(readable.code, readable.stderr).toBe(0);
    // The composition box's words, as every surface says them (src/words.ts).
    const words = describeAnswer(answer);
    expect(readable.stdout).toContain(`Composition: ${words.composition?.label}. ${words.composition?.sentence}`);
    if (answer.generated_spans.length > 0)
      expect(readable.stdout).toContain(`${passagesTitle(words.origin)} (${answer.generated_spans.length}):`);
    for (const span of answer.generated_spans) expect(readable.stdout).toContain(`characters ${span.start}–${span.end}`);
  });

  it('prints no composition without --segments', async () => {
    const r = await cli([], env, MIXED_TEXT);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/Composition|Generated-looking/);
  });

  it('quotes each span from its sentences, eliding long ones', () => {
    const text = `${'A'.repeat(20)}. ${'B'.repeat(150)}. Short one.`;
    const segment = (start: number, end: number, p: number) => ({ start, end, text: text.slice(start, end), ai_probability: p });
    const answer = {
      ai_probability: 0.7,
      mode: 'general',
      language: 'en',
      segments: [segment(0, 21, 0.1), segment(22, 173, 0.95), segment(174, 184, 0.9)],
      request_id: 'req_01J00000000000000000000000',
      model: 'm',
      verdict: 'mixed',
      confidence: 'low',
      warnings: [],
      generated_spans: [
        { start: 22, end: 173, ai_probability: 0.95 },
        { start: 174, end: 184, ai_probability: 0.9 },
      ],
      generated_share: 0.62,
      composition: 'partly_ai',
      origin: 'partly_ai',
      polished_probability: null,
    } satisfies DetectResponse;
    const lines = formatSpans(answer, false);
    expect(lines.slice(0, 3)).toEqual([
      '',
      "Composition: Partly generated. Most of the text looks AI-generated (62% of its words, 2 passages); the rest reads as the author's own writing.",
      'Passages that look AI-generated (2):',
    ]);
    // The percentage's own format belongs to the rest of the display; the span line around it is checked here.
    expect(lines[3]).toMatch(new RegExp(`^ +95[.,0-9]*%  characters 22–173: "${'B'.repeat(119)}…"$`));
    expect(lines[4]).toMatch(/^ +90[.,0-9]*% {2}characters 174–184: "Short one\."$/);
    expect(lines).toHaveLength(5);
    expect(
      formatSpans(
        { ...answer, verdict: 'likely_human', origin: 'human', generated_spans: [], generated_share: 0, composition: 'human' },
        false,
      ),
    ).toEqual(['', 'Composition: Reads as human writing. No passage looks AI-generated.']);
    expect(formatSpans({ ...answer, generated_spans: [], generated_share: null, composition: null }, false)).toEqual([]);
  });
});
