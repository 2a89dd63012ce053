/**
 * The form of `POST /v1/detect/file`: one file in the field `file` and the optional fields `mode`,
 * `language` and `segments`, read from the multipart/form-data body by busboy (@fastify/busboy). The
 * file is held in memory (never a temporary file) and its size checked as it arrives.
 *
 * Busboy parses every chunk it is given to its end, part by part, on the event loop, and its part
 * limit only stops it handing parts over: one 64 KB chunk of empty parts is thousands of parts, and
 * a flood of such forms kept every other caller waiting. So the body passes a guard first that
 * counts the form's delimiters (a search for the boundary, no parsing) and stops the body at the
 * first one more than a complete form has; busboy never sees more parts than the form may hold. A
 * refused form is not read further, and its connection is closed with the answer.
 */
import { MIMEType } from 'node:util';
import { Transform, type TransformCallback } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';

export const FORM_FIELDS = ['mode', 'language', 'segments'] as const;
/** Parts a form may have: the file and each field once. */
export const MAX_PARTS = FORM_FIELDS.length + 1;
/** Longest boundary RFC 2046 allows. */
const MAX_BOUNDARY = 70;

export interface FileForm {
  name: string;
  bytes: Buffer;
  fields: Partial<Record<(typeof FORM_FIELDS)[number], string>>;
}

export function invalid(message: string, param?: string): ApiError {
  return new ApiError(400, 'invalid_request', message, param ? { param } : {});
}

const malformed = (): ApiError => invalid('The multipart/form-data body is malformed or was cut short; send the form again.');
const tooManyParts = (): ApiError =>
  invalid(`The form has more than ${MAX_PARTS} parts: send the file and each of the fields mode, language and segments at most once.`);

export function tooLarge(maxFileBytes: number): ApiError {
  return new ApiError(
    413,
    'file_too_large',
    `The file is larger than ${formatMb(maxFileBytes)}, the limit on this server; send a smaller file or the part to check.`,
    { param: 'file', details: { max_bytes: maxFileBytes }, headers: { Connection: 'close' } },
  );
}

function formatMb(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}

/**
 * Characters a name shown back must not carry: controls, bidirectional overrides and isolates (which
 * can make "gpj.exe" read as "exe.jpg"), line and paragraph separators (which break a log or a chat
 * line), and lone surrogates.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\p{Zl}\p{Zp}\p{Cs}]/gu;

/** The name as echoed back: its last path part, without unsafe characters, at most 255 code points (never half a character). */
export function cleanName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  const clean = Array.from(base.replace(UNSAFE_IN_NAME, '').trim()).slice(0, 255).join('').trim();
  return clean || 'file';
}

/**
 * Passes a multipart body on until it holds more delimiters (`CRLF--boundary`, the body's first
 * without its CRLF) than `max`, then fails. Looks only for the delimiter, so it costs a search per
 * chunk however many parts the chunk holds.
 */
export class DelimiterGuard extends Transform {
  readonly #delimiter: Buffer;
  readonly #max: number;
  #seen = 0;
  /** The end of what passed, where a delimiter split between two chunks begins; at first the CRLF the body's opening delimiter may omit. */
  #tail: Buffer = Buffer.from('\r\n');

