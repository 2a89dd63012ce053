/**
 * The textdetect CLI as a user runs it (the package bin, in a child process) against the real
 * service on loopback.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/redis.ts';
import { formatResult, percent, rateLimitNotice } from '../../src/cli/detect.ts';
import { ProgressBar } from '../../src/cli/score.ts';
import type { DetectResponse } from '../../src/client/index.ts';
import { ERROR_CODES, WARNING_CODES } from '../../src/contract.ts';
import { WARNING_SENTENCES } from '../../src/words.ts';
import { SAMPLE_TEXT, startTestService, type TestService } from '../client/helpers.ts';
import { BIN, type CliResult, runCli } from './run-cli.ts';
import { GENERATED_PARAGRAPH, HUMAN_POST } from '../helpers/texts.ts';

// Written for this test in a generic AI register, so the engine scores it close to 1.
const AI_REGISTER_TEXT =
  "In conclusion, it is important to note that effective communication plays a crucial role in fostering collaboration, enhancing productivity, and ensuring the overall success of any organization in today's rapidly evolving landscape. " +
  'Furthermore, leveraging innovative strategies and embracing a holistic approach can significantly enhance outcomes, drive sustainable growth, and create meaningful value for all stakeholders involved. ' +
  "Moreover, it is important to note that effective communication plays a crucial role in fostering collaboration, enhancing productivity, and ensuring the overall success of any organization in today's rapidly evolving landscape.";

/** The bin with no TEXTDETECT_API_URL/KEY from our environment unless a test gives them. */
function cli(args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<CliResult> {
  return runCli(args, { TEXTDETECT_API_URL: '', TEXTDETECT_API_KEY: '', ...options.env }, options.input);
}

let svc: TestService;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  svc = await startTestService({ rateLimitMax: 1000 });
  env = { TEXTDETECT_API_URL: svc.url, TEXTDETECT_API_KEY: svc.key };
  dir = await mkdtemp(join(tmpdir(), 'textdetect-cli-test-'));
});
afterAll(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('textdetect "text"', () => {
  it('prints a readable result from an argument', async () => {
    const r = await cli([SAMPLE_TEXT], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^AI probability: \d+\.\d% — (Reads as AI-written|Reads as the author's own text, polished by an AI|Likely human-written|Unclear) \((high|medium|low) confidence\)$/m,
    );
    expect(r.stdout).toMatch(/mode: general\s+language: en/);
    expect(r.stdout).toMatch(/request_id: req_[0-9A-Z]{26}/);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });

  it('reads standard input and prints JSON with --json, with segments and a mode', async () => {
    const r = await cli(['--json', '--segments', '--mode', 'academic', '--language', 'en'], { env, input: SAMPLE_TEXT });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as { mode: string; language: string; segments: Array<{ text: string }>; request_id: string };
    expect(body.mode).toBe('academic');
    expect(body.language).toBe('en');
    expect(body.segments.length).toBeGreaterThanOrEqual(3);
    expect(body.request_id).toMatch(/^req_/);
  });

  it('colours the sentence scores of --segments in a terminal (FORCE_COLOR)', async () => {
    const r = await cli(['--segments', SAMPLE_TEXT], { env: { ...env, NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Sentences:/);
    expect(r.stdout).toMatch(/\u001b\[3[123]m/);
  });

  it('never prints 100.0% or 0.0%, even for a text the engine scores 0.9998', async () => {
    // Three sentences in a generic AI register: the engine gives ~0.9998, which one decimal rounds to 100.0%.
    const json = await cli(['--json', '--segments', AI_REGISTER_TEXT], { env });
    const answer = JSON.parse(json.stdout) as {
      ai_probability: number;
      verdict: string;
      polished_probability: number | null;
      segments: { ai_probability: number }[];
      generated_spans: { ai_probability: number }[];
    };
    const r = await cli(['--segments', AI_REGISTER_TEXT], { env });
    expect(r.code).toBe(0);
    const figures = [...r.stdout.matchAll(/(\d+\.\d)%/g)].map((m) => m[1]);
    // The document, its polish probability (likely_ai only), each sentence, then each
    // generated-looking span (the spans' section comes last).
    const printed = [
      answer.ai_probability,
      ...(answer.verdict === 'likely_ai' && answer.polished_probability !== null ? [answer.polished_probability] : []),
      ...answer.segments.map((s) => s.ai_probability),
      ...answer.generated_spans.map((s) => s.ai_probability),
    ];
    expect(figures).toEqual(printed.map((p) => percent(p).slice(0, -1)));
    expect(r.stdout).not.toMatch(/\b100\.0%|\b0\.0%/);
    expect(percent(0.9995)).toBe('99.9%');
    expect(percent(0.00004)).toBe('0.1%');
    expect(percent(0.8734)).toBe('87.3%');
  });

  it('headlines the answer by its origin, with the share when partly AI-written and the polish probability when it has one', () => {
    const base: DetectResponse = {
      ai_probability: 0.97,
      mode: 'general',
      language: 'en',
      verdict: 'likely_ai',
      confidence: 'high',
      request_id: 'req_01J00000000000000000000000',
      model: 'm',
      segments: [],
      generated_spans: [],
      generated_share: null,
      composition: null,
      origin: 'ai_polished',
      polished_probability: 0.8234,
      warnings: [],
    };
    const polished = formatResult(base, false).split('\n');
    expect(polished.slice(0, 3)).toEqual([
      "AI probability: 97.0% — Reads as the author's own text, polished by an AI (high confidence)",
      "It reads as a person's own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.",
      'Polished by an AI rather than written by one: 82.3% probability (read as polished from 65%)',
    ]);
    const written = formatResult({ ...base, origin: 'ai_written', polished_probability: 0.12 }, false).split('\n');
    expect(written.slice(0, 3)).toEqual([
      'AI probability: 97.0% — Reads as AI-written (high confidence)',
      'This text was most likely written by an AI system.',
      'Polished by an AI rather than written by one: 12.0% probability (read as polished from 65%)',
    ]);
    const unknown = formatResult({ ...base, origin: 'ai_written', polished_probability: null }, false).split('\n');
    expect(unknown[2]).toMatch(/^mode: /);
    const partly = formatResult(
      {
        ...base,
        verdict: 'mixed',
        confidence: 'low',
        ai_probability: 0.71,
        composition: 'partly_ai',
        generated_share: 0.554,
        origin: 'partly_ai',
      },
      false,
    );
    expect(partly.split('\n').slice(0, 2)).toEqual([
      'AI probability: 71.0% — Partly AI-written: about 55% of the words look generated (low confidence)',
      "Some passages look generated; the rest reads as the author's own writing.",
    ]);
    expect(partly).not.toMatch(/most likely written by an AI|Polished by an AI/);
    // A partly_ai composition whose rest leans AI too keeps the plain AI headline, and says so.
    const mostly = formatResult(
      {
        ...base,
        composition: 'partly_ai',
        generated_share: 0.8,
        generated_spans: [{ start: 0, end: 10, ai_probability: 0.97, confidence: 'high' }],
        origin: 'ai_written',
        polished_probability: null,
      },
      false,
    );
    expect(mostly).toContain('— Reads as AI-written');
    expect(mostly).toContain('Composition: Mostly generated. Most of the text looks AI-generated (80% of its words');
    expect(mostly).not.toMatch(/partly|rest reads as the author's own/i);
  });

  it('prints "Partly AI-written" for a post followed by a generated paragraph, with --segments', async () => {
    const post = HUMAN_POST;
    const generated = GENERATED_PARAGRAPH;
    const r = await cli(['--segments', `${post}\n\n${generated}`], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^AI probability: \d+\.\d% — Partly AI-written: about \d{1,2}% of the words look generated \((high|medium|low) confidence\)$/m,
    );
    expect(r.stdout).toContain("Some passages look generated; the rest reads as the author's own writing.");
    expect(r.stdout).not.toMatch(/most likely written by an AI/);
    const json = await cli(['--json', '--segments', `${post}\n\n${generated}`], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ origin: 'partly_ai', composition: 'partly_ai' });
  });

  it('gives every warning code its sentence, and a code it does not know a sentence naming it', async () => {
    const short = await cli(['The meeting moved.'], { env });
    // Under the evidence floor: too short to judge, and no percentage; said once, not again in three
    // overlapping warnings (short text, too little evidence, language uncertain: issue 32, item 25).
    expect(short.stdout).toMatch(/^Too short to judge/);
    expect(short.stdout).not.toMatch(/\d%/);
    expect(short.stdout).not.toMatch(/^warning: /m);
    expect(short.stdout).not.toContain('evidence_needed');
    const result = {
      ai_probability: 0.5,
      mode: 'general',
      language: 'en',
      verdict: 'mixed',
      confidence: 'low',
      request_id: 'req_01J00000000000000000000000',
      model: 'm',
      segments: [],
      generated_spans: [],
      generated_share: null,
      composition: null,
      origin: 'uncertain',
      polished_probability: null,
      warnings: [...WARNING_CODES.filter((code) => code !== 'too_little_evidence'), 'brand_new_code'],
    } as DetectResponse;
    const lines = formatResult(result, false)
      .split('\n')
      .filter((l) => l.startsWith('warning: '));
    // Every surface's sentence for each code (src/words.ts); strict_threshold is said under the
    // headline instead, in words, so it is not listed again.
    expect(lines).toEqual([
      ...WARNING_CODES.filter((code) => code !== 'too_little_evidence' && code !== 'strict_threshold').map(
        (code) => `warning: ${WARNING_SENTENCES[code]}`,
      ),
      'warning: The detector flagged this result (“brand_new_code”), so treat the score with extra care.',
    ]);
    expect(formatResult(result, false)).toContain('under the bar this server holds before it calls a text AI-written');
    // Too short to judge, a warning about how far to trust the score (which is not shown) says nothing.
    const tooShort = formatResult({ ...result, warnings: [...WARNING_CODES] } as DetectResponse, false).split('\n');
    expect(tooShort.filter((l) => l.startsWith('warning: '))).toEqual([]);
  });

  it('exits 2 for bad input without calling the server', async () => {
    const badMode = await cli(['--mode', 'poetry', SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_URL: 'http://127.0.0.1:9' } });
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/--mode must be one of general, academic, financial, legal/);
    const empty = await cli([], { env, input: '  \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/empty/);
  });

  it('exits 3 for a rejected key, 4 when rate limited, 5 when the server is unreachable', async () => {
    const auth = await cli([SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_KEY: `sk_test_${'b'.repeat(32)}` } });
    expect(auth.code).toBe(3);
    expect(auth.stderr).toMatch(/not valid.*invalid_api_key, HTTP 401, request req_/);

    const limitedKey = await svc.newKey({ rateLimitMax: 1 });
    expect((await cli([SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_KEY: limitedKey } })).code).toBe(0);
    const limited = await cli(['--retries', '0', '--json', SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_KEY: limitedKey } });
    expect(limited.code).toBe(4);
    expect(JSON.parse(limited.stdout)).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limited', status: 429 } });
    // The readable form says when to retry exactly once (the service's message already carries it).
    const limitedText = await cli(['--retries', '0', SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_KEY: limitedKey } });
    expect(limitedText.code).toBe(4);
    expect(limitedText.stderr).toMatch(/rate_limited, HTTP 429, request req_/);
    expect(limitedText.stderr.match(/(?:retry|try again) in \d+ s/gi)).toHaveLength(1);

    const port = await freePort();
    const down = await cli(['--retries', '0', '--api-url', `http://127.0.0.1:${port}`, SAMPLE_TEXT], { env });
    expect(down.code).toBe(5);
    expect(down.stderr).toMatch(/Could not reach .*ECONNREFUSED/);
  });

  it('says on stderr when it waits out a 429, once, and then answers', async () => {
    const shortWindow = await startTestService({ rateLimitWindow: '8 seconds' });
    try {
      const limited1 = await shortWindow.newKey({ rateLimitMax: 1 });
      // Spend the budget from here (fast), so the CLI meets the 429 whatever its start-up time.
      const spent = await fetch(`${shortWindow.url}/v1/detect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited1}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: SAMPLE_TEXT }),
      });
      expect(spent.status).toBe(200);
      const waited = await cli([SAMPLE_TEXT], { env: { ...env, TEXTDETECT_API_URL: shortWindow.url, TEXTDETECT_API_KEY: limited1 } });
      expect(waited.code, waited.stderr).toBe(0);
      expect(waited.stdout).toMatch(/^AI probability/m);
      expect(waited.stderr).toMatch(/^textdetect: rate limited: waiting [1-8] s\n$/);
    } finally {
      await shortWindow.close();
    }
  });
});

describe('textdetect score', () => {
  const lines = [
    JSON.stringify({ id: 'a', text: SAMPLE_TEXT }),
    JSON.stringify({ text: `${SAMPLE_TEXT} It was approved.`, mode: 'legal' }),
    '{not json',
    '',
    JSON.stringify({ id: 7, text: '   ' }),
    JSON.stringify({ id: 'last', text: SAMPLE_TEXT, mode: 'financial', language: 'en' }),
  ];

  it('scores a JSONL file through the API in order, one output line per input line', async () => {
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    await writeFile(input, `${lines.join('\n')}\n`);
    const r = await cli(['score', '--input', input, '--output', output], { env });
    const out = (await readFile(output, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(out.map((o) => o.id)).toEqual(['a', 2, 3, 7, 'last']);
    expect(out[0]).toMatchObject({ mode: 'general', language: 'en', request_id: expect.stringMatching(/^req_/) });
    expect(Object.keys(out[0] ?? {}).sort()).toEqual([
      'ai_probability',
      'confidence',
      'id',
      'language',
      'mode',
      'origin',
      'polished_probability',
      'request_id',
      'verdict',
      'warnings',
    ]);
    expect(out[1]).toMatchObject({ mode: 'legal' });
    expect(out[2]).toMatchObject({ error: { code: 'invalid_json' } });
    expect(out[3]).toMatchObject({ error: { code: 'empty_text' } });
    expect(out[4]).toMatchObject({ mode: 'financial', language: 'en' });
    // Some lines were unusable: exit 2, with a summary on stderr, and no progress bar (stderr is a pipe here).
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('scoring');
    expect(r.stderr).toMatch(/^textdetect score: 2 of 5 lines could not be scored .*\n$/);
  });

  it('answers a text in another language with --local as the API does: its hint, param "language", the API’s error type (issue 32, item 25)', async () => {
    const input = join(dir, 'in-german.jsonl');
    const german =
      'Der Ausschuss hat sich am Dienstag getroffen und beschlossen, den Bericht im nächsten Monat zu veröffentlichen, nachdem alle Mitglieder ihre Anmerkungen eingereicht haben.';
    await writeFile(input, `${JSON.stringify({ id: 'de', text: german })}\n`);
    const apiOut = join(dir, 'out-german-api.jsonl');
    const localOut = join(dir, 'out-german-local.jsonl');
    const api = await cli(['score', '-i', input, '-o', apiOut, '--quiet'], { env });
    const local = await cli(['score', '--local', '-i', input, '-o', localOut, '--quiet'], { env: { TEXTDETECT_API_KEY: '' } });
    expect(api.code).toBe(2);
    expect(local.code).toBe(2);
    const [fromApi] = (await readFile(apiOut, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const [fromLocal] = (await readFile(localOut, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(fromApi.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_language', param: 'language' });
    expect(fromApi.error.message).toContain('say so with "language"');
    const { request_id: _id, ...apiError } = fromApi.error;
    expect(fromLocal).toEqual({ id: 'de', error: apiError });
  });

  it('draws the progress bar on a terminal only (issue 40, item 11)', async () => {
    const input = join(dir, 'in-progress.jsonl');
    await writeFile(input, `${[lines[0], lines[1], lines[5]].join('\n')}\n`);
    // stderr a pipe, as in CI or `2> log`: not a line of progress.
    const piped = await cli(['score', '--local', '-i', input, '-o', join(dir, 'out-progress-piped.jsonl')]);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
    // The same run in a pseudo-terminal (util-linux `script`): the bar, redrawn in place.
    const hasScript = spawnSync('script', ['--version']).status === 0;
    if (hasScript) {
      const command = [process.execPath, BIN, 'score', '--local', '-i', input, '-o', join(dir, 'out-progress-tty.jsonl')]
        .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
        .join(' ');
      const tty = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], {
        encoding: 'utf8',
        env: Object.fromEntries(
          Object.entries({ ...process.env, NO_COLOR: '1', TEXTDETECT_API_URL: '', TEXTDETECT_API_KEY: '' }).filter(
            ([k]) => k !== 'FORCE_COLOR',
          ),
        ),
      });
      expect(tty.status, tty.stdout).toBe(0);
      expect(tty.stdout).toMatch(/\rscoring \[#{24}\] 100% 3\/3 .*\u001b\[K/);
    }
    // And the decision itself, whatever this machine has: a terminal gets the bar, anything else nothing.
    for (const isTTY of [true, false]) {
      const written: string[] = [];
      const bar = new ProgressBar(2, true, { isTTY, write: (chunk: string | Uint8Array) => written.push(String(chunk)) > 0 });
      bar.tick(true);
      bar.tick(false);
      bar.finish();
      expect(written.length > 0).toBe(isTTY);
      if (isTTY) expect(written.at(-1)).toMatch(/^\rscoring \[#{24}\] 100% 2\/2 .* failed 1\u001b\[K\n$/);
    }
  });

  it('answers a "file" line with --local as an invalid_request_error naming the field (issue 40, item 11)', async () => {
    const input = join(dir, 'in-local-file.jsonl');
    const output = join(dir, 'out-local-file.jsonl');
    await writeFile(input, `${JSON.stringify({ id: 'doc', file: 'essay.pdf' })}\n`);
    const r = await cli(['score', '--local', '--quiet', '-i', input, '-o', output]);
    expect(r.code).toBe(2);
    const [line] = (await readFile(output, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(line).toEqual({
      id: 'doc',
      error: {
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'file',
        message: 'Line 1: "file" lines need the service, which reads the document; run without --local.',
      },
    });
    expect(ERROR_CODES).toContain(line.error.code);
  });

  it('scores the same file in-process with --local, matching the API scores', async () => {
    const input = join(dir, 'in-local.jsonl');
    const apiOut = join(dir, 'out-api.jsonl');
    const localOut = join(dir, 'out-local.jsonl');
    const good = [lines[0], lines[1], lines[5]];
    await writeFile(input, `${good.join('\n')}\n`);
    const api = await cli(['score', '-i', input, '-o', apiOut, '--quiet'], { env });
    const local = await cli(['score', '--local', '--input', input, '--output', localOut], { env: { TEXTDETECT_API_KEY: '' } });
    expect(api.code, api.stderr).toBe(0);
    expect(local.code, local.stderr).toBe(0);
    expect(api.stderr).toBe('');
    const read = async (p: string) =>
      (await readFile(p, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const a = await read(apiOut);
    const l = await read(localOut);
    expect(l).toHaveLength(3);
    for (const [i, row] of l.entries()) {
      expect(Object.keys(row).sort()).toEqual([
        'ai_probability',
        'confidence',
        'id',
        'language',
        'mode',
        'origin',
        'polished_probability',
        'verdict',
        'warnings',
      ]);
      expect(row.origin).toBe(a[i]?.origin);
      expect(row.ai_probability).toBe(a[i]?.ai_probability);
      expect(row.verdict).toBe(a[i]?.verdict);
    }
  });

  it('stops at once with exit 3 when the key is rejected', async () => {
    const input = join(dir, 'in-auth.jsonl');
    await writeFile(input, Array.from({ length: 30 }, () => JSON.stringify({ text: SAMPLE_TEXT })).join('\n'));
    const r = await cli(['score', '--input', input, '--window', '4'], { env: { ...env, TEXTDETECT_API_KEY: `sk_test_${'c'.repeat(32)}` } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/stopped after \d+ lines: This API key is not valid/);
    expect(r.stdout.trim().split('\n').length).toBeLessThan(30);
  });
});

describe('help and pacing (issue 25, item 19)', () => {
  it('--help names checking several messages as one author; every command prints asked-for help on stdout', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/"messages": \[.*\].*one author/);
    for (const command of ['detect', 'score', 'eval', 'keys']) {
      const help = await cli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stderr, command).toBe('');
      expect(help.stdout, command).toMatch(/^Usage/);
    }
    // A usage error still goes to stderr with exit 2.
    const bad = await cli(['eval', '--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('Unknown argument "--bogus"');
  });

  it('score through the API uses the quota that is left instead of one line per second', async () => {
    // A default 60-per-minute key: 20 lines fit its budget, so they need not wait for one another.
    const limited = await startTestService({ rateLimitMax: 60 });
    try {
      const input = join(dir, 'in-paced.jsonl');
      await writeFile(input, `${Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, text: SAMPLE_TEXT })).join('\n')}\n`);
      const env = { TEXTDETECT_API_URL: limited.url, TEXTDETECT_API_KEY: limited.key };
      // The same command on one line, just before: the process start and one detection on this machine now.
      const one = join(dir, 'in-paced-one.jsonl');
      await writeFile(one, `${JSON.stringify({ id: 0, text: SAMPLE_TEXT })}\n`);
      const baseStarted = Date.now();
      expect((await cli(['score', '--input', one, '--quiet'], { env })).code).toBe(0);
      const baseMs = Date.now() - baseStarted;
      const started = Date.now();
      const r = await cli(['score', '--input', input, '--quiet'], { env });
      const ms = Date.now() - started;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n')).toHaveLength(20);
      // Paced to one per second after the first answer, the 20 lines took 14.9 s (8 lines at once, then
      // one a second): 12 s of sleeping that no machine speed shortens. With the quota used, the 19 more
      // detections add 0.1-2 s to the one-line run, at load 10 too.
      expect(ms - baseMs, `one line ${baseMs} ms, 20 lines ${ms} ms`).toBeLessThan(7_000);
    } finally {
      await limited.close();
    }
  });
});

describe('rate-limit notice', () => {
  it('is printed once per pause, however many queued texts wait on it', () => {
    const lines: string[] = [];
    const notice = rateLimitNotice('textdetect score', (line) => lines.push(line));
    notice({ waitMs: 58_000 });
    notice({ waitMs: 57_900 });
    notice({ waitMs: 58_000 });
    expect(lines).toEqual(['textdetect score: rate limited: waiting 58 s\n']);
    notice({ waitMs: 120_000 });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('textdetect score: rate limited: waiting 120 s\n');
  });
});
