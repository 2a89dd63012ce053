/**
 * The assistant head's bars for authors (`models/author.json` → `assistant`), fitted by
 * `npm run train:author` on author windows read by the detector the bars are for.
 *
 * Why bars of their own: the head's margin of pooled chat lines falls as messages are added, and
 * human authors' falls faster than the assistant's (on v5-members-train, human windows' median
 * −1.8 at one message and −4.4 at twenty, the assistant's members' 0.8 and 0.2). The single-text
 * bars, set on whole texts by length, would flag humans at a few messages and miss the assistant
 * at twenty. So each count of messages gets its own bars, from human windows of that many messages.
 */
import { liftedProbability } from '../../src/detector/assistant.ts';
import type { AuthorAssistantBar } from '../../src/detector/author.ts';
import { auroc } from '../../src/detector/metrics.ts';

export interface BarWindow {
  n: number;
  words: number;
  margin: number;
  /** The author model's probability of the window, before the head (`authorProbability`), and its band's likely_ai threshold. */
  p: number;
  aiThreshold: number;
  y: 0 | 1;
  language: string;
  /** The human source whose windows are bounded together (an account's source, a corpus source). */
  source: string;
  /** Chat members (v5-members' IRC users): none of their windows may be lifted to `likely_ai`. */
  chat: boolean;
  /** A window of the family's members (v5-members' assistant): they bound how many are cleared. */
  family?: boolean;
  /** Already `likely_ai` by the bars read beside these (`fireOnly`): it uses up its source's allowance over fire. */
  fired?: boolean;
}

export interface AuthorBarRules {
  /** Window sizes (messages) a bar is fitted at; an author between two sizes gets the lower one's. */
  sizes: readonly number[];
  /** Languages the head may lift to `likely_ai` (fire) and not clear (veto). */
  fireLanguages: readonly string[];
  vetoLanguages: readonly string[];
  /** Fewest pooled words of a window the bars count (the evidence floor). */
  minWords: number;
  /** Share of each non-chat human source's windows allowed at or over `fire`. */
  fireRate: number;
  /** Share of each human source's windows allowed at or over `veto` (they are then not cleared). */
  vetoRate: number;
  /** A source with fewer windows at a size is left out of the veto's bound there (too few to bound 20%). */
  vetoMinWindows: number;
  /** A size with fewer human windows (or no chat member's) gets no bar of its own: the lower size's applies. */
  minHumanWindows: number;
  /**
   * Share of the family's member windows the veto may leave cleared: the veto bar goes down to the
   * margin under which at most this share of them lie, whatever it costs the humans (not cleared is
   * `mixed`, not flagged). Undefined: the humans' bound alone.
   */
  familyCleared?: number;
  /**
   * With a ceiling (`AssistantBar.ceiling`), a vetoed window rises from `humanThreshold` towards it
   * with its margin: the highest ceiling (in steps of 0.05 under the likely_ai thresholds) at which
   * the AUROC of the windows of people and older AI authors at that size (the family's members
   * aside) falls by at most this. Undefined: a vetoed window stays at the likely_human threshold.
   */
  ceilingCost?: number;
  /** The author model's `likely_human` threshold (the vetoed windows' floor). */
  humanThreshold: number;
  /**
   * Bars read beside others (`AuthorAssistantBars.messages`): they only fire (`veto` = `fire`, no
   * ceiling, no family bound), and a source's windows the others already fire on (`fired`) count
   * towards its allowance, so both readings together keep each source within `fireRate`.
   */
  fireOnly?: boolean;
}

/** The numbers behind one bar, for the report. */
export interface FittedBar extends AuthorAssistantBar {
  language: string;
  humans: number;
  /** The source whose windows set each bar. */
  fireSetBy?: string;
  vetoSetBy: string;
  ceilingSetBy?: string;
}

/**
 * The highest ceiling, from the likely_human threshold up in steps of 0.05 and under every likely_ai
 * threshold, at which the AUROC of `windows` (people and older AI authors) with the head's lift falls
 * by at most `cost` from the lift without one; undefined when even the first step costs more.
 */
