// Puts an answer of POST /v1/detect on the page. Everything from the API or the user goes in as
// text (textContent), never as markup, so a text full of <script> is shown, not run.
import { band, confidenceWords, formatPercent, languageName, modeName, verdictWords, warningSentence } from './wording.js';

const byId = (id) => document.getElementById(id);

/**
 * @param {object} answer the 200 body of POST /v1/detect
 * @param {string} submittedText the exact string sent, which the segments' offsets point into
 */
export function renderResult(answer, submittedText) {
  const probability = answer.ai_probability;
  const verdict = verdictWords(answer.verdict);
  const result = byId('result');
  result.dataset.state = 'done';
  result.dataset.aiProbability = String(probability);
  result.dataset.verdict = answer.verdict;
  result.dataset.confidence = answer.confidence;
  result.dataset.requestId = answer.request_id;

  byId('result-empty').hidden = true;
  byId('result-body').hidden = false;
  byId('stale-note').hidden = true;

  byId('probability').textContent = formatPercent(probability);
  byId('gauge-value').setAttribute('stroke-dasharray', `${(probability * 100).toFixed(2)} 100`);
  result.classList.remove('verdict-likely_ai', 'verdict-mixed', 'verdict-likely_human');
  result.classList.add(`verdict-${answer.verdict}`);

  byId('verdict').textContent = verdict.label;
  byId('confidence').textContent = confidenceWords(answer.confidence);
  byId('verdict-sentence').textContent = verdict.sentence;

  const list = byId('warnings');
  list.replaceChildren(
    ...answer.warnings.map((code) => {
      const item = document.createElement('li');
      item.dataset.code = code;
      const sentence = document.createElement('span');
      sentence.textContent = warningSentence(code);
      const tag = document.createElement('code');
      tag.className = 'warning-code';
      tag.textContent = code;
      item.append(sentence, ' ', tag);
      return item;
    }),
  );
  byId('warnings-box').hidden = answer.warnings.length === 0;

  byId('detail-mode').textContent = modeName(answer.mode);
  byId('detail-language').textContent = languageName(answer.language);
  byId('detail-model').textContent = answer.model;
  byId('request-id').value = answer.request_id;
  byId('copy-status').textContent = '';

  renderSegments(answer.segments, submittedText);

  const warningsNote = answer.warnings.length ? ` ${answer.warnings.length} warning${answer.warnings.length > 1 ? 's' : ''}.` : '';
  byId('result-announcement').textContent =
    `Result: ${formatPercent(probability)} probability of AI writing. ${verdict.label}, ${confidenceWords(answer.confidence).toLowerCase()}.${warningsNote}`;
}

/**
 * The submitted text with each scored sentence shaded by its probability; what lies between
 * sentences (spaces, line breaks) stays as plain text, so the text reads exactly as submitted.
 */
function renderSegments(segments, text) {
  const card = byId('sentences-card');
  const box = byId('highlighted');
  if (!segments.length) {
    box.replaceChildren();
    card.hidden = true;
    return;
  }
  const nodes = [];
  let position = 0;
  for (const segment of segments) {
    if (segment.start > position) nodes.push(document.createTextNode(text.slice(position, segment.start)));
    const start = Math.max(segment.start, position);
    const span = document.createElement('span');
    const figure = formatPercent(segment.ai_probability);
    span.className = `seg seg-b${band(segment.ai_probability)}`;
    span.tabIndex = 0;
    span.dataset.probability = String(segment.ai_probability);
    span.dataset.start = String(segment.start);
    span.dataset.end = String(segment.end);
    span.dataset.tip = `${figure} AI`;
    span.textContent = text.slice(start, segment.end);
    // Screen readers get the figure right after the sentence; sighted users get it on hover or focus.
    const spoken = document.createElement('span');
    spoken.className = 'sr-only';
    spoken.textContent = ` (${figure} AI)`;
    span.append(spoken);
    nodes.push(span);
    position = Math.max(position, segment.end);
  }
  if (position < text.length) nodes.push(document.createTextNode(text.slice(position)));
  box.replaceChildren(...nodes);
  card.hidden = false;
}

export function resetResult() {
  const result = byId('result');
  result.dataset.state = 'empty';
  delete result.dataset.aiProbability;
  byId('result-empty').hidden = false;
  byId('result-body').hidden = true;
  byId('sentences-card').hidden = true;
  byId('highlighted').replaceChildren();
  byId('result-announcement').textContent = '';
}
