/**
 * The prose of an HTML document (also what DOCX and Markdown become on their way to text): block
 * elements become paragraphs, table cells are kept apart, and what is not prose (scripts, styles,
 * code blocks) is left out. htmlparser2 streams the markup without building a DOM.
 */
import { Parser } from 'htmlparser2';

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

export function htmlToText(html: string): string {
  const paragraphs: string[] = [];
  let current = '';
  let skipDepth = 0;
  const flush = (): void => {
    const text = current.replace(/\s+/g, ' ').trim();
    if (text) paragraphs.push(text);
    current = '';
  };
  const parser = new Parser(
    {
      onopentagname(name) {
        if (SKIP.has(name)) skipDepth++;
        else if (BLOCK.has(name)) flush();
      },
      onclosetag(name, implied) {
        if (SKIP.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(name) && !(implied && name === 'br')) flush();
      },
      ontext(text) {
        if (skipDepth === 0) current += text;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return paragraphs.join('\n\n');
}
