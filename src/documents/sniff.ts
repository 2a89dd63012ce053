/**
 * Tells a document's format from its bytes: the caller's file name and declared type are never
 * trusted (a PDF renamed .docx is read as the PDF it is; an image named .txt is refused).
 */
import { isUtf8 } from 'node:buffer';
import { fileTypeFromBuffer } from 'file-type';
import type { FileType } from '../contract.ts';
import { DocumentError } from './types.ts';

const SUPPORTED = 'PDF (with a text layer), DOCX, plain text, Markdown or HTML';

export async function sniffType(bytes: Uint8Array): Promise<FileType> {
  // file-type reads magic numbers (and, for zips, the names of the first entries, which is how a DOCX
  // is told from any other zip); it knows binary formats only, so text is decided below.
  const found = await fileTypeFromBuffer(bytes);
  if (found?.ext === 'pdf') return 'pdf';
  if (found?.ext === 'docx') return 'docx';
  // XHTML (LibreOffice's "XHTML" export among others) opens like any XML file; its root is <html>.
  if (found?.ext === 'xml' && isXhtml(bytes)) return 'html';
  if (found) {
    const hint = found.ext === 'doc' || found.ext === 'cfb' ? ' Old Word .doc files are not read: save it as .docx.' : '';
    throw new DocumentError(
      'unsupported_file_type',
      `The file is ${article(found.ext)} ${found.ext.toUpperCase()} file (${found.mime}), which cannot be checked; send a ${SUPPORTED} file.${hint}`,
    );
  }
  const head = bytes.subarray(0, 4096);
  // Text is valid UTF-8 without NUL bytes anywhere (not only in its first 4 KB: a binary file may
  // open with a text header); anything else unknown is some binary format.
  if (bytes.includes(0) || !isUtf8(bytes)) {
    throw new DocumentError(
      'unsupported_file_type',
      `The file is neither a ${SUPPORTED} file nor UTF-8 text (its kind could not be recognised); send one of those.`,
    );
  }
  const start = new TextDecoder()
    .decode(head)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .slice(0, 1024)
    .toLowerCase();
  if (/^<!doctype html|^<html[\s>]|^<\?xml[^>]*>\s*<html[\s>]/.test(start)) return 'html';
  if (looksLikeMarkdown(new TextDecoder().decode(bytes.subarray(0, 65_536)))) return 'markdown';
  return 'text';
}

/** An XML file whose root element, after the XML declaration, a doctype and comments, is `html`. */
function isXhtml(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 4096)).replace(/^\uFEFF/, '');
  const rest = head.replace(/^\s*(?:<\?xml[^>]*\?>|<!doctype[^>]*>|<!--[\s\S]*?-->|\s+)*/i, '');
  return /^<html[\s>]/i.test(rest);
}

/** Markdown when several lines use its block syntax (headings, lists, fences, quotes) or links. */
function looksLikeMarkdown(text: string): boolean {
  let marks = 0;
  for (const line of text.split('\n', 2000)) {
    if (/^#{1,6} \S/.test(line) || /^```/.test(line) || /^\s{0,3}[-*+] \S/.test(line) || /^> \S/.test(line)) marks++;
    else if (/\[[^\]\n]+\]\([^)\s]+\)/.test(line) || /(\*\*|__)[^*_\n]+\1/.test(line)) marks++;
    if (marks >= 3) return true;
  }
  return false;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
