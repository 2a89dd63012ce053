/**
 * A message's documents checked one by one: download (attachments.ts), `POST /v1/detect/file`
 * through the bots' queue, and one outcome per file, a result or a sentence that says what was wrong
 * with that file. Each bot renders the outcomes in its own markup (Discord embeds, Slack blocks).
 */
import type { Logger } from 'pino';
import type { DetectFileResponse, Language, Mode } from '../../src/contract.ts';
import { type ChatFile, FileProblem, type FileLimits, selectDocuments } from './attachments.ts';
import { describeDetectError, errorCode } from './errors.ts';

export type FileOutcome =
  | { file: ChatFile; ok: true; result: DetectFileResponse }
  | { file: ChatFile; ok: false; code: string; sentence: string; requestId: string | undefined };

/** What one file check needs from the bot: how to download the file and how to send it. */
export interface FileCheckDeps {
  limits: FileLimits;
  download(file: ChatFile): Promise<Uint8Array>;
  detect(
    data: Uint8Array,
    file: ChatFile,
    options: { mode: Mode; language: Language | undefined; segments: boolean },
  ): Promise<DetectFileResponse>;
  logger: Logger;
}

/** What kind of document a file is by its declared type or name, for wording "no text" per kind. */
function documentKind(file: Pick<ChatFile, 'name' | 'mimeType'> | undefined): 'pdf' | 'docx' | 'text' | undefined {
  if (!file) return undefined;
  const type = file.mimeType?.toLowerCase() ?? '';
  const name = file.name.toLowerCase();
  if (type === 'application/pdf' || name.endsWith('.pdf')) return 'pdf';
  if (type.includes('wordprocessingml') || name.endsWith('.docx')) return 'docx';
  if (type.startsWith('text/') || /\.(txt|md|markdown|html?|csv|log)$/.test(name)) return 'text';
  return undefined;
}

/** `no_text_in_file` as the file's kind explains it: only a PDF has scanned pages. */
function noTextSentence(file: Pick<ChatFile, 'name' | 'mimeType'> | undefined, rid: string): string {
  switch (documentKind(file)) {
    case 'pdf':
      return `It has no text to read: it looks like scanned pages (pictures of text). The detector does not do OCR, so it cannot check it; paste the text into /detect instead.${rid}`;
    case 'docx':
      return `It has no text to read: the document is empty or holds only pictures, so there is nothing to check.${rid}`;
    case 'text':
      return `It is empty: there is no text in it, so there is nothing to check.${rid}`;
    default:
      return `It has no text to read, so there is nothing to check.${rid}`;
  }
}

/** The file route's refusals, worded for a moderator who can only change the file, not the API call. */
export function describeFileError(err: unknown, file?: Pick<ChatFile, 'name' | 'mimeType'>): string {
  if (err instanceof FileProblem) return err.message;
  const requestId = (err as { requestId?: unknown }).requestId;
  const rid = typeof requestId === 'string' && requestId.startsWith('req_') ? ` (request id: ${requestId})` : '';
  switch (errorCode(err)) {
    case 'unsupported_file_type':
      return `The detector cannot read this kind of file: only PDF (with a text layer), Word .docx, plain text, Markdown and HTML files are checked.${rid}`;
    case 'file_too_large':
      return `It is too large for the detection service (too many bytes or pages). Check a shorter version, or paste the part that matters into /detect.${rid}`;
    case 'file_unreadable':
      return `The file could not be read: it is password-protected or damaged. Save it again without a password and share it again.${rid}`;
    case 'no_text_in_file':
      return noTextSentence(file, rid);
    default:
      return describeDetectError(err);
  }
}

/** The selected documents checked (at once; the queue paces the calls), then the files left out. */
export async function checkFiles(
  files: readonly ChatFile[],
  options: { mode: Mode; language?: Language | undefined; segments: boolean },
  deps: FileCheckDeps,
): Promise<FileOutcome[]> {
  const { documents, skipped } = selectDocuments(files, deps.limits);
  const checked = await Promise.all(
    documents.map(async (file): Promise<FileOutcome> => {
      const started = performance.now();
      let bytes: number | undefined;
      try {
        const data = await deps.download(file);
        bytes = data.byteLength;
        const result = await deps.detect(data, file, { mode: options.mode, language: options.language, segments: options.segments });
        // Type, size and page count only: never the name (it may name a person) or the text.
        deps.logger.info(
          {
            file_type: result.file.type,
            bytes,
            pages: result.file.pages,
            characters: result.file.characters,
            request_id: result.request_id,
            verdict: result.verdict,
            duration_ms: Math.round(performance.now() - started),
          },
          'file check done',
        );
        return { file, ok: true, result };
      } catch (err) {
        const code = errorCode(err);
        const requestId = (err as { requestId?: unknown }).requestId;
        const rid = typeof requestId === 'string' && requestId.startsWith('req_') ? requestId : undefined;
        deps.logger.warn(
          { code, bytes, declared_bytes: file.size, request_id: rid, duration_ms: Math.round(performance.now() - started) },
          'file check failed',
        );
        return { file, ok: false, code, sentence: describeFileError(err, file), requestId: rid };
      }
    }),
  );
  return [
    ...checked,
    ...skipped.map(
      ({ file, problem }): FileOutcome => ({ file, ok: false, code: problem.code, sentence: problem.message, requestId: undefined }),
    ),
  ];
}
