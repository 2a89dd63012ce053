/**
 * The bots' message markup as the demo draws it, in the terminal (plain text) and on the page (HTML):
 * Discord's markdown (`**bold**`, `` `code` ``, `[text](url)`, `> quote`, backslash escapes, `<t:…>`
 * timestamps, `<#channel>` and `<@member>` mentions, by Discord's numeric ids or Slack's). The Slack session turns Slack's mrkdwn into
 * this before adding a message (demo/slack/session.ts). Links are drawn as text, never followed: the
 * page makes no request beyond its own loopback address.
 */

/** A mention's display name: a channel's name without `#`, a member's name without `@`. */
export type Names = (kind: 'channel' | 'user' | 'role', id: string) => string | undefined;

type Piece =
  | { kind: 'text'; text: string }
  | { kind: 'bold'; pieces: Piece[] }
  | { kind: 'code'; text: string }
  | { kind: 'link'; text: string; url: string };

const INLINE =
  /\\([\\*_`~|>#[\]()-])|\*\*(.+?)\*\*|`([^`\n]+)`|\[([^\]\n]+)\]\((https?:[^)\s]+)\)|<t:(-?\d+)(?::[tTdDfFR])?>|<#([A-Z0-9]+)>|<@!?([A-Z0-9]+)>|<@&(\d+)>/gs;

function when(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

function parse(line: string, names: Names): Piece[] {
  const pieces: Piece[] = [];
  const text = (t: string): void => {
    const last = pieces.at(-1);
    if (last?.kind === 'text') last.text += t;
    else pieces.push({ kind: 'text', text: t });
  };
  let at = 0;
  for (const m of line.matchAll(INLINE)) {
    text(line.slice(at, m.index));
    at = m.index + m[0].length;
    const [, escaped, bold, code, linkText, url, time, channel, member, role] = m;
    if (escaped !== undefined) text(escaped);
    else if (bold !== undefined) pieces.push({ kind: 'bold', pieces: parse(bold, names) });
    else if (code !== undefined) pieces.push({ kind: 'code', text: code });
    else if (linkText !== undefined && url !== undefined) pieces.push({ kind: 'link', text: linkText, url });
    else if (time !== undefined) text(when(Number(time)));
    else if (channel !== undefined) text(`#${names('channel', channel) ?? 'unknown-channel'}`);
    else if (member !== undefined) text(`@${names('user', member) ?? 'unknown-member'}`);
    else if (role !== undefined) text(`@${names('role', role) ?? 'unknown-role'}`);
  }
  text(line.slice(at));
  return pieces.filter((p) => p.kind !== 'text' || p.text !== '');
}

function plainPieces(pieces: Piece[]): string {
  return pieces.map((p) => (p.kind === 'bold' ? plainPieces(p.pieces) : p.text)).join('');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function htmlPieces(pieces: Piece[]): string {
  return pieces
    .map((p) => {
      if (p.kind === 'text') return escapeHtml(p.text);
      if (p.kind === 'bold') return `<strong>${htmlPieces(p.pieces)}</strong>`;
      if (p.kind === 'code') return `<code>${escapeHtml(p.text)}</code>`;
      return `<span class="link" title="${escapeHtml(p.url)}">${escapeHtml(p.text)}</span>`;
    })
    .join('');
}

/** The text as a terminal shows it: markup dropped, quotes marked with `│ `. */
export function toPlain(markup: string, names: Names): string {
  return markup
    .split('\n')
    .map((line) => {
      const quote = /^>>?>? /.exec(line);
      const body = plainPieces(parse(quote ? line.slice(quote[0].length) : line, names));
      return quote ? `│ ${body}` : body;
    })
    .join('\n');
}

/** The text as HTML (escaped), one `<br>` per line break, quotes in a `<q>` block. */
export function toHtml(markup: string, names: Names): string {
  return markup
    .split('\n')
    .map((line) => {
      const quote = /^>>?>? /.exec(line);
      const body = htmlPieces(parse(quote ? line.slice(quote[0].length) : line, names));
      return quote ? `<span class="quote">${body}</span>` : body;
    })
    .join('<br>');
}
