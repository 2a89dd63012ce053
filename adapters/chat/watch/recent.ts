/**
 * Each member's recent messages per watched channel, in memory only, for the author-level judgment:
 * the texts are never written to the store. Bounded per member (count and age) and in total; a
 * restart empties it, and a member's window fills again as they post.
 */

export interface RecentMessage {
  messageId: string;
  threadId?: string | undefined;
  postedAt: number;
  text: string;
}

export function authorKey(scope: string, channelId: string, authorId: string): string {
  return `${scope}|${channelId}|${authorId}`;
}

export class RecentMessages {
  readonly #maxPerAuthor: number;
  readonly #windowMs: number;
  readonly #maxTotal: number;
  /** In order of last change, so the least active members are forgotten first. */
  readonly #byAuthor = new Map<string, RecentMessage[]>();
  #total = 0;

  constructor(options: { maxPerAuthor: number; windowMs: number; maxTotal?: number }) {
    this.#maxPerAuthor = options.maxPerAuthor;
    this.#windowMs = options.windowMs;
    this.#maxTotal = options.maxTotal ?? 100_000;
  }

  /** Messages held, over every member. */
  get size(): number {
    return this.#total;
  }

  /** Adds a message, or replaces its text when it was edited. */
  add(key: string, message: RecentMessage, now = Date.now()): void {
    const list = (this.#byAuthor.get(key) ?? []).filter((m) => m.messageId !== message.messageId);
    list.push(message);
    list.sort((a, b) => a.postedAt - b.postedAt);
    const kept = list.filter((m) => m.postedAt >= now - this.#windowMs).slice(-this.#maxPerAuthor);
    this.#replace(key, kept);
    while (this.#total > this.#maxTotal) {
      const oldest = this.#byAuthor.keys().next().value;
      if (oldest === undefined) break;
      this.#replace(oldest, []);
    }
  }

  remove(key: string, messageId: string): void {
    const list = this.#byAuthor.get(key);
    if (list)
      this.#replace(
        key,
        list.filter((m) => m.messageId !== messageId),
        false,
      );
  }

  /** Removes a message wherever it is (a deletion names the message, not its author). */
  removeMessage(scope: string, channelId: string, messageId: string): void {
    const prefix = `${scope}|${channelId}|`;
    for (const [key, list] of this.#byAuthor) {
      if (key.startsWith(prefix) && list.some((m) => m.messageId === messageId)) this.remove(key, messageId);
    }
  }

  has(key: string, messageId: string): boolean {
    return this.#byAuthor.get(key)?.some((m) => m.messageId === messageId) ?? false;
  }

  /** The member's messages up to `upTo` (inclusive) within the window, oldest first. */
  window(key: string, upTo: number): RecentMessage[] {
    return (this.#byAuthor.get(key) ?? [])
      .filter((m) => m.postedAt <= upTo && m.postedAt >= upTo - this.#windowMs)
      .slice(-this.#maxPerAuthor);
  }

  deleteScope(scope: string): void {
    for (const key of [...this.#byAuthor.keys()]) if (key.startsWith(`${scope}|`)) this.#replace(key, []);
  }

  #replace(key: string, list: RecentMessage[], touch = true): void {
    this.#total -= this.#byAuthor.get(key)?.length ?? 0;
    if (touch || list.length === 0) this.#byAuthor.delete(key);
    if (list.length > 0) {
      this.#byAuthor.set(key, list);
      this.#total += list.length;
    }
  }
}
