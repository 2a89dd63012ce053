/**
 * `npm run train:author [-- options]`: fits the author-level calibration (`models/author.json`) on
 * author windows and reports it by leave-one-author-out.
 *
 * Author windows (runs of consecutive messages of one author; 1, 2, 3, 5, 10, 20 and 50 messages):
 * - TweepFake accounts of `authors-train.jsonl`: 11 human accounts and 4 GPT-2 bots, the tweets in
 *   file order;
 * - the sentences of every text of `corpus-dev.jsonl` and `extra-dev.jsonl` sent as one author's
 *   messages (each text is an author; human and AI texts of 18 sources).
 * Every window is scored as the engine scores an author (`src/detector/author.ts`: the messages
 * pooled and scored by the per-message model's raw score), and calibrated by the pooled word count.
 *
 * The per-message scores must be held out too: `models/detector.bin` was trained on `extra-train`,
 * which holds tweets of 7 of the 15 accounts, and on none of the dev texts. So the windows are scored
 * with `--score-model`, a model trained by `npm run train -- --exclude-ids
 * models/author-heldout-ids.json --out <path>`, which saw no tweet of any of the 15 accounts (and,
 * like the shipped one, no dev text). Without --score-model the script first trains that model itself
 * (same seed and settings as the shipped one, ~3–5 min on two cores) into a temporary directory;
 * `--score-model shipped` scores with models/detector.bin instead and says that its TweepFake figures
 * are then not held out.
 *
 * Leave-one-author-out: the windows of one group are scored with a calibration and thresholds fitted
 * without them; groups are each bot with the account it imitates (dril_gpt2 with dril, calebgamman2
 * with calebgamman, utilitylimbgpt2 with utilitylimb), every other account alone, and every corpus
 * *source* (all texts of it at once, which is stricter than one text at a time).
 *
 * The assistant head's bars for authors (`scripts/lib/author-assistant.ts`) are fitted afterwards on
 * windows read by `--detector` (default models/detector.bin, the artifact they are for): the same
 * authors plus `v5-members-train.jsonl`, and for the bars that give a verdict the sentences of the
 * v3-dev and v4-dev texts too (VERDICT_ONLY_FILES). None of the windows of IRC users and TweepFake accounts
 * (people's own short posts) may be lifted to likely_ai; the assistant's members bound the veto
 * (--family-cleared), and the report counts them.
 * The head saw none of these members (nor the dev texts); it did see tweets of 7 of the 15
 * TweepFake accounts.
 *
 * Options: --score-model PATH|shipped, --out PATH (default models/author.json), --data DIR (default
 * ../shared/data), --dry-run (report only), --markdown, --floor X (lowest likely_ai threshold),
 * --detector PATH, --bars-only (keep the calibration bands of --out and refit the bars alone: no
 * held-out model to train, ~1 min), --family-cleared X (share of the assistant's member windows of
 * v5-members-train the veto may leave cleared at each size, default 0.03; 1: the humans' bound alone),
 * --ceiling-cost X (a vetoed window rises from the likely_human threshold towards a ceiling with its
 * margin: the highest, in steps of 0.05, at which the AUROC of the people's and older AI authors'
 * windows of a size falls by at most X; default 0.002; 0: it stays at the likely_human threshold),
 * --rank-from N (authors of N pooled words up to the evidence floor, who get no verdict, are ranked by
 * the head: a veto and a `rise` set as the bars above are, and a ceiling by --ceiling-cost; default 15;
 * 0: not ranked), --messages-from N (bars read beside the pooled ones on the mean of the messages' own
 * margins, weighted by words, for authors of N messages and more; they only fire, by the same rules,
 * a window the pooled bars fire on using up its source's allowance; default 2; 0: none), --fire-rate X
 * (share of each human source's windows, other than chat members', allowed over the fire bars;
 * default 0.002, the single-text head's bound; chat members' always 0).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readArtifact } from '../src/detector/artifact.ts';
import {
  authorBandFor,
  authorProbability,
  barForMessages,
  messagesMargin,
  poolMessages,
  readsMessages,
  readAuthorModel,
  type AuthorAssistantBars,
  type AuthorBand,
  type AuthorModel,
} from '../src/detector/author.ts';
import { auroc, ece, formatTable, metricRow, type Scored } from '../src/detector/metrics.ts';
import { LoadedModel, round4, sigmoid } from '../src/detector/model.ts';
import { lowerForFeatures, normalize } from '../src/detector/normalize.ts';
import { authorsFromFile, IMITATES, windowRanges, type Author } from './author-windows.ts';
import { fitPlatt, thresholdAtFpr } from '../src/detector/training.ts';
import type { Language } from '../src/detector/types.ts';
import { EVIDENCE_FLOOR_WORDS } from '../src/contract.ts';
import { barsByLanguage, fitAuthorAssistantBars, type AuthorBarRules, type BarWindow, type FittedBar } from './lib/author-assistant.ts';
import { table } from './lib/table.ts';
import { checkScriptArgs, optionValue as arg } from './lib/options.mjs';

checkScriptArgs(import.meta.url);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = resolve(ROOT, arg('--data') ?? '../shared/data');
const OUT = resolve(ROOT, arg('--out') ?? 'models/author.json');
const SCORE_MODEL = arg('--score-model');
const DETECTOR = resolve(ROOT, arg('--detector') ?? 'models/detector.bin');
const BARS_ONLY = process.argv.includes('--bars-only');
const DRY_RUN = process.argv.includes('--dry-run');
const MARKDOWN = process.argv.includes('--markdown');
const printTable = (head: string[], rows: string[][]): string => table(head, rows, MARKDOWN, false);

/** Window sizes (messages) built from every author. */
const WINDOW_SIZES = [1, 2, 3, 5, 10, 20, 50];
/** Pooled word counts where a new calibration band starts. */
const WORD_BANDS = [0, 40, 80, 150, 300];
/**
 * Lowest `likely_ai` threshold (as for single texts; see docs/detector.md "Author level"): the
 * lowest at which no held-out human source has a window size with over 1% flagged. 0.995 up to the
 * v3 per-message model; with it, 0.995–0.998 flag one of 87 five-sentence windows of the
 * professional L2R texts (1.1%), so 0.999.
 */
