// The page's behaviour: the API key kept in this browser, the text box and its counter, and the
// call to POST /v1/detect, the same endpoint and headers as every other client.
import { DEFAULT_MAX_TEXT_CHARS } from './contract.js';
import { renderResult, resetResult } from './render.js';
import { countCharacters, errorSentence } from './wording.js';
import { fileFacts } from './words.js';

const KEY_STORAGE_NAME = 'textdetect.apiKey';
// The service's key format (src/service/keys.ts): checked before a key is kept, so a mistyped or
// half-pasted key is caught here with a sentence rather than stored and refused on every check.
const KEY_FORMAT = /^sk_(test|live)_[0-9A-Za-z]{32}$/;
const settings = document.documentElement.dataset;
const maxTextChars = Number(settings.maxTextChars) || DEFAULT_MAX_TEXT_CHARS;
const byId = (id) => document.getElementById(id);

const textBox = byId('text');
const checkForm = byId('check-form');
const checkButton = byId('check');
const checkLabel = checkButton.querySelector('.btn-label');
const errorBox = byId('error');
const keyCard = byId('key-card');
const keyInput = byId('api-key');
const keyError = byId('key-error');

let busy = false;
let lastCheckedText;
let pendingCheck = false;
let waitTimer;

// The key lives in localStorage only: never a cookie (sent with every request, to any path) and
// never the URL (history, logs, Referer). If storage is blocked, it lasts until the page closes.
const keyStore = {
  memory: undefined,
  get() {
    try {
      return localStorage.getItem(KEY_STORAGE_NAME) ?? this.memory;
    } catch {
      return this.memory;
    }
  },
  set(value) {
    this.memory = value;
    try {
      localStorage.setItem(KEY_STORAGE_NAME, value);
      return true;
    } catch {
      return false;
    }
  },
  forget() {
    this.memory = undefined;
    try {
      localStorage.removeItem(KEY_STORAGE_NAME);
    } catch {
      // nothing stored
    }
  },
};

function showKeyState() {
  const key = keyStore.get();
  byId('key-status').hidden = !key;
  keyCard.hidden = Boolean(key);
  if (key) byId('key-hint').textContent = `${key.slice(0, 8)}…${key.slice(-4)}`;
}

function askForKey(message) {
  keyCard.hidden = false;
  keyError.textContent = message ?? '';
  keyInput.focus();
}

byId('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (!key) {
    keyError.textContent = 'Enter your API key: it starts with sk_test_ or sk_live_.';
    keyInput.focus();
    return;
  }
  if (/\s/.test(key)) {
    keyError.textContent = 'An API key has no spaces; paste it again.';
    keyInput.focus();
    return;
  }
  const formatProblem = keyFormatProblem(key);
  if (formatProblem) {
    keyError.textContent = formatProblem;
    keyInput.focus();
    return;
  }
  const stored = keyStore.set(key);
  keyInput.value = '';
  keyError.textContent = '';
  showKeyState();
  if (!stored) showError('This browser does not allow local storage, so the key is kept only until you close this page.');
  else hideError();
  if (pendingCheck) {
    pendingCheck = false;
    void check();
  } else {
    textBox.focus();
  }
});

/** Why `key` cannot be a key for this server, or undefined when its format is right. */
function keyFormatProblem(key) {
  const prefix = settings.keyPrefix || 'sk_test_';
  if (!KEY_FORMAT.test(key)) {
    return `This does not look like an API key: a key is ${prefix} followed by 32 letters and digits (${prefix.length + 32} characters in all). Paste the whole key as it was printed when it was made.`;
  }
  if (!key.startsWith(prefix)) {
    const server =
      prefix === 'sk_live_'
        ? 'a production server: it accepts only live keys (sk_live_…)'
        : 'a sandbox server: it accepts only test keys (sk_test_…)';
    return `This is ${server}, and this key is a ${key.startsWith('sk_live_') ? 'live' : 'test'} one. Use a key made for this server.`;
  }
  return undefined;
}

byId('forget-key').addEventListener('click', () => {
  keyStore.forget();
  showKeyState();
  askForKey('The key was removed from this browser. Enter a key to check texts again.');
});

function updateCounter() {
  const count = countCharacters(textBox.value);
  const counter = byId('counter');
  const over = count - maxTextChars;
  counter.textContent =
    over > 0
      ? `${count.toLocaleString('en-US')} / ${maxTextChars.toLocaleString('en-US')} characters: ${over.toLocaleString('en-US')} over the limit`
      : `${count.toLocaleString('en-US')} / ${maxTextChars.toLocaleString('en-US')} characters`;
  counter.classList.toggle('over-limit', over > 0);
  textBox.setAttribute('aria-invalid', String(over > 0));
  if (lastCheckedText !== undefined) byId('stale-note').hidden = textBox.value === lastCheckedText;
  return count;
}
textBox.addEventListener('input', updateCounter);

