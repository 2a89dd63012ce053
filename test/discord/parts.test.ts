/** The bot's pure parts: message text extraction, the re-check memory, the embed's limits, settings. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../adapters/chat/store/index.ts';
import { parseRecheckCustomId, recheckCustomId } from '../../adapters/discord/commands.ts';
import { readBotSettings } from '../../adapters/discord/config.ts';
import { textOfMessage } from '../../adapters/discord/message-text.ts';
import { RecheckStore, type RememberedCheck } from '../../adapters/discord/recheck-store.ts';
import { resultEmbed } from '../../adapters/discord/reply.ts';
import { EmptyTextError } from '../../adapters/chat/errors.ts';
import type { DetectResponse } from '../../src/client/types.ts';

describe('textOfMessage', () => {
  it('joins content and embed descriptions, skipping blank ones', () => {
    expect(
      textOfMessage({
        id: '1',
        content: 'First part.',
        embeds: [{ description: 'Second part.' }, { description: null }, { description: '  ' }],
      }),
    ).toBe('First part.\n\nSecond part.');
  });

  it('reads a forwarded message from its snapshot (API shape)', () => {
    expect(
      textOfMessage({ id: '1', content: '', message_snapshots: [{ message: { id: '2', content: 'Forwarded words.', embeds: [] } }] }),
    ).toBe('Forwarded words.');
  });

  it('says why there is nothing to check', () => {
    const reason = (m: Parameters<typeof textOfMessage>[0]): string => {
      try {
        textOfMessage(m);
      } catch (err) {
        expect(err).toBeInstanceOf(EmptyTextError);
        return (err as Error).message;
      }
      throw new Error('expected EmptyTextError');
    };
    expect(reason({ id: '1', content: '', sticker_items: [{}] })).toMatch(/^That message has only attachments/);
    expect(reason({ id: '1', content: '', attachments: { size: 2 } })).toMatch(/^That message has only attachments/);
    expect(reason({ id: '1', content: '', embeds: [{ description: null }] })).toBe(
      'That message has only embeds without any description text, so there is nothing to check.',
    );
    expect(reason({ id: '1', content: null })).toBe('That message has no text to check.');
  });
});

describe('RecheckStore', () => {
  const entry: RememberedCheck = { text: 't', language: undefined, segments: false, source: { kind: 'text' }, ownerId: 'u' };

  it('forgets after the TTL, and a recall renews the lifetime (real SQLite, injected clock)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'discord-recheck-'));
    let now = 0;
    const state = new SqliteStore(dir, { now: () => now });
    try {
      const store = new RecheckStore(state, { ttlMs: 1000 });
      const key = await store.remember(entry);
      expect(key).toMatch(/^[\w-]{22}$/);
      now = 900;
      expect(await store.recall(key)).toEqual(entry);
      now = 1800; // 900 ms after the renewal
      expect(await store.recall(key)).toEqual(entry);
      now = 2900;
      expect(await store.recall(key)).toBeUndefined();
      expect(await store.recall('not-a-key')).toBeUndefined();
    } finally {
      await state.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('re-check button ids', () => {
  it('round-trip and stay within Discord’s 100 characters', () => {
    const id = recheckCustomId('financial', 'AbC-_0123456789abcdefg');
    expect(id.length).toBeLessThanOrEqual(100);
    expect(parseRecheckCustomId(id)).toEqual({ mode: 'financial', key: 'AbC-_0123456789abcdefg' });
    expect(parseRecheckCustomId('recheck:poetry:abc')).toBeUndefined();
    expect(parseRecheckCustomId('other:general:abc')).toBeUndefined();
    expect(parseRecheckCustomId('recheck:general:abc:extra')).toBeUndefined();
  });
});

describe('resultEmbed', () => {
  const base: DetectResponse = {
    ai_probability: 0.91,
    mode: 'legal',
    language: 'tr',
    segments: [],
    request_id: 'req_01TEST',
    model: 'td1-test',
    verdict: 'likely_ai',
    confidence: 'high',
    warnings: [],
    generated_spans: [],
    generated_share: null,
    composition: null,
    origin: 'ai_written',
    polished_probability: null,
  };

  it('keeps the sentence field within Discord’s 1,024 characters, even for very long sentences', () => {
    const long = 'word '.repeat(400);
    const result: DetectResponse = {
      ...base,
      segments: [0, 1, 2, 3].map((i) => ({ start: i * 2000, end: i * 2000 + 2000, text: `${i} ${long}`, ai_probability: 0.5 + i / 10 })),
    };
    const embed = resultEmbed(result, { languageGiven: false, segments: true, source: { kind: 'text' } });
    const value = embed.fields?.find((f) => f.name === 'Most AI-like sentences')?.value ?? '';
    expect(value.length).toBeLessThanOrEqual(1024);
    expect(value.split('\n')).toHaveLength(3);
    expect(embed.color).toBe(0xd93f0b);
    expect(embed.fields?.find((f) => f.name === 'Language')?.value).toBe('Turkish (detected)');
  });

  it('shows quoted markup as typed, one line per sentence', () => {
    const result: DetectResponse = {
      ...base,
      segments: [
        { start: 0, end: 20, text: 'A **bold**\nclaim.', ai_probability: 0.9 },
        { start: 21, end: 30, text: 'Plain one.', ai_probability: 0.2 },
      ],
    };
    const embed = resultEmbed(result, { languageGiven: true, segments: true, source: { kind: 'text' } });
    expect(embed.fields?.find((f) => f.name === 'Most AI-like sentences')?.value).toBe(
      '**90%** “A \\*\\*bold\\*\\* claim.”\n**20%** “Plain one.”',
    );
    expect(embed.fields?.find((f) => f.name === 'Confidence')?.value).toBe('High');
  });

  it('explains a missing breakdown and warns on short texts', () => {
    const embed = resultEmbed(
      { ...base, confidence: 'low', warnings: ['short_text'], segments: [{ start: 0, end: 5, text: 'Kısa.', ai_probability: 0.9 }] },
      { languageGiven: true, segments: true, source: { kind: 'text' } },
    );
    expect(embed.fields?.find((f) => f.name === 'Most AI-like sentences')?.value).toBe(
      'The text is a single sentence, so there is no per-sentence breakdown.',
    );
    expect(embed.description).toContain('⚠️ The text is short');
  });
});

describe('readBotSettings', () => {
  it('has working defaults and rejects mistakes with the variable named', () => {
    expect(readBotSettings({})).toMatchObject({
      apiUrl: 'https://discord.com/api',
      ephemeral: true,
      messageMode: 'general',
      modLogChannelId: undefined,
    });
    expect(() => readBotSettings({ DISCORD_EPHEMERAL: 'maybe' })).toThrow('DISCORD_EPHEMERAL="maybe" is not a yes/no value');
    expect(() => readBotSettings({ DISCORD_MODLOG_CHANNEL_ID: '#mod-log' })).toThrow(
      /^DISCORD_MODLOG_CHANNEL_ID="#mod-log" is not a Discord id/,
    );
    expect(() => readBotSettings({ DISCORD_MESSAGE_MODE: 'poetry' })).toThrow(/DISCORD_MESSAGE_MODE="poetry" is not a mode/);
    expect(readBotSettings({ DISCORD_API_URL: 'http://127.0.0.1:9/api/', DISCORD_RECHECK_TTL_MINUTES: '5' })).toMatchObject({
      apiUrl: 'http://127.0.0.1:9/api',
      recheckTtlMs: 300_000,
    });
  });

  it('keeps a check within the 15 minutes Discord accepts an answer', () => {
    // 30 s of Discord's 15 minutes are kept for the final edit.
    expect(readBotSettings({})).toMatchObject({ checkDeadlineMs: 60_000, answerWithinMs: 870_000 });
    expect(readBotSettings({ DISCORD_CHECK_DEADLINE_SECONDS: '300' }).checkDeadlineMs).toBe(300_000);
    expect(() => readBotSettings({ DISCORD_CHECK_DEADLINE_SECONDS: '900' })).toThrow(
      'DISCORD_CHECK_DEADLINE_SECONDS="900" is too long: Discord accepts an answer for 15 minutes, so at most 810 s.',
    );
  });
});
