/**
 * The real Watcher as the chat watch tests run it: a platform that has no messages to read and no
 * review channel, the default settings, no log output and no config cache, unless a test says otherwise.
 */
import pino from 'pino';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import { type WatchPlatform, Watcher, type WatcherOptions } from '../../adapters/chat/watch/watcher.ts';
import type { DetectAuthorResponse } from '../../src/contract.ts';

export function testWatcher(
  options: Pick<WatcherOptions, 'store' | 'detector'> & Partial<Omit<WatcherOptions, 'platform'>> & { platform?: Partial<WatchPlatform> },
): Watcher {
  const { platform, ...rest } = options;
  return new Watcher({
    settings: DEFAULT_WATCH_SETTINGS,
    logger: pino({ level: 'silent' }),
    configTtlMs: 0,
    ...rest,
    platform: {
      fetchMessage: async () => undefined,
      reviewChannel: async () => undefined,
      postCard: () => Promise.reject(new Error('not used')),
      mode: async () => 'general',
      ...platform,
    },
  });
}

/**
 * A detector for author-level judgments that tells each call's messages to `seen` and answers
 * "likely human" (10%) for every message, so a test can follow which windows were judged.
 */
export function humanAuthorDetector(seen: (messages: string[]) => void): WatchDetector {
  let calls = 0;
  return {
    detect: () => Promise.reject(new Error('not used: judge is author')),
    async detectAuthor(request) {
      seen(request.messages);
      calls += 1;
      return {
        ai_probability: 0.1,
        verdict: 'likely_human',
        confidence: 'low',
        warnings: [],
        mode: 'general',
        request_id: `req_${calls}`,
        model: 'test',
        messages_used: request.messages.length,
        words_used: 0,
        messages: request.messages.map((_, index) => ({ index, ai_probability: 0.1, skipped: null })),
      } as unknown as DetectAuthorResponse;
    },
    roomForBackground: async () => true,
  };
}
