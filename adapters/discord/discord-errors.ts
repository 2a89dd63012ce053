/**
 * What is safe to log about a failed Discord call. discord.js's errors carry the request URL, and
 * interaction and webhook URLs contain the interaction token (a credential for 15 minutes), so the
 * URL is never logged; the code, status and method are enough to diagnose.
 */
import { DiscordAPIError, HTTPError } from 'discord.js';

export interface LoggableDiscordError {
  name: string;
  message: string;
  /** Discord's JSON error code, e.g. 10062 Unknown interaction, 50001 Missing Access. */
  code?: number | string;
  status?: number;
  method?: string;
}

export function describeDiscordError(err: unknown): LoggableDiscordError {
  if (err instanceof DiscordAPIError) {
    return { name: err.name, message: err.message, code: err.code, status: err.status, method: err.method };
  }
  if (err instanceof HTTPError) {
    return { name: err.name, message: `HTTP ${err.status}`, status: err.status, method: err.method };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
  }
  return { name: 'unknown', message: String(err) };
}

/** Discord's code for an interaction that was not acknowledged within 3 seconds (or twice). */
export const UNKNOWN_INTERACTION = 10062;

/**
 * Discord's API gave no answer (refused, unknown host, timed out): `npm run discord` and
 * `npm run discord:register` exit 5 with this sentence, which names the setting that points elsewhere.
 */
export class DiscordUnreachableError extends Error {
  override name = 'DiscordUnreachableError';
  constructor(apiUrl: string, cause: unknown) {
    const code = (cause as { code?: unknown })?.code;
    const why = typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
    super(`Could not reach Discord's API at ${apiUrl} (${why}); check the network, a proxy or firewall, or DISCORD_API_URL.`, {
      cause,
    });
  }
}