const FLOOR = Number(arg('--floor') ?? 0.999);
const TARGET_FPR = 0.01;
/** A human source (TweepFake account or corpus source) with this many windows in a band gets its own 1% check. */
const SOURCE_GUARD_MIN = 20;
/**
 * Fewest messages and words for a verdict: the engine's evidence floor, one rule for single texts
 * and authors (EVIDENCE_FLOOR_WORDS in src/contract.ts; until issue 25, 3 messages and 80 words).
 * Thresholds are fitted on the windows that can get a verdict.
 */
const MIN_MESSAGES = 1;
const MIN_WORDS = EVIDENCE_FLOOR_WORDS;
/** An author is `likely_human` under this probability. */
const HUMAN_THRESHOLD = 0.5;
/** --ceiling-cost: what the rise of vetoed windows may cost the older windows' AUROC (0: no rise). */
const CEILING_COST = Number(arg('--ceiling-cost') ?? 0.002);
/** --rank-from: the fewest pooled words of an author under the evidence floor the head ranks (0: none). */
const RANK_FROM = Number(arg('--rank-from') ?? 15);
/** --messages-from: the fewest messages the bars on the messages one by one are fitted for (0: none). */
const MESSAGES_FROM = Number(arg('--messages-from') ?? 2);
if (!(RANK_FROM === 0 || (RANK_FROM >= 1 && RANK_FROM < MIN_WORDS))) {
  process.stderr.write(`train-author.ts: --rank-from must be 0 or a count of words under ${MIN_WORDS}.\n`);
  process.exit(2);
}
const FIRE_RATE = Number(arg('--fire-rate') ?? 0.002);
if (!(FIRE_RATE > 0 && FIRE_RATE < 1)) {
  process.stderr.write('train-author.ts: --fire-rate must be a share between 0 and 1 (default 0.002).\n');
  process.exit(2);
}
if (!(MESSAGES_FROM === 0 || (Number.isInteger(MESSAGES_FROM) && MESSAGES_FROM >= 2))) {
  process.stderr.write('train-author.ts: --messages-from must be 0 or a count of messages of 2 or more.\n');
  process.exit(2);
}
/**
 * Files whose people bound only the bars that give a verdict (fire, veto): their formal texts sent
 * as sentences reached the pooled fire bars fitted without them (3 of the 82 human windows of 20 of
 * detectrl-news-stories were likely_ai). The bars under the evidence floor give none and keep the
 * windows they were fitted on; these files check what their ceilings cost.
 */
