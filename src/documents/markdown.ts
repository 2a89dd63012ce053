/** The prose of a Markdown file: marked renders it to HTML, whose text is read like any HTML's (code blocks left out). */
import { marked } from 'marked';
import { htmlToText } from './html.ts';

export function markdownToText(markdown: string): string {
  return htmlToText(marked.parse(markdown, { async: false, gfm: true }));
}
