/**
 * The parts every Slack test runs against: the real detection service (own sandbox key in a temp
 * key file), a counting/slowing proxy in front of it, the fake Slack on loopback, and the real Bolt
 * app on a loopback port, connected through connectDetectionBackend like `npm run slack` is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import type { SlackWatchOptions } from '../../adapters/slack/watch/runtime.ts';
import { loadSlackConfig, type SlackAppConfig } from '../../adapters/slack/config.ts';
import { createApiKey, type RunningService, type ServiceConfig, startService } from '../../src/service/index.ts';
import { FakeSlack, type FakeSlackOptions } from '../../demo/slack/fake-slack.ts';
import { postSigned, type SlackPost } from '../../demo/slack/payloads.ts';
import { DetectProxy } from './proxy.ts';

// The payloads Slack sends live with the stand-in (demo/slack/), shared with `npm run demo`.
export {
  buttonPayload,
  interactionBody,
  messageShortcutPayload,
  type SlackPost,
  slashCommandBody,
  slashCommandFields,
} from '../../demo/slack/payloads.ts';

export const BOT_TOKEN = 'xoxb-0000-test-token';
export const SIGNING_SECRET = 'test-signing-secret-0123456789abcdef';

export interface Harness {
  service: RunningService;
  /** The service's sandbox key the app calls with, for other clients of the same service (the CLI, the Discord bot). */
  key: string;
  proxy: DetectProxy;
  slack: FakeSlack;
  backend: DetectionBackend;
  app: RunningSlackApp;
  /** The app's configuration, to start another instance of it (restart, second replica). */
  config: SlackAppConfig;
  eventsUrl: string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  rateLimitMax?: number;
  /** The app's logger (silent by default), for tests that check what gets logged. */
  appLogger?: pino.Logger;
  /** Length of the service's rate-limit window (default the service's own). */
  rateLimitWindow?: string;
  /** Extra fake-Slack options (admins, user groups); merged over the defaults. */
  slack?: Partial<FakeSlackOptions>;
  /** Extra backend variables (DETECT_QUEUE_*), merged over the harness's. */
  backendEnv?: Record<string, string>;
  /** Runs the app with watching (adapters/slack/watch/), built on the harness's backend. */
  watch?: (backend: DetectionBackend) => SlackWatchOptions;
  /** Service settings over the harness's (e.g. `fileTimeoutMs`). */
  service?: Partial<ServiceConfig>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-slack-test-'));
  const apiKeysFile = join(dir, 'keys.json');
  const { key } = await createApiKey(apiKeysFile, { name: 'slack-test', environment: 'sandbox' });
  const logger = pino({ level: 'silent' });
  const service = await startService({
    host: '127.0.0.1',
    port: 0,
    environment: 'sandbox',
    apiKeysFile,
    rateLimitMax: options.rateLimitMax ?? 1000,
    ...(options.rateLimitWindow ? { rateLimitWindow: options.rateLimitWindow } : {}),
    logger,
    ...options.service,
  });
  const proxy = new DetectProxy(service.url);
  await proxy.start();
  const slack = new FakeSlack({
    botToken: BOT_TOKEN,
    channelsWithoutBot: ['CNOBOT'],
    users: { U0AUTHOR: 'Ada Lovelace', U0MOD: 'Grace' },
    channels: { C0GENERAL: 'general' },
    ...options.slack,
  });
  await slack.start();
  const backend = await connectDetectionBackend(
    { DETECT_API_URL: proxy.url, DETECT_API_KEY: key, DETECT_TIMEOUT_MS: '15000', DETECT_MAX_RETRIES: '0', ...options.backendEnv },
    { logger },
  );
  const config: SlackAppConfig = {
    ...loadSlackConfig({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_PORT: '0',
      SLACK_HOST: '127.0.0.1',
      SLACK_API_URL: slack.apiUrl,
      SLACK_AUDIT_CHANNEL: 'C0AUDIT',
      // State in this harness's own folder (SQLite), unless REDIS_URL makes it Redis.
      DATA_DIR: join(dir, 'data'),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...options.env,
    }),
    // The fake's file host instead of files.slack.com: given here, never through the environment.
    fileOrigins: [slack.filesOrigin],
  };
  const app = await startSlackApp(config, {
    detector: backend.detector,
    logger: options.appLogger ?? logger,
    ...(options.watch ? { watch: options.watch(backend) } : {}),
  });
  return {
    service,
    key,
    proxy,
    slack,
    backend,
    app,
    config,
    eventsUrl: app.eventsUrl!,
    async close() {
      await app.stop();
      await backend.close();
      await proxy.stop();
      await slack.stop();
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * POSTs a form body to the app as Slack does: signed with the harness's secret (unless `sign: false`),
 * optionally as a retry. Takes only the events URL, so tests that run the app as a separate process use it too.
 */
export function postToApp(
  h: Pick<Harness, 'eventsUrl'>,
  body: string,
  opts: { sign?: boolean; timestampSec?: number; retryNum?: number; secret?: string } = {},
): Promise<SlackPost> {
  return postSigned(h.eventsUrl, body, { ...opts, secret: opts.secret ?? SIGNING_SECRET });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Several sentences of formal prose (well over 40 words), so the reply carries highlights. */
export const LONG_TEXT = [
  'The committee reviewed the proposal in detail over the course of the spring term.',
  'It is important to note that the findings suggest a significant improvement in overall outcomes for participants.',
  'Furthermore, the results demonstrate a clear and consistent trend across every cohort that was examined.',
  'My cousin said the cafeteria still serves that awful soup on Tuesdays, which honestly made me laugh.',
  'In conclusion, these insights underscore the importance of continued investment in evidence-based programmes.',
].join(' ');
