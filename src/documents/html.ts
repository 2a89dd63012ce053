/**
 * The prose of an HTML document (also what DOCX and Markdown become on their way to text): block
 * elements become paragraphs, table cells are kept apart, and what is not prose (scripts, styles,
 * code blocks) is left out. htmlparser2's tokenizer streams the markup without building a DOM, in
 * time linear in its length: its Parser keeps the open elements in an array it shifts at every tag
 * (200,000 nested <div>s took longer than the reading time limit), and nothing here needs that stack.
 *
 * Page headers and footers as LibreOffice writes them into HTML (`<div title="header">`, `<div
 * title="footer">`, once per document) are left out, as they are of its PDFs (repeated page
 * furniture) and DOCX files (parts mammoth does not read), so the three read the same text.
 */
import { Tokenizer } from 'htmlparser2';
import { countChars, type FileType } from '../contract.ts';
import { textTooLong } from './types.ts';

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'pre', 'code', 'svg', 'math', 'iframe', 'object']);
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'aside',
  'header',
  'footer',
  'nav',
  'blockquote',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'tr',
  'td',
  'th',
  'caption',
  'figure',
  'figcaption',
  'hr',
  'br',
  'address',
  'body',
  'html',
]);

/** `title` values of the divs LibreOffice writes a page header or footer into. */
const FURNITURE_TITLES = new Set(['header', 'footer']);

/**
 * The text of `html`: paragraphs separated by a blank line. Past `limit.maxChars` characters (as
 * `countChars` counts them) it stops reading and throws `text_too_long` for a file of `limit.type`.
 */
export function htmlToText(html: string, limit?: { maxChars: number; type: FileType }): string {
  const maxChars = limit?.maxChars ?? Number.POSITIVE_INFINITY;
  const paragraphs: string[] = [];
  let characters = 0;
  let current = '';
  let skipDepth = 0;
  /** The tag whose name was read last, for `/>` (which only closes in foreign content, as the parser does). */
  let lastOpened = '';
  /** For each open div: whether it is page furniture (skipped). Only divs are tracked, so the stack stays shallow in real documents. */
  const divs: boolean[] = [];
  let attribute = '';
  let value = '';
  let furniture = false;
  const flush = (): void => {
    const text = current.replace(/\s+/g, ' ').trim();
    if (text) {
      characters += countChars(text) + (paragraphs.length > 0 ? 1 : 0);
      if (characters > maxChars) throw textTooLong({ type: limit?.type ?? 'html', read: { characters, whole: false } });
      paragraphs.push(text);
    }
    current = '';
  };
  const closeDiv = (): void => {
    if (divs.pop()) skipDepth = Math.max(0, skipDepth - 1);
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        lastOpened = name;
        furniture = false;
        // A body starts after the head, even when </head> was left out.
        if (name === 'body') skipDepth = 0;
        if (SKIP.has(name)) skipDepth++;
        else if (BLOCK.has(name)) flush();
      },
      onattribname(start, end) {
        attribute = html.slice(start, end).toLowerCase();
        value = '';
      },
      onattribdata(start, end) {
        value += html.slice(start, end);
      },
      onattribentity(codepoint) {
        value += String.fromCodePoint(codepoint);
      },
      onattribend() {
        if (lastOpened === 'div' && attribute === 'title' && FURNITURE_TITLES.has(value.trim().toLowerCase())) furniture = true;
      },
      onopentagend() {
        if (lastOpened !== 'div') return;
        divs.push(furniture);
        if (furniture) skipDepth++;
      },
      onselfclosingtag() {
        if (lastOpened === 'div') {
          divs.push(furniture);
          if (furniture) skipDepth++;
          closeDiv();
        } else if (SKIP.has(lastOpened)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(lastOpened)) flush();
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (name === 'div') {
          flush();
          closeDiv();
        } else if (SKIP.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(name)) flush();
      },
      ontext(start, end) {
        if (skipDepth === 0) current += html.slice(start, end);
      },
      ontextentity(codepoint) {
        if (skipDepth === 0) current += String.fromCodePoint(codepoint);
      },
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  flush();
  return paragraphs.join('\n\n');
}
