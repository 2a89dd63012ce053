/**
 * The last line of defence of both bots: an exception nothing caught, or a promise rejection nobody
 * handled, is logged and the bot keeps serving. Node's default (exit) would drop every check in
 * flight for one bad request; every known source of such errors (a payload the platform library
 * cannot read, a listener that throws) is caught closer to where it happens, and this only keeps a
 * forgotten one from taking the bot down. Logged: the error's name, message and code, plus what the
 * bot says it was doing (e.g. the interaction id); never a token or a submitted text.
 */
import type { Logger } from 'pino';

function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return {
      name: err.name,
      message: err.message.slice(0, 300),
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    };
  }
  return { name: typeof err, message: String(err).slice(0, 300) };
}

/** Installs the handlers; returns a function that removes them (for a clean shutdown and tests). */
export function installProcessGuards(logger: Logger, context: () => Record<string, unknown> = () => ({})): () => void {
  const onException = (err: unknown, origin: string): void => {
    logger.error({ ...context(), origin, err: errorFields(err) }, 'uncaught exception; logged and kept running');
  };
  const onRejection = (reason: unknown): void => {
    logger.error({ ...context(), err: errorFields(reason) }, 'unhandled promise rejection; logged and kept running');
  };
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