const VERDICT_ONLY_FILES = ['v3-dev', 'v4-dev'];
/**
 * The head's bars for authors, by the single-text head's rules: people's own short posts (IRC
 * users, TweepFake accounts) at 0, every other human source at most 0.2% of its windows lifted to
 * likely_ai (--fire-rate), at most 20% no longer cleared unless the assistant's members need the veto lower: at
 * most --family-cleared of their windows stay cleared. English only, as the head fires only there;
 * there is no Turkish chat member to bound a Turkish bar with. No bar of 50 messages: no IRC user has that
 * many, and the TweepFake tweets that do were partly the head's training texts; the 20-message
 * bars go on applying (human authors' margins keep falling as messages are added).
 */
const BAR_RULES: AuthorBarRules = {
  sizes: WINDOW_SIZES.filter((n) => n <= 20),
  fireLanguages: ['en'],
  vetoLanguages: ['en'],
  minWords: MIN_WORDS,
  fireRate: FIRE_RATE,
  vetoRate: 0.2,
  vetoMinWindows: SOURCE_GUARD_MIN,
  minHumanWindows: 100,
  familyCleared: Number(arg('--family-cleared') ?? 0.03),
  ...(CEILING_COST > 0 ? { ceilingCost: CEILING_COST } : {}),
  humanThreshold: HUMAN_THRESHOLD,
};
const t0 = Date.now();
const log = (msg: string): void => console.error(`[train-author ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

interface Window {
  author: Author;
  n: number;
  words: number;
  /** Raw score of the pooled messages (what the engine calibrates). */
  pooled: number;
  /** Mean of the messages' own raw scores (the baseline the issue measured). */
  mean: number;
}

function loadAuthors(): Author[] {
  return ['authors-train', 'corpus-dev', 'extra-dev'].flatMap((f) => authorsFromFile(join(DATA, `${f}.jsonl`)));
}

function scoreWindows(model: LoadedModel, authors: Author[]): Window[] {
  const raw = (text: string, language: Language): { score: number; words: number } => {
    const f = model.features(lowerForFeatures(normalize(text).text, language), language);
    return { score: model.rawLogit(f), words: f.words };
  };
  const out: Window[] = [];
  for (const a of authors) {
    const own = a.messages.map((m) => raw(m, a.language));
    for (const n of WINDOW_SIZES) {
      for (const [s] of windowRanges(a.messages.length, n)) {
        const msgs = a.messages.slice(s, s + n);
        const words = own.slice(s, s + n).reduce((t, m) => t + m.words, 0);
        const mean = own.slice(s, s + n).reduce((t, m) => t + m.score, 0) / n;
        out.push({ author: a, n, words, pooled: raw(poolMessages(msgs), a.language).score, mean });
      }
    }
  }
  return out;
}

/**
 * Weight of a window in the calibration fit: every author counts once (their windows in the band
 * share one unit of weight), and the two classes weigh the same in total. So the 15 TweepFake
 * accounts count as 15 authors among the corpora's ~2 200, not as the 8 000 tweets they wrote.
 */
function weights(ws: Window[]): number[] {
  const perAuthor = new Map<string, number>();
  for (const w of ws) perAuthor.set(w.author.id, (perAuthor.get(w.author.id) ?? 0) + 1);
  const raw = ws.map((w) => 1 / perAuthor.get(w.author.id)!);
  const total = [0, 0];
  ws.forEach((w, i) => {
    total[w.author.y]! += raw[i]!;
  });
  return ws.map((w, i) => (raw[i]! / total[w.author.y]!) * ws.length);
}

/** Calibration bands and thresholds fitted on `ws` (the engine's rules: floor, 1% overall, 1% per human source). */
function fitAuthorBands(ws: Window[], floor = FLOOR): AuthorBand[] {
  const bands: AuthorBand[] = [];
  for (let e = 0; e < WORD_BANDS.length; e++) {
    const lo = WORD_BANDS[e]!;
    const hi = WORD_BANDS[e + 1] ?? Infinity;
    const members = ws.filter((w) => w.words >= lo && w.words < hi);
    const nAi = members.filter((w) => w.author.y === 1).length;
    const nHuman = members.length - nAi;
    if (nAi < 30 || nHuman < 30) {
      // Too few windows to fit: the band borrows the previous one (never the case with the shipped data).
      if (bands.length) bands.push({ ...bands.at(-1)!, minWords: lo, nHuman, nAi });
      continue;
    }
    const { a, b } = fitPlatt(
      members.map((w) => w.pooled),
      members.map((w) => w.author.y),
      weights(members),
    );
    // Thresholds only from windows that could get a verdict.
    const humans = members.filter((w) => w.author.y === 0 && w.n >= MIN_MESSAGES && w.words >= MIN_WORDS);
    const probs = humans.map((w) => sigmoid(a * w.pooled + b));
    let t = Math.max(floor, humans.length ? thresholdAtFpr(probs, TARGET_FPR) : 1);
    const bySource = new Map<string, number[]>();
    humans.forEach((w, i) => {
      bySource.set(w.author.source, [...(bySource.get(w.author.source) ?? []), probs[i]!]);
    });
    for (const ps of bySource.values()) if (ps.length >= SOURCE_GUARD_MIN) t = Math.max(t, thresholdAtFpr(ps, TARGET_FPR));
    bands.push({ minWords: lo, a, b, aiThreshold: t, nHuman, nAi });
  }
  if (bands.length === 0) throw new Error('No band had 30 human and 30 AI windows.');
  return bands;
}

function modelOf(bands: AuthorBand[], training: Record<string, unknown>, assistant?: AuthorAssistantBars): AuthorModel {
  const body = { minMessages: MIN_MESSAGES, minWords: MIN_WORDS, bands, humanThreshold: HUMAN_THRESHOLD };
  // Files without bars keep the version they always had.
  const hashed = assistant ? { ...body, assistant } : body;
  const version = `ta1-${createHash('sha256').update(JSON.stringify(hashed)).digest('hex').slice(0, 12)}`;
  return { format: 'textdetect-author', formatVersion: 1, version, ...body, training, ...(assistant ? { assistant } : {}) };
}

/** A bar's first cells in the report: who and where, the veto, the bar over it (`fire`, or a ranking band's `rise`) and the ceiling. */
function barCells(b: FittedBar, over: number | undefined): string[] {
  return [
    `${b.language} ${b.minMessages}+`,
    b.veto.toFixed(4),
    b.vetoSetBy,
    over?.toFixed(4) ?? '–',
    b.fireSetBy ?? '–',
    b.ceiling === undefined ? '–' : `${b.ceiling.toFixed(4)} (${b.ceilingSetBy})`,
  ];
}

/**
 * The head's bars for authors, fitted on windows read by `detectorPath`'s head, and the report of
 * what they lift; undefined (said) for a detector without the head.
 */
function fitAssistantBars(detectorPath: string, bands: AuthorModel['bands']): AuthorAssistantBars | undefined {
  const { header, arrays } = readArtifact(detectorPath);
  if (!header.assistant) {
    console.log(`\nThe detector ${header.version} has no assistant head: the author model gets no bars for it.`);
    return undefined;
  }
  const model = new LoadedModel(header, arrays);
  const files = ['authors-train', 'corpus-dev', 'extra-dev', ...VERDICT_ONLY_FILES, 'v5-members-train'];
  const windows: BarWindow[] = [];
  /** Whether a window is of VERDICT_ONLY_FILES, beside `windows`. */
  const verdictOnly: boolean[] = [];
  /** Each window's margin on its messages one by one (`messagesMargin`), beside `windows`. */
  const byMessage: number[] = [];
  // As `detectAuthor` reads it: the hashed sum from the shared table `rawLogit` has just read.
  const marginOf = (text: string, language: Language): { margin: number; words: number } => {
    const f = model.features(lowerForFeatures(normalize(text).text, language), language);
    return { margin: model.assistantMarginOf(f, model.rawLogit(f))!, words: f.words };
  };
  for (const file of files) {
    const member = file.startsWith('v5-members');
    for (const a of authorsFromFile(join(DATA, `${file}.jsonl`))) {
      // People's own short posts: IRC users and the TweepFake accounts.
      const chat = member || a.kind === 'account';
      const own = MESSAGES_FROM > 0 ? a.messages.map((m) => marginOf(m, a.language)) : [];
      for (const n of WINDOW_SIZES) {
        for (const [s, e] of windowRanges(a.messages.length, n)) {
          const f = model.features(lowerForFeatures(normalize(poolMessages(a.messages.slice(s, e))).text, a.language), a.language);
          const raw = model.rawLogit(f);
          const margin = model.assistantMarginOf(f, raw)!;
          const mine = own.slice(s, e);
          byMessage.push(
            messagesMargin(
              mine.map((m) => m.margin),
              mine.map((m) => m.words),
            ),
          );
          verdictOnly.push(VERDICT_ONLY_FILES.includes(file));
          windows.push({
            n,
            words: f.words,
            margin,
            p: round4(authorProbability({ bands }, raw, f.words)),
            aiThreshold: authorBandFor({ bands }, f.words).aiThreshold,
            y: a.y,
            language: a.language,
            source: a.source.replace(/:.*/, ''),
            chat,
            family: member && a.y === 1,
          });
        }
      }
    }
  }
  log(`${windows.length} windows read by ${header.version}'s assistant head`);
  const fitted = fitAuthorAssistantBars(windows, BAR_RULES);
  const ranked =
    RANK_FROM > 0
      ? fitAuthorAssistantBars(
          windows.filter((_, i) => !verdictOnly[i]),
          BAR_RULES,
          RANK_FROM,
        )
      : [];
  // The bars on the messages one by one, beside the pooled ones: a window those already fire on uses
  // up its source's allowance.
  const pooledBars = barsByLanguage(fitted);
  const messageWindows = windows.map((w, i) => {
    const bar = w.words >= BAR_RULES.minWords ? barForMessages(pooledBars[w.language], w.n) : undefined;
    return {
      ...w,
      // A window under the pooled veto is not read message by message (`readsMessages`).
      margin: readsMessages(bar, w.margin) ? byMessage[i]! : Number.NEGATIVE_INFINITY,
      fired: bar?.fire !== undefined && w.margin >= bar.fire,
    };
  });
  const messageRules = { ...BAR_RULES, sizes: BAR_RULES.sizes.filter((n) => n >= MESSAGES_FROM), fireOnly: true };
  const messageFitted = MESSAGES_FROM > 0 ? fitAuthorAssistantBars(messageWindows, messageRules) : [];
  const rows = fitted.map((b) => {
    const next = fitted.find((x) => x.language === b.language && x.minMessages > b.minMessages)?.minMessages ?? Infinity;
    const at = windows.filter((w) => w.language === b.language && w.n >= b.minMessages && w.n < next && w.words >= BAR_RULES.minWords);
    const members = at.filter((w) => w.family);
    const humans = at.filter((w) => w.y === 0);
    const chatHumans = humans.filter((w) => w.chat);
    const share = (xs: typeof at, bar: number | undefined): string =>
      bar === undefined ? '–' : `${xs.filter((w) => w.margin >= bar).length} of ${xs.length}`;
    return [
      ...barCells(b, b.fire),
      share(chatHumans, b.fire),
      share(humans, b.fire),
      share(members, b.fire),
      share(members, b.veto),
      share(chatHumans, b.veto),
      share(humans, b.veto),
    ];
  });
  console.log(
    `\nThe assistant head's bars for authors (${header.version}; windows of ${BAR_RULES.minWords}+ words; in sample for the humans, whose windows set the fire bars, and for the assistant's members, whose windows bound the veto):`,
  );
  console.log(
    printTable(
      [
        'language, messages',
        'veto',
        'set by',
        'fire',
        'set by',
        'ceiling (set by)',
        'chat members over fire',
        'humans over fire',
        'assistant members over fire',
        'assistant members over veto',
        'chat members over veto',
        'humans over veto',
      ],
      rows,
    ),
  );
  if (ranked.length) {
    console.log(
      `\nAuthors under the evidence floor (${RANK_FROM}–${BAR_RULES.minWords - 1} pooled words), ranked by the head only: bars that never give a verdict`,
    );
    const rankRows = ranked.map((b) => {
      // The windows these bars were fitted on (not VERDICT_ONLY_FILES').
      const at = windows.filter(
        (w, i) =>
          !verdictOnly[i] && w.language === b.language && w.n === b.minMessages && w.words >= RANK_FROM && w.words < BAR_RULES.minWords,
      );
      const over = (xs: typeof at): string => `${xs.filter((w) => w.margin >= b.veto).length} of ${xs.length}`;
      return [...barCells(b, b.rise), over(at.filter((w) => w.y === 0)), over(at.filter((w) => w.family))];
    });
    console.log(
      printTable(
        ['language, messages', 'veto', 'set by', 'rise', 'set by', 'ceiling (set by)', 'humans over veto', 'assistant members over veto'],
        rankRows,
      ),
    );
  }
  if (messageFitted.length) reportMessageBars(messageFitted, messageWindows, fitted, messageRules);
  return {
    detector: header.version,
    minWords: BAR_RULES.minWords,
    bars: barsByLanguage(fitted),
    ...(ranked.length ? { rank: { minWords: RANK_FROM, bars: barsByLanguage(ranked) } } : {}),
    ...(messageFitted.length ? { messages: { minMessages: MESSAGES_FROM, bars: barsByLanguage(messageFitted) } } : {}),
    fitted: {
      data: files.map((f) => `${f}.jsonl`),
      windows: windows.length,
      rules: {
        ...BAR_RULES,
        ...(RANK_FROM > 0 ? { rankFrom: RANK_FROM } : {}),
        ...(MESSAGES_FROM > 0 ? { messagesFrom: MESSAGES_FROM } : {}),
        chat: 'v5-members-train IRC users and authors-train TweepFake accounts: none over fire',
      },
    },
  };
}

