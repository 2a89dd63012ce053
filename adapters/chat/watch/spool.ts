/**
 * Watched messages the database could not queue (PostgreSQL restarting, a full disk), kept on disk
 * under `DATA_DIR` until it can: a stop or a crash during a database outage then loses none of
 * them. One JSON line per message with its ids only, never its text (the platform is asked for it
 * again by id, as for any queued message after a restart). The watcher replays the spool into the
 * queue when the database answers again and at the next start.
 *
 * It also keeps the review cards the platform accepted while the database could not record them
 * (flag id, card id and channel): recorded later, so that the next process does not post them again.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { itemKey, type PendingItem } from './types.ts';

/** The spool's file name under `DATA_DIR`; one per process (each bot process has its own `DATA_DIR`). */
export const WATCH_SPOOL_FILE = 'textdetect-watch-spool.jsonl';

function isPendingItem(value: unknown): value is PendingItem {
  const v = value as Partial<PendingItem> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.scope === 'string' &&
    typeof v.channelId === 'string' &&
    typeof v.messageId === 'string' &&
    typeof v.authorId === 'string' &&
    typeof v.postedAt === 'number' &&
    typeof v.enqueuedAt === 'number' &&
    (v.threadId === undefined || typeof v.threadId === 'string')
  );
}

/** A card the platform accepted and the store has not recorded yet. */
export interface PostedCardMark {
  scope: string;
  flagId: string;
  cardId: string;
  cardChannelId: string;
}

function isPostedCardMark(value: unknown): value is PostedCardMark {
  const v = value as Partial<PostedCardMark> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.scope === 'string' &&
    typeof v.flagId === 'string' &&
    typeof v.cardId === 'string' &&
    typeof v.cardChannelId === 'string'
  );
}

export class WatchSpool {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, WATCH_SPOOL_FILE);
  }

  /**
   * Appends a message, synchronously: once `add` returns, the line is in the file (the kernel's
   * cache, which a killed process does not take with it), so the message counts as kept.
   */
  add(item: PendingItem): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const { scope, channelId, messageId, threadId, authorId, postedAt, enqueuedAt } = item;
    appendFileSync(this.path, `${JSON.stringify({ scope, channelId, messageId, threadId, authorId, postedAt, enqueuedAt })}\n`, {
      mode: 0o600,
    });
  }

  /** Appends a posted card's ids, synchronously as `add`. */
  addCard(mark: PostedCardMark): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const { scope, flagId, cardId, cardChannelId } = mark;
    appendFileSync(this.path, `${JSON.stringify({ postedCard: { scope, flagId, cardId, cardChannelId } })}\n`, { mode: 0o600 });
  }

  /** What the spool holds, oldest first, each message and card once; a line cut short by a crash is skipped. */
  read(): { items: PendingItem[]; cards: PostedCardMark[] } {
    let raw: string;
    try {
      raw = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { items: [], cards: [] };
      throw err;
    }
    const seen = new Set<string>();
    const items: PendingItem[] = [];
    const cards: PostedCardMark[] = [];
    for (const line of raw.split('\n')) {
      if (!line.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      const card = (value as { postedCard?: unknown } | null)?.postedCard;
      if (isPostedCardMark(card)) {
        if (!seen.has(`card|${card.flagId}`)) cards.push(card);
        seen.add(`card|${card.flagId}`);
        continue;
      }
      if (!isPendingItem(value) || seen.has(itemKey(value))) continue;
      seen.add(itemKey(value));
      items.push(value);
    }
    return { items, cards };
  }

  /** Leaves exactly `items` in the spool (written aside and renamed, so a crash leaves the old or the new list); none removes the file. */
  replace(items: PendingItem[], cards: PostedCardMark[] = []): void {
    if (items.length === 0 && cards.length === 0) {
      rmSync(this.path, { force: true });
      return;
    }
    const next = `${this.path}.next`;
    const lines = [...items.map((item) => JSON.stringify(item)), ...cards.map((postedCard) => JSON.stringify({ postedCard }))];
    writeFileSync(next, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
    renameSync(next, this.path);
  }
}
