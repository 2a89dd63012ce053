/**
 * The files of a Discord message (its attachments, and those of a forwarded message's snapshot), and
 * of `/detect file:`, as the shared `ChatFile`. discord.js hands over an `Attachment` (`name`, `url`,
 * `size`, `contentType`) when it built a `Message`, or the API's attachment object (`filename`, `url`,
 * `size`, `content_type`) when it did not; both are read here.
 */
import type { ChatFile } from '../chat/attachments.ts';

interface AttachmentLike {
  id?: unknown;
  name?: unknown;
  filename?: unknown;
  url?: unknown;
  size?: unknown;
  contentType?: unknown;
  content_type?: unknown;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** One attachment (discord.js `Attachment` or API object) as a `ChatFile`. */
export function chatFileOf(attachment: unknown): ChatFile | undefined {
  if (!attachment || typeof attachment !== 'object') return undefined;
  const a = attachment as AttachmentLike;
  const url = str(a.url);
  const name = str(a.filename) ?? str(a.name) ?? (url ? decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') : undefined);
  if (!name) return undefined;
  return {
    id: str(a.id),
    name,
    url,
    size: typeof a.size === 'number' && Number.isFinite(a.size) ? a.size : undefined,
    mimeType: str(a.contentType) ?? str(a.content_type),
  };
}

function attachmentsOf(message: unknown): unknown[] {
  const list = (message as { attachments?: unknown } | null)?.attachments;
  if (Array.isArray(list)) return list;
  // discord.js: a Collection (a Map) of Attachment.
  if (list instanceof Map) return [...list.values()];
  return [];
}

/** The message's files, then its forwarded snapshots' files, in the order Discord lists them. */
export function filesOfMessage(message: unknown): ChatFile[] {
  const m = message as {
    messageSnapshots?: { values(): Iterable<unknown> } | null;
    message_snapshots?: readonly { message?: unknown }[] | null;
  } | null;
  const snapshots: unknown[] = m?.messageSnapshots ? [...m.messageSnapshots.values()] : (m?.message_snapshots ?? []).map((s) => s.message);
  return [message, ...snapshots]
    .flatMap(attachmentsOf)
    .map(chatFileOf)
    .filter((f): f is ChatFile => f !== undefined);
}