/** What the bars on the messages one by one lift, beside the pooled bars (in sample, as the pooled bars' report). */
function reportMessageBars(
  bars: readonly FittedBar[],
  windows: readonly BarWindow[],
  pooled: readonly FittedBar[],
  rules: AuthorBarRules,
): void {
  const rows = bars.map((b) => {
    const next = bars.find((x) => x.language === b.language && x.minMessages > b.minMessages)?.minMessages ?? Infinity;
    const at = windows.filter((w) => w.language === b.language && w.n >= b.minMessages && w.n < next && w.words >= BAR_RULES.minWords);
    const either = (w: BarWindow): boolean => w.fired === true || w.margin >= b.fire!;
    const count = (xs: readonly BarWindow[], over: (w: BarWindow) => boolean): string => `${xs.filter(over).length} of ${xs.length}`;
    const humans = at.filter((w) => w.y === 0);
    const members = at.filter((w) => w.family);
    return [
      `${b.language} ${b.minMessages}+`,
      b.fire!.toFixed(4),
      b.fireSetBy ?? '–',
      pooled.find((p) => p.language === b.language && p.minMessages === b.minMessages)?.fire?.toFixed(4) ?? '–',
      count(
        humans.filter((w) => w.chat),
        either,
      ),
      count(humans, either),
      count(members, (w) => w.fired === true),
      count(members, either),
    ];
  });
  console.log(
    `\nThe bars on the messages one by one (their margins' mean, weighted by words; ${MESSAGES_FROM}+ messages, ${BAR_RULES.minWords}+ pooled words; only fire), beside the pooled bars:`,
  );
  console.log(
    printTable(
      [
        'language, messages',
        'fire',
        'set by',
        'pooled fire',
        'chat members over either',
        'humans over either',
        'assistant members over pooled fire',
        'over either',
      ],
      rows,
    ),
  );
  const held = heldOutSources(windows, rules);
  const leaky = held.filter((h) => h.over > 0);
  console.log(
    `Each human source left out of their fit, its windows over the bars fitted without it: ${leaky.length} of ${held.length} sources have any${
      leaky.length ? ` (${leaky.map((h) => `${h.source} ${h.over} of ${h.windows}`).join(', ')})` : ''
    }.`,
  );
}

