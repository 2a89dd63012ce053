// What the page says: the API's machine-readable answers (verdicts, warning codes, error codes)
// turned into sentences. No DOM here, so the wording can be checked against real API answers in Node.

/**
 * A whole percent, never 0% or 100% (as the bots show it): a detector cannot be certain, and 0.9995
 * rounded to "100%" reads as if it were.
 * @param {number} probability 0..1
 */
export function formatPercent(probability) {
  return `${Math.min(99, Math.max(1, Math.round(probability * 100)))}%`;
}

export const VERDICTS = {
  likely_ai: {
    label: 'Likely AI-generated',
    sentence: 'This text was most likely written by an AI system.',
  },
  mixed: {
    label: 'Unclear',
    sentence:
      'The score falls between the thresholds, so the text is called neither human-written nor AI-generated. Unclear is not the same as partly generated: see below whether a passage looks generated.',
  },
  likely_human: {
    label: 'Likely human-written',
    sentence: 'This text was most likely written by a person.',
  },
};

/**
 * The headline, from the answer's `origin` (issue 31): the same labels and sentences as the bots
 * (adapters/chat/origin-words.ts) and the CLI; test/chat/origin-words.test.ts holds them together.
 * `uncertain` keeps the page's "Unclear".
 */
export const ORIGINS = {
  ai_written: {
    label: 'Reads as AI-written',
    sentence: 'This text was most likely written by an AI system.',
  },
  ai_polished: {
    label: "Reads as the author's own text, polished by an AI",
    sentence: "It reads as a person's own writing that an AI system polished, edited or rewrote, rather than text an AI wrote.",
  },
  partly_ai: {
    label: 'Partly AI-written',
    sentence: "Some passages look generated; the rest reads as the author's own writing.",
  },
  human: VERDICTS.likely_human,
  uncertain: VERDICTS.mixed,
};

const FROM_VERDICT = { likely_ai: 'ai_written', mixed: 'uncertain', likely_human: 'human' };

/**
 * The answer's headline value: its `origin`, or for a server that sends none, what its verdict and
 * composition said.
 * @param {{ origin?: string, verdict: string, composition?: string | null }} answer
 */
export function originOf(answer) {
  if (Object.hasOwn(ORIGINS, answer.origin ?? '')) return answer.origin;
  if (answer.composition === 'partly_ai') return 'partly_ai';
  return FROM_VERDICT[answer.verdict] ?? 'uncertain';
}

/**
 * The headline in words: "Partly AI-written: about 55% of the words look generated" with the share.
 * @param {{ origin?: string, verdict: string, composition?: string | null, generated_share?: number | null }} answer
 */
export function originWords(answer) {
  const origin = originOf(answer);
  const words = ORIGINS[origin];
  if (origin === 'partly_ai' && typeof answer.generated_share === 'number') {
    return {
      label: `${words.label}: about ${formatPercent(answer.generated_share)} of the words look generated`,
      sentence: words.sentence,
    };
  }
  return words;
}

export const CONFIDENCE = {
  high: 'High confidence',
  medium: 'Medium confidence',
  low: 'Low confidence',
};

/** @param {string} verdict */
export function verdictWords(verdict) {
  return VERDICTS[verdict] ?? { label: verdict, sentence: `The service answered with the verdict “${verdict}”.` };
}

/** @param {string} confidence */
export function confidenceWords(confidence) {
  return CONFIDENCE[confidence] ?? `Confidence: ${confidence}`;
}

const WARNINGS = {
  short_text:
    'The text is short (under about 40 words), so the score is a weak guess. Short texts are never called likely AI-generated; check a longer passage if you can.',
  out_of_domain:
    'The text does not look like the kind of text this mode was calibrated on, so the score is less reliable. Try another mode if one fits better.',
  language_uncertain:
    'The language could not be identified with certainty, so the text was scored as the language shown. If that is wrong, choose the language and check again.',
  strict_threshold:
    'The score leans AI, but stays under the bar that is set so that at most 1 in 100 human texts is flagged, so the verdict is held back.',
  calibration_fallback:
    'There is no calibration for this mode in this language yet, so the language’s general calibration was used: the score is less precise and never called likely AI-generated.',
  // Only author-level answers (several messages of one member) carry it; kept here so the page never
  // shows a raw code if one is pasted into it some day.
  too_little_evidence: 'There are too few words to judge (under about 40), so no verdict and no score are given.',
  language_mismatch:
    'The text is clearly in another language than the one chosen, so it was scored with a model for the wrong language: the score means little and is never called likely AI-generated. Choose “Detect automatically” and check again.',
  strict_human_threshold:
    'The score leans human, but stays above the bar that is set so that at most 1 in 20 AI texts is called likely human, so the verdict is held back.',
};

