/**
 * The three flagging presets. Every scored message is tested against all three, so the report can
 * say what a stricter or looser preset would have flagged without scoring anything again.
 *
 * - `strict`: only the clearest cases: the engine's `likely_ai` verdict at 97% or more.
 * - `standard` (default): the engine's `likely_ai` verdict, whose threshold is set per mode and text
 *   length so that at most 1% of human texts reach it.
 * - `loose`: also the borderline: 80% or more, unless the engine said the evidence was too thin
 *   (`short_text`, `too_little_evidence`).
 */
import type { Judgment, Preset } from './types.ts';
import { PRESETS } from './types.ts';

export const DEFAULT_PRESET: Preset = 'standard';

export const PRESET_BITS: Record<Preset, number> = { strict: 1, standard: 2, loose: 4 };

const STRICT_MIN = 0.97;
const LOOSE_MIN = 0.8;

export function flagsUnder(preset: Preset, judgment: Pick<Judgment, 'probability' | 'verdict' | 'warnings'>): boolean {
  const likelyAi = judgment.verdict === 'likely_ai';
  if (preset === 'strict') return likelyAi && judgment.probability >= STRICT_MIN;
  if (preset === 'standard') return likelyAi;
  const thin = judgment.warnings.includes('short_text') || judgment.warnings.includes('too_little_evidence');
  return likelyAi || (!thin && judgment.probability >= LOOSE_MIN);
}

/** The bit mask of the presets that flag this judgment. */
export function presetMask(judgment: Pick<Judgment, 'probability' | 'verdict' | 'warnings'>): number {
  let mask = 0;
  for (const preset of PRESETS) if (flagsUnder(preset, judgment)) mask |= PRESET_BITS[preset];
  return mask;
}

export function isPreset(value: string): value is Preset {
  return (PRESETS as readonly string[]).includes(value);
}

/** One line a moderator reads about a preset. */
export const PRESET_DESCRIPTIONS: Record<Preset, string> = {
  strict: 'only the clearest cases (Likely AI-written at 97% or more)',
  standard: 'the detector’s own “Likely AI-written” verdict (at most about 1% of human texts reach it)',
  loose: 'also borderline messages (80% or more, unless the text was too short to judge)',
};