/** For each human source: its windows (at the bars' sizes) over the bars fitted with its windows left out. */
function heldOutSources(windows: readonly BarWindow[], rules: AuthorBarRules): Array<{ source: string; over: number; windows: number }> {
  const humans = windows.filter((w) => w.y === 0 && w.words >= rules.minWords && rules.sizes.includes(w.n));
  return [...new Set(humans.map((w) => w.source))].sort().map((source) => {
    const bars = barsByLanguage(
      fitAuthorAssistantBars(
        windows.filter((w) => w.y === 1 || w.source !== source),
        rules,
      ),
    );
    const own = humans.filter((w) => w.source === source);
    const over = own.filter((w) => {
      const fire = barForMessages(bars[w.language], w.n)?.fire;
      return fire !== undefined && w.margin >= fire;
    }).length;
    return { source, over, windows: own.length };
  });
}

/** Writes `m` to OUT (through a temporary file, so a reader never sees half of it). */
function writeModel(m: AuthorModel): void {
  if (DRY_RUN) {
    log(`dry run: ${m.version} not written`);
    return;
  }
  const tmp = `${OUT}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(m, null, 1)}\n`);
  renameSync(tmp, OUT);
  log(`wrote ${OUT} (${m.version})`);
}

interface HeldOut {
  w: Window;
  p: number;
  flagged: boolean;
  /** Baseline: mean of per-message raw scores (ranked only). */
  mean: number;
}

