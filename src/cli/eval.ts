/**
 * `textdetect eval --input FILE.jsonl [--by source|mode|language|generator] [--markdown] [--model PATH]`
 *
 * Scores a labelled JSONL file with the in-process detector and prints n, AUROC, TPR at 1% FPR,
 * TPR and FPR at the verdict threshold, ECE, and the shares of AI and human texts called likely_human
 * (of those with a verdict), overall and per group. Each line:
 * `{ text, label: "human" | "ai", mode?, language?, source?, generator? }`. The language is
 * identified by the engine (as in production) unless `--trust-language` is given; lines in an
 * unsupported language are counted and left out of the metrics.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { countWords } from '../detector/engine.ts';
import { createDetector, MODES, UnsupportedLanguageError, type Mode } from '../detector/index.ts';
import { identifyLanguage } from '../detector/language.ts';
import { formatTable, metricRow, type MetricRow, type Scored } from '../detector/metrics.ts';

const GROUPINGS = ['source', 'mode', 'language', 'generator', 'length', 'file'] as const;
type Grouping = (typeof GROUPINGS)[number];

const USAGE = `Usage: textdetect eval --input FILE.jsonl[,FILE2.jsonl…] [--by source|mode|language|generator|length|file] [--markdown] [--model PATH] [--trust-language]

Each input line is a JSON object {"text": "...", "label": "human"|"ai", "mode"?: ${MODES.join('|')}, "language"?: "en"|"tr", "source"?, "generator"?}.
Prints n, AUROC, TPR at 1% FPR, TPR/FPR at the verdict threshold (TPR = AI texts called likely_ai,
FPR = human texts called likely_ai), ECE, and the share of AI and of human texts called likely_human
(of those with a verdict, i.e. not under the evidence floor), overall and per group. --by length groups by words
(15-40, 40-80, 80-150, 150+; as the engine counts them); --by file by input file.`;

interface Options {
  input: string;
  by: Grouping[];
  markdown: boolean;
  model?: string;
  trustLanguage: boolean;
}

function parseArgs(argv: string[]): Options | string {
  const o: Options = { input: '', by: [], markdown: false, trustLanguage: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string | undefined => argv[++i];
    if (a === '--input' || a === '-i') o.input = value() ?? '';
    else if (a === '--by') {
      const v = value() ?? '';
      for (const g of v.split(',')) {
        if (!(GROUPINGS as readonly string[]).includes(g)) return `--by must be one of ${GROUPINGS.join(', ')} (got "${g}").`;
        o.by.push(g as Grouping);
      }
    } else if (a === '--markdown') o.markdown = true;
    else if (a === '--trust-language') o.trustLanguage = true;
    else if (a === '--model') {
      const v = value();
      if (!v) return '--model needs a path.';
      o.model = v;
    } else if (a === '--help' || a === '-h') return '';
    else return `Unknown argument "${a}".`;
  }
  if (!o.input) return '--input FILE.jsonl is required.';
  return o;
}

interface Line {
  text: string;
  y: 0 | 1;
  mode: Mode;
  language?: 'en' | 'tr';
  groups: Record<Grouping, string>;
}

/** Length bands of the eval report, by the engine's word count. */
const LENGTH_BANDS: Array<[number, string]> = [
  [150, '150+'],
  [80, '80-150'],
  [40, '40-80'],
  [15, '15-40'],
  [0, '<15'],
];

function lengthBand(text: string, language: 'en' | 'tr' | undefined): string {
  const words = countWords(text, language ?? 'en');
  return LENGTH_BANDS.find(([min]) => words >= min)![1];
}

function parseFiles(paths: string): Line[] | string {
  const out: Line[] = [];
  for (const path of paths.split(',').filter(Boolean)) {
    const lines = parseLines(path);
    if (typeof lines === 'string') return lines;
    out.push(...lines);
  }
  return out;
}

