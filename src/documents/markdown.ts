/**
 * The prose of a Markdown file: marked renders it to HTML, whose text is read like any HTML's (code
 * blocks left out). marked re-reads a container's content once per level of nesting, so 50,000
 * nested quotes or 3,000 list levels took longer than the reading time limit, and it pads every row
 * of a table to its header's width, so a 50,000-column table ran a reader out of memory. Before
 * marked, nesting deeper than any real document's is flattened (the words are kept, the extra
 * levels dropped) and a table wider than MAX_COLUMNS is read as text: both in one linear pass.
 */
import { marked } from 'marked';
import { htmlToText } from './html.ts';

/** Quote levels kept on a line; deeper quotes are read at this level. */
const MAX_QUOTES = 8;
/** Columns of indentation kept (eight list levels); deeper lines are read at this indentation. */
const MAX_INDENT = 16;
/** Widest table read as a table; a wider one's delimiter row is dropped so its rows read as text. */
const MAX_COLUMNS = 256;

/** The text of `markdown`; past `maxChars` characters it throws `text_too_long` (see htmlToText). */
export function markdownToText(markdown: string, maxChars?: number): string {
  return htmlToText(
    marked.parse(flattenNesting(markdown), { async: false, gfm: true }),
    maxChars === undefined ? undefined : { maxChars, type: 'markdown' },
  );
}

/** Caps each line's quote markers and indentation, and unmakes over-wide tables; linear in the text. */
export function flattenNesting(markdown: string): string {
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    // The line's container prefix: indentation, quote markers and bullets.
    let quotes = 0;
    let end = 0;
    while (end < line.length) {
      const c = line.charCodeAt(end);
      if (c === 0x3e) quotes++;
      else if (c !== 0x20 && c !== 0x09 && c !== 0x2d && c !== 0x2a && c !== 0x2b) break;
      end++;
    }
    if (quotes > MAX_QUOTES || end - quotes > MAX_INDENT * 2) {
      const prefix = line.slice(0, end);
      // The last bullet of the prefix, if it ends with one, so a deep list item stays a list item
      // (unindented: an indented line after a blank one would be read as code and left out).
      const bullet = /[-*+][ \t]+$/.exec(prefix)?.[0] ?? '';
      lines[i] = `${'> '.repeat(Math.min(quotes, MAX_QUOTES))}${bullet}${line.slice(end)}`;
    } else if (end > MAX_INDENT && quotes === 0) {
      const indent = line.slice(0, end).replace(/\t/g, '    ');
      const rest = indent.trimStart();
      if (indent.length - rest.length > MAX_INDENT) lines[i] = ' '.repeat(MAX_INDENT) + rest + line.slice(end);
    }
    if (isWideDelimiterRow(lines[i] as string)) lines[i] = '';
  }
  return lines.join('\n');
}

/** A table's delimiter row (|---|:--:|…) with more than MAX_COLUMNS cells. */
function isWideDelimiterRow(line: string): boolean {
  let pipes = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x7c) pipes++;
    else if (c !== 0x2d && c !== 0x3a && c !== 0x20 && c !== 0x09) return false;
  }
  return pipes > MAX_COLUMNS;
}
