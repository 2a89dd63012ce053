/**
 * The `Detector` implementation: normalise → identify language → features → linear score →
 * per-(language, mode) calibration → verdict; optionally the same per sentence.
 */
import type { GroupCalibration } from './artifact.ts';
import { confirmingBar, liftedProbability } from './assistant.ts';
import {
  authorAssistantBarFor,
  authorBandFor,
  authorProbability,
  messagesMargin,
  poolMessages,
  readsMessages,
  type AuthorModel,
} from './author.ts';
import { HASHED_DOCUMENT, HASHED_STRIDE, isWordToken, tokenize, type FeatureVector, type HashedColumn } from './features.ts';
import { identifyLanguage } from './language.ts';
import { calibrate, round4, sigmoid, type LoadedModel } from './model.ts';
import { lowerForFeatures, normalize, type NormalizedText } from './normalize.ts';
import { originOf } from './origin.ts';
import type { Forest } from './gbdt.ts';
import { contextForest, scoreSegments, type SegmentModel, type SegmentsResult } from './segments.ts';
import { combineWindows, windowRanges } from './windows.ts';
import {
  AUTHOR_MAX_MESSAGES,
  EVIDENCE_FLOOR_WORDS,
  LANGUAGES,
  MODES,
  UnsupportedLanguageError,
  type AuthorDetectionResult,
  type AuthorDetectOptions,
  type AuthorMessageScore,
  type Confidence,
  type DetectionResult,
  type DetectionWarning,
  type DetectOptions,
  type Detector,
  type TextStart,
  type Language,
  type Mode,
  type SkipReason,
  type Verdict,
  type WindowPlan,
  type WindowScore,
} from './types.ts';

/**
 * Under this many words a text gets `confidence: "low"`, the `short_text` warning and no verdict
 * (`too_little_evidence`): the evidence floor, the same for an author's messages together.
 */
export const SHORT_TEXT_WORDS = EVIDENCE_FLOOR_WORDS;
/** From this many words (and a clear score) a result may be `confidence: "high"`. */
const HIGH_CONFIDENCE_WORDS = 120;
/** Under this many words a probability is pulled towards 0.5 unless a length band was fitted on such texts (`shortestCalibrated`). */
const MIN_CALIBRATED_WORDS = 15;
/** Out-of-domain texts: `likely_ai` only from this probability, `likely_human` only under the other. */
const OOD_AI_THRESHOLD = 0.95;
const OOD_HUMAN_THRESHOLD = 0.2;
export class TextDetector implements Detector {
  readonly model: string;
  private readonly m: LoadedModel;
  private readonly author: AuthorModel | undefined;
  private readonly segmentModel: SegmentModel | undefined;
  private readonly segmentForest: Forest | undefined;
  private readonly segmentModelProblem: string | undefined;
  /** The assistant head's hashed weights the sentence model reads. */
  private readonly family: HashedColumn | undefined;

  /**
   * `author`: the author-level calibration (`models/author.json`); without it `detectAuthor` throws.
   * `segmentModel`: the sentence model fitted to this model's raw scores (`models/segments.json`);
   * without it, or when `segmentModelProblem` says why it does not apply, `segments: true` throws.
   * `family`: the assistant head's hashed weights for the sentence model, when `model` is read
   * without its head (default: the head's own column).
   */
  constructor(model: LoadedModel, author?: AuthorModel, segmentModel?: SegmentModel, segmentModelProblem?: string, family?: HashedColumn) {
    this.family = family ?? model.assistantColumn;
    this.m = model;
    this.model = model.version;
    this.author = author;
    this.segmentModel = segmentModelProblem ? undefined : segmentModel;
    this.segmentForest = this.segmentModel ? contextForest(this.segmentModel) : undefined;
    this.segmentModelProblem = segmentModelProblem;
  }

  detect(text: string, options: DetectOptions = {}): DetectionResult {
    const started = this.start(text, options);
    if ('result' in started) return started.result;
    const { plan } = started;
    return combineWindows(
      plan,
      plan.windows.map((w) => this.detectWindow(text.slice(w.start, w.end), plan, options)),
      options,
    );
  }

