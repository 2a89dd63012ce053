/**
 * Reading documents (PDF, DOCX, plain text, Markdown, HTML) into prose for the detector. Its own room:
 * the service imports it; the client SDK never does, so the published client carries no extraction
 * library.
 */
export { DocumentReader, type DocumentReaderOptions } from './pool.ts';
export { DocumentError, type ExtractedDocument, type ExtractLimits } from './types.ts';
