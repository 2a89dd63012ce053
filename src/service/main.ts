/**
 * `npm start`: the service configured from environment variables (see .env.example).
 * With no key file yet, creates one sandbox key and prints it once, so a new user can call the API
 * right away.
 */
import '../node-version.ts';
import { access } from 'node:fs/promises';
import { EXAMPLE_TEXT } from '../words.ts';
import { ConfigError, defaultApiKeysFile, loadConfigFromEnv } from './config.ts';
import { createLogger, startService } from './index.ts';
import { portInUseSentence } from './listen-url.ts';
import { createApiKey, listApiKeys } from './keys.ts';
import type { KeyEnvironment } from './keys.ts';

async function main(): Promise<number> {
  let config;
  try {
    config = loadConfigFromEnv(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`textdetect: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  config.logger = logger;

  const exists = await access(config.apiKeysFile).then(
    () => true,
    () => false,
  );
  if (!exists && config.environment === 'sandbox') {
    const { id, key } = await createApiKey(config.apiKeysFile, {
      name: 'first sandbox key (created by npm start)',
      environment: 'sandbox',
    });
    // Printed to stderr, outside the JSON logs, and never logged: this is the only copy of the key.
    process.stderr.write(
      `\nNo API key file existed, so one was created at ${config.apiKeysFile}\n` +
        `with a sandbox key (id ${id}). It is shown only this once:\n\n    ${key}\n\n` +
        `Try:  curl -s http://${config.host}:${config.port}/v1/detect -H 'Authorization: Bearer ${key}' \\\n` +
        `        -H 'Content-Type: application/json' -d '${JSON.stringify({ text: EXAMPLE_TEXT, segments: true })}'\n\n`,
    );
  } else if (!exists) {
    logger.warn(
      { keys_file: config.apiKeysFile },
      'no API key file: every request will be refused; create keys with `npx textdetect keys create --env production`',
    );
    process.stderr.write(
      `\nNo API key file at ${config.apiKeysFile}: every request is refused until you make a key:\n\n` +
        `    ${createKeyCommand(config.environment, config.apiKeysFile)}\n\n`,
    );
  } else {
    // Later starts: the JSON logs alone do not tell a person where the keys are or how to get one.
    const active = await listApiKeys(config.apiKeysFile).then(
      (keys) => keys.filter((k) => k.status === 'active' && k.environment === config.environment).length,
      () => undefined,
    );
    const count = active === undefined ? '' : ` (${active} active ${config.environment} key${active === 1 ? '' : 's'})`;
    process.stderr.write(
      `\nAPI keys are read from ${config.apiKeysFile}${count}. Make a key with:\n\n` +
        `    ${createKeyCommand(config.environment, config.apiKeysFile)}\n\n`,
    );
  }

  let service;
  try {
    service = await startService(config);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    // Most often a second `npm start`: name the setting that avoids it, not only the socket error.
    // The metrics port, when it has one of its own, is opened with the API and can be the one taken.
    const metricsPort = (err as { port?: unknown }).port === config.metricsPort ? config.metricsPort : undefined;
    const sentence =
      metricsPort === undefined
        ? portInUseSentence('textdetect service', config.host, config.port, 'PORT', 'npm start')
        : portInUseSentence('textdetect service', config.host, metricsPort, 'METRICS_PORT', 'npm start');
    process.stderr.write(`textdetect: ${sentence}\n`);
    return 1;
  }
  // The JSON logs carry the URL too, but a person starting the service wants the page's address
  // in words, at the end of what was printed, where it is seen.
  process.stderr.write(startedBanner(service.url, config.playground));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: { message: err.message } }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return 0;
}

/** What a person needs once the service listens: where the web page and the API are. */
function startedBanner(url: string, playground: boolean): string {
  const page = playground ? `Web page: ${url}/  (open it in a browser and paste the API key)` : 'Web page: off (PLAYGROUND=0)';
  return `textdetect is listening on ${url}\n  ${page}\n  API:      POST ${url}/v1/detect  (OpenAPI: ${url}/v1/openapi.json)\n  Stop it with Ctrl-C.\n\n`;
}

/** The `keys create` line for this server's environment and key file (`--file` only when not the default). */
function createKeyCommand(environment: KeyEnvironment, file: string): string {
  const env = environment === 'production' ? ' --env production' : '';
  const fileFlag = file === defaultApiKeysFile() ? '' : ` --file ${/^[\w./-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`}`;
  return `npx textdetect keys create --name NAME${env}${fileFlag}`;
}

main().then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: Error) => {
    process.stderr.write(`textdetect: failed to start: ${err.message}\n`);
    process.exit(1);
  },
);
