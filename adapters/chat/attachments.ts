/**
 * Documents attached to chat messages: which of a message's files are checked, and their download
 * from the platform's own file host, with the size checked before (the size the platform declares)
 * and while reading (the download stops past the limit), and a time limit. Shared by both bots; each
 * passes its platform's hosts (and, for Slack, the bot token) in `DownloadOptions`.
 *
 * The bytes stay in memory: they go to `POST /v1/detect/file` and are never written anywhere.
 */
import { ChatInputError } from './errors.ts';

/** A file of a chat message, as the platform describes it before any download. */
export interface ChatFile {
  /** The platform's id of the file (Discord attachment id, Slack file id). */
  id?: string | undefined;
  /** The file name as posted; shown to the moderator, and sent to the service as the file's name. */
  name: string;
  /** Where the platform serves it (Discord `url`, Slack `url_private_download`/`url_private`); undefined when not given. */
  url: string | undefined;
  /** Size in bytes as the platform declares it; undefined when not given. */
  size: number | undefined;
  /** Declared type (Discord `content_type`, Slack `mimetype`): only a hint; the service tells the type from the bytes. */
  mimeType: string | undefined;
  /** Known before any download: why the file cannot be fetched (e.g. the platform refused to describe it). */
  problem?: FileProblem | undefined;
}

/** Limits of the file checks, shared by both bots. */
export interface FileLimits {
  /** Documents checked per message; the rest are named as not checked. Fixed at 3 (issue: up to 3 per message). */
  maxFiles: number;
  /** Largest file downloaded, in bytes: `DETECT_MAX_FILE_BYTES`, default 10 MB (the service's default limit). */
  maxBytes: number;
  /** Longest one download may take, in ms: `DETECT_FILE_DOWNLOAD_TIMEOUT_MS`, default 20,000. */
  downloadTimeoutMs: number;
}

export const DEFAULT_FILE_LIMITS: FileLimits = { maxFiles: 3, maxBytes: 10 * 1024 * 1024, downloadTimeoutMs: 20_000 };

/** Discord serves attachments from its CDN (`url`) and its media proxy (`proxy_url`). */
export const DISCORD_FILE_ORIGINS: readonly string[] = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];
/** Slack serves shared files (`url_private`, `url_private_download`) from one host, behind the bot token. */
export const SLACK_FILE_ORIGINS: readonly string[] = ['https://files.slack.com'];

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}="${raw}" must be a whole number ≥ ${min}.`);
  return value;
}

/** `DETECT_MAX_FILE_BYTES` and `DETECT_FILE_DOWNLOAD_TIMEOUT_MS`; a bad value stops the bot with a sentence. */
export function fileLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): FileLimits {
  return {
    maxFiles: DEFAULT_FILE_LIMITS.maxFiles,
    maxBytes: wholeNumber(env, 'DETECT_MAX_FILE_BYTES', DEFAULT_FILE_LIMITS.maxBytes, 1),
    downloadTimeoutMs: wholeNumber(env, 'DETECT_FILE_DOWNLOAD_TIMEOUT_MS', DEFAULT_FILE_LIMITS.downloadTimeoutMs, 1),
  };
}

/** A file that was not checked, with the sentence the moderator reads about it. */
export class FileProblem extends ChatInputError {
  override name = 'FileProblem';
}

/** `2.4 MB`, `812 KB`, `96 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

export function tooLargeProblem(size: number, maxBytes: number): FileProblem {
  return new FileProblem(
    'file_too_large',
    `It is too large to check (${formatBytes(size)}; the limit is ${formatBytes(maxBytes)}). Check a shorter version, or paste the part that matters into /detect.`,
  );
}

const MEDIA_EXTENSIONS =
  /\.(png|jpe?g|gif|webp|bmp|tiff?|heic|heif|svg|ico|avif|mp4|mov|m4v|webm|mkv|avi|mp3|m4a|wav|ogg|oga|opus|flac|aac)$/i;

