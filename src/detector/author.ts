/**
 * Author level: one author's messages judged together (`Detector.detectAuthor`).
 *
 * The messages that count are pooled into one text and scored by the same model as a single text
 * (its raw score, before any calibration); that score is then calibrated and thresholded on
 * *author windows* — runs of consecutive messages of one author, human and AI, from TweepFake
 * accounts and from the sentences of the corpora's texts — by word count of the pooled text.
 * `scripts/train-author.ts` fits `models/author.json` and measured the alternatives (the mean of
 * the per-message scores, their spread, cross-message vocabulary reuse, pooled Fast-DetectGPT
 * criteria) by leave-one-author-out; docs/detector.md ("Author level") has the figures and why the
 * pooled score won.
 */
import { readFileSync } from 'node:fs';
import type { AssistantBar } from './artifact.ts';
import { sigmoid } from './model.ts';
import type { Language } from './types.ts';

/** Calibration and `likely_ai` threshold of author windows whose pooled text has at least `minWords` words. */
export interface AuthorBand {
  minWords: number;
  /** Platt scaling of the pooled text's raw score: p = 1 / (1 + exp(−(a·score + b))). */
  a: number;
  b: number;
  /** `likely_ai` when p ≥ this (1% of held-out human windows, and of every human source, at most). */
  aiThreshold: number;
  /** Human and AI windows the band was fitted on. */
  nHuman: number;
  nAi: number;
}

export interface AuthorModel {
  format: 'textdetect-author';
  formatVersion: 1;
  /** Content-derived id (`ta1-<hash>`), reported next to the detector's in `model`. */
  version: string;
  /**
   * Fewest messages and words of the windows the `likely_ai` thresholds were fitted on. Files
   * written before the evidence floor (EVIDENCE_FLOOR_WORDS in src/contract.ts, one rule for single
   * texts and authors) say 3 and 80, which the engine once held every verdict back below; it now
   * applies the floor and reads these for the record only.
   */
  minMessages: number;
  minWords: number;
  /** Ascending by `minWords`; the last band whose `minWords` ≤ the pooled text's words applies. */
  bands: AuthorBand[];
  /** `likely_human` when p < this. */
  humanThreshold: number;
  /** Facts for people reading the file: data, held-out protocol, the per-message model it was fitted with. */
  training: Record<string, unknown>;
  /**
   * The assistant head's bars for an author (issue 38): read on the pooled messages, like the
   * single-text bars but fitted on author windows, because the head's margin of pooled chat lines
   * falls as messages are added (humans' faster than the assistant's). Absent in files written
   * before them; used only with the detector they were fitted for.
   */
  assistant?: AuthorAssistantBars;
}

/** A bar of the assistant head for authors with at least `minMessages` used messages. */
export interface AuthorAssistantBar extends Pick<AssistantBar, 'veto' | 'fire' | 'ceiling' | 'rise'> {
  minMessages: number;
}

export interface AuthorAssistantBars {
  /** Version of the detector artifact whose head the bars read (its margins differ with every head). */
  detector: string;
  /** Fewest pooled words the bars apply to (they were fitted on windows with at least these). */
  minWords: number;
  /** Per language, ascending by `minMessages`. */
  bars: Record<string, AuthorAssistantBar[]>;
  /**
   * Authors under the evidence floor (from `minWords` pooled words up to the bars' own), who get no
   * verdict either way: bars that only rank them (`AssistantBar.rise`, no `fire`). Absent in files
   * written before them.
   */
  rank?: { minWords: number; bars: Record<string, AuthorAssistantBar[]> };
  /**
   * Bars of the same pooled words read on another margin: the mean of the messages' own margins,
   * each weighted by its words (`messagesMargin`). Pooled, a run of unrelated chat lines is a text
   * unlike any the head learnt, and a few people's runs reach the assistant's; a message alone is
   * one, and over ten or twenty of them the people's mean stays far under the assistant's. They
   * only fire (`veto` = `fire`: no one is kept from being cleared by them), from two messages, for
   * authors the pooled bars veto (`readsMessages`).
   * Absent in files written before them.
   */
  messages?: { minMessages: number; bars: Record<string, AuthorAssistantBar[]> };
  /** Facts for people reading the file: the rules and the windows the bars were fitted on. */
  fitted: Record<string, unknown>;
}

