/**
 * Slack retry de-duplication: Slack re-sends a request when it did not see an ack in time (marking
 * it `X-Slack-Retry-Num`), and a retry or a duplicate delivery must never run a second detection.
 * Claims live in the bots' state store (adapters/chat/store/): the SQLite file by default, shared by
 * every replica through Redis when `REDIS_URL` is set.
 */

/** The part of the state store the de-duplication uses (`ChatStore` fits it). */
export interface DedupStore {
  /** True the first time `key` is seen within `ttlMs`, false for every repeat. */
  claim(key: string, ttlMs: number): Promise<boolean>;
}

/**
 * The identity of one user action across Slack's retries: `trigger_id` for commands, shortcuts and
 * button clicks (unique per action), `event_id` for events. Undefined when the body has neither.
 */
export function dedupKey(body: Record<string, unknown>): string | undefined {
  const team =
    typeof body.team_id === 'string'
      ? body.team_id
      : body.team && typeof body.team === 'object' && typeof (body.team as { id?: unknown }).id === 'string'
        ? (body.team as { id: string }).id
        : 'unknown';
  if (typeof body.trigger_id === 'string' && body.trigger_id) return `${team}:t:${body.trigger_id}`;
  if (typeof body.event_id === 'string' && body.event_id) return `${team}:e:${body.event_id}`;
  return undefined;
}
