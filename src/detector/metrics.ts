/** Evaluation metrics shared by `npm run train`, `textdetect eval` and the tests. Label 1 = AI. */

export interface Scored {
  /** Calibrated AI probability. */
  p: number;
  /** 1 = AI-written, 0 = human-written. */
  y: 0 | 1;
  /** Whether the verdict was `likely_ai`. */
  flagged: boolean;
  /** Whether the verdict was `likely_human` (set by callers that report it: `textdetect eval`). */
  likelyHuman?: boolean;
  /** Whether the text got a verdict at all (not under the evidence floor); with `likelyHuman`. */
  verdictGiven?: boolean;
}

export interface MetricRow {
  n: number;
  nHuman: number;
  nAi: number;
  /** Area under the ROC curve; NaN when one class is missing. */
  auroc: number;
  /** Share of AI texts scored above the threshold that lets through 1% of this group's human texts. */
  tprAt1: number;
  /** Share of AI texts with verdict `likely_ai`. */
  tpr: number;
  /** Share of human texts with verdict `likely_ai`. */
  fpr: number;
  /** Expected calibration error, 10 equal-width bins. */
  ece: number;
  /**
   * Share of the AI texts with a verdict that were called `likely_human` (issue 31's bound), and of
   * the human texts with a verdict; only when the items say their verdicts (`likelyHuman`).
   */
  aiLikelyHuman?: number;
  humanLikelyHuman?: number;
}

export function auroc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const n = scores.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  let nPos = 0;
  let rankSum = 0;
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && scores[order[j + 1]!] === scores[order[i]!]) j++;
    const rank = (i + j) / 2 + 1; // average rank of ties
    for (let k = i; k <= j; k++)
      if (labels[order[k]!] === 1) {
        nPos++;
        rankSum += rank;
      }
    i = j + 1;
  }
  const nNeg = n - nPos;
  if (nPos === 0 || nNeg === 0) return Number.NaN;
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg);
}

/** TPR at the largest threshold t such that at most `fpr` of human scores are > t. */
export function tprAtFpr(scores: ArrayLike<number>, labels: ArrayLike<number>, fpr = 0.01): number {
  const human: number[] = [];
  const ai: number[] = [];
  for (let i = 0; i < scores.length; i++) (labels[i] === 1 ? ai : human).push(scores[i]!);
  if (human.length === 0 || ai.length === 0) return Number.NaN;
  human.sort((a, b) => b - a);
  const k = Math.floor(fpr * human.length);
  const t = human[k]!;
  let hit = 0;
  for (const s of ai) if (s > t) hit++;
  return hit / ai.length;
}

export function ece(probs: ArrayLike<number>, labels: ArrayLike<number>, bins = 10): number {
  const cnt = new Float64Array(bins);
  const sumP = new Float64Array(bins);
  const sumY = new Float64Array(bins);
  for (let i = 0; i < probs.length; i++) {
    const b = Math.min(bins - 1, Math.floor(probs[i]! * bins));
    cnt[b]! += 1;
    sumP[b]! += probs[i]!;
    sumY[b]! += labels[i]!;
  }
  let e = 0;
  for (let b = 0; b < bins; b++) if (cnt[b]! > 0) e += Math.abs(sumP[b]! - sumY[b]!);
  return probs.length ? e / probs.length : Number.NaN;
}

export function metricRow(items: Scored[]): MetricRow {
  const p = items.map((x) => x.p);
  const y = items.map((x) => x.y);
  const nAi = y.filter((v) => v === 1).length;
  const nHuman = items.length - nAi;
  let tp = 0,
    fp = 0;
  for (const it of items) if (it.flagged) it.y === 1 ? tp++ : fp++;
  return {
    n: items.length,
    nHuman,
    nAi,
    auroc: auroc(p, y),
    tprAt1: tprAtFpr(p, y, 0.01),
    tpr: nAi ? tp / nAi : Number.NaN,
    fpr: nHuman ? fp / nHuman : Number.NaN,
    ece: ece(p, y),
    ...(items.some((x) => x.likelyHuman !== undefined) ? likelyHumanRates(items) : {}),
  };
}

function likelyHumanRates(items: Scored[]): { aiLikelyHuman: number; humanLikelyHuman: number } {
  const rate = (label: 0 | 1): number => {
    const withVerdict = items.filter((x) => x.y === label && x.verdictGiven !== false);
    return withVerdict.length ? withVerdict.filter((x) => x.likelyHuman).length / withVerdict.length : Number.NaN;
  };
  return { aiLikelyHuman: rate(1), humanLikelyHuman: rate(0) };
}

function fmt(x: number, digits = 3): string {
  return Number.isNaN(x) ? '–' : x.toFixed(digits);
}

/** A table of metric rows, plain text or GitHub markdown. */
export function formatTable(rows: Array<[string, MetricRow]>, markdown: boolean, groupTitle = 'group'): string {
  // The likely_human columns only where the rows carry them (`textdetect eval`).
  const lh = rows.some(([, r]) => r.aiLikelyHuman !== undefined);
  const head = [
    groupTitle,
    'n',
    'human',
    'ai',
    'AUROC',
    'TPR@1%FPR',
    'TPR@verdict',
    'FPR@verdict',
    'ECE',
    ...(lh ? ['AI→likely_human', 'human→likely_human'] : []),
  ];
  const body = rows.map(([name, r]) => [
    name,
    String(r.n),
    String(r.nHuman),
    String(r.nAi),
    fmt(r.auroc),
    fmt(r.tprAt1),
    fmt(r.tpr),
    fmt(r.fpr),
    fmt(r.ece),
    ...(lh ? [fmt(r.aiLikelyHuman ?? Number.NaN), fmt(r.humanLikelyHuman ?? Number.NaN)] : []),
  ]);
  if (markdown) {
    const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
    return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...body.map(line)].join('\n');
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}
