// Puts an answer of POST /v1/detect on the page, in the words every surface uses (words.js, compiled
// from src/words.ts: describeAnswer decides what to say). Everything from the API or the user goes
// in as text (textContent), never as markup, so a text full of <script> is shown, not run.
import { describeAnswer, formatPercent, languageName, modeName, passagesToShow, passageWords } from './words.js';

const byId = (id) => document.getElementById(id);

/** Which of five shading bands a sentence falls in (0: 0–20%, …, 4: 80–100%). */
function band(probability) {
  return Math.min(4, Math.max(0, Math.floor(probability * 5)));
}

/**
 * @param {object} answer the 200 body of POST /v1/detect
 * @param {string} submittedText the exact string sent, which the segments' offsets point into
 */
export function renderResult(answer, submittedText) {
  const probability = answer.ai_probability;
  const words = describeAnswer(answer);
  const { tooShort } = words;
  const result = byId('result');
  result.dataset.state = 'done';
  result.dataset.aiProbability = String(probability);
  result.dataset.verdict = answer.verdict;
  result.dataset.origin = words.origin;
  result.dataset.confidence = answer.confidence;
  result.dataset.requestId = answer.request_id;

  byId('result-empty').hidden = true;
  byId('result-body').hidden = false;
  byId('stale-note').hidden = true;

  // Below the evidence floor: no verdict, no percentage, no sentence figures.
  byId('probability').textContent = tooShort ? '–' : formatPercent(probability);
  byId('gauge-value').setAttribute('stroke-dasharray', tooShort ? '0 100' : `${(probability * 100).toFixed(2)} 100`);
  result.classList.remove('verdict-likely_ai', 'verdict-mixed', 'verdict-likely_human', 'verdict-too_short');
  result.classList.add(tooShort ? 'verdict-too_short' : `verdict-${answer.verdict}`);

  byId('verdict').textContent = words.label;
  byId('confidence').textContent = words.confidence ?? '';
  byId('confidence').hidden = !words.confidence;
  byId('verdict-sentence').textContent = words.sentence;

  const list = byId('warnings');
  list.replaceChildren(
    ...words.warnings.map(({ code, sentence }) => {
      const item = document.createElement('li');
      item.dataset.code = code;
      const text = document.createElement('span');
      text.textContent = sentence;
      const tag = document.createElement('code');
      tag.className = 'warning-code';
      tag.textContent = code;
      item.append(text, ' ', tag);
      return item;
    }),
  );
  byId('warnings-box').hidden = words.warnings.length === 0;

  byId('detail-mode').textContent = modeName(answer.mode);
  byId('detail-language').textContent = languageName(answer.language);
  byId('detail-model').textContent = answer.model;
  byId('request-id').value = answer.request_id;
  byId('copy-status').textContent = '';

  const composition = words.composition;
  byId('composition-box').hidden = !composition;
  if (composition) {
    result.dataset.composition = answer.composition;
    byId('composition-label').textContent = composition.label;
    byId('composition-sentence').textContent = composition.sentence;
  } else delete result.dataset.composition;

  renderWindows(words.windows);
  renderSegments(tooShort ? [] : answer.segments, submittedText, tooShort ? [] : passagesToShow(answer), words.origin);

  const warningsNote = words.warnings.length ? ` ${words.warnings.length} warning${words.warnings.length > 1 ? 's' : ''}.` : '';
  const compositionNote = composition ? ` ${composition.label}: ${composition.sentence}` : '';
  const windowsNote = words.windows ? ` ${words.windows.summary}` : '';
  byId('result-announcement').textContent = tooShort
    ? `Result: ${words.label}. ${words.sentence}`
    : `Result: ${formatPercent(probability)} probability of AI writing. ${words.label}, ${words.confidence.toLowerCase()}. ${words.sentence}${compositionNote}${windowsNote}${warningsNote}`;
}

/**
 * The map of a long document: one cell per window, in order, coloured by how it reads, with where
 * it is and its own figure (its headline is the cell's tooltip and is read out after it).
 */
function renderWindows(map) {
  const box = byId('windows-box');
  if (!map) {
    box.hidden = true;
    byId('window-map').replaceChildren();
    return;
  }
  byId('windows-summary').textContent = map.summary;
  byId('window-map').replaceChildren(
    ...map.windows.map((w) => {
      const cell = document.createElement('li');
      cell.className = `window window-${w.origin}`;
      cell.dataset.origin = w.origin;
      cell.dataset.start = String(w.start);
      cell.dataset.end = String(w.end);
      cell.dataset.tip = w.label;
      cell.tabIndex = 0;
      const where = document.createElement('span');
      where.className = 'window-where';
      where.textContent = w.where;
      const figure = document.createElement('span');
      figure.className = 'window-percent';
      figure.textContent = w.percent;
      cell.append(where, ' ', figure, srOnly(`: ${w.label}`));
      return cell;
    }),
  );
  box.hidden = false;
}

