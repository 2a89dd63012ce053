/**
 * The web page as HTTP sees it (no browser needed): headers, caching, the server's settings in the
 * page, PLAYGROUND off, the words module every surface uses served beside the page's own, and the
 * page's wording fed with real error answers of the real service.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as words from '../../src/words.ts';
import { MODES } from '../../src/detector/types.ts';
import { ConfigError, loadConfigFromEnv } from '../../src/service/config.ts';
import { ENGLISH_TEXT, GERMAN_TEXT, call, detect, expectEnvelope, startTestService } from '../service/helpers.ts';
import type { TestService } from '../service/helpers.ts';

interface Wording {
  errorSentence(failure: { status: number; error?: Record<string, unknown>; retryAfter?: number }): {
    sentence: string;
    askForKey: boolean;
    waitSeconds: number | undefined;
  };
  countCharacters(text: string): number;
}

/** The page's JavaScript as the service serves it, written side by side so its imports resolve as in a browser. */
async function servedModules(service: TestService, into: string): Promise<string[]> {
  const page = await (await fetch(`${service.url}/`)).text();
  const base = /src="(\/playground\/[0-9a-f]+\/)app\.js"/.exec(page)?.[1];
  const names = ['app.js', 'render.js', 'wording.js', 'words.js', 'contract.js'];
  for (const name of names) {
    const response = await fetch(`${service.url}${base}${name}`);
    expect(response.status, name).toBe(200);
    expect(response.headers.get('content-type'), name).toBe('text/javascript; charset=utf-8');
    await writeFile(join(into, name), await response.text());
  }
  return names;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('web page over HTTP', () => {
  let service: TestService;
  let key: string;
  let served: string;
  let wording: Wording;

  beforeAll(async () => {
    service = await startTestService({ playground: true, maxTextChars: 3000 });
    key = await service.newKey();
    served = await mkdtemp(join(tmpdir(), 'textdetect-served-page-'));
    await servedModules(service, served);
    wording = (await import(pathToFileURL(join(served, 'wording.js')).href)) as Wording;
  });
  afterAll(async () => {
    await service?.stop();
    if (served) await rm(served, { recursive: true, force: true });
  });

  it('serves the words every surface uses beside the page, and they say what the CLI and the bots say', async () => {
    const servedWords = (await import(pathToFileURL(join(served, 'words.js')).href)) as typeof words;
    const api = await detect(service, key, { text: ENGLISH_TEXT, segments: true });
    expect(api.status).toBe(200);
    const answers = [
      api.body,
      { ...api.body, verdict: 'mixed', confidence: 'low', origin: 'uncertain', ai_probability: 0.95, warnings: ['strict_threshold'] },
      { ...api.body, warnings: ['short_text', 'too_little_evidence'] },
    ];
    for (const answer of answers) expect(servedWords.describeAnswer(answer)).toEqual(words.describeAnswer(answer));
    expect(servedWords.ORIGIN_WORDS).toEqual(words.ORIGIN_WORDS);
    expect(servedWords.WARNING_SENTENCES).toEqual(words.WARNING_SENTENCES);
  });

  it('GET / is the page, with a strict policy and no inline script or style', async () => {
    const page = await get(`${service.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-cache');

    // Every script is a file of this origin; no inline handlers or style attributes (the CSP would block them).
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/playground\/[0-9a-f]{12}\/app\.js"/);
      expect(body?.trim()).toBe('');
    }
    expect(page.text).not.toMatch(/\son[a-z]+=/i);
    expect(page.text).not.toMatch(/\sstyle=/i);
    expect(page.text).not.toMatch(/<style/i);
    // Nothing from another origin: the page must work offline.
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.text).not.toContain('{{');
  });

  it('the page carries the server settings: limit, default mode, modes, environment', async () => {
    const page = await get(`${service.url}/`);
    expect(page.text).toContain('data-max-text-chars="3000"');
    expect(page.text).toContain('data-default-mode="general"');
    expect(page.text).toContain('data-environment="sandbox"');
    expect(page.text).toContain('0 / 3,000 characters');
    const options = [...page.text.matchAll(/<option value="([a-z]+)"( selected)?>/g)];
    const modeOptions = options.filter(([, value]) => (MODES as readonly string[]).includes(value!));
    expect(modeOptions.map(([, value]) => value)).toEqual([...MODES]);
    expect(modeOptions.filter(([, , selected]) => selected).map(([, value]) => value)).toEqual(['general']);
  });

  it('files are cached for good under their version, revalidated otherwise; ETags answer 304', async () => {
    const page = await get(`${service.url}/`);
    const paths = [...new Set([...page.text.matchAll(/(?:src|href)="(\/playground\/[^"]+)"/g)].map(([, path]) => path!))];
    expect(paths.length).toBeGreaterThanOrEqual(3);
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
    for (const path of paths) {
      const file = await get(service.url + path);
      expect(file.status, path).toBe(200);
      expect(file.headers.get('content-type')).toBe(types[path.split('.').pop()!]);
      expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // The modules import each other by relative path, so they resolve under the same version.
    const app = await get(service.url + paths.find((p) => p.endsWith('/app.js'))!);
    for (const [, imported] of app.text.matchAll(/from '\.\/([a-z]+\.js)'/g)) {
      const path = paths[0]!.replace(/[^/]+$/, imported!);
      expect((await get(service.url + path)).status, path).toBe(200);
    }
    const stale = await get(`${service.url}/playground/000000000000/style.css`);
    expect(stale.status).toBe(200);
    expect(stale.headers.get('cache-control')).toBe('no-cache');
    const missing = await call(service, `${paths[0]!.replace(/[^/]+$/, 'nothing.js')}`);
    expectEnvelope(missing, 404, 'not_found');

    const etag = page.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get(`${service.url}/`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('other methods on / get 405 with Allow; the API keeps its own headers', async () => {
    const post = await call(service, '/', { method: 'POST', body: { text: 'x' } });
    expectEnvelope(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${service.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const api = await detect(service, key, { text: ENGLISH_TEXT });
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBeNull();
  });

  it('the page wording turns real error answers into sentences with their figures', async () => {
    const badKey = await detect(service, `sk_test_${'A'.repeat(32)}`, { text: ENGLISH_TEXT });
    const refused = wording.errorSentence({ status: badKey.status, error: badKey.body.error });
    expect(refused.sentence).toBe('Your API key was refused: This API key is not valid. Enter a valid key to check texts.');
    expect(refused.askForKey).toBe(true);

    const tooLong = await detect(service, key, { text: 'word '.repeat(700) });
    expectEnvelope(tooLong, 413, 'text_too_long');
    expect(wording.errorSentence({ status: 413, error: tooLong.body.error }).sentence).toContain('at most 3,000 characters');

    const german = await detect(service, key, { text: GERMAN_TEXT });
    expectEnvelope(german, 422, 'unsupported_language');
    expect(wording.errorSentence({ status: 422, error: german.body.error }).sentence).toMatch(
      /^The text appears to be in German\. Only English and Turkish/,
    );

    const limited = await service.newKey({ rateLimitMax: 1 });
    expect((await detect(service, limited, { text: ENGLISH_TEXT })).status).toBe(200);
    const tooMany = await detect(service, limited, { text: ENGLISH_TEXT });
    expectEnvelope(tooMany, 429, 'rate_limited');
    const wait = Number(tooMany.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    const slowDown = wording.errorSentence({ status: 429, error: tooMany.body.error, retryAfter: wait });
    expect(slowDown.waitSeconds).toBe(wait);
    expect(slowDown.sentence).toContain(`Wait ${wait} seconds`);
    expect(slowDown.sentence).not.toContain('{');
  });

  it('counts characters as the server does (code points)', () => {
    expect(wording.countCharacters('a😀b')).toBe(3);
    expect(wording.countCharacters('ğüşiöç')).toBe(6);
  });
});

describe('PLAYGROUND off', () => {
  it('GET / is a 404 envelope when the page is off, and startService() leaves it off', async () => {
    const fromEnv = loadConfigFromEnv({ PLAYGROUND: '0' });
    expect(fromEnv.playground).toBe(false);
    const service = await startTestService({ playground: fromEnv.playground });
    try {
      expectEnvelope(await call(service, '/'), 404, 'not_found');
      expectEnvelope(await call(service, '/playground/000000000000/app.js'), 404, 'not_found');
    } finally {
      await service.stop();
    }
    // startService() from code (the bots embed it this way) serves no page unless asked.
    const embedded = await startTestService();
    try {
      expectEnvelope(await call(embedded, '/'), 404, 'not_found');
    } finally {
      await embedded.stop();
    }
  });

  it('PLAYGROUND is on by default for npm start and refuses values it cannot read', () => {
    expect(loadConfigFromEnv({}).playground).toBe(true);
    for (const on of ['1', 'true', 'on', 'YES']) expect(loadConfigFromEnv({ PLAYGROUND: on }).playground).toBe(true);
    for (const off of ['0', 'false', 'off', 'no']) expect(loadConfigFromEnv({ PLAYGROUND: off }).playground).toBe(false);
    expect(() => loadConfigFromEnv({ PLAYGROUND: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfigFromEnv({ PLAYGROUND: 'maybe' })).toThrow(/PLAYGROUND/);
  });
});