function ceilingAt(
  windows: readonly BarWindow[],
  bar: { veto: number; fire?: number; rise?: number },
  humanThreshold: number,
  cost: number,
): { at: number; setBy: string } | undefined {
  const y = windows.map((w) => w.y);
  if (!y.includes(0) || !y.includes(1)) return undefined;
  const aurocWith = (ceiling?: number): number =>
    auroc(
      windows.map((w) =>
        liftedProbability(w.p, w.margin, { ...bar, ...(ceiling === undefined ? {} : { ceiling }) }, w.aiThreshold, humanThreshold),
      ),
      y,
    );
  const base = aurocWith();
  const top = Math.min(...windows.map((w) => w.aiThreshold));
  let best: { at: number; setBy: string } | undefined;
  for (let c = humanThreshold + 0.05; c < top; c += 0.05) {
    const at = Math.round(c * 100) / 100;
    const after = aurocWith(at);
    if (base - after > cost) break;
    best = { at, setBy: `AUROC ${base.toFixed(4)} → ${after.toFixed(4)} on ${windows.length} windows` };
  }
  return best;
}

/** The highest bar under which at most `share` of `margins` lie (a window at the bar is over it). */
function clearedAtMost(margins: readonly number[], share: number): number {
  const sorted = [...margins].sort((a, b) => a - b);
  const at = sorted[Math.floor(share * sorted.length)];
  return at === undefined ? Number.POSITIVE_INFINITY : Math.floor(at * 10000) / 10000;
}

/** Just above `x` at four decimals, so a window at `x` stays under the bar. */
const above = (x: number): number => Math.floor(x * 10000 + 1) / 10000;

/** The lowest bar over which each source keeps at most `allowed(source, windows)` windows. */
function barOver(bySource: Map<string, number[]>, allowed: (source: string, n: number) => number): { bar: number; setBy: string } {
  let bar = Number.NEGATIVE_INFINITY;
  let setBy = '';
  for (const [source, margins] of bySource) {
    const k = allowed(source, margins.length);
    if (k < 0) continue;
    const sorted = [...margins].sort((a, b) => b - a);
    const limit = sorted[k];
    if (limit !== undefined && above(limit) > bar) {
      bar = above(limit);
      setBy = `${source} (${margins.length})`;
    }
  }
  return { bar, setBy };
}

/**
 * The bars per language and size, on windows of `rules.minWords`+ words; with `rankFrom`, the bars
 * that only rank authors under the evidence floor instead (windows of `rankFrom` words up to
 * `rules.minWords`, whom no verdict is given either way): their `rise` is set as `fire` would be
 * and no text there is lifted to likely AI, and nobody there is cleared, so the family's members do
 * not lower the veto.
 */
