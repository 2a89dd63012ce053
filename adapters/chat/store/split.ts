/**
 * The bots' state as one `ChatStore`, as every call site already uses it, over two stores: what must
 * last (settings, installations) in the durable store, what may be lost (the buttons' records, retry
 * claims) in the short-lived one. With SQLite alone both are the same file and the same object.
 */
import type { ChatStore, DurableStore, ScopeSettings, SettingsPatch, ShortLivedStore } from './types.ts';

/** Called with every scope an uninstall deleted, for data kept outside these two stores (e.g. review records). */
export type ScopeDeletedHook = (scope: string) => Promise<void>;

export class SplitChatStore implements ChatStore {
  readonly durable: DurableStore;
  readonly shortLived: ShortLivedStore;
  readonly #hooks = new Set<ScopeDeletedHook>();
  readonly #beforeReady: (() => Promise<void>) | undefined;
  #ready: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /** `beforeReady` runs once, after the durable store's migrations (the import of older settings). */
  constructor(durable: DurableStore, shortLived: ShortLivedStore, beforeReady?: () => Promise<void>) {
    this.durable = durable;
    this.shortLived = shortLived;
    this.#beforeReady = beforeReady;
  }

  /** Where the short-lived state is: `redis` (shared) or `sqlite` (this machine). */
  get kind(): 'sqlite' | 'redis' {
    return this.shortLived.kind;
  }

  /** Where settings and installations are: `postgres` (shared) or `sqlite` (this machine). */
  get durableKind(): 'sqlite' | 'postgres' {
    return this.durable.kind;
  }

  /** Migrates the durable store; call it at start so a database problem stops the bot with its reason. */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      await this.durable.ready();
      await this.#beforeReady?.();
    })().catch((err: unknown) => {
      this.#ready = undefined;
      throw err;
    });
    return this.#ready;
  }

  saveCheck(id: string, record: unknown, ttlMs: number): Promise<void> {
    return this.shortLived.saveCheck(id, record, ttlMs);
  }

  loadCheck(id: string, ttlMs: number): Promise<unknown> {
    return this.shortLived.loadCheck(id, ttlMs);
  }

  claim(key: string, ttlMs: number): Promise<boolean> {
    return this.shortLived.claim(key, ttlMs);
  }

  getSettings(scope: string): Promise<ScopeSettings> {
    return this.durable.getSettings(scope);
  }

  updateSettings(scope: string, patch: SettingsPatch): Promise<ScopeSettings> {
    return this.durable.updateSettings(scope, patch);
  }

  /**
   * Registers cleanup of data kept elsewhere (another store) for scopes an uninstall deletes; the
   * function returned removes it (an app stopping while the store lives on).
   */
  onScopeDeleted(hook: ScopeDeletedHook): () => void {
    this.#hooks.add(hook);
    return () => void this.#hooks.delete(hook);
  }

  /**
   * Deletes everything kept about `scope` and the scopes linked under it: installation, settings,
   * the check records whose ids start with `checkPrefix(scope)`, and whatever the hooks own.
   * Returns the scopes deleted.
   */
  async deleteScope(scope: string, checkPrefix: (scope: string) => string): Promise<string[]> {
    const scopes = await this.durable.deleteScope(scope);
    for (const s of scopes) {
      await this.shortLived.forgetChecks(checkPrefix(s));
      for (const hook of this.#hooks) await hook(s);
    }
    return scopes;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const both = this.durable === (this.shortLived as unknown) ? [this.durable] : [this.durable, this.shortLived];
      const results = await Promise.allSettled(both.map((store) => store.close()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    })();
    return this.#closing;
  }
}
