/**
 * `npm run slack`: the Slack app. Reads its settings from the environment (docs/slack.md), connects
 * to the detection service (or starts one in-process when DETECT_API_URL is unset) and serves Slack.
 */
import '../../src/node-version.ts';
import pino from 'pino';
import { BackendConfigError, botUserAgent, connectDetectionBackend, type DetectionBackend } from '../chat/backend.ts';
import { installProcessGuards } from '../chat/process-guard.ts';
import { readWatchSettings, WatchConfigError, type WatchSettings } from '../chat/watch/config.ts';
import { watchDetectorFor } from '../chat/watch/detector.ts';
import { startSlackApp } from './app.ts';
import { InstallationKeyError } from './installation-store.ts';
import { loadSlackConfig, SlackConfigError, SlackTokenRefusedError } from './config.ts';

async function main(): Promise<number> {
  let config;
  let watchSettings: WatchSettings;
  try {
    config = loadSlackConfig();
    watchSettings = readWatchSettings();
  } catch (err) {
    if (err instanceof SlackConfigError || err instanceof WatchConfigError) {
      process.stderr.write(`textdetect-slack: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const logger = pino({ name: 'textdetect-slack', level: config.logLevel });
  // A listener error Bolt does not catch must not end every check in flight (docs/slack.md).
  installProcessGuards(logger);
  let backend: DetectionBackend;
  try {
    backend = await connectDetectionBackend(process.env, { logger, userAgent: botUserAgent('slack') });
  } catch (err) {
    // A DETECT_* setting is a setting like the app's own (exit 2); an in-process service that cannot start is exit 5.
    process.stderr.write(`textdetect-slack: ${(err as Error)?.message ?? String(err)}\n`);
    return err instanceof BackendConfigError ? 2 : 5;
  }
  let running;
  try {
    running = await startSlackApp(config, {
      detector: backend.detector,
      logger,
      watch: { detector: watchDetectorFor(backend), settings: watchSettings },
    });
  } catch (err) {
    // Exit codes as the Discord bot's and the CLI's: 2 a bad setting, 3 credentials refused, 5 unreachable or failing.
    const message = (err as Error)?.message ?? String(err);
    logger.error({ err: message }, 'the Slack app could not start');
    process.stderr.write(`textdetect-slack: ${message}\n`);
    await backend.close();
    return err instanceof SlackConfigError || err instanceof InstallationKeyError ? 2 : err instanceof SlackTokenRefusedError ? 3 : 5;
  }
  logger.info(
    { detect_api: backend.embedded ? 'in-process' : backend.apiUrl, events_url: running.eventsUrl },
    'textdetect Slack app ready',
  );

  const app = running;
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string): void => {
      logger.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  });
  await app.stop().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'error while stopping the Slack app'));
  await backend.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`textdetect-slack: ${(err as Error)?.message ?? String(err)}\n`);
    process.exit(1);
  },
);
