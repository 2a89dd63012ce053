/**
 * The known label shortcuts of the training corpora, and how training takes them out (`npm run
 * train` applies `neutralise` to the training texts unless `--keep-shortcuts`; `scripts/
 * shortcut-dev.ts` applies it to the dev files, to measure how much a model leaned on them).
 */
import type { CorpusRow } from '../../src/detector/training.ts';

/**
 * Known label shortcuts of the v3 sources (DATA.md caveats), taken out of the training texts so
 * that the model cannot learn them: they do not transfer to other generators or other writers.
 * - HC3-Plus: ChatGPT's paraphrased ELI5 questions open with `Can you …` (460 AI, 1 human), and
 *   the human ELI5 questions end with HC3's appended `Explain like I'm five.`: the AI texts that
 *   open with `Can you` are left out, and the appended sentence is cut from human texts.
 * - Showerthoughts: AI posts end with a period more often (86% of ChatGPT's, 56% of human ones):
 *   the final period is cut from both classes, so whether a post ends with one says nothing here.
 * Letter case needs nothing here: features are computed on lower-cased text.
 * Returns the rows kept, with their text changed where a shortcut was cut.
 */
export function neutralise(rows: CorpusRow[]): { rows: CorpusRow[]; dropped: number; changed: number } {
  let dropped = 0;
  let changed = 0;
  const out: CorpusRow[] = [];
  for (const row of rows) {
    let text = row.text;
    if (row.source === 'hc3plus-en') {
      if (row.label === 'ai' && /^\s*can you\b/i.test(text)) {
        dropped++;
        continue;
      }
      text = text.replace(/\s*explain like i'?m five\.?\s*$/i, '');
    } else if (row.source === 'showerthoughts') {
      text = text.replace(/(?<![.])\.\s*$/, '');
    }
    if (text !== row.text) changed++;
    out.push(text === row.text ? row : { ...row, text });
  }
  return { rows: out, dropped, changed };
}