  /**
   * The first step of `detect`, for a caller that schedules a long text's windows itself (the
   * service, between other callers' texts): the answer of a text of one window, or the plan of a
   * longer one, whose windows go to `detectWindow` and the scores to `combineWindows`.
   */
  start(text: string, options: DetectOptions = {}): TextStart {
    if (typeof text !== 'string') throw new TypeError('text must be a string.');
    const windows = windowRanges(text);
    if (windows.length <= 1) return { result: this.#score(text, options).result };
    checkOptions(options);
    // One language for every window, told from the document's opening (as for one text: language.ts
    // reads the first few thousand characters), so one window of quotations or a table of figures is
    // not scored as another language than its neighbours.
    let language = options.language;
    let languageUncertain = false;
    if (!language) {
      const guess = identifyLanguage(normalize(text.slice(0, LANGUAGE_SAMPLE_CHARS)).text);
      if (guess.certain && !guess.supported) throw new UnsupportedLanguageError(guess.language);
      language = guess.language as Language;
      languageUncertain = !guess.certain;
    }
    return { plan: { language, languageUncertain, windows } };
  }

  /** One window of a plan (`start`), scored like a text of its own in the plan's language. */
  detectWindow(text: string, plan: WindowPlan, options: DetectOptions = {}): WindowScore {
    const { result, words } = this.#score(text, { ...options, language: plan.language }, { guessedLanguage: plan.languageUncertain });
    return { ...result, words };
  }

  /**
   * `detect`, also returning the word count it read the text with; `given` is the text's
   * normalisation when the caller already made it (the author level normalises each message once),
   * and `languageChecked` says the caller already compared a given language with the text's own
   * (the author level does that once over all messages).
   */
  #score(
    text: string,
    options: DetectOptions,
    {
      given,
      languageChecked = false,
      guessedLanguage = false,
    }: {
      /** The text's normalisation when the caller already made it (the author level normalises each message once). */
      given?: NormalizedText;
      /** The caller already compared a given language with the text's own (the author level, once over all messages). */
      languageChecked?: boolean;
      /** The given language is the caller's guess (a document's windows): say so, as for a text whose language is a guess. */
      guessedLanguage?: boolean;
    } = {},
  ): { result: DetectionResult; words: number; f: FeatureVector; raw: number; margin: number | undefined } {
    if (typeof text !== 'string') throw new TypeError('text must be a string.');
    const mode: Mode = options.mode ?? 'general';
    checkOptions(options);
    const norm = given ?? normalize(text);
    const warnings: DetectionWarning[] = [];
    let language: Language;
    if (options.language && guessedLanguage) {
      language = options.language;
      warnings.push('language_uncertain');
    } else if (options.language) {
      language = options.language;
      // A forced language is trusted, but a text clearly in another one (German sent as `en`) is
      // then scored by a model of the wrong language, whose probability means nothing: say so.
      if (!languageChecked && clearlyOtherLanguage(identifyLanguage(norm.text), language)) warnings.push('language_mismatch');
    } else {
      const guess = identifyLanguage(norm.text);
      if (guess.certain && !guess.supported) throw new UnsupportedLanguageError(guess.language);
      language = guess.language as Language;
      if (!guess.certain) warnings.push('language_uncertain');
    }
    const calib = this.m.calibrationFor(language, mode);
    const fallback = !this.m.hasOwnCalibration(language, mode);
    if (fallback) warnings.push('calibration_fallback');
    const lower = lowerForFeatures(norm.text, language);
    const f = this.m.features(lower, language);
    const raw = this.m.rawLogit(f);
    let p = calibrateForLength(raw, calib, f.words);
    const short = f.words < SHORT_TEXT_WORDS;
    if (short) {
      warnings.push('short_text');
      // Below the shortest texts the length-banded calibration was fitted on, pull the score
      // towards 0.5 in proportion to the missing words.
      const floor = shortestCalibrated(calib);
      if (f.words < floor) p = 0.5 + (p - 0.5) * (f.words / floor);
    }
    // Verdicts are read off the probability as reported, so the two never disagree by rounding.
    p = round4(Math.min(1, Math.max(0, p)));
    let aiThreshold = aiThresholdFor(calib, f.words);
    let humanThreshold = humanThresholdFor(calib, f.words);
    // Today's assistants (issue 38): the assistant head may only raise the score, from its own bars.
    const assistant = this.m.assistantReading(f, raw, language);
    const documentP = p;
    if (assistant) p = liftedProbability(p, assistant.margin, assistant.bar, aiThreshold, humanThreshold);
    // On the assistant's own texts that only the assistant head reads as AI, the polish head says
    // "polished" for 6 of the 116 written from scratch (v5-dev), even fitted with the family: a text
    // written from scratch must not be headlined polished, so it says nothing there.
    const liftedToAi = documentP < aiThreshold && p >= aiThreshold;
    const vetoed = assistant !== undefined && assistant.margin >= assistant.bar.veto;
    const ood = this.m.oodScore(f, language);
    const outOfDomain = ood !== undefined && (ood.score > ood.threshold || f.words > ood.maxWords);
    if (outOfDomain) {
      // Unlike anything calibrated on: the thresholds were never checked on such text, so only a
      // clear score gets a verdict.
      warnings.push('out_of_domain');
      aiThreshold = Math.max(aiThreshold, OOD_AI_THRESHOLD);
      humanThreshold = Math.min(humanThreshold, OOD_HUMAN_THRESHOLD);
    }
    const languageUncertain = warnings.includes('language_uncertain');
    const wrongLanguage = warnings.includes('language_mismatch');
    let verdict = verdictOf(p, aiThreshold, humanThreshold);
    // A short text, or one whose language is a guess or clearly not the one it was scored as, is
    // never reported as likely AI: too little evidence to act on (the warnings say which). Nor is
    // a text scored with a borrowed calibration: its threshold was never checked on human texts
    // of that language and mode, and leave-one-source-out showed what that costs (Turkish
    // complaints scored with the calibration of Turkish news: 97% of the human complaints flagged).
    if ((short || languageUncertain || wrongLanguage || fallback) && verdict === 'likely_ai') verdict = 'mixed';
    // Below the evidence floor there is no verdict either way (the same rule as for an author):
    // a short text is close to chance, so "likely human" would be as unfounded as "likely AI".
    if (short) {
      warnings.push('too_little_evidence');
      verdict = 'mixed';
    }
    // Say why an AI-leaning probability did not become likely_ai when nothing else above does.
    if (verdict === 'mixed' && p >= 0.5 && !short && !languageUncertain && !wrongLanguage && !outOfDomain && !fallback)
      warnings.push('strict_threshold');
    // And why a human-leaning one did not become likely_human (issue 31: that bar bounds the AI texts cleared).
    if (verdict === 'mixed' && p < 0.5 && !short && !outOfDomain) warnings.push('strict_human_threshold');
    let confidence: Confidence;
    if (short || verdict === 'mixed' || languageUncertain || wrongLanguage) confidence = 'low';
    else if (!outOfDomain && !fallback && f.words >= HIGH_CONFIDENCE_WORDS && (p >= Math.max(aiThreshold, 0.9) || p <= 0.1))
      confidence = 'high';
    else confidence = 'medium';

    const neverLikelyAi = short || languageUncertain || wrongLanguage || fallback;
    const parts = options.segments
      ? this.segmentsOf(text, norm, language, calib, p, {
          likelyAi: verdict === 'likely_ai',
          neverLikelyAi,
          belowEvidenceFloor: short,
          notHuman: vetoed,
          byHeadAlone: liftedToAi && verdict === 'likely_ai',
          // A text the head keeps from being cleared may hold an assistant's passages among a person's:
          // read passage by passage against the head's stricter passage bar.
          scanPassages: vetoed && verdict !== 'likely_ai' && !neverLikelyAi && !outOfDomain,
        })
      : undefined;
    const result: DetectionResult = {
      ai_probability: p,
      mode,
      language,
      verdict,
      confidence,
      segments: parts?.segments ?? [],
      warnings,
      model: this.model,
      generated_spans: parts?.spans ?? [],
      generated_share: parts?.share ?? null,
      composition: parts?.composition ?? null,
      polished_probability: short || liftedToAi ? null : polishedOf(this.m, f, lower, raw),
      // Read off the finished answer just below, by the one rule every route shares.
      origin: 'uncertain',
      windows: [],
    };
    result.origin = originOf(result);
    return { result, words: f.words, f, raw, margin: assistant?.margin };
  }

