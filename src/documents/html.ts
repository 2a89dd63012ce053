/**
 * The prose of an HTML document (also what DOCX and Markdown become on their way to text): block
 * elements become paragraphs, table cells are kept apart, and what is not prose (scripts, styles,
 * code blocks) is left out. htmlparser2's tokenizer streams the markup without building a DOM, in
 * time linear in its length: its Parser keeps the open elements in an array it shifts at every tag
 * (200,000 nested <div>s took longer than the reading time limit), and nothing here needs that stack.
 */
import { Tokenizer } from 'htmlparser2';

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
  /** The tag whose name was read last, for `/>` (which only closes in foreign content, as the parser does). */
  let lastOpened = '';
  const flush = (): void => {
    const text = current.replace(/\s+/g, ' ').trim();
    if (text) paragraphs.push(text);
    current = '';
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        lastOpened = name;
        // A body starts after the head, even when </head> was left out.
        if (name === 'body') skipDepth = 0;
        if (SKIP.has(name)) skipDepth++;
        else if (BLOCK.has(name)) flush();
      },
      onselfclosingtag() {
        if (SKIP.has(lastOpened)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(lastOpened)) flush();
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (SKIP.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(name)) flush();
      },
      ontext(start, end) {
        if (skipDepth === 0) current += html.slice(start, end);
      },
      ontextentity(codepoint) {
        if (skipDepth === 0) current += String.fromCodePoint(codepoint);
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onopentagend() {},
      onprocessinginstruction() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  flush();
  return paragraphs.join('\n\n');
}