/** Leave-one-author-out: each group's windows under a model fitted without that group. */
function leaveOneOut(ws: Window[], floor: number): HeldOut[] {
  const groups = [...new Set(ws.map((w) => w.author.group))].sort();
  const out: HeldOut[] = [];
  for (const g of groups) {
    const m = modelOf(
      fitAuthorBands(
        ws.filter((w) => w.author.group !== g),
        floor,
      ),
      {},
    );
    for (const w of ws) {
      if (w.author.group !== g) continue;
      const p = authorProbability(m, w.pooled, w.words);
      const enough = w.n >= m.minMessages && w.words >= m.minWords;
      out.push({ w, p, flagged: enough && p >= authorBandFor(m, w.words).aiThreshold, mean: w.mean });
    }
  }
  return out;
}

const pct = (x: number): string => (Number.isNaN(x) ? '–' : `${(100 * x).toFixed(1)}%`);
const f3 = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(3));

function report(held: HeldOut[]): void {
  const sizes = WINDOW_SIZES.filter((n) => n > 1);
  const rate = (xs: HeldOut[]): number => (xs.length ? xs.filter((x) => x.flagged).length / xs.length : Number.NaN);
  const auc = (xs: HeldOut[], key: 'p' | 'mean'): number =>
    auroc(
      xs.map((x) => x[key]),
      xs.map((x) => x.w.author.y),
    );
  const tweets = held.filter((h) => h.w.author.kind === 'account');
  const sents = held.filter((h) => h.w.author.kind === 'sentences');
  const pairs = tweets.filter((h) => IMITATES[h.w.author.id.slice(8)] || Object.values(IMITATES).includes(h.w.author.id.slice(8)));
  console.log('\nTweepFake accounts (leave-one-author-out; windows of consecutive tweets):');
  console.log(
    printTable(
      [
        'messages',
        'bot / human windows',
        'AUROC (bots vs all humans)',
        'mean of per-message scores',
        'AUROC (bots vs the accounts they imitate)',
        'mean of per-message scores',
        'bots likely_ai',
        'humans likely_ai (worst account)',
      ],
      sizes.map((n) => {
        const t = tweets.filter((h) => h.w.n === n);
        const pr = pairs.filter((h) => h.w.n === n);
        const humans = t.filter((h) => h.w.author.y === 0);
        const accounts = [...new Set(humans.map((h) => h.w.author.id))];
        const worst = accounts
          .map((a) => [a.slice(8), rate(humans.filter((h) => h.w.author.id === a))] as const)
          .sort((x, y) => y[1] - x[1])[0];
        return [
          String(n),
          `${t.length - humans.length} / ${humans.length}`,
          f3(auc(t, 'p')),
          f3(auc(t, 'mean')),
          f3(auc(pr, 'p')),
          f3(auc(pr, 'mean')),
          pct(rate(t.filter((h) => h.w.author.y === 1))),
          `${pct(rate(humans))} (${worst ? `${worst[0]} ${pct(worst[1])}` : '–'})`,
        ];
      }),
    ),
  );
  console.log('\nSentences of one text as messages (leave-one-source-out; each text is an author):');
  console.log(
    printTable(
      ['messages', 'AI / human windows', 'AUROC', 'mean of per-message scores', 'AI likely_ai', 'humans likely_ai (worst source)', 'ECE'],
      sizes.map((n) => {
        const t = sents.filter((h) => h.w.n === n);
        const humans = t.filter((h) => h.w.author.y === 0);
        const sources = [...new Set(humans.map((h) => h.w.author.source))];
        const worst = sources.map((s) => [s, rate(humans.filter((h) => h.w.author.source === s))] as const).sort((x, y) => y[1] - x[1])[0];
        return [
          String(n),
          `${t.length - humans.length} / ${humans.length}`,
          f3(auc(t, 'p')),
          f3(auc(t, 'mean')),
          pct(rate(t.filter((h) => h.w.author.y === 1))),
          `${pct(rate(humans))} (${worst ? `${worst[0]} ${pct(worst[1])}` : '–'})`,
          f3(
            ece(
              t.map((h) => h.p),
              t.map((h) => h.w.author.y),
            ),
          ),
        ];
      }),
    ),
  );
  // Every human source at every window size: the first target.
  const worstRows: string[][] = [];
  for (const n of sizes) {
    const humans = held.filter((h) => h.w.n === n && h.w.author.y === 0);
    const sources = [...new Set(humans.map((h) => h.w.author.source))].sort();
    const flagged = sources
      .map((s) => [s, humans.filter((h) => h.w.author.source === s)] as const)
      .filter(([, xs]) => xs.some((x) => x.flagged));
    worstRows.push([
      String(n),
      String(sources.length),
      flagged.length ? flagged.map(([s, xs]) => `${s} ${pct(rate(xs))} of ${xs.length}`).join(', ') : 'none',
    ]);
  }
  console.log('\nHuman authors called likely_ai, per window size (sources with any window flagged):');
  console.log(printTable(['messages', 'human sources', 'flagged'], worstRows));
  const scored: Scored[] = held.filter((h) => h.w.n > 1).map((h) => ({ p: h.p, y: h.w.author.y, flagged: h.flagged }));
  console.log('\nAll windows of 2+ messages:');
  console.log(formatTable([['all', metricRow(scored)]], MARKDOWN, 'windows'));
}