  detectAuthor(messages: readonly string[], options: AuthorDetectOptions = {}): AuthorDetectionResult {
    if (!Array.isArray(messages)) throw new TypeError('messages must be an array of strings.');
    if (messages.length < 1 || messages.length > AUTHOR_MAX_MESSAGES) {
      throw new RangeError(`messages must hold 1 to ${AUTHOR_MAX_MESSAGES} texts; got ${messages.length}.`);
    }
    const mode: Mode = options.mode ?? 'general';
    checkOptions(options);
    const author = this.author;
    if (!author) throw new Error('No author model is loaded (models/author.json); run `npm run train:author`.');
    const scores: Array<AuthorMessageScore | undefined> = new Array(messages.length);
    const candidates: Array<{ index: number; text: string; norm: NormalizedText; guess?: ReturnType<typeof identifyLanguage> }> = [];
    for (const [index, message] of messages.entries()) {
      if (typeof message !== 'string') throw new TypeError(`messages[${index}] must be a string.`);
      const skip = (skipped: SkipReason) => {
        scores[index] = { index, words: 0, ai_probability: null, skipped };
      };
      if (!/\S/.test(message)) skip('empty');
      else if (isLinkOnly(message)) skip('link_only');
      else {
        const norm = normalize(message);
        // Emoji, punctuation and symbols say nothing about who wrote a message.
        if (!RE_LETTER_OR_DIGIT.test(norm.text)) skip('no_words');
        else candidates.push({ index, text: message, norm, ...(options.language ? {} : { guess: identifyLanguage(norm.text) }) });
      }
    }
    // One language for the whole author, read off all their messages together (one chat line rarely
    // has enough evidence on its own); a message clearly in another language is left out.
    const warnings = new Set<DetectionWarning>();
    let language: Language = options.language ?? 'en';
    // All of them together clearly in an unsupported language: only messages clearly in a supported one count.
    let pooledUnsupported = false;
    if (!options.language && candidates.length > 0) {
      const pooled = identifyLanguage(candidates.map((c) => c.norm.text).join('\n'));
      pooledUnsupported = pooled.certain && !pooled.supported;
      if (pooled.certain && pooled.supported) language = pooled.language as Language;
      else {
        const counts = new Map<Language, number>();
        for (const c of candidates)
          if (c.guess?.certain && c.guess.supported)
            counts.set(c.guess.language as Language, (counts.get(c.guess.language as Language) ?? 0) + 1);
        language = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'en';
        if (!pooled.certain) warnings.add('language_uncertain');
      }
    }
    if (options.language && candidates.length > 0) {
      // Given a language, the messages are scored as that language; all of them together clearly
      // in another one is said once for the author (as `detect` says it for one text).
      const pooled = identifyLanguage(candidates.map((c) => c.norm.text).join('\n'));
      if (clearlyOtherLanguage(pooled, options.language)) warnings.add('language_mismatch');
    }
    const used: string[] = [];
    // Each used message's features, raw score and the head's margin where scoring it read one, for
    // the head's reading of the messages one by one.
    const read: Array<{ f: FeatureVector; raw: number; margin: number | undefined }> = [];
    let words = 0;
    for (const c of candidates) {
      const clearlySupported = c.guess?.certain && c.guess.supported;
      if ((c.guess?.certain && c.guess.language !== language) || (pooledUnsupported && !clearlySupported)) {
        scores[c.index] = { index: c.index, words: 0, ai_probability: null, skipped: 'other_language' };
        continue;
      }
      const { result: r, words: n, f, raw, margin } = this.#score(c.text, { mode, language }, { given: c.norm, languageChecked: true });
      read.push({ f, raw, margin });
      if (r.warnings.includes('calibration_fallback')) warnings.add('calibration_fallback');
      scores[c.index] = { index: c.index, words: n, ai_probability: r.ai_probability, skipped: null };
      used.push(c.text);
      words += n;
    }
    let p = 0.5;
    let pooled: { f: ReturnType<LoadedModel['features']>; lower: string; raw: number } | undefined;
    const band = authorBandFor(author, words);
    let liftedToAi = false;
    if (used.length > 0) {
      const lower = lowerForFeatures(normalize(poolMessages(used)).text, language);
      const f = this.m.features(lower, language);
      pooled = { f, lower, raw: this.m.rawLogit(f) };
      p = round4(authorProbability(author, pooled.raw, words));
      // Today's assistants (issue 38): the head read on the pooled messages, against the author
      // model's own bars for it; it only ever raises the score.
      const bar = authorAssistantBarFor(author, this.m.version, language, used.length, words);
      const margin = bar && this.m.assistantMarginOf(f, pooled.raw);
      const before = p;
      if (bar && margin !== undefined) p = liftedProbability(p, margin, bar, band.aiThreshold, author.humanThreshold);
      // And on the messages one by one, where pooling hides what each says (AuthorAssistantBars.messages).
      const byMessage = authorAssistantBarFor(author, this.m.version, language, used.length, words, 'messages');
      if (byMessage && readsMessages(bar, margin)) {
        const m = messagesMargin(
          read.map((r) => r.margin ?? this.m.assistantMarginOf(r.f, r.raw) ?? Number.NEGATIVE_INFINITY),
          read.map((r) => r.f.words),
        );
        p = liftedProbability(p, m, byMessage, band.aiThreshold, author.humanThreshold);
      }
      liftedToAi = before < band.aiThreshold && p >= band.aiThreshold;
    }
    // The evidence floor of one text, on the used messages' words together: below it no verdict
    // either way.
    const evidence_needed = evidenceNeeded(used.length, words);
    // Polished or written: read off the messages pooled into one text, like ai_probability, because
    // single chat lines are mostly under the evidence floor on their own.
    // As for one text, none for an author only the assistant head reads as AI.
    const polished_probability = pooled && !evidence_needed && !liftedToAi ? polishedOf(this.m, pooled.f, pooled.lower, pooled.raw) : null;
    let verdict = verdictOf(p, band.aiThreshold, author.humanThreshold);
    if (evidence_needed) {
      warnings.add('too_little_evidence');
      verdict = 'mixed';
    }
    // As for single texts: a guessed or clearly wrong language or a borrowed calibration never
    // gives likely_ai.
    const wrongLanguage = warnings.has('language_mismatch');
    if ((warnings.has('language_uncertain') || wrongLanguage || warnings.has('calibration_fallback')) && verdict === 'likely_ai')
      verdict = 'mixed';
    if (verdict === 'mixed' && p >= 0.5 && warnings.size === 0) warnings.add('strict_threshold');
    let confidence: Confidence = 'medium';
    if (verdict === 'mixed' || evidence_needed || warnings.has('language_uncertain') || wrongLanguage) confidence = 'low';
    else if (
      used.length >= HIGH_CONFIDENCE_MESSAGES &&
      words >= HIGH_CONFIDENCE_WORDS &&
      (p >= Math.max(band.aiThreshold, 0.9) || p <= 0.1)
    )
      confidence = 'high';
    const result: AuthorDetectionResult = {
      ai_probability: p,
      mode,
      language,
      verdict,
      confidence,
      warnings: [...warnings],
      messages_used: used.length,
      words_used: words,
      evidence_needed,
      messages: scores as AuthorMessageScore[],
      model: this.model,
      author_model: author.version,
      polished_probability,
      // Read off the finished answer just below, by the one rule every route shares.
      origin: 'uncertain',
    };
    result.origin = originOf(result);
    return result;
  }

