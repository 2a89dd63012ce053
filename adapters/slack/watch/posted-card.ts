/**
 * A review card's flag, carried on the card as Slack message metadata, and the search for a card
 * already out.
 *
 * Slack's `chat.postMessage` takes no idempotency key, so a process killed after posting a card and
 * before recording it leaves the flag without one, and the next process would show the card twice
 * (watcher.ts posts a `recovered` flag's card again). Each card carries its flag as metadata, and a
 * recovered card is first looked for in the review channel's history since the flagged message:
 * found, its `ts` is recorded and nothing is posted.
 */
import type { webApi } from '@slack/bolt';

type WebClient = webApi.WebClient;

/** The card's metadata `event_type` (Slack: a snake_case name of the app's choosing). */
export const CARD_EVENT_TYPE = 'textdetect_review_card';

/** Pages of the history read for a recovered card: a bound on one rare lookup, not a full scan. */
const MAX_PAGES = 3;
const PAGE = 200;

export function cardMetadata(flagId: string): { event_type: string; event_payload: { flag_id: string } } {
  return { event_type: CARD_EVENT_TYPE, event_payload: { flag_id: flagId } };
}

/**
 * The `ts` of the card for `flagId` in `channel` posted since `sinceMs` (the flagged message's
 * time: its card came after it), or undefined when none is found in the pages read. Throws what
 * Slack answers (a missing scope, a rate limit): the caller then posts, since a card shown twice
 * beats a flag nobody sees.
 */
export async function findPostedCard(client: WebClient, channel: string, flagId: string, sinceMs: number): Promise<string | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await client.conversations.history({
      channel,
      oldest: (sinceMs / 1000).toFixed(6),
      include_all_metadata: true,
      limit: PAGE,
      ...(cursor ? { cursor } : {}),
    });
    for (const message of res.messages ?? []) {
      const metadata = message.metadata;
      // The SDK types the payload as `{}`: it is whatever the poster put there.
      const payload = metadata?.event_payload as { flag_id?: unknown } | undefined;
      if (metadata?.event_type === CARD_EVENT_TYPE && payload?.flag_id === flagId && message.ts) return message.ts;
    }
    cursor = res.response_metadata?.next_cursor || undefined;
    // A short page with more behind it is Slack's limit for apps outside its Marketplace (15
    // messages a page, a call a minute): the next page would wait a minute, so the card is posted.
    if (!cursor || (res.messages?.length ?? 0) < PAGE) return undefined;
  }
  return undefined;
}
