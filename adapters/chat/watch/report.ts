/**
 * `/detect-settings report`: per watched channel, over the last 7 and 30 days, how many messages
 * were scored, what each preset would have flagged, what happened to the flags (shadow, cards, held
 * back) and the share of reviewed flags moderators confirmed. Worded once here; each platform
 * passes its own markup for channels, bold and dates.
 */
import type { WatchSettings } from './config.ts';
import { type ChannelPrecision, precisionLines, type PrecisionMarkup } from './precision.ts';
import { PRESET_DESCRIPTIONS } from './presets.ts';
import { OUTCOMES, PRESETS, type ChannelCounts, type Preset, type ReportData, type WatchConfig } from './types.ts';

export interface ReportMarkup extends Partial<Pick<PrecisionMarkup, 'person' | 'presetCommand'>> {
  channel(id: string): string;
  bold(text: string): string;
  /** A date a reader understands (the platform's date markup where it has one). */
  date(ms: number): string;
}

const number = (n: number): string => n.toLocaleString('en-US');

function share(part: number, whole: number): string {
  return whole === 0 ? '—' : `${Math.round((100 * part) / whole)}%`;
}

function periodLines(label: string, counts: ChannelCounts, preset: Preset, markup: ReportMarkup): string[] {
  const presets = PRESETS.map((p) =>
    p === preset ? markup.bold(`${p} ${number(counts.byPreset[p])}`) : `${p} ${number(counts.byPreset[p])}`,
  );
  const lines = [`${label}: ${number(counts.scored)} messages scored · would flag: ${presets.join(' · ')}`];
  const c = counts.cards;
  const flags = c.shadow + c.posted + c.author_window + c.cap + c.cleared + c.failed;
  if (flags > 0) {
    const parts: string[] = [];
    if (c.shadow > 0) parts.push(`${number(c.shadow)} in shadow mode (no card)`);
    if (c.posted > 0) parts.push(`${number(c.posted)} card${c.posted === 1 ? '' : 's'} posted`);
    if (c.author_window + c.cap > 0) {
      parts.push(
        `${number(c.author_window + c.cap)} held back (same member within the window ${number(c.author_window)}, hourly cap ${number(c.cap)})`,
      );
    }
    if (c.cleared > 0) parts.push(`${number(c.cleared)} held back (member cleared by a moderator, evidence not clearly stronger)`);
    if (c.failed > 0) parts.push(`${number(c.failed)} without a card (no review channel, or the post failed)`);
    lines.push(`   Flags: ${number(flags)}: ${parts.join(', ')}`);
  }
  const reviewed = OUTCOMES.reduce((sum, o) => sum + counts.outcomes[o], 0);
  if (c.posted > 0 || reviewed > 0) {
    const o = counts.outcomes;
    lines.push(
      `   Reviewed ${number(reviewed)} of ${number(c.posted)} cards: confirmed ${number(o.confirmed)} (${share(o.confirmed, reviewed)}), false positive ${number(o.false_positive)}, dismissed ${number(o.dismissed)}`,
    );
  }
  return lines;
}

/** How a watched message is judged, for the reply to `watch`. */
export function judgingSentence(settings: Pick<WatchSettings, 'judge' | 'recentMessages' | 'recentWindowMs'>): string {
  if (settings.judge === 'message') {
    return 'each new message of 40 words or more is scored on its own, in the background; older messages never are.';
  }
  return `each new message of 20 words or more is judged with the same member’s recent messages in the channel (up to ${settings.recentMessages} from the last ${Math.round(settings.recentWindowMs / 3_600_000)} hours, shorter ones included), in the background; messages from before watching started never are.`;
}

export function reportLines(
  data: ReportData,
  config: WatchConfig,
  options: { preset: Preset; retentionDays: number; markup: ReportMarkup; precision?: ChannelPrecision[] | undefined },
): string[] {
  const { markup, preset } = options;
  const lines = [
    `${markup.bold('Watching report')} · preset ${markup.bold(preset)}: ${PRESET_DESCRIPTIONS[preset]} · records kept ${options.retentionDays} days`,
  ];
  const ids = [...new Set([...config.channels.map((c) => c.channelId), ...data.channels.keys()])];
  if (ids.length === 0) {
    lines.push('', 'No channel is watched, and nothing was scored in the last 30 days.');
    return lines;
  }
  for (const id of ids) {
    const watched = config.channels.find((c) => c.channelId === id);
    const state = watched
      ? `${watched.cards ? 'review cards on' : 'shadow mode'} (watched since ${markup.date(watched.since)})`
      : 'not watched any more';
    lines.push('', `${markup.channel(id)}: ${state}`);
    const counts = data.channels.get(id);
    if (!counts) {
      lines.push('   Nothing scored yet.');
      continue;
    }
    lines.push(...periodLines('Last 7 days', counts.week, preset, markup), ...periodLines('Last 30 days', counts.month, preset, markup));
    const precision = options.precision?.find((p) => p.channelId === id);
    if (precision) {
      lines.push(
        ...precisionLines(precision, {
          channel: markup.channel,
          bold: markup.bold,
          person: markup.person ?? ((member) => member),
          presetCommand: markup.presetCommand ?? ((p) => `the preset command (${p})`),
        }),
      );
    }
  }
  lines.push(
    '',
    'Flags are counted under the preset in force when each message was scored; “would flag” applies every preset to the same scores. Periods are today and the 6 (29) days before, in UTC.',
  );
  return lines;
}
