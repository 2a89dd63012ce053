/**
 * The headline answer (`origin`): one rule reading the verdict, the composition and
 * `polished_probability` together, for single texts and authors alike, so the API, the page, the
 * CLI and the bots never tell one text two stories ("most likely written by an AI system" next to
 * "about 55% of the words look generated").
 */
import { type Composition, type Origin, POLISHED_THRESHOLD, type Verdict } from '../contract.ts';

export { POLISHED_THRESHOLD };

/**
 * A partly generated headline needs the rest of the text to read as the author's own: the words
 * outside the generated spans must average under this sentence probability. The sentence model
 * marks part of a fully generated text as a span and leaves the rest at 0.3–0.5 (it leans AI but
 * not enough for a span); calling that "partly AI-written" would clear part of an AI text. Measured
 * with `npm run eval:mixed` (corpus/extra dev, seed 7): pure AI texts called likely_ai that keep the
 * plain AI headline 90.1% with the composition alone → 98.3% with this bar, half-human documents
 * headlined partly 49.8% → 46.6%, pure human documents headlined partly 0.9% → 0.4%; with
 * `--files v3-dev,v4-dev` (never used to pick it) 86.4% → 97.3%, 32.8% → 26.3% and 0.5% → 0.4%.
 */
export const HUMAN_REST_MAX_PROBABILITY = 0.3;

/** What `originOf` reads; `DetectionResult`, `AuthorDetectionResult` and the wire answers all fit it. */
export interface OriginInput {
  verdict: Verdict;
  warnings: readonly string[];
  polished_probability: number | null;
  /** Null or absent without sentence scores (and for authors). */
  composition?: Composition | null;
  segments?: ReadonlyArray<{ start: number; end: number; text: string; ai_probability: number }>;
  generated_spans?: ReadonlyArray<{ start: number; end: number }>;
}

/**
 * The headline: `uncertain` under the evidence floor; `partly_ai` when the sentences show a
 * generated part and a human one (`partlyGenerated`); else the verdict, a likely-AI one split by
 * `polished_probability` into `ai_polished` and `ai_written`.
 */
export function originOf(r: OriginInput): Origin {
  if (r.warnings.includes('too_little_evidence')) return 'uncertain';
  if (partlyGenerated(r)) return 'partly_ai';
  switch (r.verdict) {
    case 'likely_ai':
      return r.polished_probability !== null && r.polished_probability >= POLISHED_THRESHOLD ? 'ai_polished' : 'ai_written';
    case 'likely_human':
      return 'human';
    default:
      return 'uncertain';
  }
}

/**
 * `composition: "partly_ai"` (a confident generated span that does not cover the text) whose words
 * outside the spans read as human. A text scored with a model of another language than its own
 * (`language_mismatch`, `language_uncertain`) has sentence scores that mean little, so it never
 * gets this headline.
 */
export function partlyGenerated(r: OriginInput): boolean {
  if (r.composition !== 'partly_ai') return false;
  if (r.warnings.includes('language_mismatch') || r.warnings.includes('language_uncertain')) return false;
  const rest = restProbability(r.segments ?? [], r.generated_spans ?? []);
  return rest !== undefined && rest < HUMAN_REST_MAX_PROBABILITY;
}

const RE_WORD = /\S+/gu;

/**
 * Mean sentence probability of the words outside the generated spans (each sentence weighted by its
 * whitespace-separated words); undefined when every word is inside a span.
 */
export function restProbability(
  segments: ReadonlyArray<{ start: number; end: number; text: string; ai_probability: number }>,
  spans: ReadonlyArray<{ start: number; end: number }>,
): number | undefined {
  let words = 0;
  let sum = 0;
  for (const s of segments) {
    if (spans.some((span) => s.start >= span.start && s.end <= span.end)) continue;
    const n = s.text.match(RE_WORD)?.length ?? 0;
    words += n;
    sum += n * s.ai_probability;
  }
  return words > 0 ? sum / words : undefined;
}