/**
 * What the page says instead of a verdict below the evidence floor (the API's `too_little_evidence`):
 * no verdict either way, and no percentage, which would read as one all the same.
 */
export const TOO_SHORT = {
  label: 'Too short to judge',
  sentence:
    'Under about 40 words the detector cannot tell AI-generated from human writing, so it gives no verdict and the page shows no score. Check a longer passage.',
};

/** @param {{ warnings?: string[] }} answer */
export function tooShortToJudge(answer) {
  return Array.isArray(answer.warnings) && answer.warnings.includes('too_little_evidence');
}

/**
 * A sentence for every warning, including codes added to the API after this page was written.
 * @param {string} code
 */
export function warningSentence(code) {
  return WARNINGS[code] ?? `The detector reported a warning this page does not describe yet (“${code}”); treat the result with extra care.`;
}

/**
 * What the text is made of, from `composition`, `generated_share` and `generated_spans`: "partly
 * generated" (some passages look generated, the rest human) kept apart from "uncertain" (neither
 * can be said), which the verdict's "Unclear" does not tell.
 * @param {{ origin?: string, verdict: string, composition: string | null, generated_share: number | null, generated_spans: Array<{ confidence?: string }> }} answer
 * @returns {{ label: string, sentence: string } | undefined} undefined when the answer has no sentence scores
 */
export function compositionWords(answer) {
  const { composition, generated_share: share, generated_spans: spans } = answer;
  if (composition === null || composition === undefined) return undefined;
  const passages = spans.length === 1 ? 'one passage' : `${spans.length} passages`;
  // Spans over part of the text and the rest leaning AI too: not headlined partly (the headline
  // reads the verdict), so this box must not say the rest is the author's own either.
  if (composition === 'partly_ai' && originOf(answer) !== 'partly_ai') {
    return {
      label: 'Mostly generated',
      sentence: `About ${formatPercent(share ?? 0)} of the words look AI-generated (${passages}, outlined below), and the rest does not read clearly as the author's own writing.`,
    };
  }
  switch (composition) {
    case 'human':
      return { label: 'Reads as human writing', sentence: 'No passage of the text looks AI-generated.' };
    case 'ai':
      return {
        label: 'Generated throughout',
        sentence: `Nearly all of the text looks AI-generated (${formatPercent(share ?? 1)} of its words).`,
      };
    case 'partly_ai':
      return {
        label: 'Partly generated',
        sentence: `About ${formatPercent(share ?? 0)} of the words look AI-generated: ${passages}, outlined below. The rest reads as the author's own writing.`,
      };
    case 'uncertain':
      return {
        label: 'Uncertain',
        sentence: spans.length
          ? `Some sentences lean AI (${passages}, outlined with a dashed line below), but not clearly enough to call the text partly generated.`
          : 'The sentences do not clearly read as human writing or as generated text.',
      };
    default:
      return { label: composition, sentence: `The service described the text as “${composition}”.` };
  }
}

/** @param {string | undefined} confidence a span's confidence */
export function spanWords(confidence) {
  if (confidence === 'high') return 'clearly';
  if (confidence === 'medium') return 'probably';
  return 'possibly';
}

export const LANGUAGE_NAMES = { en: 'English', tr: 'Turkish' };

/** @param {string} code e.g. `de`, `cyrillic`, `unknown` */
export function languageName(code) {
  if (LANGUAGE_NAMES[code]) return LANGUAGE_NAMES[code];
  if (!code || code === 'unknown') return 'a language that could not be identified';
  if (/^[a-z]{2,3}$/.test(code)) {
    try {
      const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
      if (name && name !== code) return name;
    } catch {
      // not a language tag the browser knows: fall through to the raw code
    }
  }
  return `“${code}”`;
}

