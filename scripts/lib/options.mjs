/**
 * The command line of every script with options (`npm run bench…`, `train…`, `eval…`, build and
 * package), read the same way before any work starts: `--help` (or `-h`) prints the script's usage,
 * which is its own header comment, and exits 0; an option the script does not know (for parseArgs
 * scripts also one without its value) is told in one line and exits 2, never with a stack trace and
 * never after minutes of work. Plain JavaScript, so build.mjs and pack.mjs use it before anything
 * is compiled.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The arguments after the script; `npx tsx script.ts -- --flag` passes the separator on. */
function scriptArgv() {
  const args = process.argv.slice(2);
  return args[0] === '--' ? args.slice(1) : args;
}

/** The script's header comment (its first `/** … *\/` block), as plain text. */
function usageOf(source) {
  const block = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

function answerHelp(source) {
  process.stdout.write(`${usageOf(source)}\n`);
  process.exit(0);
}

function refuse(scriptUrl, problem) {
  process.stderr.write(`${basename(fileURLToPath(scriptUrl))}: ${problem}; --help lists the options.\n`);
  process.exit(2);
}

/**
 * For a script that reads its options with node:util's parseArgs: the same call, answering
 * `--help` and refusing what it does not know as above. Returns parseArgs' values.
 * @param {string} scriptUrl the script's `import.meta.url`
 * @param {import('node:util').ParseArgsConfig} config parseArgs' config, without `args`
 */
export function scriptArgs(scriptUrl, config) {
  const args = scriptArgv();
  if (args.includes('--help') || args.includes('-h')) answerHelp(readFileSync(fileURLToPath(scriptUrl), 'utf8'));
  try {
    return parseArgs({ ...config, args }).values;
  } catch (err) {
    return refuse(
      scriptUrl,
      String(err instanceof Error ? err.message : err)
        .split('\n')[0]
        ?.replace(/\.$/, ''),
    );
  }
}

/**
 * For a script that reads `process.argv` itself (`arg('--model')`, `process.argv.includes('--json')`):
 * answers `--help`, and refuses an option its source never names. The options it knows are the
 * `'--name'` strings of its source, so an option added where it is read is known at once, with no
 * list beside it to forget.
 * @param {string} scriptUrl the script's `import.meta.url`
 */
export function checkScriptArgs(scriptUrl) {
  const source = readFileSync(fileURLToPath(scriptUrl), 'utf8');
  const args = scriptArgv();
  if (args.includes('--help') || args.includes('-h')) answerHelp(source);
  const known = new Set(Array.from(source.matchAll(/['"`](--[a-z0-9][a-z0-9-]*)['"`]/g), (m) => m[1]));
  for (const token of args) {
    if (!token.startsWith('--')) continue;
    const [name, value] = token.split(/=(.*)/s);
    if (!known.has(name)) refuse(scriptUrl, `Unknown option '${name}'`);
    // These scripts read a value as the next argument: `--model=x` would be silently ignored.
    if (value !== undefined) refuse(scriptUrl, `write "${name} ${value}", with a space, not "${token}"`);
  }
}

/**
 * The value given after `name` (`--model PATH`), for a script that reads `process.argv` itself;
 * undefined when the option is not there.
 * @param {string} name
 * @returns {string | undefined}
 */
export function optionValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
