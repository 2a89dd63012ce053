// What the page alone says: a failed check (the API's error codes, a network failure) and the
// character counter, in sentences. An answer's words are every surface's (words.js, compiled from
// src/words.ts). No DOM here, so the sentences can be checked against real API answers in Node.
import { languageName } from './words.js';

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
