/**
 * Each community's precision, measured from its moderators' answers: per watched channel and per
 * preset in force when the flags were scored, the share of reviewed flags moderators confirmed
 * (confirmed ÷ (confirmed + false positive); a dismissal says nothing about the detector and is left
 * out), with its count and a 90% Wilson interval, and the members marked false positive.
 *
 * When a channel's reviews under the scope's current preset number at least `MIN_REVIEWS` and their
 * precision is under the scope's bound (`/detect-settings precision`, 0.8 by default), the report
 * and the mod-log name the stricter preset that would have done better: every stored score keeps
 * which presets would have flagged it (`presets`, a bit per preset), so the share of the confirmed
 * flags a stricter preset keeps and the share of the false positives it drops are counted from the
 * reviewed flags themselves, not estimated. An admin applies it (`preset …`, or the button under the
 * mod-log note); the bot never changes a setting on its own.
 */
import type { WatchStore } from '../store/types.ts';
import { DEFAULT_PRESET, PRESET_BITS } from './presets.ts';
import { DAY_MS, PRESETS, type FlagRecord, type Preset, type WatchConfig } from './types.ts';

export const DEFAULT_PRECISION_BOUND = 0.8;
/** Fewer reviews than this say too little for a suggestion. */
export const MIN_REVIEWS = 10;
/** Reviews of this many days count (the report's longer period). */
export const PRECISION_DAYS = 30;
/** The normal quantile of a two-sided 90% interval. */
const Z90 = 1.6448536269514722;

