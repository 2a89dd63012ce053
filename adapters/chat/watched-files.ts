/**
 * Documents shared in watched channels, when a workspace or server turned that on (`watch-files`,
 * the `watchFiles` setting; off by default). Each document (up to three per message) is checked as a
 * background call of the bots' queue, behind every moderator's check, and one that reads as likely
 * AI-written gets a line in the audit / mod-log channel. Nothing is stored about it and nothing is
 * done in the channel; no review card is made (cards judge a member's typed messages together).
 */
import type { Logger } from 'pino';
import type { DetectFileResponse, Mode } from '../../src/contract.ts';
import type { ChatFile, FileLimits } from './attachments.ts';
import { checkFiles } from './file-checks.ts';

export interface WatchedFilesDeps {
  limits: FileLimits;
  download(file: ChatFile): Promise<Uint8Array>;
  /** `POST /v1/detect/file` as a background call of the queue. */
  detectFile(data: Uint8Array, file: ChatFile, mode: Mode): Promise<DetectFileResponse>;
  /** Tells the moderators about a document that reads as likely AI-written. */
  report(file: ChatFile, result: DetectFileResponse): Promise<void>;
  logger: Logger;
}

/** Checks the documents among `files` and reports the likely AI-written ones; returns how many were reported. */
export async function checkWatchedFiles(files: readonly ChatFile[], mode: Mode, deps: WatchedFilesDeps): Promise<number> {
  const outcomes = await checkFiles(
    files,
    { mode, segments: false },
    { limits: deps.limits, logger: deps.logger, download: deps.download, detect: (data, file) => deps.detectFile(data, file, mode) },
  );
  let reported = 0;
  for (const outcome of outcomes) {
    if (!outcome.ok || outcome.result.verdict !== 'likely_ai') continue;
    await deps.report(outcome.file, outcome.result);
    reported += 1;
  }
  return reported;
}
