/**
 * The headline of an answer in words (the API's `origin`, issue 31), written once for both bots.
 * The web page (src/service/playground/assets/wording.js) and the CLI (src/cli/detect.ts) cannot
 * import this room, so they carry the same sentences; test/chat/origin-words.test.ts holds the three
 * to each other.
 */
import { ORIGINS, type DetectResponse, type Origin, type Verdict } from '../../src/contract.ts';

export interface OriginWords {
  emoji: string;
  /** 0xRRGGBB for embeds and attachments. */
  colour: number;
  /** The headline; `partly_ai`'s gets the share added (`originLabel`). */
  label: string;
  /** One sentence under the headline. */
  sentence: string;
}

export const ORIGIN_WORDS: Readonly<Record<Origin, OriginWords>> = {
  ai_written: {
    emoji: '🔴',
    colour: 0xd93f0b,
    label: 'Reads as AI-written',
    sentence: 'This text was most likely written by an AI system.',
  },
  ai_polished: {
    emoji: '🟣',
    colour: 0x8250df,
    label: "Reads as the author's own text, polished by an AI",
    sentence: "It reads as a person's own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.",
  },
  partly_ai: {
    emoji: '🟠',
    colour: 0xe8773a,
    label: 'Partly AI-written',
    sentence: "Some passages look generated; the rest reads as the author's own writing.",
  },
  human: {
    emoji: '🟢',
    colour: 0x2da44e,
    label: 'Likely human-written',
    sentence: 'This text was most likely written by a person.',
  },
  uncertain: {
    emoji: '🟡',
    colour: 0xfbca04,
    label: 'Mixed or uncertain',
    sentence: 'The score falls between the thresholds, so the detector cannot tell either way.',
  },
};

/** Under the headline of a member check whose messages read as AI-polished. */
export const AUTHOR_POLISHED_LINE =
  'Their messages read as their own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.';

/** `0.554` → `55%`, within 1–99% (a share of exactly none or all is not what partly means). */
export function aboutPercent(share: number): string {
  return `${Math.min(99, Math.max(1, Math.round(share * 100)))}%`;
}

/** The headline's words: `partly_ai` says how much, "Partly AI-written: about 55% of the words look generated". */
export function originLabel(origin: Origin, share: number | null | undefined): string {
  const words = ORIGIN_WORDS[origin];
  if (origin === 'partly_ai' && typeof share === 'number')
    return `${words.label}: about ${aboutPercent(share)} of the words look generated`;
  return words.label;
}

/** The headline with its emoji, e.g. `🔴 Reads as AI-written`. */
export function originHeadline(origin: Origin, share?: number | null): string {
  return `${ORIGIN_WORDS[origin].emoji} ${originLabel(origin, share)}`;
}

const FROM_VERDICT: Readonly<Record<Verdict, Origin>> = { likely_ai: 'ai_written', mixed: 'uncertain', likely_human: 'human' };

/**
 * The answer's `origin`; for an answer without one (a server older than issue 31), or with a value
 * newer than this build, the verdict's plain reading, so the bots never show a raw code.
 */
export function originOfAnswer(
  answer: Pick<DetectResponse, 'verdict'> & { origin?: unknown; warnings?: readonly string[]; composition?: unknown },
): Origin {
  if (typeof answer.origin === 'string' && (ORIGINS as readonly string[]).includes(answer.origin)) return answer.origin as Origin;
  if (Array.isArray(answer.warnings) && answer.warnings.includes('too_little_evidence')) return 'uncertain';
  // What such a server's composition said on its own.
  if (answer.composition === 'partly_ai') return 'partly_ai';
  return FROM_VERDICT[answer.verdict] ?? 'uncertain';
}
