import type { ParseArgsConfig } from 'node:util';
import type { parseArgs } from 'node:util';

/** node:util's parseArgs, answering `--help` with the script's header comment and refusing unknown options in one line (exit 2). */
export function scriptArgs<T extends Omit<ParseArgsConfig, 'args'>>(
  scriptUrl: string,
  config: T,
): ReturnType<typeof parseArgs<T>>['values'];

/** For a script that reads `process.argv` itself: `--help`, and a one-line refusal (exit 2) of an option its source never names. */
export function checkScriptArgs(scriptUrl: string): void;

/** The value given after `name` (`--model PATH`) on the command line, or undefined. */
export function optionValue(name: string): string | undefined;
