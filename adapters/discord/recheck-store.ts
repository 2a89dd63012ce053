/**
 * The texts behind re-check buttons. A button press carries only its custom id (100 characters at
 * most), and without the privileged Message Content intent the bot cannot fetch the message again,
 * so the text is remembered here, in memory only: never written to disk or to Redis, forgotten after
 * a TTL or on restart (the button then says so).
 */
import { randomBytes } from 'node:crypto';
import type { Language } from '../../src/contract.ts';

/** Where a checked text came from, for the embed and the mod log. */
export type CheckSource =
  | { kind: 'text' }
  | { kind: 'message'; guildId: string | null; channelId: string; messageId: string; authorId: string | undefined; link: string };

export interface RememberedCheck {
  text: string;
  /** The language the moderator asked for; undefined to let the service detect it. */
  language: Language | undefined;
  segments: boolean;
  source: CheckSource;
  /** Only this user may press the buttons: they may see a message others may not check. */
  ownerId: string;
}

export interface RecheckStoreOptions {
  ttlMs: number;
  maxEntries: number;
  /** Injected clock for tests of expiry. */
  now?: () => number;
}

export class RecheckStore {
  readonly #entries = new Map<string, { value: RememberedCheck; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: RecheckStoreOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = Math.max(1, options.maxEntries);
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Remembers a check and returns its key (16 random bytes, base64url: unguessable, 22 characters). */
  remember(value: RememberedCheck): string {
    this.#sweep();
    // A Map iterates in insertion order, so the first key is the oldest entry.
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    const key = randomBytes(16).toString('base64url');
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
    return key;
  }

  /** The remembered check, its lifetime renewed (a moderator comparing modes keeps it alive); undefined once forgotten. */
  recall(key: string): RememberedCheck | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    entry.expiresAt = this.#now() + this.#ttlMs;
    this.#entries.set(key, entry);
    return entry.value;
  }

  clear(): void {
    this.#entries.clear();
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key);
    }
  }
}
