/**
 * `npm run eval:polish [-- options]`: AI-polished vs AI-written (issue 31), on the dev texts that say
 * how the AI was used (`contribution` in `v4-dev.jsonl`: polished, rewritten, generated, humanized).
 *
 * Every text goes through `detect(text, { mode })` as a client would send it. Prints:
 * - the AUROC of `polished_probability` between polished + rewritten texts (positive) and AI-written
 *   ones (generated + humanized), over all of them and over those called `likely_ai`, overall and
 *   per source;
 * - the headline's confusion table per contribution (and human texts): `human` (likely_human),
 *   `ai_polished` (likely_ai and polished_probability ≥ POLISHED_THRESHOLD), `ai_written` (likely_ai, below it),
 *   `uncertain` (mixed, or too little evidence);
 * - the share of polished and rewritten texts shown as plain AI-written (target ≤ 20%).
 *
 * Options: --input FILE[,FILE] (default ../shared/data/v4-dev.jsonl), --model PATH, --markdown
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDetector, UnsupportedLanguageError, type DetectionResult } from '../src/detector/index.ts';
import { auroc } from '../src/detector/metrics.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { table } from './lib/table.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INPUT = (arg('--input') ?? resolve(ROOT, '../shared/data/v4-dev.jsonl')).split(',').filter(Boolean);
const MARKDOWN = process.argv.includes('--markdown');
const MODEL = arg('--model');

type Headline = 'human' | 'ai_polished' | 'ai_written' | 'uncertain';
const HEADLINES: Headline[] = ['human', 'ai_polished', 'ai_written', 'uncertain'];

/** The answer's own headline (`originOf`); without segments it is never `partly_ai`. */
const headlineOf = (r: DetectionResult): Headline => r.origin as Headline;

/** What the text is: `human`, or the AI record's contribution (`generated` when the record has none). */
function kindOf(row: CorpusRow): string {
  return row.label === 'human' ? 'human' : (row.contribution ?? 'generated');
}

const isPolished = (kind: string): boolean => kind === 'polished' || kind === 'rewritten';

interface Item {
  row: CorpusRow;
  kind: string;
  r: DetectionResult;
}

async function main(): Promise<void> {
  const detector = await createDetector(MODEL ? { model: MODEL } : {});
  const rows = INPUT.flatMap((p) => readJsonl<CorpusRow>(p));
  const items: Item[] = [];
  let unsupported = 0;
  for (const row of rows) {
    try {
      items.push({ row, kind: kindOf(row), r: detector.detect(row.text, { mode: row.mode }) });
    } catch (err) {
      if (err instanceof UnsupportedLanguageError) unsupported++;
      else throw err;
    }
  }
  console.log(`model ${detector.model}; ${rows.length} texts, ${unsupported} in an unsupported language`);

  // AUROC of polished_probability: polished + rewritten (1) vs generated + humanized (0), AI texts with a probability.
  const aurocOf = (list: Item[]): { auc: number; pos: number; neg: number } => {
    const ai = list.filter((x) => x.kind !== 'human' && x.r.polished_probability !== null);
    const y = ai.map((x) => (isPolished(x.kind) ? 1 : 0));
    return {
      auc: auroc(
        ai.map((x) => x.r.polished_probability!),
        y,
      ),
      pos: y.filter((v) => v === 1).length,
      neg: y.filter((v) => v === 0).length,
    };
  };
  const fmt = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(3));
  const groups: Array<[string, Item[]]> = [['all', items]];
  for (const src of [...new Set(items.map((x) => x.row.source))].sort()) groups.push([src, items.filter((x) => x.row.source === src)]);
  const aucRows = groups.flatMap(([name, list]) => {
    const all = aurocOf(list);
    const flagged = aurocOf(list.filter((x) => x.r.verdict === 'likely_ai'));
    if (all.pos === 0 && all.neg === 0) return [];
    return [[name, String(all.pos), String(all.neg), fmt(all.auc), String(flagged.pos + flagged.neg), fmt(flagged.auc)]];
  });
  console.log('\nAUROC of polished_probability, polished + rewritten vs generated + humanized:');
  console.log(table(['source', 'polished', 'written', 'AUROC', 'likely_ai', 'AUROC (likely_ai)'], aucRows, MARKDOWN));

  // Confusion table of the headline per contribution.
  const kinds = ['human', 'polished', 'rewritten', 'generated', 'humanized'].filter((k) => items.some((x) => x.kind === k));
  const confusion = kinds.map((k) => {
    const list = items.filter((x) => x.kind === k);
    const count = (h: Headline): number => list.filter((x) => headlineOf(x.r) === h).length;
    return [k, String(list.length), ...HEADLINES.map((h) => `${count(h)} (${((100 * count(h)) / Math.max(1, list.length)).toFixed(1)}%)`)];
  });
  console.log('\nHeadline per contribution (rows: what the text is; columns: what the answer says):');
  console.log(table(['text', 'n', ...HEADLINES], confusion, MARKDOWN));

  const polished = items.filter((x) => isPolished(x.kind));
  const shownWritten = polished.filter((x) => headlineOf(x.r) === 'ai_written').length;
  const flagged = polished.filter((x) => x.r.verdict === 'likely_ai').length;
  console.log(
    `\nPolished and rewritten texts shown as plain AI-written: ${shownWritten} of ${polished.length} (${((100 * shownWritten) / Math.max(1, polished.length)).toFixed(1)}%; target ≤ 20%); ` +
      `of those called likely_ai: ${shownWritten} of ${flagged} (${((100 * shownWritten) / Math.max(1, flagged)).toFixed(1)}%)`,
  );
  const written = items.filter((x) => x.kind === 'generated' || x.kind === 'humanized');
  const writtenPolished = written.filter((x) => headlineOf(x.r) === 'ai_polished').length;
  const writtenFlagged = written.filter((x) => x.r.verdict === 'likely_ai').length;
  console.log(
    `AI-written texts (generated, humanized) shown as polished: ${writtenPolished} of ${written.length} (${((100 * writtenPolished) / Math.max(1, written.length)).toFixed(1)}%); of those called likely_ai: ${writtenPolished} of ${writtenFlagged} (${((100 * writtenPolished) / Math.max(1, writtenFlagged)).toFixed(1)}%)`,
  );
}

await main();
