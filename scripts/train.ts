/**
 * `npm run train [-- options]`: trains the detector from `../shared/data/corpus-train.jsonl`,
 * calibrates it on held-out folds of train, reports on `corpus-dev.jsonl`, and writes the artifact.
 *
 * Options:
 *   --out PATH     artifact path (default models/detector.bin; written atomically)
 *   --folds N      cross-fitting folds (default 4)
 *   --seed N       seed of every random choice (default 1)
 *   --corpora a,b  corpora to train on (`<name>-train.jsonl`) and report on (`<name>-dev.jsonl`);
 *                  default corpus,extra,v3,v4
 *   --human-max-miss X  per-source cap on the share of instruction-tuned AI texts called likely_human,
 *                  out of fold, per language:mode and length band (default 0.03; 0.5 = the old fixed
 *                  threshold 0.5; base and fine-tuned samplers are not bound, see `isSampler`)
 *   --human-cap X  the highest likely_human threshold of any mode and band (default 0.2; 0.5 = before
 *                  issue 31's third round)
 *   --jobs N       compute the cross-fitting folds' LMs and features in N > 1 child processes (the same
 *                  artifact, byte for byte; on a shared loaded machine the run gets more than one share)
 *   --polish-recall X  operating point of the polished-vs-generated head: the share of polished and
 *                  rewritten training texts (out of fold) that it calls polished (default 0.85)
 *   --polish-extras a,b|none  the head's own signals it reads (POLISH_EXTRA_NAMES of src/detector/polish.ts;
 *                  default all), --polish-trees N its trees (default 150, depth 3; 0 = linear only),
 *                  --polish-sparse-scale X, --polish-l2-dense X, --polish-l2-sparse X, --polish-balance X
 *                  its linear part (defaults 1, 1e-4, 1e-6, 0.5), --no-polish-rewrites: the Learning-to-Rewrite
 *                  and Turkish satire rewrites count as AI-written, not polished (scripts/polish-cv.ts chose these)
 *   --refit-polish FILE  refit only the polish head, from the fold models FILE (`--fold-models`) of the run
 *                  that wrote --from PATH (default models/detector.bin), on the AI training texts of
 *                  --corpora (with v5: the assistant's polishes against its written texts); the document
 *                  model is kept byte for byte, so its scores stay the same; an assistant head is dropped
 *                  (`npm run train:assistant` fits it on the result); writes --out
 *   --loso         instead of training the artifact, leave-one-source-out over train: every source
 *                  held out in turn (LMs, classifier, trees and thresholds fitted without it);
 *                  prints AUROC and likely_ai rates per source, writes models/loso.json
 *   --logo         the same per generator family (writes models/logo.json)
 *   --source-max-fpr X  per-source cap on the share of held-out human texts called likely_ai (default 0.01)
 *   --data DIR     corpus directory (default ../shared/data relative to the repository root)
 *   --exclude-ids FILE  leave out the training texts whose ids FILE lists (JSON with an `ids` array;
 *                  models/author-heldout-ids.json: the tweets of the accounts that the author-level
 *                  model is measured on, so its per-message scores are held out; see scripts/train-author.ts)
 *   --dry-run      train and report without writing the artifact
 *   --aug X        share of training texts that also get a perturbed copy (typos, deleted
 *                  articles) for the classifier; default 0 (off)
 *   --aug-weight X sample weight of a perturbed copy relative to its original (default 0.5)
 *   --aug-labels ai|human|both   which side gets copies (default both)
 *   --aug-max-rate X  the share of misspelled words is drawn from [0.02, X] per copy (default 0.15)
 *   --aug-articles X  share of copies that also lose half their articles (default 0.5)
 *   --epochs N, --lr X, --l2-dense X, --l2-sparse X, --sparse-scale X
 *                  classifier hyper-parameters (defaults below, the ones the artifact was trained with)
 *   --pos-k2 X, --pos-k1 X  interpolation strengths of the tag-trigram LMs (default 5, 5)
 *   --drop a,b     hold these dense features at 0 in training (exact ablation; e.g. for --logo)
 *   --fold-models FILE  write this run's per-fold models (v8-serialised) for `npm run train:segments -- --fold-cache FILE`
 *   --dump-oof FILE  write every training text's out-of-fold raw score (the calibration data) as JSON lines
 *   --excerpts X   share of training texts of 80+ words that also give one 15–40-word excerpt (consecutive
 *                  sentences) as an extra short training text for the classifier (default 1; 0 = off)
 *   --excerpt-weight X  sample weight of such an excerpt relative to a real text (default 0.5)
 *   --source-weight a=x,b=y  extra weight of a source's texts in the classifier (after --balance); `v5-*=x`
 *                  weighs every source whose name begins `v5-`
 *   --twin-weight X  a v5 mirror's human twin gets X times the mirror's classifier weight on top of its own
 *   --no-mirror-lms  texts with `mirror_of` (v5) stay out of the AI-side LMs (classifier and calibration only)
 *   --keep-shortcuts  train on the texts as they are, without neutralising the known shortcuts (see `neutralise`)
 *   --char-order N, --char-min-count N  context length (≤ 4) of the character LMs, and the count under
 *                  which a character n-gram is pruned (default 4, 2)
 *   --short-lex-words N, --short-lex-balance X, --short-lex-l2 X  the short-text lexical model (`short_lex`):
 *                  trained on texts under N words (default 100), per-source balancing exponent (default 0:
 *                  every text alike), L2 of its sparse weights (default 1e-6)
 *   --platt-bands a-b,c-d,…  word-count bands with a Platt scaling of their own (default 5-15,15-40,40-60);
 *                  --platt-bands-per-mode fits them per language:mode where the mode has enough texts
 *   --min-ai-threshold X, --mode-floor mode=x,…  floors of the likely_ai thresholds (default 0.96;
 *                  academic=0.985,legal=0.985,general=0.96)
 *   --linear-weight X  weight of the linear logit in the final score next to the trees' margin
 *                  (default 0.5, chosen by --loso and --logo; 0 = trees only, --no-trees = linear only)
 *
 * Cross-fitting: the AI-side and human-side LMs are features, so a training text's own LM features
 * must come from LMs that did not see it (otherwise the classifier learns "the AI LM knows this
 * text"). Texts are split into K folds; fold k's features use LMs built on the other folds. The
 * classifier's out-of-fold scores then give honest calibration data, so Platt scaling and the
 * 1%-FPR thresholds are fitted on train, and dev stays an untouched report set.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { deleteArticles, misspell } from '../src/detector/attacks.ts';
import { readArtifact, writeArtifact, type ArtifactHeader, type GroupCalibration } from '../src/detector/artifact.ts';
import { withoutAssistantHead } from '../src/detector/assistant.ts';
import { TextDetector, aiThresholdFor, calibrateForLength, countWords, humanThresholdFor } from '../src/detector/engine.ts';
import {
  DENSE_DIM,
  DENSE_NAMES,
  HASH_BITS,
  extractFeatures,
  isWordToken,
  maskRuns,
  sparseFeatures,
  tokenIds,
  tokenize,
  type FeatureVector,
  type LMContext,
  type ShortLexWeights,
} from '../src/detector/features.ts';
import { CharLM, buildCharLM, type CharLMArrays } from '../src/detector/charlm.ts';
import { BigramLM, buildBigramLM, buildCrossMoments, type BigramArrays } from '../src/detector/lm.ts';
import { auroc, formatTable, metricRow, type Scored } from '../src/detector/metrics.ts';
import { POLISHED_THRESHOLD } from '../src/detector/origin.ts';
import { foldModels, type FoldModelData } from './lib/fold-models.ts';
import { polishArtifact, polishLabel, trainPolishHead, type PolishFitOptions, type PolishSample } from './lib/polish-head.ts';
import { POLISH_EXTRA_NAMES, polishExtras, type PolishExtraName } from '../src/detector/polish.ts';
import { neutralise } from './lib/shortcuts.ts';
import { LoadedModel, blendScores, linearScore, oodScore, stackedInput, type LinearWeights } from '../src/detector/model.ts';
import { forestMargin, trainForest, type Forest, type GBDTOptions } from '../src/detector/gbdt.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { buildPosLM, suffixTag, tagSequence, type PosLMArrays, type PosTagger } from '../src/detector/pos.ts';
import {
  buildTaggerTables,
  buildVocab,
  fitPlatt,
  foldOf,
  isSampler,
  loadBrown,
  loadBrownTagged,
  readJsonl,
  rng,
  stableHash,
  thresholdAtFpr,
  trainLogistic,
  type CorpusRow,
  type LROptions,
  type TrainRow,
} from '../src/detector/training.ts';
import { UnsupportedLanguageError, type Language } from '../src/detector/types.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const OUT = resolve(ROOT, arg('--out') ?? 'models/detector.bin');
const FOLDS = Number(arg('--folds') ?? 4);
const SEED = Number(arg('--seed') ?? 1);
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const EXCLUDE_IDS = arg('--exclude-ids') ? resolve(arg('--exclude-ids')!) : undefined;
const LOGO = process.argv.includes('--logo');
const LOSO = process.argv.includes('--loso');
/** The corpora trained on (`<name>-train.jsonl`) and reported on (`<name>-dev.jsonl`). */
const TRAIN_FILES = (arg('--corpora') ?? 'corpus,extra,v3,v4').split(',').filter(Boolean);
// Without its corpora the run would end in a bare ENOENT stack: say what it needs and where that comes from.
const MISSING_DATA = TRAIN_FILES.flatMap((f) => [`${f}-train.jsonl`, `${f}-dev.jsonl`]).filter((f) => !existsSync(join(DATA, f)));
if (MISSING_DATA.length > 0) {
  process.stderr.write(
    `npm run train needs the labelled corpora, JSONL with one {id, text, label, mode, language, source, generator} per line; missing:\n${MISSING_DATA.map((f) => `  ${join(DATA, f)}\n`).join('')}` +
      "They are not in the repository: they are the project's shared data folder, ../shared/data next to the checkout (its DATA.md says how they were built from published research datasets). " +
      'Put that folder there, or point --data DIR at a copy (--corpora a,b picks the <name>-train/-dev.jsonl pairs). ' +
      'The committed models/detector.bin needs none of this: npm start, the CLI and the bots run without the corpora.\n',
  );
  process.exit(2);
}

