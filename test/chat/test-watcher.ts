/**
 * The real Watcher as the chat watch tests run it: a platform that has no messages to read and no
 * review channel, the default settings, no log output and no config cache, unless a test says otherwise.
 */
import pino from 'pino';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import { type WatchPlatform, Watcher, type WatcherOptions } from '../../adapters/chat/watch/watcher.ts';

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