  /**
   * Sentences scored on their own and through their neighbours (segments.ts), and the runs that
   * look generated, each scored again as a document of its own with the document's calibration.
   */
  private segmentsOf(
    original: string,
    norm: { text: string; map: Int32Array },
    language: Language,
    calib: ReturnType<LoadedModel['calibrationFor']>,
    probability: number,
    verdict: {
      likelyAi: boolean;
      neverLikelyAi: boolean;
      belowEvidenceFloor: boolean;
      notHuman: boolean;
      byHeadAlone: boolean;
      scanPassages: boolean;
    },
  ): SegmentsResult {
    const { likelyAi, neverLikelyAi, belowEvidenceFloor, notHuman, byHeadAlone } = verdict;
    const scanPassages = verdict.scanPassages && this.m.hasAssistantPassageBar(language);
    if (!this.segmentModel) {
      throw new Error(this.segmentModelProblem ?? `Model ${this.model} has no sentence model; run \`npm run train:segments\`.`);
    }
    // A stretch of the normalised text scored as a document of its own, with the document's
    // calibration and thresholds, and the assistant head's reading of it.
    const stretch = (start: number, end: number) => {
      const f = this.m.features(lowerForFeatures(norm.text.slice(start, end), language), language);
      const raw = this.m.rawLogit(f);
      return {
        f,
        p: round4(calibrateForLength(raw, calib, f.words)),
        ai: aiThresholdFor(calib, f.words),
        human: humanThresholdFor(calib, f.words),
        // Under the evidence floor the head only ranks whole texts: a short run is not its to confirm.
        head: f.words >= SHORT_TEXT_WORDS ? this.m.assistantReading(f, raw, language) : undefined,
      };
    };
    return scoreSegments(this.segmentModel, {
      original,
      normText: norm.text,
      map: norm.map,
      language,
      lm: this.m.lm,
      // The interleaved table (`LMContext.hashed`), whose lines the document's pass has just read.
      ...(this.m.lm.hashed
        ? { sparse: this.m.lm.hashed, sparseStride: HASHED_STRIDE, sparseOffset: HASHED_DOCUMENT }
        : { sparse: this.m.weights.sparse }),
      ...(this.family && { family: this.family }),
      forest: this.segmentForest,
      documentProbability: probability,
      documentLikelyAi: likelyAi,
      documentNotHuman: notHuman,
      belowEvidenceFloor,
      // As a document is scored, the assistant head included (the sentence model reads the head's
      // weights, so its runs of the family's sentences are the head's to confirm), against the bar a
      // part of a text is confirmed against (`confirmingBar`).
      scoreAsDocument: (start, end) => {
        const { f, p, ai, human, head } = stretch(start, end);
        const probability = head ? liftedProbability(p, head.margin, confirmingBar(head.bar, byHeadAlone), ai, human) : p;
        return { probability, likelyAi: !neverLikelyAi && f.words >= SHORT_TEXT_WORDS && probability >= ai };
      },
      ...((byHeadAlone || scanPassages) && {
        headReadWhole: byHeadAlone,
        readPassage: (start: number, end: number) => {
          const { p, ai, human, head } = stretch(start, end);
          if (!head) return { probability: p, fires: false };
          const { fire } = confirmingBar(head.bar, byHeadAlone);
          return { probability: liftedProbability(p, head.margin, head.bar, ai, human), fires: fire !== undefined && head.margin >= fire };
        },
      }),
    });
  }
}

