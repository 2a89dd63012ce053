/**
 * `npm run demo`: the detection service and one bot, run as in production, against a stand-in of the
 * platform on this machine, taken through a scripted tour (the checks, a member check, a document
 * check, a review card) that the terminal prints and a page on loopback shows; then the page stays
 * up for the visitor's own texts and presses until Ctrl-C. No token, Redis or PostgreSQL: the bot's
 * SQLite files go to a temporary folder that is deleted at exit. docs/discord.md, "Try it without a
 * server" (and docs/slack.md) describe it.
 *
 *   npm run demo                    the Discord bot (the default)
 *   npm run demo -- --slack         the Slack app
 *   npm run demo -- --once          the tour, printed, then exit (what the test runs)
 *   npm run demo -- --port 8095     the page on this port (default: any free one)
 */
import '../src/node-version.ts';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { installLoopbackGuard } from './loopback-guard.ts';
import type { Names } from './markup.ts';
import { startPage } from './page.ts';
import { entryLines } from './render.ts';
import { DemoInputError, type DemoSession, type SessionOptions } from './session.ts';
import { STEP_TITLES, Transcript } from './transcript.ts';

// Before the bot and its libraries are loaded (startSession imports them): the demo stays on this machine.
const guard = installLoopbackGuard();

const USAGE = `Usage: npm run demo [-- --discord | --slack] [--once] [--port N]

Runs the detection service and one bot against a stand-in of the platform on this machine, shows a
/detect check, a member check, a document check and a review card, in the terminal and on a page at
http://127.0.0.1:<port>/. Needs no token, Redis or database; nothing leaves this machine.

  --discord   the Discord bot (the default)
  --slack     the Slack app
  --once      print the tour and exit, without keeping the page up
  --port N    serve the page on port N (default: any free port)
`;

function parse(): { platform: 'discord' | 'slack'; once: boolean; port: number } | string {
  let values: { discord?: boolean; slack?: boolean; once?: boolean; port?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        discord: { type: 'boolean' },
        slack: { type: 'boolean' },
        once: { type: 'boolean' },
        port: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    return `${(err as Error).message}\n\n${USAGE}`;
  }
  if (values.help) return USAGE;
  if (values.discord && values.slack) return `Choose one: --discord or --slack.\n\n${USAGE}`;
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return `--port must be a port number (0–65535), not "${values.port}".\n`;
  return { platform: values.slack ? 'slack' : 'discord', once: values.once ?? false, port };
}

const say = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const args = parse();
  if (typeof args === 'string') {
    const help = args === USAGE;
    (help ? process.stdout : process.stderr).write(args);
    return help ? 0 : 2;
  }
  const platform = args.platform === 'slack' ? 'Slack' : 'Discord';
  const product = args.platform === 'slack' ? 'the Slack app' : 'the Discord bot';
  // Quiet unless something goes wrong: the terminal is for the transcript.
  const logger = pino({ level: process.env.LOG_LEVEL?.trim() || 'error' }, pino.destination(2));
  const dataDir = await mkdtemp(join(tmpdir(), 'textdetect-demo-'));
  // Whatever happens, the bot's files go with the process.
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));

  guard.listeners.add((attempt) => {
    process.stderr.write(
      `textdetect demo: refused an outside connection (${attempt.what} ${attempt.target}); the demo stays on this machine.\n`,
    );
  });

  const transcript = new Transcript();
  let names: Names = () => undefined;
  const printStep = (step: keyof typeof STEP_TITLES): void => {
    say();
    say(`── ${STEP_TITLES[step]} ${'─'.repeat(Math.max(3, 76 - STEP_TITLES[step].length))}`);
    for (const entry of transcript.entries()) {
      if (entry.step === step && !entry.removed) for (const line of entryLines(entry, names)) say(line);
    }
  };
  transcript.onStepEnd((ended) => {
    if (ended !== 'yours') printStep(ended);
  });
  // After the tour: what the visitor does on the page (and what the bot edits, such as a pressed card), as it settles.
  transcript.onChange((entry) => {
    if (transcript.step === 'yours' && !entry.pending && !entry.removed) for (const line of entryLines(entry, names)) say(line);
  });

  say(`textdetect demo: ${product}, against a stand-in of ${platform} on this machine (nothing leaves it).`);
  say(`Starting the detection service and ${product} (its data in a temporary folder, deleted at exit)…`);

  let session: DemoSession | undefined;
  let page: Awaited<ReturnType<typeof startPage>> | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await page?.close().catch((err: unknown) => logger.warn({ err }, 'could not close the page'));
      await session?.close().catch((err: unknown) => logger.warn({ err }, 'could not stop the bot'));
      await rm(dataDir, { recursive: true, force: true });
    })());
  const interrupted = new Promise<string>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        // A second Ctrl-C does not wait for the bot to finish: the folder is removed on exit all the same.
        process.once(signal, () => process.exit(130));
        resolve(signal);
      });
    }
  });

  const run = async (): Promise<number> => {
    // The page first: a port already taken is said before the bot has started.
    if (!args.once) page = await startPage({ platform, product }, transcript, args.port);
    session = await startSession(args.platform, { dataDir, transcript, logger });
    names = session.names;
    page?.attach(session);
    say(`Ready after ${seconds(performance.now())}.`);
    if (page) say(`The page: ${page.url}  (it follows the tour as it runs)`);
    const { cardAtMs } = await session.tour();
    say();
    say(`Review card posted ${seconds(cardAtMs)} after the demo started.`);
    if (guard.attempts.length > 0) {
      say(`Outside connections refused: ${guard.attempts.length} (${guard.attempts.map((a) => `${a.what} ${a.target}`).join(', ')}).`);
      return 1;
    }
    say('Outside connections attempted: none.');
    if (args.once) return 0;
    say();
    say(`Open ${page?.url} to check your own texts and press the card's buttons. Ctrl-C stops the demo.`);
    await interrupted;
    return 0;
  };

  const failed = (err: unknown): number => {
    // A sentence for what the user can change (a port in use); the whole story for anything else.
    if (err instanceof DemoInputError) {
      process.stderr.write(`textdetect demo: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`textdetect demo: ${(err as Error)?.stack ?? String(err)}\n`);
    return 1;
  };
  const tour = run();
  // A Ctrl-C during the tour stops the bot under it: what the tour was waiting for then fails, unheard.
  tour.catch(() => undefined);
  const code = await Promise.race([tour, interrupted.then(() => 0)]).catch(failed);
  say(code === 0 ? 'Stopping…' : 'Stopping after an error…');
  await stop();
  say('Stopped; the demo’s temporary files are deleted.');
  return code;
}

/** The platform's session, imported only now: discord.js or Bolt load after the guard is in place. */
async function startSession(platform: 'discord' | 'slack', options: SessionOptions): Promise<DemoSession> {
  if (platform === 'slack') {
    const { startSlackDemo } = await import('./slack/session.ts');
    return startSlackDemo(options);
  }
  const { startDiscordDemo } = await import('./discord/session.ts');
  return startDiscordDemo(options);
}

process.exit(await main());
