/**
 * What reading a document gives, and why it can fail. Shared by the extractors, their worker and the
 * service; imports only the wire contract's types, so nothing here pulls in an extraction library.
 */
import type { FileErrorCode, FileType } from '../contract.ts';

export interface ExtractedDocument {
  type: FileType;
  /** Pages of a PDF; null for formats without pages. */
  pages: number | null;
  /** The prose read out of the file: paragraphs separated by a blank line, repeated page furniture left out. */
  text: string;
  /** Of a PDF: where each page's text begins in `text` (UTF-16 offsets, one per page, ascending); null for formats without pages. */
  pageStarts: number[] | null;
}

/** Why a file is refused: the file route's own codes, and `text_too_long` when its text passes the document limit. */
export type DocumentErrorCode = FileErrorCode | 'text_too_long';

/**
 * For `text_too_long`: how far reading went. `characters` counted (as `countChars` does) when it
 * stopped, all of the text's when `whole` (read to the end), else at least that many; `pages` read
 * of a PDF.
 */
export interface ReadSoFar {
  characters: number;
  whole: boolean;
  pages?: number;
}

export interface ExtractLimits {
  /** A PDF with more pages is refused (`too_many_pages`) before any page is read. */
  maxPages: number;
  /**
   * Most bytes a DOCX may unpack to, all its parts together. Checked against the sizes the zip's
   * central directory declares before anything is inflated, and again while inflating (a zip may lie).
   */
  maxUnpackedBytes: number;
  /**
   * The document limit, in characters as `countChars` (src/contract.ts) counts them: reading stops
   * once the text is sure to hold more (`text_too_long`), so a file far over it is not read to its end.
   */
  maxChars: number;
}

/** A file the service cannot score, with the envelope code and a sentence a person can act on. */
export class DocumentError extends Error {
  override name = 'DocumentError';
  readonly code: DocumentErrorCode;
  /** The format, when it was told before the failure (for the log line). */
  readonly type: FileType | undefined;
  /** Pages, when known before the failure (for the log line). */
  readonly pages: number | null;
  /** For `text_too_long`: how far reading went before it stopped (pages of a PDF, characters counted). */
  readonly read: ReadSoFar | undefined;
  constructor(
    code: DocumentErrorCode,
    message: string,
    detail: { type?: FileType | undefined; pages?: number | null; read?: ReadSoFar | undefined } = {},
  ) {
    super(message);
    this.code = code;
    this.type = detail.type;
    this.pages = detail.pages ?? null;
    this.read = detail.read;
  }
}

/** The text passed the document limit (ExtractLimits.maxChars); `read` says where reading stopped. */
export function textTooLong(detail: { type: FileType; pages?: number | null; read: ReadSoFar }): DocumentError {
  return new DocumentError(
    'text_too_long',
    detail.read.whole
      ? `The text of the file has ${detail.read.characters} characters, more than this server judges in one request.`
      : `The text of the file is longer than this server judges in one request; it was not read past ${detail.read.characters} characters.`,
    detail,
  );
}