/** Characters of a long text's opening its language is told from (language.ts reads at most 3,000 of them, normalised). */
const LANGUAGE_SAMPLE_CHARS = 6000;

function checkOptions(options: DetectOptions | AuthorDetectOptions): void {
  const mode = options.mode ?? 'general';
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new RangeError(`Unknown mode "${String(mode)}"; expected one of ${MODES.join(', ')}.`);
  }
  if (options.language !== undefined && !(LANGUAGES as readonly string[]).includes(options.language)) {
    throw new RangeError(`Unknown language "${String(options.language)}"; expected one of ${LANGUAGES.join(', ')}.`);
  }
}

/** An author answer may be `confidence: "high"` from this many messages (and HIGH_CONFIDENCE_WORDS words). */
const HIGH_CONFIDENCE_MESSAGES = 10;

const RE_LINK = /\b(?:https?:\/\/|www\.)\S+/giu;
const RE_HAS_LINK = /\b(?:https?:\/\/|www\.)\S/iu;
const RE_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
function isLinkOnly(text: string): boolean {
  return RE_HAS_LINK.test(text) && !RE_LETTER_OR_DIGIT.test(text.replace(RE_LINK, ''));
}

/**
 * How many more messages and words the evidence floor needs (EVIDENCE_FLOOR_WORDS words in the
 * used messages together, so at least one message); null when there are enough.
 */
