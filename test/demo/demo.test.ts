/**
 * `npm run demo` end to end, as a new user runs it (the Discord bot, and `-- --slack` the Slack app):
 * npm, then the compiled demo (dist/demo/main.js),
 * in a child process with a throw-away TMPDIR (where the demo's data folder and the in-process
 * service's key file go) and the run's throw-away HOME. Every node process of the tree, npm's
 * included, is preloaded with the loopback guard (demo/loopback-guard.ts through NODE_OPTIONS): any
 * name lookup or connection beyond loopback is refused and written to a log, which must stay empty.
 * The environment also carries a user's own settings pointing at real hosts (Discord's API, a Redis,
 * a PostgreSQL): the demo must use none of them, and the guard would see it if it did.
 *
 * Needs the build (`npm test` runs `npm run build` first), as the package tests do.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_TITLES } from '../../demo/transcript.ts';
import { WAIT_MS } from '../helpers/load.ts';
import { ROOT } from '../package/helpers.ts';

const GUARD = join(ROOT, 'dist', 'demo', 'loopback-guard.js');

let dir: string;

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'demo', 'main.js'))) {
    throw new Error('dist/demo is missing: run `npm run build` (npm test does) before this test.');
  }
  dir = await mkdtemp(join(tmpdir(), 'textdetect-demo-test-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Demo {
  child: ChildProcess;
  output(): string;
  /** Resolves with npm's exit code, or its signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  tmp: string;
  guardLog: string;
}

async function startDemo(name: string, args: string[]): Promise<Demo> {
  const tmp = await mkdtemp(join(dir, `${name}-tmp-`));
  const guardLog = join(dir, `${name}-guard.log`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // This node first, so npm runs the demo with it.
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    TMPDIR: tmp,
    NODE_OPTIONS: `--import=${pathToFileURL(GUARD).href}`,
    LOOPBACK_GUARD_LOG: guardLog,
    npm_config_update_notifier: 'false',
    // A user's own bot settings, all pointing away from this machine: the demo uses none of them.
    DISCORD_TOKEN: 'a-real-looking-token',
    DISCORD_API_URL: 'https://discord.com/api',
    REDIS_URL: 'redis://redis.example.com:6379',
    DATABASE_URL: 'postgres://textdetect@db.example.com/textdetect',
    DETECT_API_URL: 'https://detect.example.com',
    DETECT_API_KEY: 'sk_live_not-used',
  };
  delete env.DATA_DIR;
  // Its own process group, so a Ctrl-C can be sent to npm and the demo together, as a terminal does.
  const child = spawn('npm', ['run', '--silent', 'demo', '--', ...args], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited, tmp, guardLog };
}

/** Resolves once the output matches `pattern`; fails with the output if the demo exits first or takes past WAIT_MS. */
async function waitForOutput(demo: Demo, pattern: RegExp): Promise<RegExpMatchArray> {
  const deadline = Date.now() + WAIT_MS;
  let ended = false;
  void demo.exited.then(() => {
    ended = true;
  });
  for (;;) {
    const match = demo.output().match(pattern);
    if (match) return match;
    if (ended || Date.now() > deadline) throw new Error(`the demo did not print ${pattern}:\n${demo.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The lines the terminal printed under a step's heading, up to the next heading. */
function section(output: string, title: string): string {
  const start = output.indexOf(title);
  expect(start, `no "${title}" in the output:\n${output}`).toBeGreaterThanOrEqual(0);
  const rest = output.slice(start + title.length);
  const next = rest.search(/\n── |\nReview card posted/);
  return next === -1 ? rest : rest.slice(0, next);
}

async function expectNothingLeft(demo: Demo): Promise<void> {
  // The bot's SQLite folder and the in-process service's key folder are gone with the process
  // (npm keeps Node's compile cache there, which is npm's own).
  expect((await readdir(demo.tmp)).filter((name) => name !== 'node-compile-cache')).toEqual([]);
  const log = (await readFile(demo.guardLog, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string; argv: string[]; what?: string; target?: string });
  // The guard was in npm and in the demo itself, and refused nothing.
  const carriers = log.filter((l) => l.event === 'installed').map((l) => l.argv[0] ?? '');
  expect(
    carriers.some((script) => /npm-cli\.js$|[/\\]npm$/.test(script)),
    carriers.join('\n'),
  ).toBe(true);
  expect(
    carriers.some((script) => script.endsWith(join('dist', 'demo', 'main.js'))),
    carriers.join('\n'),
  ).toBe(true);
  expect(log.filter((l) => l.event !== 'installed')).toEqual([]);
}

/** What each platform's tour prints: the moderator's actions and the bot's answers, step by step. */
const TOURS = {
  discord: {
    check: {
      action: /you \(moderator\): \/detect text: /g,
      answer: /#general · textdetect · only you can see this:\n {2}┃ .+\n {2}┃ .+ probability that an AI wrote it/g,
    },
    member: { action: '/detect user: @marta', answer: /Recent messages of @marta: .+ probability that an AI wrote them, over 8 messages/ },
    document: { action: '/detect file: essay.pdf', answer: /┃ 📄 essay\.pdf: .+\n {2}┃ PDF, 1 page, [\d,]+ characters read/ },
    settings: ['watch channel: #general', 'modlog channel: #mod-log', 'cards channel: #general state: on'],
    author: /┃ Author: quill \(\d+\)/,
  },
  slack: {
    check: {
      action: /you \(moderator\): \/detect (?!@)/g,
      answer: /#general · textdetect · only you can see this:\n {2}┃ .+\n {2}┃ .+ estimated probability that the text is AI-written/g,
    },
    member: { action: '/detect @marta', answer: /recent messages of @marta\n {2}┃ .+ probability that an AI wrote them, over 8 messages/ },
    document: {
      action: '“Check for AI text” on quill’s message with essay.pdf',
      answer: /┃ 📄 essay\.pdf {2}· {2}PDF, 1 page, [\d,]+ characters read/,
    },
    settings: ['watch #general', 'audit #mod-log', 'cards #general on'],
    author: /┃ Author: quill \(U0QUILL\)/,
  },
} as const;

/** Each step of the tour appeared in the terminal, with the bot's answer to it. */
function expectTour(output: string, platform: keyof typeof TOURS): void {
  const tour = TOURS[platform];
  const checks = section(output, STEP_TITLES.check);
  expect(checks.match(tour.check.action), checks).toHaveLength(2);
  expect(checks).toContain('(text: Brown corpus, cn01 (general fiction, 1961))');
  expect(checks.match(tour.check.answer), checks).toHaveLength(2);

  const member = section(output, STEP_TITLES.member);
  expect(member).toContain(tour.member.action);
  expect(member).toMatch(tour.member.answer);

  const document = section(output, STEP_TITLES.document);
  expect(document).toContain(tour.document.action);
  expect(document).toMatch(tour.document.answer);

  const card = section(output, STEP_TITLES.card);
  for (const setting of tour.settings) expect(card).toContain(`/detect-settings ${setting}`);
  expect(card).toMatch(/#general · quill: “/);
  expect(card).toMatch(/#mod-log · textdetect:\n {2}┃ .*Flag for review: .+/);
  expect(card).toMatch(tour.author);
  expect(card).toContain('┃ [Confirm] [False positive] [Dismiss]');
  // Nothing of the bot's in the watched channel but the moderator's private answers.
  expect(card).not.toMatch(/#general · textdetect:/);

  const timing = output.match(/Review card posted (\d+\.\d) s after the demo started\./);
  expect(timing, output).not.toBeNull();
  console.log(`npm run demo (${platform}): review card ${timing?.[1]} s after the demo process started`);
  expect(output).toContain('Outside connections attempted: none.');
}

/**
 * Runs the demo with its page, waits for the tour, then does on the page what a visitor would: the
 * card's Confirm, a refused foreign request, an empty and a real /detect; then a Ctrl-C.
 */
async function visitPage(demo: Demo, product: string): Promise<void> {
  try {
    const [, url] = await waitForOutput(demo, /The page: (http:\/\/127\.0\.0\.1:\d+\/)/);
    const base = url as string;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    // The tour drives the bot alone until its card: it has four checks ahead of it, which the bot's
    // queue paces one a second (the in-process key's 60 a minute), so it is still running now.
    const early = await post('check', { text: 'Too early.' });
    expect(early.status).toBe(400);
    expect(await early.json()).toEqual({ error: 'The tour is still running: wait for the review card, then try again.' });
    await waitForOutput(demo, /Open http:\/\/127\.0\.0\.1:\d+\/ to check your own texts/);
    const page = await fetch(base);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<title>textdetect demo: ${product}</title>`);
    // Nothing on the page is loaded from elsewhere.
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);

    const entries = async (): Promise<string> => ((await (await fetch(`${base}entries`)).json()) as { html: string }).html;
    const tour = await entries();
    for (const title of Object.values(STEP_TITLES).filter((t) => t !== STEP_TITLES.setup)) expect(tour).toContain(title);
    const confirm = tour.match(/data-entry="(\d+)" data-button="([^"]+)">Confirm</);
    expect(confirm, tour).not.toBeNull();
    const press = { entry: Number(confirm?.[1]), button: confirm?.[2] };

    // Another site open in the same browser can neither drive the demo nor, through a name pointed at 127.0.0.1, read it.
    const foreign = await post('press', press, { origin: 'https://example.com' });
    expect(foreign.status).toBe(403);
    const rebound = await new Promise<number | undefined>((resolve, reject) =>
      httpGet(`${base}entries`, { headers: { host: 'rebound.example.com' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject),
    );
    expect(rebound).toBe(421);
    const empty = await post('check', { text: '   ' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: 'Type or paste a text to check.' });

    const pressed = await post('press', press, { origin: base.replace(/\/$/, '') });
    expect(pressed.status, await pressed.clone().text()).toBe(200);
    expect(await entries()).toMatch(/✅ Confirmed(<\/strong>)? by you \(/);

    const own =
      'The river was high that spring, and the ferry ran only in the mornings. We waited on the bank with our bags, watching the brown water carry branches past, and my father told the story of the year the bridge washed out, which he told every time we crossed.';
    const checked = await post('check', { text: own });
    expect(checked.status, await checked.clone().text()).toBe(200);
    const after = await entries();
    expect(after).toContain('Your turn');
    expect(after).toContain('text: your text');
    // The terminal follows what the visitor did.
    await waitForOutput(demo, /pressed “Confirm”[\s\S]*✅ Confirmed by you[\s\S]*\/detect (text: )?“?The river was high/);
  } finally {
    // Ctrl-C: SIGINT to npm and the demo together.
    if (demo.child.pid !== undefined) process.kill(-demo.child.pid, 'SIGINT');
  }
  const { code, signal } = await demo.exited;
  // npm itself ends on the signal, as in a terminal; the demo under it finished its own stop first.
  expect(code === 0 || signal === 'SIGINT', demo.output()).toBe(true);
  expect(demo.output()).toContain('Stopped; the demo’s temporary files are deleted.');
  await expectNothingLeft(demo);
}

describe('npm run demo', () => {
  it('is the documented script, running the compiled demo', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.demo).toBe('node dist/demo/main.js');
  });

  it('--once prints the checks, a member check, a document check and a review card, with no outside connection, and leaves nothing behind', async () => {
    const demo = await startDemo('once', ['--once']);
    const { code } = await demo.exited;
    expect(code, demo.output()).toBe(0);
    expectTour(demo.output(), 'discord');
    expect(demo.output()).toContain('Stopped; the demo’s temporary files are deleted.');
    await expectNothingLeft(demo);
  });

  it('serves the tour on a loopback page where the card’s buttons and /detect work, and stops cleanly on Ctrl-C', async () => {
    await visitPage(await startDemo('page', ['--port', '0']), 'the Discord bot');
  });

  it('says what is wrong with its command line, and names --port when the port is taken', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [join(ROOT, 'dist', 'demo', 'main.js'), ...args], { timeout: WAIT_MS }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run demo \[-- --discord \| --slack\] \[--once\] \[--port N\]/);
    const unknown = await run(['--teams']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--teams'");
    expect((await run(['--slack', '--discord'])).stderr).toContain('Choose one: --discord or --slack.');
    expect((await run(['--port', 'eighty'])).stderr).toBe('--port must be a port number (0–65535), not "eighty".\n');

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const busy = await run(['--port', String(port)]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(
        `textdetect demo: Port ${port} is already in use on 127.0.0.1: run \`npm run demo -- --port <another>\`, or leave --port out for any free port.`,
      );
    } finally {
      taken.close();
    }
  });

  it('-- --slack: the same tour with the Slack app, the same page, the same clean stop', async () => {
    const demo = await startDemo('slack', ['--slack']);
    await visitPage(demo, 'the Slack app');
    expectTour(demo.output(), 'slack');
  });
});
