/**
 * Review cards follow the answer's headline (issue 31, item 2): a member whose messages read as
 * their own writing polished by an AI gets a card that says so, on both bots, in the same words;
 * an AI-written judgment keeps the plain AI title.
 */
import { describe, expect, it } from 'vitest';
import { cardReading, cardTitle, READING_FIELD } from '../../adapters/chat/watch/card-words.ts';
import type { Judgment } from '../../adapters/chat/watch/types.ts';
import type { ReviewCard } from '../../adapters/chat/watch/watcher.ts';
import { cardEmbed } from '../../adapters/discord/watch/card.ts';
import { buildCard } from '../../adapters/slack/watch/card.ts';
import type { Origin } from '../../src/contract.ts';
import { ORIGIN_WORDS } from '../../src/words.ts';

function card(origin: Origin, basis: Judgment['basis'], generatedShare: number | null = null): ReviewCard {
  return {
    flagId: 'F1',
    scope: 'discord:1',
    channelId: '2',
    messageId: '3',
    authorId: '4',
    postedAt: Date.UTC(2026, 10, 1),
    preset: 'standard',
    judgment: {
      basis,
      probability: 0.97,
      verdict: origin === 'ai_polished' || origin === 'ai_written' ? 'likely_ai' : 'mixed',
      origin,
      generatedShare,
      confidence: 'high',
      warnings: [],
      mode: 'general',
      requestId: 'req_1',
      model: 'td1-test',
      messagesUsed: 4,
      wordsUsed: 180,
      highlights: [],
    },
  };
}

describe('review cards follow the headline', () => {
  it('titles a polished member, a polished message and a partly generated message in their own words', () => {
    expect(cardTitle(card('ai_written', 'author').judgment).text).toBe('Flag for review: this member’s recent messages look AI-written');
    expect(cardTitle(card('ai_polished', 'author').judgment).text).toBe(
      'Flag for review: this member’s recent messages read as their own writing, polished by an AI',
    );
    expect(cardTitle(card('ai_polished', 'message').judgment).text).toBe(
      'Flag for review: a message that reads as the author’s own text, polished by an AI',
    );
    expect(cardTitle(card('partly_ai', 'message', 0.42).judgment).text).toBe('Flag for review: a partly AI-written message');
    expect(cardTitle(card('uncertain', 'message').judgment).text).toBe('Flag for review: possible AI-written message');
    for (const origin of ['ai_written', 'ai_polished', 'partly_ai', 'uncertain'] as const)
      expect(cardTitle(card(origin, 'author').judgment).emoji).toBe(ORIGIN_WORDS[origin].emoji);
    expect(cardReading(card('partly_ai', 'message', 0.42).judgment)).toBe('🟠 Partly AI-written: about 42% of the words look generated');
  });

  it('shows the same title and reading on the Discord embed and the Slack blocks', () => {
    for (const [origin, basis] of [
      ['ai_polished', 'author'],
      ['ai_written', 'author'],
      ['partly_ai', 'message'],
    ] as const) {
      const c = card(origin, basis, origin === 'partly_ai' ? 0.42 : null);
      const title = cardTitle(c.judgment);
      const reading = cardReading(c.judgment);
      const embed = cardEmbed(c, '1');
      expect(embed.title).toBe(`${title.emoji} ${title.text}`);
      expect(embed.color).toBe(ORIGIN_WORDS[origin].colour);
      expect(embed.fields?.find((f) => f.name === READING_FIELD)?.value).toBe(reading);
      const slack = JSON.stringify(buildCard(c, { message: undefined, highlights: new Map() }).blocks);
      expect(slack).toContain(`${title.emoji} *${title.text}*`);
      expect(slack).toContain(`*${READING_FIELD}:*\\n${reading}`);
    }
    const polished = buildCard(card('ai_polished', 'author'), { message: undefined, highlights: new Map() });
    expect(polished.text).toContain("Reads as the author's own text, polished by an AI 97%");
  });
});