export function evidenceNeeded(messages: number, words: number): { messages: number; words: number } | null {
  if (words >= EVIDENCE_FLOOR_WORDS) return null;
  return { messages: messages === 0 ? 1 : 0, words: EVIDENCE_FLOOR_WORDS - words };
}

/** A confident identification of a language other than `language` (a supported one or not). */
function clearlyOtherLanguage(guess: ReturnType<typeof identifyLanguage>, language: Language): boolean {
  return guess.certain && guess.language !== language;
}

/** Words of a text as the engine counts them (word tokens of the normalised text; the length rules use this). */
export function countWords(text: string, language: Language): number {
  return tokenize(lowerForFeatures(normalize(text).text, language)).filter(isWordToken).length;
}

/**
 * Calibrated probability: the length band's Platt scaling, else the group's. A text shorter than
 * the shortest band takes that band (the engine then pulls it towards 0.5, `shortestCalibrated`).
 */
export function calibrateForLength(rawLogit: number, calib: GroupCalibration, words: number): number {
  const bands = calib.plattByLength ?? [];
  for (const band of bands) {
    if (words >= band.minWords && words < band.maxWords) return sigmoid(band.a * rawLogit + band.b);
  }
  const first = bands[0];
  if (first && words < first.minWords) return sigmoid(first.a * rawLogit + first.b);
  return calibrate(rawLogit, calib);
}

