/**
 * `textdetect` entry point. `--help` lists every subcommand, `--version` prints the package version.
 * Each subcommand lives in its own module and is loaded only when used,
 * so `textdetect keys list` does not load the detection model and `textdetect "text"` does not
 * load the service.
 *
 * Every subcommand module exports `run(argv): Promise<number>` returning the process exit code:
 * 0 ok, 2 bad input, 3 authentication/permission, 4 rate limited, 5 server or network.
 */

export type SubcommandRunner = (argv: string[]) => Promise<number>;

const SUBCOMMANDS: Record<string, () => Promise<{ run: SubcommandRunner }>> = {
  detect: () => import('./detect.ts'),
  eval: () => import('./eval.ts'),
  score: () => import('./score.ts'),
  keys: () => import('./keys.ts'),
};

const HELP = `Usage: textdetect [detect] [options] "text to check"
       textdetect <command> [options]

Tells how likely a text was written by an AI system.

Commands:
  detect    score one text (argument or standard input), or a document with --file, through the
            API; the default command
  score     score a JSONL file, through the API or in-process with --local; a line with
            "messages": ["…", "…"] instead of "text" judges several messages as one author
  eval      measure the engine on a labelled JSONL file (AUROC, TPR@1%FPR, calibration), in-process
  keys      create, list and revoke API keys in the service's key file
  help      show this help

Options:
  -h, --help       show this help; \`textdetect <command> --help\` shows a command's options
  -v, --version    print the version

Examples:
  textdetect "Some text to check"
  textdetect --segments --mode academic < essay.txt
  echo '{"messages": ["first message", "second message"]}' | textdetect score --local   # one author

Exit codes: 0 ok, 2 bad input, 3 authentication/permission, 4 rate limited, 5 server or network.
Environment: TEXTDETECT_API_URL, TEXTDETECT_API_KEY (see README.md).`;

const args = process.argv.slice(2);
const [first, ...rest] = args;

if (first === '--version' || first === '-v') {
  const { packageVersion } = await import('../version.ts');
  process.stdout.write(`textdetect ${packageVersion()}\n`);
} else if (first === '--help' || first === '-h' || first === 'help') {
  process.stdout.write(`${HELP}\n`);
} else {
  const load = first === undefined ? undefined : SUBCOMMANDS[first];
  const { run } = load ? await load() : await import('./detect.ts');
  process.exitCode = await run(load ? rest : args);
}