export function fitAuthorAssistantBars(windows: readonly BarWindow[], rules: AuthorBarRules, rankFrom?: number): FittedBar[] {
  const out: FittedBar[] = [];
  const languages = [...new Set([...rules.fireLanguages, ...rules.vetoLanguages])];
  const rankOnly = rankFrom !== undefined;
  const inRange = (w: BarWindow): boolean => (rankOnly ? w.words >= rankFrom && w.words < rules.minWords : w.words >= rules.minWords);
  for (const language of languages) {
    if (rankOnly && !rules.fireLanguages.includes(language)) continue;
    for (const n of rules.sizes) {
      const at = windows.filter((w) => w.language === language && w.n === n && inRange(w));
      const humans = at.filter((w) => w.y === 0);
      if (humans.length < rules.minHumanWindows || !humans.some((w) => w.chat)) continue;
      const bySource = new Map<string, number[]>();
      const chatSources = new Set<string>();
      for (const w of humans) {
        bySource.set(w.source, [...(bySource.get(w.source) ?? []), w.margin]);
        if (w.chat) chatSources.add(w.source);
      }
      if (rules.fireOnly) {
        if (!rules.fireLanguages.includes(language)) continue;
        const open = new Map<string, number[]>();
        const usedUp = new Map<string, number>();
        for (const w of humans) {
          if (w.fired) usedUp.set(w.source, (usedUp.get(w.source) ?? 0) + 1);
          else open.set(w.source, [...(open.get(w.source) ?? []), w.margin]);
        }
        const fire = barOver(open, (s) =>
          Math.max(0, (chatSources.has(s) ? 0 : Math.floor(rules.fireRate * (bySource.get(s)?.length ?? 0))) - (usedUp.get(s) ?? 0)),
        );
        out.push({
          language,
          minMessages: n,
          veto: fire.bar,
          fire: fire.bar,
          fireSetBy: fire.setBy,
          vetoSetBy: 'fire',
          humans: humans.length,
        });
        continue;
      }
      const veto = barOver(bySource, (_source, count) => (count < rules.vetoMinWindows ? -1 : Math.floor(rules.vetoRate * count)));
      if (rules.familyCleared !== undefined && !rankOnly) {
        const family = at.filter((w) => w.family);
        const bound =
          family.length > 0
            ? clearedAtMost(
                family.map((w) => w.margin),
                rules.familyCleared,
              )
            : Number.POSITIVE_INFINITY;
        if (bound < veto.bar) {
          veto.bar = bound;
          veto.setBy = `the family's members (${family.length})`;
        }
      }
      const fire = rules.fireLanguages.includes(language)
        ? barOver(bySource, (s, count) => (chatSources.has(s) ? 0 : Math.floor(rules.fireRate * count)))
        : undefined;
      if (!rules.vetoLanguages.includes(language) && !fire) continue;
      // A fire bar under the veto bar would let a text be flagged that is still "not cleared" only.
      const vetoBar = rules.vetoLanguages.includes(language) ? Math.min(veto.bar, fire?.bar ?? Number.POSITIVE_INFINITY) : (fire?.bar ?? 0);
      const ceiling =
        fire && rules.ceilingCost !== undefined
          ? ceilingAt(
              at.filter((w) => !w.family),
              rankOnly ? { veto: vetoBar, rise: fire.bar } : { veto: vetoBar, fire: fire.bar },
              rules.humanThreshold,
              rules.ceilingCost,
            )
          : undefined;
      // Ranking only, a band without a ceiling would only raise people to the likely_human threshold.
      if (rankOnly && !ceiling) continue;
      out.push({
        language,
        minMessages: n,
        veto: vetoBar,
        ...(fire ? { ...(rankOnly ? { rise: fire.bar } : { fire: fire.bar }), fireSetBy: fire.setBy } : {}),
        ...(ceiling ? { ceiling: ceiling.at, ceilingSetBy: ceiling.setBy } : {}),
        vetoSetBy: veto.setBy,
        humans: humans.length,
      });
    }
  }
  // An author between two fitted sizes gets the lower size's bars, but no window of theirs was
  // measured: their fire bar is the higher of the two sizes' (the veto only withholds a clearing).
  for (const [i, b] of out.entries()) {
    if (rankOnly) break;
    const next = out[i + 1];
    if (next?.language !== b.language || next.fire === undefined || b.fire === undefined || next.fire <= b.fire) continue;
    b.fire = next.fire;
    b.fireSetBy = `${next.fireSetBy} at ${next.minMessages} messages`;
  }
  return out;
}

/** The bars as `author.json` stores them: per language, ascending by messages. */
export function barsByLanguage(fitted: readonly FittedBar[]): Record<string, AuthorAssistantBar[]> {
  const out: Record<string, AuthorAssistantBar[]> = {};
  for (const b of fitted) {
    // The bar is the fitted one without the report's facts, so a field added to the bar is stored with it.
    const { language, humans: _humans, fireSetBy: _fire, vetoSetBy: _veto, ceilingSetBy: _ceiling, ...bar } = b;
    out[language] = [...(out[language] ?? []), bar];
  }
  for (const bars of Object.values(out)) bars.sort((a, b) => a.minMessages - b.minMessages);
  return out;
}