/** The Wilson score interval of `successes` out of `n` (90% by default); [0, 1] when n is 0. */
export function wilson(successes: number, n: number, z = Z90): { low: number; high: number } {
  if (n === 0) return { low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export interface PresetPrecision {
  /** The preset in force when the flags were scored; undefined for records from before it was kept. */
  preset: Preset | undefined;
  confirmed: number;
  falsePositive: number;
  dismissed: number;
  /** confirmed + false positive. */
  reviews: number;
  /** confirmed ÷ reviews; undefined without reviews. */
  precision: number | undefined;
  interval: { low: number; high: number };
}

export interface Suggestion {
  channelId: string;
  from: Preset;
  to: Preset;
  reviews: number;
  precision: number;
  bound: number;
  confirmed: number;
  confirmedKept: number;
  falsePositives: number;
  falsePositivesDropped: number;
  /** Precision of the reviewed flags the stricter preset would have kept; undefined when it keeps none. */
  precisionAfter: number | undefined;
}

export interface ChannelPrecision {
  channelId: string;
  byPreset: PresetPrecision[];
  /** Members with flags marked false positive, most first. */
  falsePositiveMembers: { authorId: string; count: number }[];
  suggestion?: Suggestion | undefined;
}

function presetPrecision(preset: Preset | undefined, flags: FlagRecord[]): PresetPrecision {
  const confirmed = flags.filter((f) => f.outcome === 'confirmed').length;
  const falsePositive = flags.filter((f) => f.outcome === 'false_positive').length;
  const dismissed = flags.filter((f) => f.outcome === 'dismissed').length;
  const reviews = confirmed + falsePositive;
  return {
    preset,
    confirmed,
    falsePositive,
    dismissed,
    reviews,
    precision: reviews > 0 ? confirmed / reviews : undefined,
    interval: wilson(confirmed, reviews),
  };
}

/** Presets stricter than `preset`, the nearest first. */
export function stricterThan(preset: Preset): Preset[] {
  return PRESETS.slice(0, PRESETS.indexOf(preset)).reverse();
}

/**
 * What a stricter preset would have done with the flags reviewed under `current`: counted from
 * each flag's stored preset bits. The nearest stricter preset whose precision reaches the bound is
 * named; when none does, the one with the best precision, if it is better than today's.
 */
export function suggestStricter(channelId: string, flags: FlagRecord[], current: Preset, bound: number): Suggestion | undefined {
  const mine = flags.filter((f) => f.preset === current && (f.outcome === 'confirmed' || f.outcome === 'false_positive'));
  const confirmed = mine.filter((f) => f.outcome === 'confirmed');
  const falsePositives = mine.filter((f) => f.outcome === 'false_positive');
  const reviews = mine.length;
  if (reviews < MIN_REVIEWS) return undefined;
  const precision = confirmed.length / reviews;
  if (precision >= bound) return undefined;
  let best: Suggestion | undefined;
  for (const to of stricterThan(current)) {
    const bit = PRESET_BITS[to];
    const confirmedKept = confirmed.filter((f) => (f.presets & bit) !== 0).length;
    const falsePositivesKept = falsePositives.filter((f) => (f.presets & bit) !== 0).length;
    const kept = confirmedKept + falsePositivesKept;
    const candidate: Suggestion = {
      channelId,
      from: current,
      to,
      reviews,
      precision,
      bound,
      confirmed: confirmed.length,
      confirmedKept,
      falsePositives: falsePositives.length,
      falsePositivesDropped: falsePositives.length - falsePositivesKept,
      precisionAfter: kept > 0 ? confirmedKept / kept : undefined,
    };
    if (candidate.precisionAfter !== undefined && candidate.precisionAfter >= bound) return candidate;
    if ((candidate.precisionAfter ?? -1) > (best?.precisionAfter ?? precision)) best = candidate;
  }
  return best;
}

/** Per channel, from reviewed flags (any order); channels in order of first appearance. */
export function channelPrecision(flags: FlagRecord[], config: Pick<WatchConfig, 'preset' | 'precisionBound'>): ChannelPrecision[] {
  const current = config.preset ?? DEFAULT_PRESET;
  const bound = config.precisionBound ?? DEFAULT_PRECISION_BOUND;
  const byChannel = new Map<string, FlagRecord[]>();
  for (const flag of flags) byChannel.set(flag.channelId, [...(byChannel.get(flag.channelId) ?? []), flag]);
  const out: ChannelPrecision[] = [];
  for (const [channelId, list] of byChannel) {
    const presets = [...PRESETS, undefined].filter((p) => list.some((f) => f.preset === p));
    const members = new Map<string, number>();
    for (const f of list) if (f.outcome === 'false_positive') members.set(f.authorId, (members.get(f.authorId) ?? 0) + 1);
    out.push({
      channelId,
      byPreset: presets.map((p) =>
        presetPrecision(
          p,
          list.filter((f) => f.preset === p),
        ),
      ),
      falsePositiveMembers: [...members]
        .map(([authorId, count]) => ({ authorId, count }))
        .sort((a, b) => b.count - a.count || a.authorId.localeCompare(b.authorId)),
      suggestion: suggestStricter(channelId, list, current, bound),
    });
  }
  return out;
}

/** The scope's precision over the last `PRECISION_DAYS` days of reviews. */
export async function readPrecision(store: Pick<WatchStore, 'reviewedFlags'>, scope: string, config: WatchConfig, now: number) {
  return channelPrecision(await store.reviewedFlags(scope, now - PRECISION_DAYS * DAY_MS), config);
}

/**
 * After a review: the channel's suggestion, when there is one and the mod-log has not been told it
 * yet (again only for another preset or after ten more reviews).
 */
export async function suggestionToPost(
  store: Pick<WatchStore, 'reviewedFlags' | 'claimSuggestion'>,
  scope: string,
  channelId: string,
  config: WatchConfig,
  now: number,
): Promise<Suggestion | undefined> {
  const flags = (await store.reviewedFlags(scope, now - PRECISION_DAYS * DAY_MS)).filter((f) => f.channelId === channelId);
  const suggestion = channelPrecision(flags, config)[0]?.suggestion;
  if (!suggestion) return undefined;
  return (await store.claimSuggestion(scope, channelId, suggestion.to, suggestion.reviews, now)) ? suggestion : undefined;
}

export interface PrecisionMarkup {
  channel(id: string): string;
  person(id: string): string;
  bold(text: string): string;
  /** The command that applies a preset, as typed on the platform. */
  presetCommand(preset: Preset): string;
}

const pct = (x: number): string => `${Math.round(100 * x)}%`;

/** The suggestion in words, worded once for the report and the mod-log of both bots. */
export function suggestionSentence(s: Suggestion, markup: PrecisionMarkup): string {
  const kept = s.confirmed > 0 ? pct(s.confirmedKept / s.confirmed) : '—';
  const dropped = s.falsePositives > 0 ? pct(s.falsePositivesDropped / s.falsePositives) : '—';
  const after = s.precisionAfter === undefined ? '' : `, a precision of ${pct(s.precisionAfter)}`;
  return (
    `⚠️ ${markup.channel(s.channelId)}: moderators confirmed ${pct(s.precision)} of ${s.reviews} reviewed flags under ${markup.bold(s.from)}, under the bound of ${pct(s.bound)}. ` +
    `On the same reviewed flags, ${markup.bold(s.to)} would have kept ${s.confirmedKept} of ${s.confirmed} confirmed flags (${kept}) and dropped ${s.falsePositivesDropped} of ${s.falsePositives} false positives (${dropped})${after}. ` +
    `An admin can apply it with ${markup.presetCommand(s.to)}; the bot never changes the preset on its own.`
  );
}

/** The report's precision lines of one channel. */
export function precisionLines(channel: ChannelPrecision, markup: PrecisionMarkup): string[] {
  const lines: string[] = [];
  const parts = channel.byPreset
    .filter((p) => p.reviews + p.dismissed > 0)
    .map((p) => {
      const name = p.preset ?? 'preset not recorded';
      if (p.reviews === 0) return `${name}: no confirmed or false-positive answers (${p.dismissed} dismissed)`;
      return `${name}: ${pct(p.precision ?? 0)} confirmed of ${p.reviews} (90% interval ${pct(p.interval.low)}–${pct(p.interval.high)})`;
    });
  if (parts.length > 0) lines.push(`   Precision (reviews of the last ${PRECISION_DAYS} days): ${parts.join(' · ')}`);
  if (channel.falsePositiveMembers.length > 0) {
    const shown = channel.falsePositiveMembers.slice(0, 10).map((m) => `${markup.person(m.authorId)}${m.count > 1 ? ` ×${m.count}` : ''}`);
    const more = channel.falsePositiveMembers.length - shown.length;
    lines.push(`   Marked false positive: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (channel.suggestion) lines.push(`   ${suggestionSentence(channel.suggestion, markup)}`);
  return lines;
}

/** A precision bound an admin typed: a share (0.8) or a percentage (80 or 80%). */
export function parsePrecisionBound(raw: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(raw.trim());
  if (!match) return undefined;
  let value = Number(match[1]);
  if (match[2] === '%' || value > 1) value /= 100;
  return value > 0 && value <= 1 ? value : undefined;
}