byId('clear-text').addEventListener('click', () => {
  textBox.value = '';
  updateCounter();
  hideError();
  textBox.focus();
});

// Ctrl+Enter (Cmd+Enter on a Mac) checks from anywhere in the form, as in most editors.
checkForm.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    void check();
  }
});
checkForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void check();
});

function showError(sentence, requestId) {
  errorBox.replaceChildren();
  const text = document.createElement('p');
  text.textContent = sentence;
  errorBox.append(text);
  if (requestId) {
    const id = document.createElement('p');
    id.className = 'alert-meta';
    id.append('Request id: ');
    const code = document.createElement('code');
    code.textContent = requestId;
    id.append(code);
    errorBox.append(id);
  }
  errorBox.hidden = false;
}

function hideError() {
  errorBox.hidden = true;
  errorBox.replaceChildren();
}

function setBusy(value) {
  busy = value;
  checkButton.classList.toggle('is-busy', value);
  checkButton.setAttribute('aria-busy', String(value));
  byId('result').setAttribute('aria-busy', String(value));
  if (waitTimer === undefined) checkLabel.textContent = value ? (chosenFile ? 'Reading the file…' : 'Checking…') : idleLabel();
}

/** After a 429, the button counts down the wait the server asked for, then works again. */
function waitBeforeRetry(seconds) {
  clearInterval(waitTimer);
  let left = seconds;
  checkButton.disabled = true;
  checkLabel.textContent = `Try again in ${left} s`;
  waitTimer = setInterval(() => {
    left -= 1;
    if (left > 0) {
      checkLabel.textContent = `Try again in ${left} s`;
      return;
    }
    clearInterval(waitTimer);
    waitTimer = undefined;
    checkButton.disabled = false;
    checkLabel.textContent = idleLabel();
  }, 1000);
}

/**
 * Sends one check (text or file) and reads its answer; the page is busy for the round trip. A network
 * failure gives no response; an answer that is not JSON gives no answer (showFailure words both).
 */
async function sendCheck(path, key, body, headers = {}) {
  hideError();
  setBusy(true);
  try {
    const response = await fetch(path, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, ...headers },
      body,
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
    const answer = await response.json().catch(() => undefined);
    return { response, answer };
  } catch {
    return { response: undefined, answer: undefined };
  } finally {
    setBusy(false);
  }
}

async function check() {
  if (busy || checkButton.disabled) return;
  const text = textBox.value;
  const key = keyStore.get();
  if (!key) {
    pendingCheck = true;
    askForKey('Enter your API key first; the check runs as soon as it is saved.');
    return;
  }
  if (chosenFile) {
    await checkFile(key, chosenFile);
    return;
  }
  if (!text.trim()) {
    showError('Paste or type a text to check.');
    textBox.focus();
    return;
  }
  const count = updateCounter();
  if (count > maxTextChars) {
    showError(
      `The text is ${count.toLocaleString('en-US')} characters long; this server accepts at most ${maxTextChars.toLocaleString('en-US')}. Shorten it or check it in parts.`,
    );
    textBox.focus();
    return;
  }
  const body = { text, mode: byId('mode').value, segments: true };
  const language = byId('language').value;
  if (language) body.language = language;

  // The text goes in the body only: never in a URL, where it would end up in logs and history.
  const { response, answer } = await sendCheck('/v1/detect', key, JSON.stringify(body), { 'Content-Type': 'application/json' });
  if (response?.ok && answer) {
    lastCheckedText = text;
    renderResult(answer, text);
    byId('file-info').hidden = true;
    revealResult();
    return;
  }
  showFailure(response, answer, text === lastCheckedText);
}

/**
 * The refusal of a check (text or file) as a sentence, and what it asks of the user. A result still on
 * screen is about something else (an earlier text or file) unless the refused check was of the very
 * text it shows: it is cleared, so the sentence is not read next to an unrelated score.
 */
