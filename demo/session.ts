/**
 * What main.ts and the page need of a platform's demo (demo/discord/session.ts, demo/slack/session.ts):
 * the scripted tour, and the two things a visitor of the page can do afterwards.
 */
import type { Logger } from 'pino';
import { queuedNotice } from '../adapters/chat/format.ts';
import type { WatchDetector } from '../adapters/chat/watch/detector.ts';
import type { Names } from './markup.ts';
import type { Transcript } from './transcript.ts';

export interface SessionOptions {
  /** The bot's data folder (SQLite files), a temporary one the demo deletes at exit. */
  dataDir: string;
  transcript: Transcript;
  logger: Logger;
}

export interface TourResult {
  /** When the review card was posted, in milliseconds since the demo process started. */
  cardAtMs: number;
}

/** A sentence for the visitor when the page asks for something that cannot be done. */
export class DemoInputError extends Error {
  override name = 'DemoInputError';
}

export interface DemoSession {
  /** `Discord` or `Slack`. */
  readonly platform: string;
  /** What runs against it: `the Discord bot`, `the Slack app`. */
  readonly product: string;
  /** The server's or workspace's name, its channels' names: how the page and the terminal name mentions. */
  readonly names: Names;
  /** The four steps, one after another, each waiting for the bot's answers before the next. */
  tour(): Promise<TourResult>;
  /** `/detect` on the visitor's own text, as the moderator; resolves once the bot has answered. */
  checkText(text: string): Promise<void>;
  /** A press on a button of an entry the bot posted, as the moderator; resolves once the bot has answered. */
  press(entryId: number, buttonId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The watcher's detector, counting the judgments it has finished: the tour posts a watched message,
 * waits for its judgment, and posts the next only while no card has come.
 */
export function countJudgments(detector: WatchDetector): { detector: WatchDetector; judged: () => number } {
  let judged = 0;
  const counted = <T>(answer: Promise<T>): Promise<T> =>
    answer.finally(() => {
      judged += 1;
    });
  return {
    judged: () => judged,
    detector: {
      detect: (request, options) => counted(detector.detect(request, options)),
      detectAuthor: (request, options) => counted(detector.detectAuthor(request, options)),
      roomForBackground: () => detector.roomForBackground(),
    },
  };
}

/** Polls `condition` until it holds; past `timeoutMs`, fails naming what it waited for. */
export async function until(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Waited ${Math.round(timeoutMs / 1000)} s for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A text as an action line shows it: its start in quotes, and how many words it has. */
export function quoteText(text: string, max = 90): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const words = flat.split(' ').filter(Boolean).length;
  return `“${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}” (${words} words)`;
}

const QUEUED = queuedNotice(1).slice(0, queuedNotice(1).indexOf('('));

/** The bots' notice while a check waits in their queue (adapters/chat/format.ts): not the answer yet. */
export function isQueuedNotice(text: unknown): boolean {
  return typeof text === 'string' && text.startsWith(QUEUED);
}