/** Reads and checks `models/author.json` (or another file `npm run train:author` wrote). */
export function readAuthorModel(path: string): AuthorModel {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the author model at ${path}: ${(err as Error).message}`);
  }
  const m = parsed as Partial<AuthorModel>;
  if (m.format !== 'textdetect-author' || m.formatVersion !== 1 || !Array.isArray(m.bands) || m.bands.length === 0) {
    throw new Error(`${path} is not a textdetect author model (format textdetect-author v1 with calibration bands).`);
  }
  return m as AuthorModel;
}

/**
 * The text the author's score is computed on: the used messages, one per line. A line break keeps
 * each message's sentences apart from the next one's (the tokenizer treats it as a space, the
 * sentence statistics as a boundary).
 */
export function poolMessages(messages: readonly string[]): string {
  return messages.join('\n');
}

export function authorBandFor(model: Pick<AuthorModel, 'bands'>, words: number): AuthorBand {
  let band = model.bands[0]!;
  for (const b of model.bands) if (words >= b.minWords) band = b;
  return band;
}

/**
 * The head's bar for an author of `messages` used messages and `words` pooled words in `language`,
 * when the file has bars for the detector `detectorVersion` and such authors: for the pooled
 * messages (`bars`, or `rank` under their words), or with `reading` 'messages' for the messages one
 * by one (`messages`: from the pooled bars' words and the bars' fewest messages).
 */
export function authorAssistantBarFor(
  model: AuthorModel,
  detectorVersion: string,
  language: Language,
  messages: number,
  words: number,
  reading: 'pooled' | 'messages' = 'pooled',
): AuthorAssistantBar | undefined {
  const a = model.assistant;
  if (!a || a.detector !== detectorVersion) return undefined;
  if (reading === 'messages') {
    const ok = a.messages && words >= a.minWords && messages >= a.messages.minMessages;
    return ok ? barForMessages(a.messages?.bars[language], messages) : undefined;
  }
  const bars = words >= a.minWords ? a.bars : a.rank && words >= a.rank.minWords ? a.rank.bars : undefined;
  return barForMessages(bars?.[language], messages);
}

/** The bar of the most messages `messages` reaches, of bars ascending by `minMessages`. */
export function barForMessages(bars: readonly AuthorAssistantBar[] | undefined, messages: number): AuthorAssistantBar | undefined {
  let bar: AuthorAssistantBar | undefined;
  for (const b of bars ?? []) if (messages >= b.minMessages) bar = b;
  return bar;
}

/**
 * Whether the messages are read one by one at all: only for an author the pooled reading vetoes
 * (its margin at or over the pooled bar's veto, so not cleared). Nearly every member of the
 * assistant is (the veto leaves at most 3% of their training windows under it), most people are
 * not (71–87% of the human windows of 10 messages are under it), and they are spared the reading of
 * every message again. The same rule for the bars' fitting and the engine.
 */
export function readsMessages(pooledBar: AuthorAssistantBar | undefined, pooledMargin: number | undefined): boolean {
  return pooledBar !== undefined && pooledMargin !== undefined && pooledMargin >= pooledBar.veto;
}

/**
 * The margin `AuthorAssistantBars.messages` is read on: the mean of the messages' own head margins,
 * each weighted by its words (a two-word reply says less than a paragraph). The same function for
 * the bars' fitting and the engine.
 */
export function messagesMargin(margins: readonly number[], words: readonly number[]): number {
  let sum = 0;
  let weight = 0;
  for (const [i, m] of margins.entries()) {
    const w = Math.max(1, words[i] ?? 0);
    sum += m * w;
    weight += w;
  }
  return weight > 0 ? sum / weight : Number.NEGATIVE_INFINITY;
}

export function authorProbability(model: Pick<AuthorModel, 'bands'>, pooledRawScore: number, words: number): number {
  const band = authorBandFor(model, words);
  return sigmoid(band.a * pooledRawScore + band.b);
}