/** Images, video and sound: the service reads no pictures (no OCR), so they are not downloaded at all. */
export function isMediaFile(file: Pick<ChatFile, 'name' | 'mimeType'>): boolean {
  const type = file.mimeType?.toLowerCase() ?? '';
  if (/^(image|video|audio)\//.test(type)) return true;
  return !type && MEDIA_EXTENSIONS.test(file.name);
}

export interface FileSelection {
  /** Checked, in the message's order: at most `maxFiles`. */
  documents: ChatFile[];
  /** Named in the answer with the reason they were not checked. */
  skipped: { file: ChatFile; problem: FileProblem }[];
}

/**
 * Which of a message's files are checked: anything that is not an image, video or sound, the first
 * `maxFiles` of them. The type is not judged by the name here beyond that: a document the service
 * cannot read comes back as its own sentence (`unsupported_file_type`).
 */
export function selectDocuments(files: readonly ChatFile[], limits: Pick<FileLimits, 'maxFiles'>): FileSelection {
  const documents: ChatFile[] = [];
  const skipped: FileSelection['skipped'] = [];
  for (const file of files) {
    if (isMediaFile(file)) {
      skipped.push({
        file,
        problem: new FileProblem(
          'not_a_document',
          'Images, video and sound are not checked (the detector reads no text in pictures): only documents (PDF, Word .docx, plain text or Markdown).',
        ),
      });
    } else if (documents.length >= limits.maxFiles) {
      skipped.push({
        file,
        problem: new FileProblem('too_many_files', `Not checked: only the first ${limits.maxFiles} documents of a message are checked.`),
      });
    } else {
      documents.push(file);
    }
  }
  return { documents, skipped };
}

export interface DownloadOptions {
  /**
   * Origins (`https://cdn.discordapp.com`) a download may come from, redirects included. The bots
   * pass their platform's file hosts; tests pass the fake's loopback origin through the bot's
   * options (never through the environment), as they pass the fake's API address.
   */
  allowedOrigins: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  /** Request headers, e.g. Slack's `Authorization: Bearer xoxb-…`; sent to allowed origins only. */
  headers?: Record<string, string> | undefined;
  /** Aborts the download (the bot is stopping). */
  signal?: AbortSignal | undefined;
  /**
   * What to tell the moderator when the host answers with a web page instead of the file: Slack
   * serves its sign-in page (HTTP 200, HTML) when the token lacks `files:read`.
   */
  htmlMeans?: FileProblem | undefined;
}

/** Redirects followed within the allowed origins (a CDN may move a file once or twice). */
const MAX_REDIRECTS = 3;

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function notOnFileHost(): FileProblem {
  return new FileProblem(
    'file_host_not_allowed',
    'It is not stored on the chat platform’s own file host, so the bot does not download it.',
  );
}

function redirectedOffHost(location: string): FileProblem {
  let host = 'another address';
  try {
    host = new URL(location).host || host;
  } catch {
    // Not a URL: named generically.
  }
  return new FileProblem(
    'file_redirected_off_host',
    `The chat platform sent the download on to ${host}, outside its own file host, and the bot does not follow it there, so the file was not checked.`,
  );
}

function downloadFailed(status?: number): FileProblem {
  return new FileProblem(
    'file_download_failed',
    `The bot could not download it from the chat platform${status ? ` (HTTP ${status})` : ''}. Try again in a minute; if the file was deleted, there is nothing to check.`,
  );
}

/**
 * Downloads `file` into memory. Throws a `FileProblem` (with the moderator's sentence) when the
 * file is too large (declared, announced in `content-length`, or found while reading), not on an
 * allowed host, not answered in time, or not served.
 */
export async function downloadFile(file: ChatFile, options: DownloadOptions): Promise<Uint8Array> {
  if (file.problem) throw file.problem;
  if (file.size !== undefined && file.size > options.maxBytes) throw tooLargeProblem(file.size, options.maxBytes);
  if (!file.url) throw downloadFailed();
  const allowed = new Set(options.allowedOrigins.map((o) => originOf(o)).filter((o): o is string => o !== undefined));
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url = file.url;
  try {
    for (let hop = 0; ; hop++) {
      const origin = originOf(url);
      if (!origin || !allowed.has(origin)) throw notOnFileHost();
      // Redirects are followed here, not by fetch, so that neither the request nor the token leaves the allowed hosts.
      const res = await fetch(url, { headers: options.headers, redirect: 'manual', signal });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        const location = res.headers.get('location');
        if (!location || hop >= MAX_REDIRECTS) throw downloadFailed(res.status);
        const next = new URL(location, url).toString();
        // A redirect off the file host is the platform sending the bot to a sign-in page (Slack), or
        // somewhere the bot will not follow: refused, and no advice to try again, which would not help.
        if (!allowed.has(originOf(next) ?? '')) throw options.htmlMeans ?? redirectedOffHost(next);
        url = next;
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        throw downloadFailed(res.status);
      }
      const type = res.headers.get('content-type')?.toLowerCase() ?? '';
      if (options.htmlMeans && type.startsWith('text/html') && !/\.html?$/i.test(file.name)) {
        await res.body?.cancel().catch(() => undefined);
        throw options.htmlMeans;
      }
      const announced = Number(res.headers.get('content-length'));
      if (Number.isFinite(announced) && announced > options.maxBytes) {
        await res.body?.cancel().catch(() => undefined);
        throw tooLargeProblem(announced, options.maxBytes);
      }
      return await readBounded(res, options.maxBytes);
    }
  } catch (err) {
    if (err instanceof FileProblem) throw err;
    if (timeout.aborted) {
      throw new FileProblem(
        'file_download_timeout',
        `The download from the chat platform took longer than ${Math.round(options.timeoutMs / 1000)} s, so it was given up. Try again in a minute.`,
      );
    }
    if (options.signal?.aborted) throw err;
    throw downloadFailed();
  }
}

/** Reads a response body, stopping as soon as it passes `maxBytes` (a host may not announce the size, or lie). */
async function readBounded(res: Response, maxBytes: number): Promise<Uint8Array> {
  const reader = res.body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new FileProblem(
        'file_too_large',
        `It is too large to check (over ${formatBytes(maxBytes)}, the limit). Check a shorter version, or paste the part that matters into /detect.`,
      );
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
