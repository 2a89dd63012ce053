/**
 * The texts behind re-check buttons. A button press carries only its custom id (100 characters at
 * most), and without the privileged Message Content intent the bot cannot fetch the message again,
 * so the text is kept in the bots' state store (SQLite, or Redis shared by every instance; see
 * adapters/chat/store/) for as long as the button works and no longer: it survives a restart and
 * reaches whichever instance receives the click, and is never logged.
 */
import { randomBytes } from 'node:crypto';
import type { Language } from '../../src/contract.ts';
import type { ChatStore } from '../chat/store/index.ts';

/** Where a checked text came from, for the embed and the mod log. */
export type CheckSource =
  | { kind: 'text' }
  | {
      kind: 'message';
      guildId: string | null;
      channelId: string;
      messageId: string;
      authorId: string | undefined;
      link: string;
      /** True when the author is a bot: then no member check is offered (absent in records of older builds). */
      authorIsBot?: boolean | undefined;
    };

export interface RememberedCheck {
  text: string;
  /** The language the moderator asked for; undefined to let the service detect it. */
  language: Language | undefined;
  segments: boolean;
  source: CheckSource;
  /** Only this user may press the buttons: they may see a message others may not check. */
  ownerId: string;
}

const ID_PREFIX = 'discord:recheck:';

export class RecheckStore {
  readonly #store: ChatStore;
  readonly #ttlMs: number;

  constructor(store: ChatStore, options: { ttlMs: number }) {
    this.#store = store;
    this.#ttlMs = options.ttlMs;
  }

  /** Remembers a check and returns its key (16 random bytes, base64url: unguessable, 22 characters). */
  async remember(value: RememberedCheck): Promise<string> {
    const key = newRecheckKey();
    await this.#store.saveCheck(ID_PREFIX + key, value, this.#ttlMs);
    return key;
  }

  /** The remembered check, its lifetime renewed (a moderator comparing modes keeps it alive); undefined once forgotten. */
  async recall(key: string): Promise<RememberedCheck | undefined> {
    const value = await this.#store.loadCheck(ID_PREFIX + key, this.#ttlMs);
    return isRememberedCheck(value) ? value : undefined;
  }
}

function isRememberedCheck(value: unknown): value is RememberedCheck {
  const v = value as Partial<RememberedCheck> | undefined;
  return typeof v === 'object' && v !== null && typeof v.text === 'string' && typeof v.ownerId === 'string' && typeof v.source === 'object';
}

/**
 * A key as `remember` makes them (16 random bytes, base64url), for a check that could not be stored
 * (the state store unreachable): its buttons then find nothing and say the check expired.
 */
export function newRecheckKey(): string {
  return randomBytes(16).toString('base64url');
}
