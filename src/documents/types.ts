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
}

export interface ExtractLimits {
  /** A PDF with more pages is refused (`too_many_pages`) before any page is read. */
  maxPages: number;
  /**
   * Most bytes a DOCX may unpack to, all its parts together. Checked against the sizes the zip's
   * central directory declares before anything is inflated, and again while inflating (a zip may lie).
   */
  maxUnpackedBytes: number;
}

/** A file the service cannot score, with the envelope code and a sentence a person can act on. */
export class DocumentError extends Error {
  override name = 'DocumentError';
  readonly code: FileErrorCode;
  /** The format, when it was told before the failure (for the log line). */
  readonly type: FileType | undefined;
  /** Pages, when known before the failure (for the log line). */
  readonly pages: number | null;
  constructor(code: FileErrorCode, message: string, detail: { type?: FileType | undefined; pages?: number | null } = {}) {
    super(message);
    this.code = code;
    this.type = detail.type;
    this.pages = detail.pages ?? null;
  }
}