/** Trains the per-message model without the listed accounts' tweets (scripts/train.ts --exclude-ids) and returns its path. */
function trainHeldOutModel(): string {
  const out = join(mkdtempSync(join(tmpdir(), 'textdetect-author-')), 'heldout.bin');
  log(`training the held-out per-message model (npm run train -- --exclude-ids models/author-heldout-ids.json --out ${out})`);
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'scripts/train.ts'),
      '--data',
      DATA,
      '--exclude-ids',
      join(ROOT, 'models/author-heldout-ids.json'),
      '--out',
      out,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT },
  );
  if (r.status !== 0) throw new Error(`Training the held-out model failed (exit ${r.status ?? r.signal}).`);
  return out;
}

async function main(): Promise<void> {
  if (BARS_ONLY) {
    if (!existsSync(OUT)) {
      process.stderr.write(
        `train-author.ts: --bars-only keeps the calibration of the author model at --out (${OUT}), and there is none; copy one there, or run without --bars-only.\n`,
      );
      process.exit(2);
    }
    const kept = readAuthorModel(OUT);
    const assistant = fitAssistantBars(DETECTOR, kept.bands);
    writeModel(modelOf(kept.bands, kept.training, assistant));
    return;
  }
  const modelPath =
    SCORE_MODEL === 'shipped' ? join(ROOT, 'models/detector.bin') : SCORE_MODEL ? resolve(SCORE_MODEL) : trainHeldOutModel();
  const { header, arrays } = readArtifact(modelPath);
  const model = new LoadedModel(header, arrays);
  if (SCORE_MODEL === 'shipped') {
    console.log(
      'Note: scoring with the shipped models/detector.bin, which was trained on tweets of 7 of these accounts; the TweepFake figures are then not held out (see --score-model).',
    );
  }
  const authors = loadAuthors();
  log(
    `${authors.length} authors (${authors.filter((a) => a.kind === 'account').length} TweepFake accounts), ${authors.reduce((t, a) => t + a.messages.length, 0)} messages`,
  );
  const ws = scoreWindows(model, authors);
  log(`${ws.length} windows scored with ${model.version}`);
  const held = leaveOneOut(ws, FLOOR);
  log('leave-one-author-out done');
  if (process.argv.includes('--show-flagged-humans')) {
    for (const h of held)
      if (h.flagged && h.w.author.y === 0)
        console.log(
          `flagged human window: ${h.w.author.id} (${h.w.author.source}) n=${h.w.n} words=${h.w.words} pooled=${h.w.pooled.toFixed(2)} p=${h.p.toFixed(4)}`,
        );
  }
  console.log(
    `\nPer-message model ${model.version}; likely_ai floor ${FLOOR}; a verdict needs ${MIN_MESSAGES} messages and ${MIN_WORDS} words.`,
  );
  report(held);
  const bands = fitAuthorBands(ws);
  const assistant = fitAssistantBars(DETECTOR, bands);
  const final = modelOf(
    bands,
    {
      scoreModel: model.version,
      data: ['authors-train.jsonl (TweepFake accounts)', 'sentences of corpus-dev.jsonl and extra-dev.jsonl texts'],
      authors: authors.length,
      windows: ws.length,
      windowSizes: WINDOW_SIZES,
      floor: FLOOR,
      targetFpr: TARGET_FPR,
      sourceGuardMin: SOURCE_GUARD_MIN,
    },
    assistant,
  );
  console.log('\nBands (pooled words: Platt a, b; likely_ai threshold; human / AI windows):');
  for (const b of final.bands)
    console.log(
      `  ${String(b.minWords).padStart(4)}+ words: a=${b.a.toFixed(3)} b=${b.b.toFixed(3)} likely_ai>=${b.aiThreshold.toFixed(4)} (${b.nHuman} / ${b.nAi})`,
    );
  writeModel(final);
}

await main();
