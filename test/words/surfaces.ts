/**
 * One answer as each surface shows it, reduced to what a reader reads: the headline and the rest of
 * the text around it. The CLI's printer, Slack's blocks and Discord's embed are built in-process; the
 * page's own render code runs in headless Chromium against the real service (`renderOnPage`).
 *
 * Only the surfaces' public builders are called (formatResult, buildResultMessage, resultEmbed and
 * the page's renderResult), so the same harness reads an older build of the surfaces too
 * (scripts/check-words.ts, run against main for the before/after counts).
 */
import type { Page } from 'playwright-core';
import { buildResultMessage } from '../../adapters/slack/blocks.ts';
import { resultEmbed } from '../../adapters/discord/reply.ts';
import { formatResult } from '../../src/cli/detect.ts';
import type { DetectResponse } from '../../src/contract.ts';

export const SURFACES = ['page', 'cli', 'slack', 'discord'] as const;
export type Surface = (typeof SURFACES)[number];

export interface Rendered {
  /** The headline as a reader reads it, emoji and markup removed ("Reads as AI-written"). */
  headline: string;
  /**
   * Everything else the surface says about the answer, one line per line or block; quotes of the
   * checked text (sentences, passages) are left out, since a text's own words are not the surface's.
   */
  body: string;
  /** The payload itself, for the platforms' limits (Slack blocks, Discord embed). */
  payload?: unknown;
}

/** A headline without its emoji and markup: `*🟡 Unclear*` → `Unclear`. */
export function plainHeadline(text: string): string {
  return text
    .replace(/[*_`]/g, '')
    .replace(/^(?:\p{Extended_Pictographic}|\p{Emoji_Presentation}|\uFE0F|\s)+/u, '')
    .trim();
}

export function renderCli(answer: DetectResponse): Rendered {
  const out = formatResult(answer, false);
  const lines = out.split('\n');
  const scored = lines.find((l) => l.startsWith('AI probability: '));
  // "AI probability: 97.0% — Reads as AI-written (high confidence)"; older builds "(confidence: high)".
  const headline = scored
    ? (/ — (.+) \((?:confidence: )?\w+(?: confidence)?\)$/.exec(scored)?.[1] ?? scored)
    : (/^(Too short to judge)/m.exec(out)?.[1] ?? lines.find((l) => !l.startsWith('file: ')) ?? '');
  // Quoted sentences and spans start with their figure ("   87.3%  …"); the map's lines with their place.
  return { headline, body: lines.filter((l) => l !== scored && !/^\s+\d+(?:\.\d)?%\s/.test(l)).join('\n') };
}

interface Block {
  type: string;
  block_id?: string;
  text?: { text: string };
  fields?: { text: string }[];
  elements?: { text?: string; type?: string }[];
}

/** Slack blocks and Discord fields that quote the checked text. */
const QUOTING_BLOCKS = ['highlights', 'generated_passages'];
const QUOTING_FIELDS = /^(Most AI-like sentences|Generated passages|Passages that)/;

export function renderSlack(answer: DetectResponse, text: string): Rendered {
  const message = buildResultMessage({ result: answer, checkId: 'c1', source: { kind: 'text', words: text.split(/\s+/).length }, text });
  const blocks = message.blocks as unknown as Block[];
  const verdict = blocks.find((b) => b.block_id === 'verdict')?.text?.text ?? '';
  const [first = '', ...rest] = verdict.split('\n');
  const others = blocks
    .filter((b) => b.block_id !== 'verdict' && b.type !== 'actions' && !QUOTING_BLOCKS.includes(b.block_id ?? ''))
    .flatMap((b) => [b.text?.text, ...(b.fields ?? []).map((f) => f.text), ...(b.elements ?? []).map((e) => e.text)])
    .filter((t): t is string => typeof t === 'string');
  return { headline: plainHeadline(first), body: [...rest, ...others].join('\n'), payload: message };
}

export function renderDiscord(answer: DetectResponse): Rendered {
  const embed = resultEmbed(answer, { languageGiven: false, segments: true, source: { kind: 'text' } });
  const fields = (embed.fields ?? []).filter((f) => !QUOTING_FIELDS.test(f.name));
  const body = [embed.description ?? '', ...fields.flatMap((f) => [f.name, f.value]), embed.footer?.text ?? ''];
  return { headline: plainHeadline(embed.title ?? ''), body: body.join('\n'), payload: embed };
}

/**
 * What runs in the page for a batch of answers: the page's own `renderResult`, then what a reader
 * sees: the headline pill, then the figure, confidence, sentence, composition box, warnings and the
 * map of windows, where shown. A string, so no compiler's helpers (tsx names its functions) reach the
 * browser.
 */
const IN_PAGE = `async (answers) => {
  const src = document.querySelector('script[type=module]').getAttribute('src');
  const { renderResult } = await import(src.replace(/app\\.js$/, 'render.js'));
  const shown = (id) => {
    const node = document.getElementById(id);
    return node && !node.closest('[hidden]') ? node.innerText : '';
  };
  return answers.map(({ answer, text }) => {
    renderResult(answer, text);
    const body = ['probability', 'confidence', 'verdict-sentence', 'composition-box', 'warnings-box', 'windows-box'].map(shown);
    return { headline: document.getElementById('verdict').textContent, body: body.filter(Boolean).join('\\n') };
  });
}`;

/** Renders each answer with the page's own render code, loaded from the page the service serves. */
export async function renderOnPage(page: Page, items: ReadonlyArray<{ answer: DetectResponse; text: string }>): Promise<Rendered[]> {
  const out: Rendered[] = [];
  // Batches keep each round trip to the browser small.
  for (let i = 0; i < items.length; i += 100) {
    const batch = items.slice(i, i + 100).map(({ answer, text }) => ({ answer, text }));
    out.push(...((await page.evaluate(`(${IN_PAGE})(${JSON.stringify(batch)})`)) as Rendered[]));
  }
  return out;
}