function showFailure(response, answer, sameAsShown = false) {
  if (!sameAsShown) {
    resetResult();
    lastCheckedText = undefined;
    byId('stale-note').hidden = true;
    byId('file-info').hidden = true;
    delete byId('result').dataset.fileType;
  }
  const status = response?.status ?? 0;
  const retryHeader = Number(response?.headers.get('retry-after'));
  const failure = errorSentence({
    status,
    error: answer?.error,
    retryAfter: Number.isFinite(retryHeader) && retryHeader > 0 ? retryHeader : undefined,
  });
  showError(failure.sentence, answer?.error?.request_id ?? response?.headers.get('request-id') ?? undefined);
  if (failure.askForKey) {
    // A refused key is not kept: after a reload the page must ask again, not show it as the key in use.
    keyStore.forget();
    showKeyState();
    askForKey();
  }
  if (status === 429 && failure.waitSeconds) waitBeforeRetry(failure.waitSeconds);
}

// ---- Documents: a chosen or dropped file is sent to POST /v1/detect/file instead of the text.

const maxFileBytes = Number(settings.maxFileBytes) || 10 * 1024 * 1024;
const fileInput = byId('file');
let chosenFile;

function idleLabel() {
  return chosenFile ? 'Check file' : 'Check text';
}

function formatBytes(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

function chooseFile(file) {
  chosenFile = file ?? undefined;
  byId('file-chosen').hidden = !chosenFile;
  byId('file-chosen-name').textContent = chosenFile
    ? `${chosenFile.name} (${formatBytes(chosenFile.size)}) will be checked instead of the text box.`
    : '';
  if (!chosenFile) fileInput.value = '';
  if (!busy && waitTimer === undefined) checkLabel.textContent = idleLabel();
  hideError();
}

fileInput.addEventListener('change', () => chooseFile(fileInput.files?.[0]));
byId('clear-file').addEventListener('click', () => {
  chooseFile(undefined);
  fileInput.focus();
});

// A file dropped on the text box or the file row is chosen, not opened by the browser.
for (const zone of [textBox, byId('file-pick')]) {
  zone.addEventListener('dragover', (event) => {
    if (!event.dataTransfer?.types.includes('Files')) return;
    event.preventDefault();
    zone.classList.add('drop-target');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('drop-target'));
  zone.addEventListener('drop', (event) => {
    zone.classList.remove('drop-target');
    const file = event.dataTransfer?.files?.[0];
    if (!file) return;
    event.preventDefault();
    chooseFile(file);
  });
}

/**
 * The extracted text is not sent back, only its sentences with their offsets: the text is rebuilt
 * from them (a gap of two or more characters between sentences is a paragraph break, as the
 * service joins paragraphs with a blank line), so the sentences show as for pasted text.
 */
function textFromSegments(answer) {
  let text = '';
  for (const segment of answer.segments) {
    const gap = segment.start - text.length;
    if (gap > 0) text += gap >= 2 ? `\n\n${' '.repeat(gap - 2)}` : ' ';
    text += segment.text;
  }
  return text;
}

async function checkFile(key, file) {
  if (file.size > maxFileBytes) {
    showError(
      `${file.name} is ${formatBytes(file.size)}; this server reads files of at most ${formatBytes(maxFileBytes)}. Check a smaller file or paste the part to check.`,
    );
    return;
  }
  const form = new FormData();
  form.append('mode', byId('mode').value);
  const language = byId('language').value;
  if (language) form.append('language', language);
  form.append('segments', 'true');
  form.append('file', file, file.name);
  // No Content-Type: the browser sets multipart/form-data with its boundary.
  const { response, answer } = await sendCheck('/v1/detect/file', key, form);
  if (response?.ok && answer?.file) {
    lastCheckedText = textBox.value;
    renderResult(answer, textFromSegments(answer));
    const info = answer.file;
    const line = byId('file-info');
    line.textContent = `${info.name}: ${fileFacts(info)}`;
    line.hidden = false;
    byId('result').dataset.fileType = info.type;
    revealResult();
    return;
  }
  showFailure(response, answer);
}

/** On a phone the result sits below the form, out of sight: bring its top into view. */
function revealResult() {
  const card = byId('result');
  if (card.getBoundingClientRect().top < window.innerHeight) return;
  const reduceMotion = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  card.scrollIntoView({ block: 'start', behavior: reduceMotion ? 'auto' : 'smooth' });
}

byId('copy-request-id').addEventListener('click', async () => {
  const field = byId('request-id');
  const status = byId('copy-status');
  try {
    await navigator.clipboard.writeText(field.value);
    status.textContent = 'Copied';
  } catch {
    // The clipboard API needs a secure context (https or localhost): leave it selected to copy by hand.
    field.focus();
    field.select();
    status.textContent = 'Selected: press Ctrl+C to copy';
  }
});

showKeyState();
updateCounter();