function parseLines(path: string): Line[] | string {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return `Cannot read ${path}: ${(err as Error).message}`;
    // The README's figures name the project's own data files, which a checkout does not have.
    const trainingData = /^(corpus|extra|authors|v3|v4)-(train|dev)\.jsonl$/.test(basename(path));
    return `Cannot read ${path}: there is no such file.${
      trainingData
        ? ' It is part of the project\'s training data, which is not in the repository: README.md, "Training data", says what it is and where it goes.'
        : ''
    }`;
  }
  const out: Line[] = [];
  const lines = raw.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (!l) continue;
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(l) as Record<string, unknown>;
    } catch {
      return `${path}:${i + 1}: not valid JSON.`;
    }
    if (typeof obj.text !== 'string') return `${path}:${i + 1}: "text" must be a string.`;
    const label = obj.label;
    const y = label === 'ai' || label === 1 || label === true ? 1 : label === 'human' || label === 0 || label === false ? 0 : undefined;
    if (y === undefined) return `${path}:${i + 1}: "label" must be "human" or "ai".`;
    const mode = (obj.mode ?? 'general') as Mode;
    if (!(MODES as readonly string[]).includes(mode)) return `${path}:${i + 1}: "mode" must be one of ${MODES.join(', ')}.`;
    const language = obj.language === 'en' || obj.language === 'tr' ? obj.language : undefined;
    // A line that does not say its language is grouped under the one the engine identifies (as it
    // scores it), or "unknown" when that is neither English nor Turkish: never an anonymous "?".
    const guess = language ? undefined : identifyLanguage(obj.text);
    const group = language ?? (guess?.supported && (guess.language === 'en' || guess.language === 'tr') ? guess.language : 'unknown');
    out.push({
      text: obj.text,
      y,
      mode,
      ...(language ? { language } : {}),
      groups: {
        source: typeof obj.source === 'string' ? `${obj.source}/${mode}` : `(none)/${mode}`,
        mode: `${group}:${mode}`,
        language: group,
        generator: typeof obj.generator === 'string' ? obj.generator : label === 'human' ? 'human' : '(unknown)',
        length: lengthBand(obj.text, language),
        file: basename(path),
      },
    });
  }
  return out;
}

export async function run(argv: string[]): Promise<number> {
  const opts = parseArgs(argv);
  if (typeof opts === 'string') {
    // Asked-for help goes to stdout (as every other command's); a usage error to stderr.
    if (!opts) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    console.error(opts);
    console.error(USAGE);
    return 2;
  }
  const lines = parseFiles(opts.input);
  if (typeof lines === 'string') {
    console.error(lines);
    return 2;
  }
  let detector;
  try {
    detector = await createDetector(opts.model ? { model: opts.model } : {});
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const scored: Array<Scored & { line: Line }> = [];
  let unsupported = 0;
  let wrongLanguage = 0;
  const warningCounts = new Map<string, number>();
  for (const line of lines) {
    try {
      const r = detector.detect(line.text, {
        mode: line.mode,
        ...(opts.trustLanguage && line.language ? { language: line.language } : {}),
      });
      if (line.language && r.language !== line.language) wrongLanguage++;
      scored.push({
        p: r.ai_probability,
        y: line.y,
        flagged: r.verdict === 'likely_ai',
        likelyHuman: r.verdict === 'likely_human',
        verdictGiven: !r.warnings.includes('too_little_evidence'),
        line,
      });
      for (const w of r.warnings) warningCounts.set(w, (warningCounts.get(w) ?? 0) + 1);
    } catch (err) {
      if (err instanceof UnsupportedLanguageError) unsupported++;
      else throw err;
    }
  }
  const out: string[] = [];
  out.push(
    `model ${detector.model}; ${lines.length} lines, ${scored.length} scored, ${unsupported} in an unsupported language, ${wrongLanguage} identified as another supported language`,
  );
  if (warningCounts.size > 0)
    out.push(
      `warnings: ${[...warningCounts.entries()]
        .sort()
        .map(([w, n]) => `${w} ${n}`)
        .join(', ')}`,
    );
  out.push('');
  out.push(formatTable([['all', metricRow(scored)]], opts.markdown, 'overall'));
  for (const g of opts.by) {
    const groups = new Map<string, Scored[]>();
    for (const s of scored) {
      const k = s.line.groups[g];
      const list = groups.get(k);
      if (list) list.push(s);
      else groups.set(k, [s]);
    }
    const rows: Array<[string, MetricRow]> = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, metricRow(v)]);
    out.push('');
    out.push(formatTable(rows, opts.markdown, g));
  }
  console.log(out.join('\n'));
  return 0;
}