/**
 * The submitted text with each scored sentence shaded by its own probability, and each generated
 * span (a run of sentences) wrapped in an outlined passage; what lies between sentences (spaces,
 * line breaks) stays as plain text, so the text reads exactly as submitted.
 *
 * Line breaks are kept outside every shaded or outlined box: an inline box that runs over a blank
 * line draws an empty fragment of itself there (an empty dashed box between two paragraphs), so a
 * passage or sentence that crosses a line break is drawn as one box per line, the later ones marked
 * as continuations.
 */
function renderSegments(segments, text, spans, origin) {
  const card = byId('sentences-card');
  const box = byId('highlighted');
  if (!segments.length) {
    box.replaceChildren();
    card.hidden = true;
    return;
  }
  const nodes = [];
  let position = 0;
  // The generated span being drawn, if any, and its box on the current line.
  let passageSpan;
  let passageBox;
  let spanIndex = 0;
  const addInline = (node) => {
    if (passageSpan && !passageBox) {
      passageBox = openPassage(passageSpan, true, origin);
      nodes.push(passageBox);
    }
    if (passageBox) passageBox.append(node);
    else nodes.push(node);
  };
  // Text between sentences: a line break ends the passage's box on this line.
  const addGap = (gap) => {
    if (!gap) return;
    if (/[\r\n]/.test(gap)) {
      passageBox = undefined;
      nodes.push(document.createTextNode(gap));
    } else addInline(document.createTextNode(gap));
  };
  for (const segment of segments) {
    while (spanIndex < spans.length && spans[spanIndex].end <= segment.start) spanIndex++;
    const generated = spans[spanIndex];
    if (!passageSpan && generated && segment.start >= generated.start && segment.start < generated.end) {
      if (segment.start > position) nodes.push(document.createTextNode(text.slice(position, segment.start)));
      position = Math.max(position, segment.start);
      passageSpan = generated;
      passageBox = openPassage(generated, false, origin);
      nodes.push(passageBox);
    }
    if (segment.start > position) addGap(text.slice(position, segment.start));
    const start = Math.max(segment.start, position);
    const figure = formatPercent(segment.ai_probability);
    // A sentence holding a line break (a heading joined to its paragraph) is drawn line by line.
    const pieces = text.slice(start, segment.end).split(/(\s*[\r\n]\s*)/);
    const lastText = pieces.findLastIndex((piece, i) => i % 2 === 0 && piece !== '');
    let firstPiece = true;
    for (const [i, piece] of pieces.entries()) {
      if (i % 2 === 1) {
        addGap(piece);
        continue;
      }
      if (piece === '') continue;
      const span = document.createElement('span');
      span.className = `seg seg-b${band(segment.ai_probability)}`;
      span.dataset.probability = String(segment.ai_probability);
      span.dataset.start = String(segment.start);
      span.dataset.end = String(segment.end);
      span.dataset.tip = `${figure} AI`;
      span.textContent = piece;
      // One stop per sentence for the keyboard, on its first line.
      if (firstPiece) span.tabIndex = 0;
      firstPiece = false;
      if (i === lastText) {
        // Screen readers get the figure right after the sentence; sighted users get it on hover or focus.
        const spoken = document.createElement('span');
        spoken.className = 'sr-only';
        spoken.textContent = ` (${figure} AI)`;
        span.append(spoken);
      }
      addInline(span);
    }
    position = Math.max(position, segment.end);
    if (passageSpan && segment.end >= passageSpan.end) {
      addInline(srOnly(' (end of the passage)'));
      passageSpan = undefined;
      passageBox = undefined;
      spanIndex++;
    }
  }
  if (position < text.length) nodes.push(document.createTextNode(text.slice(position)));
  box.replaceChildren(...nodes);
  card.hidden = false;
}

/** An outlined passage for one generated span (or its continuation on a later line); screen readers hear where it starts and ends. */
function openPassage(span, continued, origin) {
  const box = document.createElement('span');
  const confidence = span.confidence ?? 'low';
  box.className = `gen-span gen-span-${confidence}${continued ? ' gen-span-continued' : ''}`;
  box.dataset.start = String(span.start);
  box.dataset.end = String(span.end);
  box.dataset.probability = String(span.ai_probability);
  box.dataset.confidence = confidence;
  if (!continued) box.append(srOnly(`(${passageWords(confidence, span.ai_probability, origin)}:) `));
  return box;
}

function srOnly(words) {
  const node = document.createElement('span');
  node.className = 'sr-only';
  node.textContent = words;
  return node;
}

export function resetResult() {
  const result = byId('result');
  result.dataset.state = 'empty';
  delete result.dataset.aiProbability;
  byId('result-empty').hidden = false;
  byId('result-body').hidden = true;
  byId('sentences-card').hidden = true;
  byId('composition-box').hidden = true;
  byId('windows-box').hidden = true;
  byId('highlighted').replaceChildren();
  byId('result-announcement').textContent = '';
}
