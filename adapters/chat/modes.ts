/**
 * Parsing of what a moderator types after the command (`/detect [mode] <text>`) and the help
 * that explains it, shared by both bots so the grammar is the same everywhere.
 */
import { EVIDENCE_FLOOR_WORDS, type Mode } from '../../src/contract.ts';
import { CHAT_MODES } from './format.ts';

export function isMode(value: string): value is Mode {
  return (CHAT_MODES as readonly string[]).includes(value);
}

/**
 * Reads a mode name from configuration (e.g. `SLACK_DEFAULT_MODE`); `fallback` when unset or blank.
 * Throws on an unknown name so a typo in the environment stops the bot at start, not at every check.
 */
export function parseModeSetting(value: string | undefined, variable: string, fallback: Mode = 'general'): Mode {
  const trimmed = value?.trim().toLowerCase();
  if (!trimmed) return fallback;
  if (isMode(trimmed)) return trimmed;
  throw new Error(`${variable}="${value}" is not a mode; use one of: ${CHAT_MODES.join(', ')}.`);
}

export type ParsedCommand =
  | { kind: 'help' }
  | {
      kind: 'detect';
      /** The mode typed first, or the default when none was. */
      mode: Mode;
      /** True when the moderator named the mode; false when the default was applied. */
      explicitMode: boolean;
      text: string;
    };

/**
 * `"legal The party of the first part…"` → mode `legal`, the rest as text. A first word that is a
 * mode name is the mode in any case (`Academic`, `[Legal]`, `mode:legal`): moderators type it as they
 * type words, and the reply names the mode used, so a text that starts with "General Motors…" shows
 * its mode (and `[text]`-less wording can be checked with the mode written first).
 * Empty input, `help`, and a lone mode name ask for help.
 */
export function parseDetectCommand(input: string, defaultMode: Mode): ParsedCommand {
  const trimmed = input.trim();
  if (trimmed === '' || /^(help|-h|--help|\?)$/i.test(trimmed)) return { kind: 'help' };

  const match = /^(\S+)(\s+)([\s\S]*)$/.exec(trimmed);
  if (match) {
    const mode = explicitMode(match[1] ?? '');
    const rest = (match[3] ?? '').trim();
    if (mode && rest !== '') return { kind: 'detect', mode, explicitMode: true, text: rest };
  }
  // A lone mode name with no text is a request for help about using it, not a one-word text.
  if (explicitMode(trimmed)) return { kind: 'help' };
  return { kind: 'detect', mode: defaultMode, explicitMode: false, text: trimmed };
}

/** `legal`, `Legal`, `LEGAL`, `[Legal]`, `mode:legal` → `legal`; anything else → undefined. */
function explicitMode(word: string): Mode | undefined {
  const candidate = (/^\[(.+)\]$/.exec(word)?.[1] ?? /^mode[:=](.+)$/i.exec(word)?.[1] ?? word).toLowerCase();
  return isMode(candidate) ? candidate : undefined;
}

const MODE_HINTS: Record<Mode, string> = {
  general: 'everyday writing: chat, posts, email',
  academic: 'essays, abstracts, reports',
  financial: 'filings, market commentary, earnings text',
  legal: 'contracts, statutes, legal opinions',
};

export interface HelpOptions {
  /** How the command is invoked on this platform, e.g. `/detect`. */
  command: string;
  /** The mode used when none is typed. */
  defaultMode: Mode;
  /** Name of the message action, when the platform has one (e.g. `Check for AI text`). */
  messageAction?: string | undefined;
  /** How a member check is typed on this platform (e.g. `/detect @member`), when it has one. */
  memberCheck?: string | undefined;
}

/** Help as plain lines; each bot adds its own markup (backticks render as code in both Slack and Discord). */
export function helpLines(options: HelpOptions): string[] {
  const lines = [
    `*How to check a text for AI writing*`,
    `\`${options.command} <text>\` checks the text in the default mode (${options.defaultMode}).`,
    `\`${options.command} <mode> <text>\` picks a mode: ${CHAT_MODES.map((m) => `\`${m}\``).join(', ')}.`,
  ];
  for (const mode of CHAT_MODES) lines.push(`• \`${mode}\`: ${MODE_HINTS[mode]}`);
  if (options.messageAction) {
    lines.push(`To check someone’s message, open its “More actions” menu and choose “${options.messageAction}”.`);
  }
  if (options.memberCheck) {
    lines.push(
      `\`${options.memberCheck}\` checks a member’s recent messages in this channel together: far more reliable than one short message.`,
    );
  }
  lines.push(
    `Only you see the result. Under ${EVIDENCE_FLOOR_WORDS} words a text is too short to judge: no verdict and no score are shown. English and Turkish are supported.`,
  );
  return lines;
}

export function helpText(options: HelpOptions): string {
  return helpLines(options).join('\n');
}