const LM_OPTS = { discount: 0.75, minCount: Number(arg('--lm-min-count') ?? 2), unigramK: 0.1 };
/** The character LMs (`charlm.ts`): context length (≤ 4) and the count under which an n-gram is pruned. */
const CHAR_OPTS = { discount: 0.75, minCount: Number(arg('--char-min-count') ?? 2), order: Number(arg('--char-order') ?? 4) };
const VOCAB_MAX = 65536;
const LR_OPTS: LROptions = {
  epochs: Number(arg('--epochs') ?? 8),
  lr: Number(arg('--lr') ?? 0.1),
  l2Dense: Number(arg('--l2-dense') ?? 1e-4),
  l2Sparse: Number(arg('--l2-sparse') ?? 1e-6),
  seed: SEED,
  sparseScale: Number(arg('--sparse-scale') ?? 1),
};
const GB_OPTS: GBDTOptions = {
  trees: Number(arg('--trees') ?? 400),
  depth: Number(arg('--depth') ?? 4),
  learningRate: Number(arg('--gb-lr') ?? 0.05),
  lambda: 1,
  minChildWeight: 5,
  bins: 64,
};
/** Weight of the linear logit in the final score, next to the trees' margin (0 = trees only; see `blendScores`). */
const LINEAR_WEIGHT = Number(arg('--linear-weight') ?? 0.5);
/** --no-trees: linear model only (for comparison). */
const USE_TREES = !process.argv.includes('--no-trees') && GB_OPTS.trees > 0;
/** --dry-run: train and report, but do not write the artifact (for experiments). */
const DRY_RUN = process.argv.includes('--dry-run');
const TARGET_FPR = 0.01;
/**
 * Floor of every `likely_ai` threshold. The 1%-per-source rule only covers the sources seen in
 * training; leave-one-source-out showed a new source can sit above all of them (professional L2R
 * rewrites held out: 8.2% of their humans flagged at p 0.85–0.97 under a floor of 0.7). 0.96 was
 * the lowest floor at which every held-out source kept ≤ 2% of its humans flagged
 * (--min-ai-threshold). With the v3 data and the ≤ 1% rule of issue 24, two held-out sources were
 * over 1% under 0.96, both in academic and legal mode (professional L2R academic texts 2.2%, the
 * Latvian law abstracts 1.6%): those modes get 0.985, the lowest floor at which every held-out
 * source keeps ≤ 1% (0.8% and 0.5%); general and financial text stays within 1% held out at 0.96
 * (--mode-floor; `--loso --dump FILE` records each text's threshold without a floor, to check any).
 * In the second v3 round general mode, the mode with the most human sources held out, went to 0.95,
 * the lowest floor at which leave-one-source-out flags no human text that 0.96 did not (0.94 adds
 * one L2R general text); financial mode, with three human sources, stays at 0.96.
 * With the v4 data (issue 31) 0.95 let two of mixset-revised's 190 human texts be flagged with the
 * source held out (1.1%); general mode went back to 0.96, the lowest floor that keeps every
 * held-out source within 1% (one text, 0.5%).
 */
const MIN_AI_THRESHOLD = Number(arg('--min-ai-threshold') ?? 0.96);
const MODE_FLOOR = new Map(
  (arg('--mode-floor') ?? 'academic=0.985,legal=0.985,general=0.96')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const [k, v] = kv.split('=');
      if (!k || !Number.isFinite(Number(v))) throw new Error(`--mode-floor: expected mode=number, got ${kv}`);
      return [k, Number(v)] as [string, number];
    }),
);
/** The floor of a calibration group (`language:mode`); a pooled group (`*`) takes the highest. */
function floorOf(key: string, scale = 1): number {
  const mode = key.slice(key.indexOf(':') + 1);
  const floor = mode === '*' ? Math.max(MIN_AI_THRESHOLD, ...MODE_FLOOR.values()) : (MODE_FLOOR.get(mode) ?? MIN_AI_THRESHOLD);
  return floor * scale;
}
/**
 * Issue 31, a `likely_human` that means it: per language:mode and length band, the likely_human
 * threshold is lowered (from 0.5) until no source has more than this share of its instruction-tuned
 * AI texts under it, out of fold (and the same over all of them); `mixed` takes the in-between.
 * Held out, a family does worse than out of fold, hence the margin under the 5% bound.
 */
const HUMAN_MAX_MISS = Number(arg('--human-max-miss') ?? 0.03);
/**
 * The highest calibrated probability a text may have and still be called likely human, whatever the
 * bound above allows. Where a mode's training AI texts are few or all score high (en:legal at 40–80
 * words), the bound alone left 0.5, so a text the model gives even odds of being AI-written was
 * "likely human": a moderator reads that as cleared. 0.2 asks for four-to-one odds.
 */
const HUMAN_CAP = Number(arg('--human-cap') ?? 0.2);
/** Fewer AI texts of a source than this in a band: the source does not set the band's threshold. */
const HUMAN_GUARD_MIN = 20;
/** Share of polished / rewritten training texts (out of fold) the polish head calls polished (its 0.5). */
const POLISH_RECALL = Number(arg('--polish-recall') ?? 0.85);
/**
 * The polish head's settings (`scripts/lib/polish-head.ts`), chosen by grouped cross-validation on
 * train with `scripts/polish-cv.ts` (docs/detector.md, "AI-polished vs AI-written: the polish head").
 */
const POLISH_TREES = Number(arg('--polish-trees') ?? 150);
const POLISH_OPTS: PolishFitOptions & { rewrites: boolean } = {
  epochs: Number(arg('--epochs') ?? 8),
  lr: Number(arg('--lr') ?? 0.1),
  l2Dense: Number(arg('--polish-l2-dense') ?? 1e-4),
  l2Sparse: Number(arg('--polish-l2-sparse') ?? 1e-6),
  sparseScale: Number(arg('--polish-sparse-scale') ?? 1),
  seed: SEED + 100,
  balance: Number(arg('--polish-balance') ?? 0.5),
  extras: (arg('--polish-extras') ?? POLISH_EXTRA_NAMES.join(','))
    .split(',')
    .filter((n) => n && n !== 'none')
    .map((n) => {
      if (!(POLISH_EXTRA_NAMES as readonly string[]).includes(n)) throw new Error(`--polish-extras: unknown signal ${n}`);
      return n as PolishExtraName;
    }),
  ...(POLISH_TREES > 0
    ? { trees: { trees: POLISH_TREES, depth: 3, learningRate: 0.05, lambda: 1, minChildWeight: 5, bins: 64, linearWeight: 0.5 } }
    : {}),
  rewrites: !process.argv.includes('--no-polish-rewrites'),
};
/** --refit-polish FILE: refit only the polish head, from the fold models FILE of the run that trained `--from`. */
const REFIT_POLISH = arg('--refit-polish');
const REFIT_FROM = resolve(ROOT, arg('--from') ?? 'models/detector.bin');
/** Per-source cap on the share of human texts flagged (checked on out-of-fold scores). */
const SOURCE_MAX_FPR = Number(arg('--source-max-fpr') ?? 0.01);
const SOURCE_GUARD_MIN = 20;
/** Exponent of the per-source balancing of sample weights (0 = none, 1 = every cell weighs the same in total). */
const BALANCE = Number(arg('--balance') ?? 0.5);
/** Word counts where a new threshold band starts (length-grouped thresholds); --no-length-bands disables. */
const LENGTH_BANDS = process.argv.includes('--no-length-bands') ? [] : [40, 80];
const BAND_MIN_HUMANS = 50;
const USE_SOURCE_GUARD = !process.argv.includes('--no-source-guard');
/**
 * Robustness augmentation: this share of training texts (human and AI alike) gets a perturbed copy
 * (see `augment`), so the classifier cannot learn "typos = human" from student essays, which a
 * misspelling attack exploits. Copies train the classifier only: never the LMs, never calibration.
 * Off by default: once the out-of-vocabulary-rate feature was dropped, its gain on the attack
 * evaluation was within seed noise, and it pushed one human dev abstract to the top score in every
 * run (docs/detector.md, "Robustness to attacks").
 */
const AUG_FRAC = Number(arg('--aug') ?? 0);
const AUG_WEIGHT = Number(arg('--aug-weight') ?? 0.5);
/** Which side gets perturbed copies: `ai`, `human` or `both` (copying only the AI side teaches "typos = AI"). */
const AUG_LABELS = arg('--aug-labels') ?? 'both';
const AUG_MAX_RATE = Number(arg('--aug-max-rate') ?? 0.15);
const AUG_ARTICLES = Number(arg('--aug-articles') ?? 0.5);
/**
 * Short training texts cut from longer ones: a 15–40-word run of consecutive sentences of a
 * training text (same label, same fold), so the classifier learns what a few sentences of every
 * kind of text look like, not only what the few short sources (tweets, Showerthoughts, HC3-Plus
 * fragments) look like. Classifier only: never the LMs, never calibration.
 */
const EXCERPT_FRAC = Number(arg('--excerpts') ?? 1);
const EXCERPT_WEIGHT = Number(arg('--excerpt-weight') ?? 0.5);
const SOURCE_WEIGHT = new Map(
  (arg('--source-weight') ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const [k, v] = kv.split('=');
      if (!k || !Number.isFinite(Number(v))) throw new Error(`--source-weight: expected name=number, got ${kv}`);
      return [k, Number(v)] as [string, number];
    }),
);
/** `--source-weight v5-*=x`: a name ending in `*` weighs every source it begins (a family of sources). */
function sourceWeight(source: string): number {
  const exact = SOURCE_WEIGHT.get(source);
  if (exact !== undefined) return exact;
  for (const [k, v] of SOURCE_WEIGHT) if (k.endsWith('*') && source.startsWith(k.slice(0, -1))) return v;
  return 1;
}
/**
 * --no-mirror-lms: texts that mirror a human text (`mirror_of`, the v5 family) train the classifier,
 * the short-text lexical model and calibration, but not the AI-side word, tag and character LMs, so
 * the older corpora's LM features stay as they were (a trial of issue 38: the LMs are shared by every
 * family, and a new family in them moves every older text's features).
 */
const MIRRORS_IN_LMS = !process.argv.includes('--no-mirror-lms');
/**
 * --twin-weight X: a human text that a training mirror mirrors gets X times that mirror's weight on
 * top of its own in the classifier (`sampleWeights`; 0 = off), so each pair is learnt as a pair.
 */
const TWIN_WEIGHT = Number(arg('--twin-weight') ?? 0);
const KEEP_SHORTCUTS = process.argv.includes('--keep-shortcuts');
/** Interpolation strengths of the tag-trigram LMs (see `buildPosLM`). */
const POS_OPTS = { k2: Number(arg('--pos-k2') ?? 5), k1: Number(arg('--pos-k1') ?? 5) };
/** Set once in main: the lexicon tagger and Brown's tag sequences (they do not depend on the fold). */
let TAGGER: PosTagger;
let TAGGER_SUFFIX: Array<[string, number]>;
let TAG_NAMES: string[];
let BROWN_TAGS: Uint8Array[];
/** Brown's texts as features see them (lower-cased, normalised), for the human character LM. */
let BROWN_LOWER: string[];

