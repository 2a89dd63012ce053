/**
 * The logging surface the client needs. A pino logger fits as is; the default logs nothing.
 * The client never passes an API key or submitted text to it.
 */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;

export const silentLogger: ClientLogger = { debug: noop, info: noop, warn: noop, error: noop };