  constructor(boundary: string, max: number) {
    super();
    this.#delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.#max = max;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const length = this.#delimiter.length;
    // A delimiter beginning in the tail ends in this chunk; one wholly in the tail was counted before.
    const seam = Buffer.concat([this.#tail, chunk.subarray(0, length - 1)]);
    let count = 0;
    for (let at = seam.indexOf(this.#delimiter); at !== -1 && at < this.#tail.length; at = seam.indexOf(this.#delimiter, at + length))
      count++;
    for (
      let at = chunk.indexOf(this.#delimiter);
      at !== -1 && this.#seen + count <= this.#max;
      at = chunk.indexOf(this.#delimiter, at + length)
    )
      count++;
    this.#seen += count;
    if (this.#seen > this.#max) {
      done(tooManyParts());
      return;
    }
    this.#tail =
      chunk.length >= length - 1 ? chunk.subarray(chunk.length - (length - 1)) : Buffer.concat([this.#tail, chunk]).subarray(-(length - 1));
    done(null, chunk);
  }
}

/** The boundary of a multipart/form-data Content-Type, or undefined when it has none that RFC 2046 allows. */
function boundaryOf(contentType: string | undefined): string | undefined {
  try {
    const boundary = new MIMEType(contentType ?? '').params.get('boundary');
    if (!boundary || boundary.length > MAX_BOUNDARY || /["\\]/.test(boundary)) return undefined;
    return boundary;
  } catch {
    return undefined;
  }
}

/** Reads the form: one file in the field `file`, and the optional fields; refuses anything else with a 400 or 413. */
export function readFileForm(request: FastifyRequest, maxFileBytes: number): Promise<FileForm> {
  const raw = request.raw;
  const boundary = boundaryOf(request.headers['content-type']);
  if (boundary === undefined) return Promise.reject(closing(malformed(), raw.complete));
  return new Promise<FileForm>((resolve, reject) => {
    const fields: FileForm['fields'] = {};
    let file: { name: string; chunks: Buffer[] } | undefined;
    let settled = false;
    const guard = new DelimiterGuard(boundary, MAX_PARTS + 1);
    // Busboy is given the boundary the guard looks for, so both read the body the same way.
    const parser: BusboyInstance = Busboy({
      headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` },
      limits: { fileSize: maxFileBytes, files: 1, fields: FORM_FIELDS.length, parts: MAX_PARTS, fieldSize: 100, headerPairs: 20 },
    });
    const refuse = (error: ApiError): void => {
      if (settled) return;
      settled = true;
      // The rest of a refused form is not read: the body stops here, and the answer closes the
      // connection rather than draining it.
      raw.unpipe(guard);
      guard.destroy();
      parser.destroy();
      reject(closing(error, raw.complete));
    };
    // The body's deadline (envelope.ts) fails the request stream with a 408.
    raw.on('error', (err) => refuse(err instanceof ApiError ? err : malformed()));
    raw.once('close', () => {
      if (!raw.complete) refuse(malformed());
    });
    guard.on('error', (err) => refuse(err instanceof ApiError ? err : malformed()));
    parser.on('error', () => refuse(malformed()));
    parser.on('partsLimit', () => refuse(tooManyParts()));
    parser.on('fieldsLimit', () => refuse(tooManyParts()));
    parser.on('filesLimit', () => refuse(invalid('Send one file per request, in the field "file".', 'file')));
    parser.on('field', (name: string, value: string) => {
      const field = name as (typeof FORM_FIELDS)[number];
      if (!FORM_FIELDS.includes(field)) {
        refuse(
          invalid(`Unknown field "${name.slice(0, 100)}"; accepted fields are file, mode, language and segments.`, name.slice(0, 100)),
        );
      } else if (fields[field] !== undefined) {
        refuse(invalid(`The field "${field}" was sent twice; send it once.`, field));
      } else {
        fields[field] = value;
      }
    });
    parser.on('file', (name: string, stream: BusboyFileStream, filename: string | undefined) => {
      if (name !== 'file') {
        stream.resume();
        refuse(invalid(`Unknown file field "${name.slice(0, 100)}"; send the document in the field "file".`, name.slice(0, 100)));
        return;
      }
      const chunks: Buffer[] = [];
      file = { name: cleanName(filename), chunks };
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => refuse(tooLarge(maxFileBytes)));
    });
    parser.on('finish', () => {
      if (settled) return;
      if (!file) {
        refuse(invalid('The form has no file: send the document in the field "file" (multipart/form-data).', 'file'));
        return;
      }
      settled = true;
      resolve({ name: file.name, bytes: Buffer.concat(file.chunks), fields });
    });
    raw.pipe(guard).pipe(parser);
  });
}

/** An answer to a form still arriving closes the connection: the rest of the body is not read. */
function closing(error: ApiError, complete: boolean): ApiError {
  if (!complete) error.options.headers = { ...error.options.headers, Connection: 'close' };
  return error;
}