const t0 = Date.now();
const log = (msg: string): void => console.error(`[train ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

interface Doc {
  row: CorpusRow;
  lower: string;
  tokens: string[];
  ids: Uint16Array;
  /** Part-of-speech tag sequence (lexicon tagger). */
  tags: Uint8Array;
  fold: number;
  y: 0 | 1;
  /** Word tokens, as the engine counts them (for length-banded thresholds). */
  words: number;
  /** A perturbed copy or an excerpt (classifier training only: not LMs, not calibration). */
  aug?: boolean;
  /** An excerpt of a longer training text (see `excerptDocs`). */
  excerpt?: boolean;
}

function prepare(rows: CorpusRow[]): Array<Omit<Doc, 'ids' | 'tags'>> {
  return rows.map((row) => prepareOne(row, row.text));
}

function prepareOne(row: CorpusRow, text: string, aug = false, excerpt = false): Omit<Doc, 'ids' | 'tags'> {
  const lower = lowerForFeatures(normalize(text).text, row.language);
  const tokens = tokenize(lower);
  return {
    row,
    lower,
    tokens,
    words: tokens.filter(isWordToken).length,
    fold: foldOf(row, FOLDS),
    y: row.label === 'ai' ? 1 : 0,
    ...(aug ? { aug } : {}),
    ...(excerpt ? { excerpt } : {}),
  };
}

/**
 * One 15–40-word excerpt (consecutive sentences from a start fixed by a hash) of a share of the
 * original training texts of 80+ words, as extra short training texts (`--excerpts`).
 */
function excerptDocs(rows: Array<Omit<Doc, 'ids' | 'tags'>>): Array<Omit<Doc, 'ids' | 'tags'>> {
  if (EXCERPT_FRAC <= 0) return [];
  const out: Array<Omit<Doc, 'ids' | 'tags'>> = [];
  const segmenters = new Map<Language, Intl.Segmenter>();
  for (const d of rows) {
    if (d.aug || d.words < 80) continue;
    const rand = rng(SEED ^ stableHash(`excerpt:${d.row.id}`));
    if (rand() >= EXCERPT_FRAC) continue;
    const seg = segmenters.get(d.row.language) ?? new Intl.Segmenter(d.row.language, { granularity: 'sentence' });
    segmenters.set(d.row.language, seg);
    const sentences = [...seg.segment(normalize(d.row.text).text)].map((x) => x.segment);
    let text = '';
    let words = 0;
    for (let i = stableHash(`train-excerpt:${d.row.id}`) % sentences.length; i < sentences.length && words < 15; i++) {
      text += sentences[i]!;
      words = tokenize(lowerForFeatures(text, d.row.language)).filter(isWordToken).length;
    }
    if (words < 15 || words >= 40) continue;
    out.push(prepareOne(d.row, text.trim(), true, true));
  }
  return out;
}

/**
 * Perturbed copies of a share of the training texts, in the same fold as their original (so
 * cross-fitting stays honest). Perturbations: typos in 2–15% of words, and for half of the English
 * texts also half of the articles deleted. The synonym, spelling and other attacks of
 * `scripts/attack-eval.ts` are deliberately not used here, so that they stay held-out checks.
 */
function augment(rows: Array<Omit<Doc, 'ids' | 'tags'>>): Array<Omit<Doc, 'ids' | 'tags'>> {
  if (AUG_FRAC <= 0) return [];
  const out: Array<Omit<Doc, 'ids' | 'tags'>> = [];
  for (const d of rows) {
    const rand = rng(SEED ^ stableHash(`aug:${d.row.id}`));
    if (rand() >= AUG_FRAC || (AUG_LABELS !== 'both' && AUG_LABELS !== d.row.label)) continue;
    const ctx = { language: d.row.language };
    let text = misspell(0.02 + (AUG_MAX_RATE - 0.02) * rand())(d.row.text, rand, ctx);
    if (rand() < AUG_ARTICLES) text = deleteArticles(0.5)(text, rand, ctx);
    out.push(prepareOne(d.row, text, true));
  }
  return out;
}

interface LMSet {
  human: BigramArrays;
  ai: BigramArrays;
  cross: { mu: Float32Array; sigma2: Float32Array };
  posHuman: PosLMArrays;
  posAi: PosLMArrays;
  charHuman: CharLMArrays;
  charAi: CharLMArrays;
  shortLex: ShortLexWeights;
}

/** Texts under this many words (real ones and excerpts) train the short-text lexical model (`short_lex`). */
const SHORT_LEX_WORDS = Number(arg('--short-lex-words') ?? 100);
/** Per-source balancing of the short-text lexical model's texts (0: every text weighs the same; see `sampleWeights`). */
const SHORT_LEX_BALANCE = Number(arg('--short-lex-balance') ?? 0);
const SHORT_LEX_OPTS: LROptions = { ...LR_OPTS, l2Dense: 0, l2Sparse: Number(arg('--short-lex-l2') ?? 1e-6) };
const sparseCache = new WeakMap<Doc, FeatureVector>();
/** The dense part of every sparse-only vector: the short-text model reads none of it. */
const NO_DENSE = new Float64Array(DENSE_DIM);
/** A sparse-only feature vector of a doc, cached: it does not depend on the fold. */
function sparseOnly(d: Doc): FeatureVector {
  let f = sparseCache.get(d);
  if (!f) {
    f = { dense: NO_DENSE, ...sparseFeatures(maskRuns(d.lower), d.tokens), words: d.words };
    sparseCache.set(d, f);
  }
  return f;
}

/**
 * The short-text lexical model: logistic regression over the hashed word and character n-grams
 * alone, fitted on the short texts among `docs` (real short texts, and excerpts of longer ones).
 */
function fitShortLex(docs: Doc[]): ShortLexWeights {
  const short = docs.filter((d) => d.words < SHORT_LEX_WORDS);
  const weights = sampleWeights(short, SHORT_LEX_BALANCE);
  const rows: TrainRow[] = short.map((d, i) => ({ f: sparseOnly(d), z: NO_DENSE, y: d.y, w: weights[i]! }));
  const w = trainLogistic(rows, NO_DENSE, NO_DENSE, SHORT_LEX_OPTS);
  return { bias: w.bias, weights: w.sparse };
}

/** LMs from the original texts; the short-text lexical model from `lexDocs` (which may include excerpts). */
function buildLMs(humanDocs: Doc[], allAiDocs: Doc[], vocabSize: number, brownIds: Uint16Array[], lexDocs: Doc[]): LMSet {
  const aiDocs = MIRRORS_IN_LMS ? allAiDocs : allAiDocs.filter((d) => !d.row.mirror_of);
  const human = buildBigramLM([...brownIds, ...humanDocs.map((d) => d.ids)], vocabSize, LM_OPTS);
  const ai = buildBigramLM(
    aiDocs.map((d) => d.ids),
    vocabSize,
    LM_OPTS,
  );
  const nTags = TAGGER.nTags;
  return {
    human,
    ai,
    cross: buildCrossMoments(ai, human),
    posHuman: buildPosLM([...BROWN_TAGS, ...humanDocs.map((d) => d.tags)], nTags, POS_OPTS),
    posAi: buildPosLM(
      aiDocs.map((d) => d.tags),
      nTags,
      POS_OPTS,
    ),
    charHuman: buildCharLM([...BROWN_LOWER, ...humanDocs.map((d) => d.lower)], CHAR_OPTS),
    charAi: buildCharLM(
      aiDocs.map((d) => d.lower),
      CHAR_OPTS,
    ),
    shortLex: fitShortLex(lexDocs),
  };
}

function lmContext(vocab: Map<string, number>, a: LMSet): LMContext {
  return {
    vocab,
    human: new BigramLM(a.human),
    ai: new BigramLM(a.ai),
    cross: a.cross,
    pos: { tagger: TAGGER, human: a.posHuman, ai: a.posAi },
    char: { human: new CharLM(a.charHuman), ai: new CharLM(a.charAi) },
    shortLex: a.shortLex,
  };
}

/** Fold k's LMs (built without fold k) and the features of fold k's docs under them. */
function crossFitFold(
  k: number,
  train: Doc[],
  brownIds: Uint16Array[],
  vocab: Map<string, number>,
): { set: LMSet; idx: number[]; feats: FeatureVector[] } {
  const human = train.filter((d) => !d.aug && d.fold !== k && d.y === 0);
  const ai = train.filter((d) => !d.aug && d.fold !== k && d.y === 1);
  const set = buildLMs(
    human,
    ai,
    vocab.size,
    brownIds,
    train.filter((d) => d.fold !== k),
  );
  const ctx = lmContext(vocab, set);
  const idx: number[] = [];
  const feats: FeatureVector[] = [];
  train.forEach((d, i) => {
    if (d.fold !== k) return;
    idx.push(i);
    feats.push(extractFeatures(d.lower, d.row.language, ctx));
  });
  return { set, idx, feats };
}

/**
 * --jobs N (N > 1): the folds' LMs and features are computed by child processes of this script
 * (`--fold-worker k:FILE`, each redoing the deterministic setup), so a loaded machine gives the run
 * more than one process's share; the result is the same as in one process.
 */
const JOBS = Number(arg('--jobs') ?? 1);
const FOLD_WORKER = arg('--fold-worker');

async function foldsInWorkers(): Promise<Array<{ set: LMSet; idx: number[]; feats: FeatureVector[] }>> {
  const dir = mkdtempSync(join(tmpdir(), 'textdetect-folds-'));
  const argv = process.argv.slice(2).filter((a, i, all) => a !== '--jobs' && all[i - 1] !== '--jobs');
  const run = (k: number): Promise<void> =>
    new Promise((done, fail) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), ...argv, '--fold-worker', `${k}:${join(dir, `fold-${k}.bin`)}`],
        { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT },
      );
      child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`fold worker ${k} failed (exit ${code})`))));
    });
  await Promise.all(Array.from({ length: FOLDS }, (_, k) => run(k)));
  const out = Array.from({ length: FOLDS }, (_, k) => v8.deserialize(readFileSync(join(dir, `fold-${k}.bin`))));
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** Cross-fitted features for the training docs plus final LMs (on all training docs). */
async function crossFit(
  train: Doc[],
  brownIds: Uint16Array[],
  vocab: Map<string, number>,
): Promise<{ feats: FeatureVector[]; final: LMSet; contexts: LMContext[]; sets: LMSet[] }> {
  const feats: FeatureVector[] = new Array(train.length);
  const contexts: LMContext[] = [];
  const sets: LMSet[] = [];
  const workers = JOBS > 1 ? foldsInWorkers() : undefined;
  const orig = train.filter((d) => !d.aug);
  const final = buildLMs(
    orig.filter((d) => d.y === 0),
    orig.filter((d) => d.y === 1),
    vocab.size,
    brownIds,
    train,
  );
  const folds = workers ? await workers : Array.from({ length: FOLDS }, (_, k) => crossFitFold(k, train, brownIds, vocab));
  for (const fold of folds) {
    sets.push(fold.set);
    contexts.push(lmContext(vocab, fold.set));
    fold.idx.forEach((i, j) => {
      feats[i] = fold.feats[j]!;
    });
  }
  return { feats, final, contexts, sets };
}

/** --drop a,b: dense features held at 0 in training (ablation: the model then cannot use them). */
const DROP = (arg('--drop') ?? '')
  .split(',')
  .filter(Boolean)
  .map((n) => {
    const k = DENSE_NAMES.indexOf(n as (typeof DENSE_NAMES)[number]);
    if (k < 0) throw new Error(`--drop: unknown dense feature ${n}`);
    return k;
  });

function standardiser(feats: FeatureVector[]): { mean: Float64Array; std: Float64Array } {
  const mean = new Float64Array(DENSE_DIM);
  const std = new Float64Array(DENSE_DIM);
  for (const f of feats) for (let k = 0; k < DENSE_DIM; k++) mean[k]! += f.dense[k]!;
  for (let k = 0; k < DENSE_DIM; k++) mean[k]! /= feats.length;
  for (const f of feats) for (let k = 0; k < DENSE_DIM; k++) std[k]! += (f.dense[k]! - mean[k]!) ** 2;
  for (let k = 0; k < DENSE_DIM; k++) std[k] = Math.sqrt(std[k]! / feats.length) || 1;
  return { mean, std };
}

/** Sample weights: each (source, mode, label) cell weighs (mean cell size / its size)^BALANCE, so small sources are not drowned. */
function sampleWeights(docs: Doc[], balance = BALANCE): number[] {
  const cell = (d: Doc): string => `${d.row.source}|${d.row.mode}|${d.y}`;
  const counts = new Map<string, number>();
  for (const d of docs) counts.set(cell(d), (counts.get(cell(d)) ?? 0) + 1);
  const meanSize = docs.length / counts.size;
  const w = docs.map(
    (d) =>
      (meanSize / counts.get(cell(d))!) ** balance * (d.excerpt ? EXCERPT_WEIGHT : d.aug ? AUG_WEIGHT : 1) * sourceWeight(d.row.source),
  );
  if (TWIN_WEIGHT > 0) {
    // Each mirror's weight, times TWIN_WEIGHT, is added to its human twin's: the pair then weighs
    // alike on both sides, so what the classifier can learn from it is who wrote it, not that its
    // genre or topic now comes with more AI texts (which would move every older human of that genre).
    const twinAt = new Map<string, number>();
    docs.forEach((d, i) => {
      if (d.y === 0 && !d.aug) twinAt.set(d.row.id, i);
    });
    const extra = new Float64Array(docs.length);
    docs.forEach((d, i) => {
      const t = d.row.mirror_of === undefined || d.aug ? undefined : twinAt.get(d.row.mirror_of);
      if (t !== undefined) extra[t]! += TWIN_WEIGHT * w[i]!;
    });
    extra.forEach((x, i) => {
      w[i]! += x;
    });
  }
  const avg = w.reduce((a, b) => a + b, 0) / w.length;
  return w.map((x) => x / avg);
}

function makeRows(docs: Doc[], feats: FeatureVector[], mean: Float64Array, std: Float64Array): TrainRow[] {
  const weights = sampleWeights(docs);
  return docs.map((d, i) => {
    const f = feats[i]!;
    const z = new Float64Array(DENSE_DIM);
    for (let k = 0; k < DENSE_DIM; k++) z[k] = (f.dense[k]! - mean[k]!) / std[k]!;
    return { f, z, y: d.y, w: weights[i]! };
  });
}

function groupKey(language: string, mode: string): string {
  return `${language}:${mode}`;
}

/**
 * Word-count bands [min, max) with their own Platt scaling, fitted on the real out-of-fold texts of
 * train of that length (issue 24: "calibration per length band refitted on real short texts"), per
 * language (`--platt-bands lo-hi,…`; `--platt-bands-per-mode`: per language:mode where the mode has
 * PLATT_BAND_MIN texts of each class in the band). Under the first band's lower edge the engine
 * pulls the score towards 0.5 (`shortestCalibrated`); from the last band's upper edge on, the
 * group's own scaling. Bands over 60 words, per language or per mode, fitted dev better but failed
 * leave-one-source-out: fitted without a source, they flagged 4.8–20% of held-out professional L2R
 * academic or Latvian law abstracts (docs/detector.md, "What was tried and did not work").
 */
const PLATT_BANDS: Array<{ lo: number; hi: number }> = (arg('--platt-bands') ?? '5-15,15-40,40-60').split(',').map((b) => {
  const [lo, hi] = b.split('-').map(Number);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new Error(`--platt-bands: expected lo-hi,…, got ${b}`);
  return { lo: lo!, hi: hi! };
});
const PLATT_BANDS_PER_MODE = process.argv.includes('--platt-bands-per-mode');
const PLATT_BAND_MIN = 30;

/** `floorScale` 0: thresholds without any floor (what `--loso --dump` records), 1: with the floors. */
function fitCalibration(docs: Doc[], oof: number[], floorScale = 1): Record<string, GroupCalibration> {
  const groups = new Map<string, number[]>();
  const add = (key: string, i: number): void => {
    const list = groups.get(key) ?? [];
    list.push(i);
    groups.set(key, list);
  };
  docs.forEach((d, i) => {
    add(groupKey(d.row.language, d.row.mode), i);
    add(groupKey(d.row.language, '*'), i);
    add('*:*', i);
  });
  // One Platt scaling per length band, fitted on the language's texts of that length (or, with
  // --platt-bands-per-mode, the group's own where it has enough of both classes).
  const bandFit = (members: number[], lo: number, hi: number): NonNullable<GroupCalibration['plattByLength']>[number] | undefined => {
    const inBand = members.filter((i) => docs[i]!.words >= lo && docs[i]!.words < hi);
    const nAi = inBand.filter((i) => docs[i]!.y === 1).length;
    const nHuman = inBand.length - nAi;
    if (nAi < PLATT_BAND_MIN || nHuman < PLATT_BAND_MIN) return undefined;
    const { a, b } = fitPlatt(
      inBand.map((i) => oof[i]!),
      inBand.map((i) => docs[i]!.y),
    );
    return { minWords: lo, maxWords: hi, a, b, nHuman, nAi };
  };
  // A language's bands are the same for all of its modes: fitted once per language.
  const languageBands = new Map<string, Array<NonNullable<GroupCalibration['plattByLength']>[number] | undefined>>();
  const bandsOf = (key: string, idx: number[]): NonNullable<GroupCalibration['plattByLength']> => {
    const language = key.slice(0, key.indexOf(':'));
    let shared = languageBands.get(language);
    if (!shared) {
      const languageIdx = language === '*' ? idx : (groups.get(groupKey(language, '*')) ?? []);
      shared = PLATT_BANDS.map(({ lo, hi }) => bandFit(languageIdx, lo, hi));
      languageBands.set(language, shared);
    }
    return PLATT_BANDS.flatMap(({ lo, hi }, b) => {
      const own = (PLATT_BANDS_PER_MODE ? bandFit(idx, lo, hi) : undefined) ?? shared[b];
      return own ? [own] : [];
    });
  };
  const out: Record<string, GroupCalibration> = {};
  for (const [key, idx] of [...groups.entries()].sort()) {
    const s = idx.map((i) => oof[i]!);
    const y = idx.map((i) => docs[i]!.y);
    const nAi = y.filter((v) => v === 1).length;
    const nHuman = y.length - nAi;
    if (nAi < 30 || nHuman < 30) continue;
    const { a, b } = fitPlatt(s, y);
    const plattByLength = bandsOf(key, idx);
    const base: GroupCalibration = {
      a,
      b,
      aiThreshold: 1,
      humanThreshold: 0.5,
      nHuman,
      nAi,
      ...(plattByLength.length ? { plattByLength } : {}),
    };
    const humans = idx.filter((i) => docs[i]!.y === 0);
    const threshold = (members: number[]): number => {
      const probs = members.map((i) => calibrateForLength(oof[i]!, base, docs[i]!.words));
      // Guard against the perplexity trap: besides 1% FPR over all of them, no single human
      // source (with enough texts to tell) may see more than SOURCE_MAX_FPR of its texts flagged.
      let sourceGuard = 0;
      const bySource = new Map<string, number[]>();
      members.forEach((i, j) => {
        const list = bySource.get(docs[i]!.row.source) ?? [];
        list.push(probs[j]!);
        bySource.set(docs[i]!.row.source, list);
      });
      for (const ps of bySource.values())
        if (ps.length >= SOURCE_GUARD_MIN) sourceGuard = Math.max(sourceGuard, thresholdAtFpr(ps, SOURCE_MAX_FPR));
      return Math.max(floorOf(key, floorScale), thresholdAtFpr(probs, TARGET_FPR), USE_SOURCE_GUARD ? sourceGuard : 0);
    };
    const aiThreshold = threshold(humans);
    const bands: NonNullable<GroupCalibration['aiThresholdByLength']> = [];
    if (LENGTH_BANDS.length > 0) {
      const edges = [0, ...LENGTH_BANDS, Infinity];
      for (let e = 0; e + 1 < edges.length; e++) {
        const members = humans.filter((i) => docs[i]!.words >= edges[e]! && docs[i]!.words < edges[e + 1]!);
        // Too few human texts in a band to place a 1% threshold: the band keeps the all-length one.
        bands.push({
          minWords: edges[e]!,
          threshold: members.length >= BAND_MIN_HUMANS ? threshold(members) : aiThreshold,
          nHuman: members.length,
        });
      }
    }
    const humanThreshold = Math.min(HUMAN_CAP, aiThreshold);
    const bound = idx.filter((i) => docs[i]!.y === 1 && !isSampler(docs[i]!.row.generator));
    // The highest threshold under which at most HUMAN_MAX_MISS of every source's bound AI texts (and
    // of all of them) fall; a source with too few texts in the band does not set it.
    const humanBound = (members: number[]): number => {
      const probs = members.map((i) => calibrateForLength(oof[i]!, base, docs[i]!.words));
      const at = (ps: number[]): number => {
        const sorted = [...ps].sort((x, z) => x - z);
        return sorted[Math.floor(HUMAN_MAX_MISS * sorted.length)]!;
      };
      let t = members.length >= HUMAN_GUARD_MIN ? at(probs) : humanThreshold;
      const bySource = new Map<string, number[]>();
      members.forEach((i, j) => {
        const list = bySource.get(docs[i]!.row.source) ?? [];
        list.push(probs[j]!);
        bySource.set(docs[i]!.row.source, list);
      });
      for (const ps of bySource.values()) if (ps.length >= HUMAN_GUARD_MIN) t = Math.min(t, at(ps));
      return Math.min(humanThreshold, t);
    };
    const humanBands: NonNullable<GroupCalibration['humanThresholdByLength']> = [];
    if (HUMAN_MAX_MISS < 0.5) {
      const all = humanBound(bound);
      const edges = [0, ...LENGTH_BANDS, Infinity];
      for (let e = 0; e + 1 < edges.length; e++) {
        const members = bound.filter((i) => docs[i]!.words >= edges[e]! && docs[i]!.words < edges[e + 1]!);
        humanBands.push({
          minWords: edges[e]!,
          threshold: members.length >= HUMAN_GUARD_MIN ? humanBound(members) : all,
          nAi: members.length,
        });
      }
    }
    out[key] = {
      ...base,
      aiThreshold,
      ...(bands.length ? { aiThresholdByLength: bands } : {}),
      humanThreshold,
      ...(humanBands.length ? { humanThresholdByLength: humanBands } : {}),
    };
  }
  return out;
}

/**
 * The polished-vs-generated head's training texts: the original AI training texts, each with its
 * cross-fitted features, its out-of-fold raw score and the head's own signals under the LMs of the
 * fold that did not see it (as a new text gets them from the final model).
 */
function polishSamples(
  train: Doc[],
  feats: FeatureVector[],
  oofRaw: readonly number[],
  contexts: readonly LMContext[],
): { idx: number[]; samples: PolishSample[] } {
  const idx = train.map((_, i) => i).filter((i) => train[i]!.y === 1 && !train[i]!.aug);
  const samples = idx.map((i): PolishSample => {
    const d = train[i]!;
    return {
      row: d.row,
      f: feats[i]!,
      extras: polishExtras(d.lower, contexts[d.fold]!, oofRaw[i]!),
      y: polishLabel(d.row, POLISH_OPTS.rewrites),
    };
  });
  return { idx, samples };
}

/**
 * The polish head out of fold (its own group folds) on the v4 training texts of 40+ words, the
 * population of the issue's target: AUROC between polished + rewritten and generated + humanized,
 * and the share of the polished ones at or over the head's 0.5 and the headline's POLISHED_THRESHOLD.
 */
function reportPolish(samples: readonly PolishSample[], oof: readonly number[]): void {
  const v4 = samples.map((_, j) => j).filter((j) => samples[j]!.row.contribution !== undefined && samples[j]!.f.words >= 40);
  const isPolished = (j: number): boolean => ['polished', 'rewritten'].includes(samples[j]!.row.contribution!);
  const pol = v4.filter(isPolished);
  const share = (t: number): string => `${((100 * pol.filter((j) => oof[j]! >= t).length) / Math.max(1, pol.length)).toFixed(1)}%`;
  console.log(
    `\nPolish head, out of fold on v4 train (40+ words): AUROC ${auroc(
      v4.map((j) => oof[j]!),
      v4.map((j) => (isPolished(j) ? 1 : 0)),
    ).toFixed(3)} (${pol.length} polished / rewritten, ${v4.length - pol.length} generated / humanized); ` +
      `polished / rewritten at >= 0.5: ${share(0.5)}, at >= ${POLISHED_THRESHOLD}: ${share(POLISHED_THRESHOLD)}`,
  );
}

/** Dense features that describe register (fluency under the human LM, sentence shape, punctuation), not authorship. */
const OOD_FEATURES = [
  'lmH_mean',
  'lmH_std',
  'uniH_mean',
  'ctx_gain',
  'sent_len_log',
  'sent_len_cv',
  'word_len_mean',
  'word_len_std',
  'mattr',
  'p_comma',
  'p_semicolon',
  'p_colon',
  'p_question',
  'p_exclaim',
  'p_quote',
  'p_paren',
  'p_hyphen',
  'p_number',
  'function_words',
  'rep_bigram',
];
const OOD_CLIP = 8;
/** Share of training texts of a language that its out-of-domain threshold lets through. */
const OOD_QUANTILE = 0.995;
const OOD_MAX_WORDS = 3500;

function fitOod(docs: Doc[], feats: FeatureVector[]): NonNullable<ArtifactHeader['ood']> {
  const idx = OOD_FEATURES.map((n) => DENSE_NAMES.indexOf(n as (typeof DENSE_NAMES)[number]));
  const out: NonNullable<ArtifactHeader['ood']> = {};
  for (const language of [...new Set(docs.map((d) => d.row.language))].sort()) {
    const rows = docs
      .map((d, i) => [d, feats[i]!] as const)
      .filter(([d]) => d.row.language === language && !d.aug)
      .map(([, f]) => f.dense);
    const mean = idx.map((k) => rows.reduce((a, r) => a + r[k]!, 0) / rows.length);
    const std = idx.map((k, j) => Math.sqrt(rows.reduce((a, r) => a + (r[k]! - mean[j]!) ** 2, 0) / rows.length) || 1);
    const o = { features: idx, mean, std, clip: OOD_CLIP, threshold: 0, maxWords: OOD_MAX_WORDS };
    const scores = rows.map((r) => oodScore(r, o)).sort((a, b) => a - b);
    o.threshold = scores[Math.min(scores.length - 1, Math.floor(OOD_QUANTILE * scores.length))]!;
    out[language] = o;
  }
  return out;
}

function lmArrays(prefix: string, a: BigramArrays): Record<string, Float32Array | Uint32Array> {
  return {
    [`${prefix}.keys`]: a.keys,
    [`${prefix}.logp`]: a.logp,
    [`${prefix}.logGamma`]: a.logGamma,
    [`${prefix}.logUni`]: a.logUni,
    [`${prefix}.mu`]: a.mu,
    [`${prefix}.sigma2`]: a.sigma2,
  };
}

function charArrays(prefix: string, a: CharLMArrays): Record<string, Float32Array | Uint32Array> {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [`${prefix}.${k}`, v]));
}

function modelArrays(f: Pick<Fitted, 'final' | 'weights' | 'forest'>): Record<string, Float32Array | Uint32Array> {
  return {
    ...charArrays('char.human', f.final.charHuman),
    ...charArrays('char.ai', f.final.charAi),
    'shortlex.bias': Float32Array.of(f.final.shortLex.bias),
    'shortlex.weights': f.final.shortLex.weights,
    ...lmArrays('human', f.final.human),
    ...lmArrays('ai', f.final.ai),
    'cross.mu': f.final.cross.mu,
    'cross.sigma2': f.final.cross.sigma2,
    'pos.vocabTag': TAGGER.vocabTag,
    'pos.human.logp': f.final.posHuman.logp,
    'pos.human.mu': f.final.posHuman.mu,
    'pos.human.sigma2': f.final.posHuman.sigma2,
    'pos.ai.logp': f.final.posAi.logp,
    'pos.ai.mu': f.final.posAi.mu,
    'pos.ai.sigma2': f.final.posAi.sigma2,
    'w.dense': f.weights.dense,
    'w.sparse': f.weights.sparse,
    ...(f.forest
      ? {
          'gb.feature': new Uint32Array(f.forest.feature.buffer, f.forest.feature.byteOffset, f.forest.feature.length),
          'gb.threshold': f.forest.threshold,
          'gb.leaf': f.forest.leaf,
        }
      : {}),
  };
}

/**
 * The model id: a hash of every array and of the header facts that change a score. `--refit-polish`
 * computes it from the artifact it starts from, as `npm run train` did, so that a refitted head
 * gets the id a full run with the same settings gives.
 */
function modelVersion(arrays: Record<string, Float32Array | Uint32Array>, facts: Record<string, unknown>): string {
  const hash = createHash('sha256');
  for (const a of Object.values(arrays)) hash.update(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  hash.update(JSON.stringify(facts));
  return `td1-${hash.digest('hex').slice(0, 12)}`;
}

/**
 * `--refit-polish FILE`: the polish head alone, refitted on the cross-fitted features that the fold
 * models FILE (`--fold-models` of the run that wrote `--from`) give the training texts, which are the
 * features that run fitted its head on; everything else of `--from` is kept as it is, so the
 * document model's scores do not change. Minutes instead of a full training run.
 */
function refitPolish(train: Doc[]): void {
  // The assistant head's id covers the document model's, polish head included: it is fitted anew on top.
  const from = readArtifact(REFIT_FROM);
  const { header, arrays } = withoutAssistantHead(from.header, from.arrays);
  if (from.header.assistant)
    log(`the assistant head of ${from.header.version} is dropped: npm run train:assistant -- --model ${OUT} fits it again`);
  const data = v8.deserialize(readFileSync(REFIT_POLISH!)) as FoldModelData[];
  if (data.length !== FOLDS) throw new Error(`--refit-polish: ${REFIT_POLISH} has ${data.length} folds, this run ${FOLDS}`);
  const fm = foldModels(header, arrays, data);
  // A fold cache of another run scores the texts differently than that run's out-of-fold calibration: refuse it.
  const probe = train.find((d) => d.y === 1 && !d.aug && d.words >= 40);
  if (probe && fm.foldOf(probe.row) !== probe.fold) throw new Error('--refit-polish: the fold cache assigns other folds');
  const feats: FeatureVector[] = new Array(train.length);
  const raw = new Array<number>(train.length).fill(0);
  train.forEach((d, i) => {
    if (d.y !== 1 || d.aug) return;
    const r = fm.rawLogit(d.fold, normalize(d.row.text).text, d.row.language);
    feats[i] = r.features;
    raw[i] = r.raw;
  });
  log('polish refit: cross-fitted features of the AI training texts');
  const mean = Float64Array.from(header.dense.mean);
  const std = Float64Array.from(header.dense.std);
  const ps = polishSamples(train, feats, raw, fm.lm);
  const fittedPolish = trainPolishHead(ps.samples, mean, std, POLISH_OPTS, POLISH_RECALL);
  reportPolish(ps.samples, fittedPolish.oof);
  const polish = polishArtifact(fittedPolish.head);
  log(`polish head done (a=${polish.header.a.toFixed(3)}, b=${polish.header.b.toFixed(3)})`);
  const kept = Object.fromEntries(Object.entries(arrays).filter(([name]) => !name.startsWith('polish.')));
  const out = { ...kept, ...polish.arrays };
  const version = modelVersion(out, {
    calibration: header.calibration,
    ood: header.ood,
    vocabList: header.vocab,
    mean: header.dense.mean,
    std: header.dense.std,
    bias: header.bias,
    forest: header.forest ? [header.forest.base, header.forest.linearWeight ?? 0] : null,
    polish: polish.header,
  });
  const { arrays: _layout, ...rest } = header;
  const next: Omit<ArtifactHeader, 'arrays'> = {
    ...rest,
    version,
    polish: polish.header,
    training: {
      ...header.training,
      polishRecall: POLISH_RECALL,
      polishHead: POLISH_OPTS,
      polishCorpora: TRAIN_FILES,
      polishRefitFrom: header.version,
    },
  };
  if (DRY_RUN) {
    log(`dry run: ${version} not written`);
    return;
  }
  mkdirSync(dirname(OUT), { recursive: true });
  writeArtifact(OUT, next, out);
  log(`wrote ${OUT} (${version}; document model of ${header.version} kept)`);
}

function evaluate(
  detector: TextDetector,
  rows: CorpusRow[],
): { items: Array<Scored & { row: CorpusRow; likelyHuman: boolean; words: number }>; unsupported: number; wrongLanguage: number } {
  const items: Array<Scored & { row: CorpusRow; likelyHuman: boolean; words: number }> = [];
  let unsupported = 0;
  let wrongLanguage = 0;
  for (const row of rows) {
    try {
      const r = detector.detect(row.text, { mode: row.mode });
      if (r.language !== row.language) wrongLanguage++;
      items.push({
        p: r.ai_probability,
        y: row.label === 'ai' ? 1 : 0,
        flagged: r.verdict === 'likely_ai',
        likelyHuman: r.verdict === 'likely_human',
        words: countWords(row.text, r.language),
        row,
      });
    } catch (err) {
      if (err instanceof UnsupportedLanguageError) unsupported++;
      else throw err;
    }
  }
  return { items, unsupported, wrongLanguage };
}

function groupTable(
  items: Array<Scored & { row: CorpusRow }>,
  by: (r: CorpusRow) => string,
): Array<[string, ReturnType<typeof metricRow>]> {
  const groups = new Map<string, Scored[]>();
  for (const it of items) {
    const k = by(it.row);
    groups.set(k, [...(groups.get(k) ?? []), it]);
  }
  return [
    ['all', metricRow(items)],
    ...[...groups.entries()].sort().map(([k, v]) => [k, metricRow(v)] as [string, ReturnType<typeof metricRow>]),
  ];
}

interface Fitted {
  final: LMSet;
  weights: LinearWeights;
  forest: Forest | undefined;
  /** Out-of-fold margins of the training docs (the final stage: trees if used, else linear). */
  oof: number[];
  mean: Float64Array;
  std: Float64Array;
  /** Cross-fitted features of the training docs. */
  feats: FeatureVector[];
  /** Out-of-fold scorer: the raw score of a text under the LMs, linear model and trees that did not see `fold`. */
  foldScore: (fold: number, lower: string, language: Language) => number;
  /** The fold models themselves (what `scripts/lib/fold-models.ts` rebuilds), for `--fold-models FILE`. */
  foldData: FoldModelData[];
  /** Fold k's LMs (built without fold k), as the features see them. */
  contexts: LMContext[];
}

/** LMs (cross-fitted), linear model, stacked trees; used for the artifact and for every LOGO round. */
async function fitModel(train: Doc[], brownIds: Uint16Array[], vocab: Map<string, number>): Promise<Fitted> {
  const { feats, final, contexts, sets } = await crossFit(train, brownIds, vocab);
  for (const f of feats) for (const k of DROP) f.dense[k] = 0;
  log(`cross-fitted features (${FOLDS} folds); human LM ${final.human.keys.length} bigrams, AI LM ${final.ai.keys.length} bigrams`);
  const { mean, std } = standardiser(feats);
  const rows = makeRows(train, feats, mean, std);
  const oof = new Array<number>(train.length);
  const foldLinear: LinearWeights[] = [];
  const foldForest: Forest[] = [];
  for (let k = 0; k < FOLDS; k++) {
    const w = trainLogistic(
      rows.filter((_, i) => train[i]!.fold !== k),
      mean,
      std,
      { ...LR_OPTS, seed: SEED + k },
    );
    foldLinear.push(w);
    train.forEach((d, i) => {
      if (d.fold === k) oof[i] = linearScore(feats[i]!, w);
    });
  }
  const weights = trainLogistic(rows, mean, std, LR_OPTS);
  log('linear model done');
  let forest: Forest | undefined;
  if (USE_TREES) {
    // Stacking: the trees see the linear model's out-of-fold logit, as they will see an unseen text's logit at run time.
    const xs = train.map((_, i) => stackedInput(feats[i]!, oof[i]!));
    const ys = train.map((d) => d.y);
    const ws = rows.map((r) => r.w);
    const oofTree = new Array<number>(train.length);
    for (let k = 0; k < FOLDS; k++) {
      const idx = train.map((_, i) => i).filter((i) => train[i]!.fold !== k);
      const fk = trainForest(
        idx.map((i) => xs[i]!),
        idx.map((i) => ys[i]!),
        idx.map((i) => ws[i]!),
        GB_OPTS,
      );
      foldForest.push(fk);
      train.forEach((d, i) => {
        if (d.fold === k) oofTree[i] = forestMargin(fk, xs[i]!);
      });
    }
    forest = trainForest(xs, ys, ws, GB_OPTS);
    for (let i = 0; i < oof.length; i++) oof[i] = blendScores(oofTree[i]!, oof[i]!, LINEAR_WEIGHT);
    log(`trees done (${GB_OPTS.trees} × depth ${GB_OPTS.depth})`);
  }
  const foldScore = (fold: number, lower: string, language: Language): number => {
    const f = extractFeatures(lower, language, contexts[fold]!);
    for (const k of DROP) f.dense[k] = 0;
    const lin = linearScore(f, foldLinear[fold]!);
    const fk = foldForest[fold];
    return fk ? blendScores(forestMargin(fk, stackedInput(f, lin)), lin, LINEAR_WEIGHT) : lin;
  };
  const foldData = sets.map((set, k) => ({
    ...set,
    weights: foldLinear[k]!,
    forest: foldForest[k],
    linearWeight: USE_TREES ? LINEAR_WEIGHT : 0,
  }));
  return { final, weights, forest, oof, mean, std, feats, foldScore, foldData, contexts };
}

async function main(): Promise<void> {
  const excluded = EXCLUDE_IDS ? new Set((JSON.parse(readFileSync(EXCLUDE_IDS, 'utf8')) as { ids: string[] }).ids) : undefined;
  const readRows = TRAIN_FILES.flatMap((f) => readJsonl<CorpusRow>(join(DATA, `${f}-train.jsonl`))).filter((r) => !excluded?.has(r.id));
  if (excluded) log(`left out ${excluded.size} listed ids (${EXCLUDE_IDS})`);
  const shortcuts = KEEP_SHORTCUTS ? { rows: readRows, dropped: 0, changed: 0 } : neutralise(readRows);
  const trainRows = shortcuts.rows;
  log(`shortcuts neutralised: ${shortcuts.dropped} texts left out, ${shortcuts.changed} cut`);
  const devSets = TRAIN_FILES.map((f) => [f, readJsonl<CorpusRow>(join(DATA, `${f}-dev.jsonl`))] as const);
  const devRows = devSets.flatMap(([, rows]) => rows);
  log(`read ${trainRows.length} train, ${devRows.length} dev texts from ${DATA}`);
  const brownTexts = loadBrown();
  BROWN_LOWER = brownTexts.map((t) => lowerForFeatures(normalize(t).text, 'en'));
  const brownTokens = BROWN_LOWER.map((t) => tokenize(t));
  const trainPrep = prepare(trainRows);
  const devPrep = prepare(devRows);
  const vocabList = buildVocab([...brownTokens, ...trainPrep.map((d) => d.tokens)], VOCAB_MAX, 2);
  const vocab = new Map(vocabList.map((w, i) => [w, i] as [string, number]));
  const brownIds = brownTokens.map((t) => tokenIds(t, vocab));
  const tables = buildTaggerTables(loadBrownTagged(), (w) => tokenize(lowerForFeatures(normalize(w).text, 'en')));
  TAG_NAMES = tables.tags;
  TAGGER_SUFFIX = [...tables.suffix.entries()];
  TAGGER = {
    nTags: tables.tags.length,
    vocabTag: Uint32Array.from(vocabList, (w) => tables.lexicon.get(w) ?? tables.defaultTag),
    suffix: tables.suffix,
    defaultTag: tables.defaultTag,
  };
  // Words not in Brown's lexicon (training-set words) get the suffix rule, as unknown words do at run time.
  vocabList.forEach((w, i) => {
    if (i > 1 && !tables.lexicon.has(w)) TAGGER.vocabTag[i] = suffixTag(w, TAGGER);
  });
  BROWN_TAGS = brownTokens.map((t, i) => tagSequence(t, brownIds[i]!, TAGGER));
  const withIds = (d: Omit<Doc, 'ids' | 'tags'>): Doc => {
    const ids = tokenIds(d.tokens, vocab);
    return { ...d, ids, tags: tagSequence(d.tokens, ids, TAGGER) };
  };
  const extra = [...augment(trainPrep), ...excerptDocs(trainPrep)];
  log(`${extra.filter((d) => d.excerpt).length} training excerpts, ${extra.filter((d) => !d.excerpt).length} perturbed copies`);
  const train: Doc[] = [...trainPrep, ...extra].map(withIds);
  const _dev: Doc[] = devPrep.map(withIds);
  log(`part-of-speech tagger: ${TAGGER.nTags - 1} tags, lexicon ${tables.lexicon.size} words, ${tables.suffix.size} endings`);
  log(`vocabulary ${vocab.size} tokens; Brown ${brownIds.reduce((a, b) => a + b.length, 0)} tokens`);

  if (FOLD_WORKER) {
    const [k, path] = [Number(FOLD_WORKER.slice(0, FOLD_WORKER.indexOf(':'))), FOLD_WORKER.slice(FOLD_WORKER.indexOf(':') + 1)];
    writeFileSync(path, v8.serialize(crossFitFold(k, train, brownIds, vocab)));
    return;
  }
  if (LOGO || LOSO) {
    await runGroupOut(LOSO ? 'source' : 'generator', train, brownIds, vocab);
    return;
  }
  if (REFIT_POLISH) {
    refitPolish(train);
    return;
  }

  const fitted = await fitModel(train, brownIds, vocab);
  const { final, weights, forest, oof, mean, std, feats } = fitted;
  // Calibration and thresholds from the original texts only: the perturbed copies are not a sample of real input.
  const nOrig = trainPrep.length;
  const calibration = fitCalibration(train.slice(0, nOrig), oof.slice(0, nOrig));
  const ps = polishSamples(train, feats, oof, fitted.contexts);
  const fittedPolish = trainPolishHead(ps.samples, mean, std, POLISH_OPTS, POLISH_RECALL);
  reportPolish(ps.samples, fittedPolish.oof);
  const polishOof = new Map(ps.idx.map((i, j) => [i, fittedPolish.oof[j]!] as [number, number]));
  const polish = polishArtifact(fittedPolish.head);
  log(`polish head done (a=${polish.header.a.toFixed(3)}, b=${polish.header.b.toFixed(3)})`);
  const oofPath = arg('--dump-oof');
  if (oofPath) {
    // The calibration data itself (out-of-fold raw scores), for studying calibration offline.
    const lines = train.slice(0, nOrig).map((d, i) =>
      JSON.stringify({
        id: d.row.id,
        source: d.row.source,
        mode: d.row.mode,
        language: d.row.language,
        y: d.y,
        generator: d.row.generator,
        ...(d.row.contribution ? { contribution: d.row.contribution } : {}),
        words: d.words,
        oof: oof[i],
        ...(polishOof.has(i) ? { polished: polishOof.get(i) } : {}),
      }),
    );
    writeFileSync(oofPath, `${lines.join('\n')}\n`);
  }
  const ood = fitOod(train, feats);
  log('final classifier and calibration done');

  // Out-of-fold report on train (what calibration and thresholds were fitted on).
  const oofItems = train.slice(0, nOrig).map((d, i) => {
    const c = calibration[groupKey(d.row.language, d.row.mode)] ?? calibration[groupKey(d.row.language, '*')]!;
    const p = calibrateForLength(oof[i]!, c, d.words);
    return { p, y: d.y, flagged: p >= aiThresholdFor(c, d.words), row: d.row };
  });
  console.log(
    `\nCalibration per language:mode (Platt a, b; likely_ai threshold at 1% out-of-fold FPR, floor ${MIN_AI_THRESHOLD}, ${[...MODE_FLOOR].map(([m, f]) => `${m} ${f}`).join(', ')}):`,
  );
  for (const [k, c] of Object.entries(calibration)) {
    const bands = (c.aiThresholdByLength ?? [])
      .map((t) => `${t.minWords}+ words: ${t.threshold.toFixed(3)} (${t.nHuman} human)`)
      .join('; ');
    const humanBands = (c.humanThresholdByLength ?? [])
      .map((t) => `${t.minWords}+ words: ${t.threshold.toFixed(3)} (${t.nAi} AI)`)
      .join('; ');
    console.log(
      `  ${k.padEnd(13)} a=${c.a.toFixed(3)} b=${c.b.toFixed(3)} likely_ai>=${c.aiThreshold.toFixed(3)} [${bands}] likely_human<${c.humanThreshold.toFixed(3)} [${humanBands}] (human ${c.nHuman}, ai ${c.nAi})`,
    );
  }
  console.log('\nTrain, out-of-fold (calibration set), by source:');
  console.log(
    formatTable(
      groupTable(oofItems, (r) => `${r.source}/${r.mode}`),
      false,
      'source',
    ),
  );

  const arrays = { ...modelArrays({ final, weights, forest }), ...polish.arrays };
  const version = modelVersion(arrays, {
    calibration,
    ood,
    vocabList,
    mean: [...mean],
    std: [...std],
    bias: weights.bias,
    forest: forest ? [forest.base, LINEAR_WEIGHT] : null,
    polish: polish.header,
  });
  const header: Omit<ArtifactHeader, 'arrays'> = {
    format: 'textdetect-model',
    formatVersion: 1,
    version,
    hashBits: HASH_BITS,
    vocab: vocabList,
    dense: { names: [...DENSE_NAMES], mean: [...mean], std: [...std] },
    bias: weights.bias,
    ...(forest
      ? {
          forest: {
            depth: forest.depth,
            nTrees: forest.nTrees,
            nFeatures: forest.nFeatures,
            base: forest.base,
            ...(LINEAR_WEIGHT !== 0 ? { linearWeight: LINEAR_WEIGHT } : {}),
          },
        }
      : {}),
    calibration,
    ood,
    polish: polish.header,
    pos: { tags: TAG_NAMES, suffix: TAGGER_SUFFIX, defaultTag: TAGGER.defaultTag },
    training: {
      train: trainRows.length,
      dev: devRows.length,
      brownDocs: brownTexts.length,
      folds: FOLDS,
      seed: SEED,
      lm: LM_OPTS,
      char: CHAR_OPTS,
      pos: POS_OPTS,
      classifier: LR_OPTS,
      trees: USE_TREES ? GB_OPTS : null,
      targetFpr: TARGET_FPR,
      humanMaxMiss: HUMAN_MAX_MISS,
      humanCap: HUMAN_CAP,
      polishRecall: POLISH_RECALL,
      polishHead: POLISH_OPTS,
      augmentation: {
        share: AUG_FRAC,
        weight: AUG_WEIGHT,
        labels: AUG_LABELS,
        maxTypoRate: AUG_MAX_RATE,
        articles: AUG_ARTICLES,
        copies: train.filter((d) => d.aug && !d.excerpt).length,
      },
      corpora: TRAIN_FILES,
      excerpts: { share: EXCERPT_FRAC, weight: EXCERPT_WEIGHT, texts: train.filter((d) => d.excerpt).length },
      sourceWeight: Object.fromEntries(SOURCE_WEIGHT),
      shortcuts: KEEP_SHORTCUTS ? 'kept' : { left_out: shortcuts.dropped, cut: shortcuts.changed },
    },
  };
  const model = new LoadedModel({ ...header, arrays: {} } as ArtifactHeader, arrays);
  const detector = new TextDetector(model);
  const { items, unsupported, wrongLanguage } = evaluate(detector, devRows);
  const setOf = new Map<string, string>();
  for (const [name, rows] of devSets) for (const r of rows) setOf.set(r.id, `${name}-dev`);
  for (const [title, by] of [
    ['set', (r: CorpusRow) => setOf.get(r.id) ?? '?'],
    ['source', (r: CorpusRow) => `${r.source}/${r.mode}`],
    ['mode', (r: CorpusRow) => `${r.language}:${r.mode}`],
    ['generator', (r: CorpusRow) => r.generator],
  ] as const) {
    console.log(`\nDev, by ${title}:`);
    console.log(formatTable(groupTable(items, by), false, title));
  }
  // Issue 31: AI texts called likely_human per dev source (instruction-tuned generators; samplers
  // reported apart) and what the bound costs, the share of human texts still called likely_human.
  console.log('\nDev, likely_human per source (texts of 40+ words; AI = instruction-tuned, samplers apart):');
  const lhRows = new Map<string, { ai: number[]; sampler: number[]; human: number[] }>();
  for (const it of items) {
    if (it.words < 40) continue;
    const k = `${it.row.source}/${it.row.mode}`;
    const e = lhRows.get(k) ?? { ai: [0, 0], sampler: [0, 0], human: [0, 0] };
    const cell = it.y === 0 ? e.human : isSampler(it.row.generator) ? e.sampler : e.ai;
    cell[0]! += it.likelyHuman ? 1 : 0;
    cell[1]! += 1;
    lhRows.set(k, e);
  }
  const pct = (c: number[]): string => (c[1] ? `${((100 * c[0]!) / c[1]).toFixed(1)}% of ${c[1]}` : '-');
  for (const [k, e] of [...lhRows].sort()) console.log(`  ${k}: AI ${pct(e.ai)}; samplers ${pct(e.sampler)}; human ${pct(e.human)}`);
  console.log(`\nDev language identification: ${wrongLanguage} wrong, ${unsupported} refused as unsupported, of ${devRows.length}`);
  const foldPath = arg('--fold-models');
  if (foldPath) {
    // The exact per-fold models of this run, for `npm run train:segments -- --fold-cache FILE`.
    writeFileSync(foldPath, v8.serialize(fitted.foldData));
    log(`wrote the fold models to ${foldPath}`);
  }
  if (DRY_RUN) {
    log(`dry run: ${version} not written`);
    return;
  }
  mkdirSync(dirname(OUT), { recursive: true });
  writeArtifact(OUT, header, arrays);
  log(`wrote ${OUT} (${version})`);
}

/**
 * The generator "family" held out together in --logo: a base model with all its prompts, attacks
 * and post-edits (DetectRL's `gpt-3.5-turbo + DIPPER paraphrase` is still gpt-3.5-turbo text), so a
 * held-out family is really unseen.
 */
export function generatorFamily(generator: string): string {
  const g = generator.toLowerCase();
  if (g.startsWith('human ') && g.includes('edit of ai text')) return 'human-edited AI text (MixSet)';
  // v4: the base models of the Lastde continuations held out together (one family of samplers),
  // and the new instruction-tuned families.
  if (g.endsWith('(base)')) return 'base models (Lastde continuations)';
  if (g.includes('mistral')) return 'mistral / dolphin-mistral';
  if (g.startsWith('falcon')) return 'falcon';
  if (g.startsWith('deepseek')) return 'deepseek';
  if (g.startsWith('qwen')) return 'qwen2';
  if (g.includes('claude')) return 'claude-instant';
  if (g.startsWith('gpt-4o')) return 'gpt-4o';
  if (g.startsWith('gpt-4')) return 'gpt-4';
  if (g.startsWith('gpt-3.5') || g.startsWith('chatgpt')) return 'gpt-3.5-turbo / ChatGPT';
  if (g.startsWith('text-davinci')) return 'text-davinci-003';
  if (g.startsWith('davinci')) return 'davinci (GPT-3 base)';
  if (g.startsWith('llama-2')) return 'llama-2';
  if (g.includes('llama-3')) return 'llama-3';
  if (g.includes('gpt-2')) return 'gpt-2 (fine-tuned)';
  if (g === 'dolly' || g === 'stablelm' || g === 'chatglm') return 'Dolly / StableLM / ChatGLM';
  return generator;
}

/**
 * Leave-one-group-out (--loso: each source; --logo: each generator family) over train of both
 * corpora, with the shipped pipeline's settings. One pass per group would cost a full training
 * each, so the rounds share work (documented in docs/detector.md):
 * 1. a text's LM features come from LMs built without its group (for --logo the human texts are
 *    spread over 4 hash groups of their own, so they are held out too);
 * 2. the linear model of round g is trained on the other groups and scores g;
 * 3. the trees of round g are trained on the other groups, whose stacked linear logit comes from
 *    their own round (a model that did see g's labels: the one shortcut taken), and score g;
 * 4. calibration and thresholds are fitted, exactly as for the artifact, on the other groups'
 *    held-out scores, and applied to g.
 * Nothing of g reaches its own round's LMs, classifier, trees or thresholds.
 */
async function runGroupOut(kind: 'source' | 'generator', train: Doc[], brownIds: Uint16Array[], vocab: Map<string, number>): Promise<void> {
  // Every round trains on the other groups' texts and their excerpts / perturbed copies, as the
  // artifact does; only original texts are scored, calibrated and reported.
  const all = train;
  const groupOf = (d: Doc): string =>
    kind === 'source' ? d.row.source : d.y === 1 ? generatorFamily(d.row.generator) : `human#${stableHash(d.row.id) % 4}`;
  const allKeys = all.map(groupOf);
  const groups = [...new Set(allKeys)].sort();
  const allFeats: FeatureVector[] = new Array(all.length);
  for (const g of groups) {
    const restAll = all.filter((_, i) => allKeys[i] !== g);
    const rest = restAll.filter((d) => !d.aug);
    const ctx = lmContext(
      vocab,
      buildLMs(
        rest.filter((d) => d.y === 0),
        rest.filter((d) => d.y === 1),
        vocab.size,
        brownIds,
        restAll,
      ),
    );
    all.forEach((d, i) => {
      if (allKeys[i] === g) allFeats[i] = extractFeatures(d.lower, d.row.language, ctx);
    });
  }
  for (const f of allFeats) for (const k of DROP) f.dense[k] = 0;
  log(`${kind}-out features: ${groups.length} groups`);
  const { mean, std } = standardiser(allFeats);
  const rows = makeRows(all, allFeats, mean, std);
  const allLogit = new Array<number>(all.length);
  for (const g of groups) {
    const w = trainLogistic(
      rows.filter((_, i) => allKeys[i] !== g),
      mean,
      std,
      LR_OPTS,
    );
    all.forEach((_, i) => {
      if (allKeys[i] === g) allLogit[i] = linearScore(allFeats[i]!, w);
    });
  }
  log(`${kind}-out linear rounds done`);
  const allMargin = [...allLogit];
  if (USE_TREES) {
    const xs = all.map((_, i) => stackedInput(allFeats[i]!, allLogit[i]!));
    for (const g of groups) {
      const idx = all.map((_, i) => i).filter((i) => allKeys[i] !== g);
      const forest = trainForest(
        idx.map((i) => xs[i]!),
        idx.map((i) => all[i]!.y),
        idx.map((i) => rows[i]!.w),
        GB_OPTS,
      );
      all.forEach((d, i) => {
        if (allKeys[i] === g && !d.aug) allMargin[i] = blendScores(forestMargin(forest, xs[i]!), allLogit[i]!, LINEAR_WEIGHT);
      });
    }
    log(`${kind}-out trees done`);
  }
  const keep = all.map((_, i) => i).filter((i) => !all[i]!.aug);
  const docs = keep.map((i) => all[i]!);
  const keys = keep.map((i) => allKeys[i]!);
  const feats = keep.map((i) => allFeats[i]!);
  const logit = keep.map((i) => allLogit[i]!);
  const margin = keep.map((i) => allMargin[i]!);
  // Probabilities and verdicts of each group under calibration and an out-of-domain check fitted
  // without it, with the engine's rules (under 40 words never likely_ai; out of domain needs 0.95).
  const prob = new Array<number>(docs.length);
  const flagged = new Array<boolean>(docs.length);
  const outOfDomain = new Array<boolean>(docs.length).fill(false);
  const shortFlag = new Array<boolean>(docs.length).fill(false);
  const thresholdNoFloor = new Array<number>(docs.length).fill(1);
  const humanLine = new Array<number>(docs.length).fill(0.5);
  for (const g of groups) {
    const rest = docs.map((_, i) => i).filter((i) => keys[i] !== g);
    const cal = fitCalibration(
      rest.map((i) => docs[i]!),
      rest.map((i) => margin[i]!),
    );
    // The same thresholds without the floor: with them, the dump tells what any floor F would flag
    // (p >= max(F, thresholdNoFloor)) without another run.
    const cal0 = fitCalibration(
      rest.map((i) => docs[i]!),
      rest.map((i) => margin[i]!),
      0,
    );
    const ood = fitOod(
      rest.map((i) => docs[i]!),
      rest.map((i) => feats[i]!),
    );
    docs.forEach((d, i) => {
      if (keys[i] !== g) return;
      const own0 = cal0[groupKey(d.row.language, d.row.mode)];
      thresholdNoFloor[i] = own0 ? aiThresholdFor(own0, d.words) : 1;
      const own = cal[groupKey(d.row.language, d.row.mode)];
      const c = own ?? cal[groupKey(d.row.language, '*')] ?? cal['*:*']!;
      const o = ood[d.row.language];
      outOfDomain[i] = o !== undefined && (oodScore(feats[i]!.dense, o) > o.threshold || d.words > o.maxWords);
      prob[i] = calibrateForLength(margin[i]!, c, d.words);
      humanLine[i] = Math.min(humanThresholdFor(c, d.words), outOfDomain[i] ? 0.2 : 1);
      const threshold = Math.max(aiThresholdFor(c, d.words), outOfDomain[i] ? 0.95 : 0);
      // As in the engine: a borrowed calibration (no human texts of this language:mode) never flags.
      flagged[i] = prob[i]! >= threshold && d.words >= 40 && own !== undefined;
      // What the under-40-word band's own threshold would flag if the short-text rule were lifted.
      shortFlag[i] = d.words >= 15 && d.words < 40 && prob[i]! >= threshold && own !== undefined;
    });
  }
  const dumpPath = arg('--dump');
  if (dumpPath) {
    // Held-out scores and features of every text, for analysing out-of-domain checks offline.
    const lines = docs.map((d, i) =>
      JSON.stringify({
        g: keys[i],
        source: d.row.source,
        generator: d.row.generator,
        ...(d.row.contribution ? { contribution: d.row.contribution } : {}),
        humanThreshold: humanLine[i],
        likelyHuman: d.words >= 40 && prob[i]! < humanLine[i]!,
        mode: d.row.mode,
        language: d.row.language,
        y: d.y,
        words: d.words,
        margin: margin[i],
        logit: logit[i],
        p: prob[i],
        flagged: flagged[i],
        shortFlag: shortFlag[i],
        thresholdNoFloor: thresholdNoFloor[i],
        ood: outOfDomain[i],
        dense: Array.from(feats[i]!.dense, (v) => Math.round(v * 1e5) / 1e5),
      }),
    );
    writeFileSync(dumpPath, `${lines.join('\n')}\n`);
  }
  // The evidence for the short-text rule (docs/detector.md): per held-out source, the share of its
  // 15–40-word texts the under-40 band's threshold would call likely_ai without the rule.
  console.log('\n15–40-word texts that the band threshold would flag without the short-text rule (held out):');
  for (const src of [...new Set(docs.map((d) => d.row.source))].sort()) {
    const idx = docs.map((_, i) => i).filter((i) => docs[i]!.row.source === src && docs[i]!.words >= 15 && docs[i]!.words < 40);
    const h = idx.filter((i) => docs[i]!.y === 0);
    const a = idx.filter((i) => docs[i]!.y === 1);
    if (idx.length === 0) continue;
    const rate = (l: number[]): string => `${l.filter((i) => shortFlag[i]).length}/${l.length}`;
    console.log(`  ${src}: human ${rate(h)}, ai ${rate(a)}`);
  }
  // Share of the texts with a verdict (40+ words) called likely_human under the held-out calibration.
  const likelyHumanShare = (idx: number[]): { share: number; n: number } => {
    const withVerdict = idx.filter((i) => docs[i]!.words >= 40);
    return { share: withVerdict.filter((i) => prob[i]! < humanLine[i]!).length / Math.max(1, withVerdict.length), n: withVerdict.length };
  };
  const oodShare = (idx: number[]): number => idx.filter((i) => outOfDomain[i]).length / Math.max(1, idx.length);
  const item = (i: number): Scored => ({ p: prob[i]!, y: docs[i]!.y, flagged: flagged[i]! });
  const results: Array<Record<string, unknown>> = [];
  const rowsOut: Array<[string, ReturnType<typeof metricRow>]> = [];
  if (kind === 'source') {
    for (const g of groups) {
      const idx = docs.map((_, i) => i).filter((i) => keys[i] === g);
      const m = metricRow(idx.map(item));
      rowsOut.push([g, m]);
      const lhAi = likelyHumanShare(idx.filter((i) => docs[i]!.y === 1 && !isSampler(docs[i]!.row.generator)));
      const lhHuman = likelyHumanShare(idx.filter((i) => docs[i]!.y === 0));
      results.push({ source: g, ...m, outOfDomain: oodShare(idx), aiLikelyHuman: lhAi.share, humanLikelyHuman: lhHuman.share });
      console.log(
        `  ${g}: likely_human: ${(100 * lhAi.share).toFixed(1)}% of ${lhAi.n} instruction-tuned AI texts, ${(100 * lhHuman.share).toFixed(1)}% of ${lhHuman.n} human texts (40+ words)`,
      );
      console.log(
        `  ${g}: ${(100 * oodShare(idx)).toFixed(1)}% of its texts out of domain (human ${(100 * oodShare(idx.filter((i) => docs[i]!.y === 0))).toFixed(1)}%)`,
      );
    }
  } else {
    const humans = docs.map((_, i) => i).filter((i) => docs[i]!.y === 0);
    for (const g of groups.filter((x) => !x.startsWith('human#'))) {
      const ai = docs.map((_, i) => i).filter((i) => keys[i] === g);
      const sources = new Set(ai.map((i) => docs[i]!.row.source));
      const m = metricRow([...humans, ...ai].map(item));
      const same = metricRow([...humans.filter((i) => sources.has(docs[i]!.row.source)), ...ai].map(item));
      rowsOut.push([g, { ...m, auroc: m.auroc }]);
      const lh = likelyHumanShare(ai);
      results.push({
        generator: g,
        sources: [...sources].sort(),
        ...m,
        aurocSameSourceHumans: same.auroc,
        fprSameSourceHumans: same.fpr,
        aiLikelyHuman: lh.share,
        aiVerdicts: lh.n,
      });
      console.log(
        `  ${g}: AUROC vs same-source humans ${same.auroc.toFixed(3)}; AI texts called likely_human ${(100 * lh.share).toFixed(1)}% of ${lh.n} with a verdict (${[...sources].sort().join(', ')})`,
      );
    }
  }
  rowsOut.unshift(['all', metricRow(docs.map((_, i) => item(i)))]);
  console.log(
    `\nLeave-one-${kind}-out on train (${TRAIN_FILES.join(' + ')}), ${groups.length} rounds${kind === 'generator' ? "; each family's AI texts against all human texts, each scored by the round that held it out" : ''}:`,
  );
  console.log(formatTable(rowsOut, process.argv.includes('--markdown'), kind));
  const path = join(ROOT, `models/${kind === 'source' ? 'loso' : 'logo'}.json`);
  writeFileSync(path, `${JSON.stringify({ seed: SEED, trees: USE_TREES ? GB_OPTS.trees : 0, results }, null, 2)}\n`);
  log(`wrote ${path}`);
}

await main();
