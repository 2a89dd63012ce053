/**
 * Makes bottleneck 2.19.5's Redis datastore recover on Redis 7.
 *
 * bottleneck's Lua scripts signal "my keys are gone" (after FLUSHALL, idle expiry or a Redis restart)
 * with `redis.error_reply('SETTINGS_KEY_NOT_FOUND')` / `'UNKNOWN_CLIENT'`, and its datastore compares
 * the error message exactly to re-create the keys and retry. Redis 7 prefixes such script errors with
 * "ERR ", so the comparison never matches and every call fails until the process restarts.
 *
 * The fix lives here, in the project's own code, rather than as a patch of node_modules: a patch
 * applied by an install script does not run when another project installs this package. It wraps the
 * reply callback that our own connection hands to its script commands and strips the prefix from
 * bottleneck's own script errors only, leaving every other error as Redis sent it.
 */
import type Bottleneck from 'bottleneck';

/** Messages raised by bottleneck's scripts that its datastore matches on (exactly, or as a prefix). */
const SCRIPT_ERRORS = /^ERR ((?:SETTINGS_KEY_NOT_FOUND|UNKNOWN_CLIENT)$|OVERWEIGHT:)/;

type ReplyCallback = (err: unknown, replies: unknown) => void;

/** The internal hook of bottleneck's connections that builds a script call's arguments and callback. */
interface ScriptArgsHook {
  __scriptArgs__(name: string, id: string, args: unknown[], cb: ReplyCallback): unknown[];
}

/** Strips Redis 7's "ERR " prefix from bottleneck's own script errors; idempotent. */
export function stripScriptErrorPrefix(err: unknown): unknown {
  if (err instanceof Error && SCRIPT_ERRORS.test(err.message)) err.message = err.message.slice(4);
  return err;
}

/** Applies the fix to one connection (not to bottleneck globally, so other users of it are untouched). */
export function recoverFromRedis7ScriptErrors(connection: Bottleneck.IORedisConnection): void {
  const hook = connection as unknown as Partial<ScriptArgsHook>;
  const original = hook.__scriptArgs__;
  if (typeof original !== 'function') {
    // A bottleneck that no longer has this hook has changed its Redis path; fail loudly rather than
    // silently losing the recovery after FLUSHALL or a Redis restart.
    throw new Error(
      'bottleneck has no IORedisConnection.__scriptArgs__: update src/client/bottleneck-redis7.ts for this bottleneck version.',
    );
  }
  hook.__scriptArgs__ = function (this: unknown, name, id, args, cb) {
    return original.call(this, name, id, args, (err, replies) => cb(err == null ? err : stripScriptErrorPrefix(err), replies));
  };
}
