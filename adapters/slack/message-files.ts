/**
 * The files shared in a Slack message, as the shared `ChatFile`, from Slack's file objects (`id`,
 * `name`, `title`, `mimetype`, `filetype`, `size`, `url_private`, `url_private_download`, …). A file
 * Slack lists without its addresses (`file_access: "check_file_info"`, shared from another
 * organisation) is looked up with `files.info`, which needs the same `files:read` scope.
 */
import type { webApi } from '@slack/bolt';
import { type ChatFile, FileProblem } from '../chat/attachments.ts';

export interface SlackFileObject {
  id?: unknown;
  name?: unknown;
  title?: unknown;
  mimetype?: unknown;
  filetype?: unknown;
  size?: unknown;
  url_private?: unknown;
  url_private_download?: unknown;
  mode?: unknown;
  file_access?: unknown;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function chatFileOfSlack(file: SlackFileObject): ChatFile | undefined {
  const id = str(file.id);
  const name = str(file.name) ?? str(file.title) ?? id;
  if (!name) return undefined;
  const hidden =
    file.mode === 'hidden_by_limit'
      ? new FileProblem(
          'file_hidden',
          'Slack hides this file: it is older than the history this workspace’s plan shows, so it cannot be read.',
        )
      : undefined;
  return {
    id,
    name,
    ...(hidden ? { problem: hidden } : {}),
    // The download address serves the bytes with a download disposition; url_private is the same file.
    url: str(file.url_private_download) ?? str(file.url_private),
    size: typeof file.size === 'number' && Number.isFinite(file.size) ? file.size : undefined,
    mimeType: str(file.mimetype),
  };
}

/** The message's files; tombstones of deleted files (`mode: "tombstone"`) are left out. */
export function filesOfSlackMessage(message: { files?: unknown }): SlackFileObject[] {
  if (!Array.isArray(message.files)) return [];
  return message.files.filter(
    (f): f is SlackFileObject => f !== null && typeof f === 'object' && (f as SlackFileObject).mode !== 'tombstone',
  );
}

/** What a moderator reads when the app's token may not read files. */
export function filesReadMissing(): FileProblem {
  return new FileProblem(
    'files_read_missing',
    'The app cannot download files in this workspace: it lacks the Slack scope `files:read`. Ask a workspace admin to update the app from its manifest and reinstall it (docs/slack.md, “Documents”).',
  );
}

/**
 * What a moderator reads when Slack answers a file address with a web page, or sends the download
 * elsewhere, although the token has `files:read`: the scope is not what is wrong.
 */
export function fileNotServed(): FileProblem {
  return new FileProblem(
    'file_not_served',
    'Slack did not hand over the file: it answered with a web page, or sent the download elsewhere, although the app may read files (`files:read`). The file may have been deleted or restricted, or be stored outside Slack; if it opens in Slack, tell the app’s admin.',
  );
}

/**
 * The `ChatFile` of each file object, asking `files.info` for those Slack sent without addresses.
 * A failed lookup keeps the file (without an address), so its answer says it could not be read.
 */
export async function resolveSlackFiles(files: readonly SlackFileObject[], client: webApi.WebClient): Promise<ChatFile[]> {
  const out: ChatFile[] = [];
  for (const file of files) {
    const chat = chatFileOfSlack(file);
    if (!chat) continue;
    if (chat.url || !chat.id || file.file_access !== 'check_file_info') {
      out.push(chat);
      continue;
    }
    try {
      const info = await client.files.info({ file: chat.id });
      out.push(chatFileOfSlack(info.file as SlackFileObject) ?? chat);
    } catch (err) {
      const code = (err as { data?: { error?: unknown } }).data?.error;
      out.push({ ...chat, problem: code === 'missing_scope' ? filesReadMissing() : undefined });
    }
  }
  return out;
}
