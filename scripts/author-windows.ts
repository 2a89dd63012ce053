/**
 * Author windows for `train:author` and `eval:author`: runs of consecutive messages of one author.
 *
 * A JSONL line with an `author` field is one message of that author (authors-train.jsonl: one
 * tweet each, in file order); a line without one is a text whose sentences are sent as one author's
 * messages (each text is its own author).
 */
import { countWords } from '../src/detector/engine.ts';
import { identifyLanguage } from '../src/detector/language.ts';
import { normalize } from '../src/detector/normalize.ts';
import { readJsonl, type CorpusRow } from '../src/detector/training.ts';
import type { Language, Mode } from '../src/detector/types.ts';

/** Bots grouped with the account they imitate (TweepFake), held out together. */
export const IMITATES: Record<string, string> = { dril_gpt2: 'dril', calebgamman2: 'calebgamman', utilitylimbgpt2: 'utilitylimb' };

export interface AuthorRow extends CorpusRow {
  author?: string;
}

export interface Author {
  /** `account:<name>` or `text:<id>`. */
  id: string;
  kind: 'account' | 'sentences';
  /** Held out together in leave-one-author-out: an account with its imitating bot, or a whole source. */
  group: string;
  /** For the per-source false-positive checks: the account, or the corpus source. */
  source: string;
  y: 0 | 1;
  language: Language;
  mode: Mode;
  messages: string[];
}

const RE_LINK = /\b(?:https?:\/\/|www\.)\S+/giu;

/** Whether the engine would use a message (not empty, not link-only, with words, not clearly in another language). */
export function usable(text: string, language: Language): boolean {
  if (!/[\p{L}\p{N}]/u.test(text.replace(RE_LINK, ''))) return false;
  if (countWords(text, language) === 0) return false;
  const g = identifyLanguage(normalize(text).text);
  return !(g.certain && g.language !== language);
}

export function authorsFromFile(path: string): Author[] {
  const rows = readJsonl<AuthorRow>(path);
  const authors: Author[] = [];
  const accounts = new Map<string, AuthorRow[]>();
  const segmenters = new Map<Language, Intl.Segmenter>();
  for (const r of rows) {
    if (r.label !== 'human' && r.label !== 'ai') throw new Error(`${path}: ${r.id} has no label human|ai.`);
    if (r.author) {
      accounts.set(r.author, [...(accounts.get(r.author) ?? []), r]);
      continue;
    }
    const seg = segmenters.get(r.language) ?? new Intl.Segmenter(r.language, { granularity: 'sentence' });
    segmenters.set(r.language, seg);
    authors.push({
      id: `text:${r.id}`,
      kind: 'sentences',
      group: `source:${r.source}`,
      source: r.source,
      y: r.label === 'ai' ? 1 : 0,
      language: r.language,
      mode: r.mode,
      messages: [...seg.segment(r.text)].map((s) => s.segment.trim()).filter((t) => usable(t, r.language)),
    });
  }
  for (const [account, msgs] of [...accounts].sort((a, b) => a[0].localeCompare(b[0]))) {
    const first = msgs[0]!;
    authors.push({
      id: `account:${account}`,
      kind: 'account',
      group: `account:${IMITATES[account] ?? account}`,
      source: `${first.source}:${account}`,
      y: first.label === 'ai' ? 1 : 0,
      language: first.language,
      mode: first.mode,
      messages: msgs.map((m) => m.text).filter((t) => usable(t, first.language)),
    });
  }
  return authors;
}

/** Consecutive, non-overlapping windows of `n` messages (as [start, end) ranges). */
export function windowRanges(messages: number, n: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let s = 0; s + n <= messages; s += n) out.push([s, s + n]);
  return out;
}