/**
 * Word count from which a text's probability is taken as calibrated: the shortest band's lower edge
 * when the band was fitted on texts that short, else MIN_CALIBRATED_WORDS (a language without
 * enough real short texts for a short band, such as Turkish, keeps the pull below 15 words).
 */
export function shortestCalibrated(calib: GroupCalibration): number {
  return Math.min(calib.plattByLength?.[0]?.minWords || MIN_CALIBRATED_WORDS, MIN_CALIBRATED_WORDS);
}

/** The polish head's probability at four decimals; null for an artifact trained before the head existed. */
function polishedOf(m: LoadedModel, f: ReturnType<LoadedModel['features']>, lower: string, raw: number): number | null {
  const p = m.polishedProbability(f, lower, raw);
  return p === undefined ? null : round4(p);
}

/** The `likely_human` threshold for a text of `words` words (issue 31: bounded share of AI texts under it). */
export function humanThresholdFor(calib: GroupCalibration, words: number): number {
  let t = calib.humanThreshold;
  for (const band of calib.humanThresholdByLength ?? []) if (words >= band.minWords) t = band.threshold;
  return t;
}

/** The `likely_ai` threshold for a text of `words` words. */
export function aiThresholdFor(calib: GroupCalibration, words: number): number {
  let t = calib.aiThreshold;
  for (const band of calib.aiThresholdByLength ?? []) if (words >= band.minWords) t = band.threshold;
  return t;
}

export function verdictOf(p: number, aiThreshold: number, humanThreshold: number): Verdict {
  if (p >= aiThreshold) return 'likely_ai';
  if (p < humanThreshold) return 'likely_human';
  return 'mixed';
}
