/**
 * The search for a review card already out (adapters/slack/watch/posted-card.ts), with the Web API
 * client against the fake Slack on loopback: the card is found by its metadata across pages, never
 * by a message without it, and a page cut short by Slack's limit for apps outside its Marketplace
 * ends the search instead of waiting a minute for the next.
 */
import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardMetadata, findPostedCard } from '../../adapters/slack/watch/posted-card.ts';
import { FakeSlackHistory } from '../../demo/slack/fake-history.ts';
import { FakeSlack } from '../../demo/slack/fake-slack.ts';

const TOKEN = 'xoxb-posted-card-test';
const history = new FakeSlackHistory({ teamId: 'T0TEST' });
history.channel({ id: 'CMODLOG' });
history.channel({ id: 'CAUDIT' });
let slack: FakeSlack;
let client: webApi.WebClient;

beforeAll(async () => {
  slack = new FakeSlack({ botToken: TOKEN, history, methods: history.methods });
  await slack.start();
  client = new webApi.WebClient(TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
});
afterAll(async () => {
  await slack?.stop();
});

async function post(channel: string, text: string, flagId?: string): Promise<string> {
  const res = await client.chat.postMessage({ channel, text, ...(flagId ? { metadata: cardMetadata(flagId) } : {}) });
  return res.ts!;
}

describe('findPostedCard', () => {
  it('finds the card by its flag across pages, and only since the flagged message', async () => {
    const since = Date.now();
    const card = await post('CMODLOG', 'Flag for review', 'flag-a');
    // Enough after it that the card is on the second page of 200.
    for (let i = 0; i < 250; i++) await post('CMODLOG', `later ${i}`, i % 50 === 0 ? `other-${i}` : undefined);
    const before = slack.callsOf('conversations.history').length;
    expect(await findPostedCard(client, 'CMODLOG', 'flag-a', since)).toBe(card);
    expect(slack.callsOf('conversations.history')).toHaveLength(before + 2);
    expect(slack.callsOf('conversations.history').at(-1)!.args).toMatchObject({ include_all_metadata: 'true', limit: '200' });
    expect(await findPostedCard(client, 'CMODLOG', 'flag-b', since)).toBeUndefined();
    // A card from before the flagged message is not its card.
    expect(await findPostedCard(client, 'CMODLOG', 'flag-a', Date.now() + 1_000)).toBeUndefined();
  });

  it('stops at a page cut short by Slack’s limit rather than wait a minute for the next', async () => {
    // Slack's cap for apps outside its Marketplace.
    history.pageCap = 15;
    try {
      const since = Date.now();
      const card = await post('CAUDIT', 'Flag for review', 'flag-c');
      for (let i = 0; i < 20; i++) await post('CAUDIT', `later ${i}`);
      const before = slack.callsOf('conversations.history').length;
      expect(await findPostedCard(client, 'CAUDIT', 'flag-c', since)).toBeUndefined();
      expect(slack.callsOf('conversations.history')).toHaveLength(before + 1);
      // Within the newest 15 it is found.
      const recent = await post('CAUDIT', 'Flag for review', 'flag-d');
      expect(await findPostedCard(client, 'CAUDIT', 'flag-d', since)).toBe(recent);
      expect(card).not.toBe(recent);
    } finally {
      history.pageCap = undefined;
    }
  });
});
