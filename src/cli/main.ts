/**
 * `textdetect` entry point. Each subcommand lives in its own module and is loaded only when used,
 * so `textdetect keys list` does not load the detection model and `textdetect "text"` does not
 * load the service.
 *
 * Every subcommand module exports `run(argv): Promise<number>` returning the process exit code:
 * 0 ok, 2 bad input, 3 authentication/permission, 4 rate limited, 5 server or network.
 */

export type SubcommandRunner = (argv: string[]) => Promise<number>;

const SUBCOMMANDS: Record<string, () => Promise<{ run: SubcommandRunner }>> = {
  eval: () => import('./eval.ts'),
  score: () => import('./score.ts'),
  keys: () => import('./keys.ts'),
};

const args = process.argv.slice(2);
const [first, ...rest] = args;
const load = first === undefined ? undefined : SUBCOMMANDS[first];
const { run } = load ? await load() : await import('./detect.ts');
const code = await run(load ? rest : args);
process.exitCode = code;
