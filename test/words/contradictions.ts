/**
 * The rules a reader holds an answer to, checked on what a surface shows (its headline and the text
 * around it), not on how the words were chosen: a surface breaks a rule when two things it says of
 * one answer cannot both be true, or when it leaves out what the rule asks to be said. Written from
 * issue 39's examples; each rule names what it catches.
 */
import type { DetectResponse } from '../../src/contract.ts';
import type { Rendered, Surface } from './surfaces.ts';

export const RULES = {
  'one-label': 'the same answer is headlined in the same words on every surface',
  'polished-vs-generated': 'a headline that reads the text as polished by an AI never has "generated" beside it',
  'human-vs-ai-parts': 'a human-written headline beside passages that look or lean AI says how both are true',
  'ai-vs-human-parts':
    'an AI-written headline beside "the rest is the author\'s own" or "no passage looks generated" says how both are true',
  'unclear-vs-flat': 'an unclear headline is not set beside a flat "generated throughout", "partly generated" or "reads as human writing"',
  'share-words': '"nearly all", "most" and "about half" of the text are said only of shares that big',
  'share-figure': 'the share of words is the same figure wherever it is given',
  'bar-explained': 'a score leaning AI under an unclear headline is explained in words, not only by a code',
  'too-short': 'a text too short to judge is headlined so and shows no figure',
  'windows-shown': "a long document's windows are mapped, with the right count of parts for each reading",
  'windows-vs-headline': 'parts that read unlike the headline are explained',
} as const;
export type Rule = keyof typeof RULES;

const UNCLEAR = /^(Unclear|Mixed or uncertain)\b/;
const HUMAN = /^Likely human-written\b/;
const AI_WRITTEN = /^Reads as AI-written\b/;
const POLISHED = /^Reads as the author's own text, polished by an AI\b/;
const TOO_SHORT = /^Too short to judge\b/;

/** Words that say how a whole-text reading and a part's reading are both true. */
const AS_A_WHOLE = /as a whole|judged alone|not called (?:AI|human)-written|never called|whole-text/i;

/** Whole percent of a share as the surfaces round it (1–99, or 0/100 on an older bot). */
function sharePercents(share: number): number[] {
  const whole = Math.round(share * 100);
  return [whole, Math.min(99, Math.max(1, whole)), whole - 1, whole + 1];
}

/** The rules one surface's rendering of one answer breaks (rules across surfaces: `acrossSurfaces`). */
export function contradictions(answer: DetectResponse, shown: Rendered): Rule[] {
  const broken = new Set<Rule>();
  const { headline, body } = shown;
  const all = `${headline}\n${body}`;
  const tooShort = answer.warnings.includes('too_little_evidence');

  if (tooShort) {
    if (!TOO_SHORT.test(headline) || /\d%/.test(body)) broken.add('too-short');
    return [...broken];
  }
  // A sentence that says no passage looks generated is no claim that one does.
  const affirmed = body.replace(/\bno (?:single )?passage\b[^.\n]*[.\n]?/gi, '');
  if (POLISHED.test(headline) && /generated/i.test(body)) broken.add('polished-vs-generated');
  if (HUMAN.test(headline) && /looks? (?:AI-)?generated|leans? AI|Generated throughout|Partly generated|Mostly generated/i.test(affirmed)) {
    if (!AS_A_WHOLE.test(body)) broken.add('human-vs-ai-parts');
  }
  if (
    (AI_WRITTEN.test(headline) || POLISHED.test(headline)) &&
    /rest reads as the author's own|No passage (?:of the text )?looks AI-generated|Reads as human writing/i.test(body)
  ) {
    if (!AS_A_WHOLE.test(body)) broken.add('ai-vs-human-parts');
  }
  // The composition said flatly, as a box's title or a line's head: "Generated throughout", "Partly generated: …".
  if (
    UNCLEAR.test(headline) &&
    /(?:^|\n|: )(?:Generated throughout|Throughout: the generated|Reads as human writing|Partly generated|partly AI-generated|reads as (?:AI-generated|human-written) throughout)/i.test(
      body,
    )
  ) {
    if (!AS_A_WHOLE.test(body)) broken.add('unclear-vs-flat');
  }
  for (const m of all.matchAll(/\b(nearly all|most|about half) of (?:the|its)\b[^.:%\n]{0,80}?(\d{1,3})%/gi)) {
    const said = (m[1] ?? '').toLowerCase();
    const figure = Number(m[2]);
    const holds = said === 'nearly all' ? figure >= 90 : said === 'most' ? figure > 50 : figure >= 35 && figure <= 65;
    if (!holds) broken.add('share-words');
  }
  if (typeof answer.generated_share === 'number' && answer.generated_share > 0) {
    const expected = sharePercents(answer.generated_share);
    for (const m of all.matchAll(/(?:about )?(\d{1,3})% of (?:the|its) words/gi)) {
      if (!expected.includes(Number(m[1]))) broken.add('share-figure');
    }
  }
  if (answer.verdict === 'mixed' && answer.ai_probability >= 0.5 && UNCLEAR.test(headline)) {
    if (!/under the bar|not called AI-written|never called (?:AI-written|likely AI)/i.test(body)) broken.add('bar-explained');
  }
  const windows = answer.windows ?? [];
  if (windows.length >= 2) {
    const counted =
      /(\d+) of (\d+) parts? (reads?|is|are) (as AI-written|as the author's own text, polished by an AI|as partly AI-written|as human-written|unclear)/.exec(
        body,
      );
    const byReading: Record<string, string> = {
      'as AI-written': 'ai_written',
      "as the author's own text, polished by an AI": 'ai_polished',
      'as partly AI-written': 'partly_ai',
      'as human-written': 'human',
      unclear: 'uncertain',
    };
    if (!counted || Number(counted[2]) !== windows.length) broken.add('windows-shown');
    else if (windows.filter((w) => w.origin === byReading[counted[4] ?? '']).length !== Number(counted[1])) broken.add('windows-shown');
    if (windows.some((w) => w.origin !== answer.origin) && !/judged alone|as a whole/i.test(body)) broken.add('windows-vs-headline');
  }
  return [...broken];
}

/** `one-label`: the surfaces whose headline differs from what most surfaces say of the same answer. */
export function acrossSurfaces(shown: Readonly<Record<Surface, Rendered>>): Surface[] {
  const labels = Object.entries(shown).map(([surface, r]) => [surface, r.headline.replace(/\s+/g, ' ').trim()] as const);
  const counts = new Map<string, number>();
  for (const [, label] of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  const majority = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  return labels.filter(([, label]) => label !== majority).map(([surface]) => surface as Surface);
}