export const MODE_NAMES = { general: 'General', academic: 'Academic', financial: 'Financial', legal: 'Legal' };

/** @param {string} mode */
export function modeName(mode) {
  return MODE_NAMES[mode] ?? mode;
}

/** @param {number} seconds */
export function formatWait(seconds) {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/**
 * One sentence for a failed check, from the HTTP status, the error envelope (if any) and the
 * Retry-After header. Never shows the raw body: a person gets a sentence and what to do next.
 * @param {{ status: number, error?: { code?: string, message?: string, retry_after?: number, detected_language?: string, max_chars?: number, max_bytes?: number }, retryAfter?: number }} failure
 * @returns {{ sentence: string, askForKey: boolean, waitSeconds: number | undefined }}
 */
const FILE_CODES = new Set(['unsupported_file_type', 'file_too_large', 'too_many_pages', 'file_unreadable', 'no_text_in_file']);

export function errorSentence({ status, error = {}, retryAfter }) {
  const code = error.code ?? '';
  const serverMessage = typeof error.message === 'string' ? error.message : '';
  const wait = retryAfter ?? error.retry_after;
  const result = (sentence, askForKey = false, waitSeconds = undefined) => ({ sentence, askForKey, waitSeconds });
  // The service's own sentence for a file it cannot read says what is wrong and what to do.
  if (FILE_CODES.has(code) && serverMessage) return result(serverMessage);
  switch (status) {
    case 0:
      return result('The service could not be reached. Check your connection and that the server is running, then try again.');
    case 400:
      return result(`The service could not read the request: ${serverMessage || 'it is malformed.'}`);
    case 401:
      if (code === 'missing_api_key') return result('No API key was sent. Enter your API key to check texts.', true);
      return result(`Your API key was refused: ${serverMessage || 'it is not valid.'} Enter a valid key to check texts.`, true);
    case 403:
      return result(`${serverMessage || 'This key may not be used on this server.'} Enter a key for this server.`, true);
    case 408:
      return result('The text took too long to reach the server. Try again.');
    case 413:
      if (code === 'text_too_long' || error.max_chars !== undefined) {
        const max = error.max_chars;
        return result(
          `The text is too long: this server accepts at most ${max !== undefined ? max.toLocaleString('en-US') : 'a limited number of'} characters. Shorten it or check it in parts.`,
        );
      }
      return result('The request is larger than this server accepts. Shorten the text or check it in parts.');
    case 422:
      if (code === 'unsupported_language') {
        return result(
          `The text appears to be in ${languageName(error.detected_language ?? 'unknown')}. Only English and Turkish are supported; if the text is in one of them, choose it under Language and check again.`,
        );
      }
      return result(`The service could not score this text: ${serverMessage || 'it was refused.'}`);
    case 429: {
      const seconds = Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : undefined;
      return result(
        seconds !== undefined
          ? `Too many checks with this key for now. Wait ${formatWait(seconds)} and try again.`
          : 'Too many checks with this key for now. Wait a moment and try again.',
        false,
        seconds,
      );
    }
    case 503: {
      const seconds = Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : undefined;
      return result(
        `The service is not ready (it is starting or shutting down). Try again${seconds ? ` in ${formatWait(seconds)}` : ' in a moment'}.`,
        false,
        seconds,
      );
    }
    default:
      if (status >= 500)
        return result('Something went wrong on the server. Try again later; if it keeps happening, quote the request id below.');
      return result(`The service refused the check (HTTP ${status})${serverMessage ? `: ${serverMessage}` : '.'}`);
  }
}

/**
 * Counts characters as the server does (Unicode code points, like JSON Schema's maxLength), so the
 * counter and the server's 413 agree on emoji and other characters outside the BMP.
 * @param {string} text
 */
export function countCharacters(text) {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/**
 * Which of five shading bands a sentence falls in (0: 0–20%, …, 4: 80–100%).
 * @param {number} probability
 */
export function band(probability) {
  return Math.min(4, Math.max(0, Math.floor(probability * 5)));
}
