/**
 * The documents of a message the shortcut checks: downloaded from Slack's file host only
 * (`files.slack.com`, with the bot token as Slack requires), sent to `POST /v1/detect/file` through
 * the bots' queue, one outcome per file (adapters/chat/file-checks.ts).
 */
import type { webApi } from '@slack/bolt';
import type { Mode } from '../../src/contract.ts';
import { downloadFile, FileProblem } from '../chat/attachments.ts';
import { checkFiles, type FileOutcome } from '../chat/file-checks.ts';
import { buildAuditMessage } from './blocks.ts';
import { createNameResolver, slackErrorCode, teamSettings, type SlackAppContext } from './checks.ts';
import { auditChannelFor } from './config.ts';
import { fileNotServed, filesReadMissing, resolveSlackFiles, type SlackFileObject } from './message-files.ts';

export interface SlackFileCheck {
  files: readonly SlackFileObject[];
  mode: Mode;
  /** The token of the workspace the message is in (Bolt's `context.botToken`): Slack serves files only with it. */
  botToken: string | undefined;
  client: webApi.WebClient;
  teamId: string | undefined;
  userId: string;
}

export async function checkSlackFiles(ctx: SlackAppContext, req: SlackFileCheck): Promise<FileOutcome[]> {
  const logger = ctx.logger.child({ kind: 'file', team: req.teamId, user: req.userId, mode: req.mode });
  const detectFile = ctx.detector.detectFile?.bind(ctx.detector);
  const files = await resolveSlackFiles(req.files, req.client);
  // Slack serves its sign-in page instead of a file to a token without files:read; with the scope
  // granted (auth.test's x-oauth-scopes say so) a web page means something else, and is named as such.
  const granted = await req.client.auth.test().then(
    (res) => res.response_metadata?.scopes,
    () => undefined,
  );
  const htmlMeans = granted?.includes('files:read') ? fileNotServed() : filesReadMissing();
  return checkFiles(
    files,
    { mode: req.mode, segments: true },
    {
      limits: ctx.config.files,
      logger,
      download: (file) =>
        downloadFile(file, {
          allowedOrigins: ctx.config.fileOrigins,
          maxBytes: ctx.config.files.maxBytes,
          timeoutMs: ctx.config.files.downloadTimeoutMs,
          headers: req.botToken ? { authorization: `Bearer ${req.botToken}` } : undefined,
          htmlMeans,
        }),
      detect: (data, file, options) => {
        if (!detectFile) {
          throw new FileProblem(
            'files_unavailable',
            'This app is not set up to check documents (its detection client has no file checks).',
          );
        }
        return detectFile(data, {
          filename: file.name,
          ...(file.mimeType ? { contentType: file.mimeType } : {}),
          mode: options.mode,
          segments: options.segments,
        });
      },
    },
  );
}

/** One audit line per file of a checked message (never its text), like the message's own line. */
export async function auditFiles(
  ctx: SlackAppContext,
  req: SlackFileCheck & { channelId: string; permalink: string | undefined; messageAuthorId: string | undefined },
  outcomes: readonly FileOutcome[],
): Promise<void> {
  const channel = (await teamSettings(ctx, req.teamId)).auditChannelId ?? auditChannelFor(ctx.config, req.teamId);
  if (!channel || outcomes.length === 0) return;
  const resolver = createNameResolver(req.client, ctx.names);
  const [userName, messageAuthorName] = await Promise.all([
    resolver.user?.(req.userId),
    req.messageAuthorId ? resolver.user?.(req.messageAuthorId) : undefined,
  ]);
  for (const outcome of outcomes) {
    // Pictures were never checks: they are named in the answer, not logged.
    if (!outcome.ok && outcome.code === 'not_a_document') continue;
    const line = buildAuditMessage({
      userId: req.userId,
      userName,
      messageAuthorName,
      messageAuthorId: req.messageAuthorId,
      channelId: req.channelId,
      permalink: req.permalink,
      kind: 'shortcut',
      mode: req.mode,
      file: outcome.file.name,
      ...(outcome.ok ? { result: outcome.result } : { errorCode: outcome.code, requestId: outcome.requestId }),
    });
    try {
      await req.client.chat.postMessage({ channel, text: line.text, blocks: line.blocks, unfurl_links: false, unfurl_media: false });
    } catch (err) {
      ctx.logger.warn({ channel, slack_error: slackErrorCode(err) }, 'audit post failed (is the bot a member of the audit channel?)');
    }
  }
}
