/**
 * `npx tsx scripts/shortcut-dev.ts [--data DIR] [--out DIR]`: writes copies of the dev files with the
 * known label shortcuts taken out as `npm run train` takes them out of its training texts
 * (`scripts/lib/shortcuts.ts`: HC3-Plus `Can you …` AI texts left out and `Explain like I'm five.`
 * cut from human ones, the final period of Showerthoughts posts cut), and prints the eval command.
 * A model's AUROC on these copies against the originals says how much it leaned on the shortcuts.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import { neutralise } from './lib/shortcuts.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const OUT = arg('--out') ? resolve(arg('--out')!) : mkdtempSync(join(tmpdir(), 'textdetect-shortcuts-'));
mkdirSync(OUT, { recursive: true });
const written: string[] = [];
for (const name of ['v3-dev', 'corpus-dev', 'extra-dev']) {
  const { rows, dropped, changed } = neutralise(readJsonl<CorpusRow>(join(DATA, `${name}.jsonl`)));
  const path = join(OUT, `${name}-noshortcuts.jsonl`);
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  written.push(path);
  console.error(`${name}: ${rows.length} texts written, ${dropped} left out, ${changed} cut`);
}
console.log(`npx textdetect eval --input ${written.join(',')} --by file,source,length`);
