/**
 * What moderators' reviews teach watching (issue 33), on the real watcher and both real databases
 * (SQLite in a temporary folder, PostgreSQL in a throw-away database): a member cleared with "False
 * positive" gets no card on the same evidence within the clearing window, a card on clearly stronger
 * evidence that names the clearings, and cards again after the window; shadow-mode flags follow the
 * same rule. The channel's precision and the stricter-preset suggestion are recomputed here from the
 * stored preset bits; the export holds no text; deleting the scope removes the clearings (on SQLite,
 * from the file's bytes).
 *
 * The detector answers by the message (judge: message): the probability is written in the text
 * ("P93"), the words are the text's own, so "same" and "stronger" evidence are exact.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, SqliteStore, type WatchStore } from '../../adapters/chat/store/index.ts';
import { WATCH_DATABASE_FILE } from '../../adapters/chat/store/sqlite.ts';
import { strongerThan } from '../../adapters/chat/watch/clearings.ts';
import { DEFAULT_WATCH_SETTINGS } from '../../adapters/chat/watch/config.ts';
import type { WatchDetector } from '../../adapters/chat/watch/detector.ts';
import { reviewsJsonl } from '../../adapters/chat/watch/export.ts';
import { MIN_REVIEWS, readPrecision, suggestionToPost, wilson } from '../../adapters/chat/watch/precision.ts';
import { PRESET_BITS } from '../../adapters/chat/watch/presets.ts';
import { DAY_MS, type FlagRecord, type ScoreRecord } from '../../adapters/chat/watch/types.ts';
import type { ReviewCard, Watcher } from '../../adapters/chat/watch/watcher.ts';
import type { DetectResponse } from '../../src/contract.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { testWatcher } from './test-watcher.ts';

let dir: string;
let db: TestDatabase;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'watch-learning-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

/** "P93 word word …": `words` words in all, scored 0.93. */
function text(percent: number, words: number, marker = 'filler'): string {
  return [`P${percent}`, ...Array.from({ length: words - 1 }, (_, i) => (i === 0 ? marker : 'word'))].join(' ');
}

const detector: WatchDetector = {
  async detect(request) {
    const probability = Number(/^P(\d+)/.exec(request.text)?.[1] ?? 0) / 100;
    return {
      ai_probability: probability,
      verdict: probability >= 0.9 ? 'likely_ai' : 'likely_human',
      confidence: 'high',
      warnings: [],
      mode: 'general',
      request_id: `req_${Math.random().toString(36).slice(2)}`,
      model: 'test',
      segments: [],
    } as unknown as DetectResponse;
  },
  detectAuthor: () => Promise.reject(new Error('not used: judge is message')),
  roomForBackground: async () => true,
};

const implementations: [string, (name: string) => WatchStore][] = [
  ['SQLite', (name) => new SqliteStore(join(dir, name))],
  ['PostgreSQL', () => new PostgresStore(db.url)],
];

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Run {
  store: WatchStore;
  watcher: Watcher;
  cards: ReviewCard[];
  /** Posts a message and waits for its score; returns the flag it raised, if any. */
  post(channelId: string, authorId: string, body: string): Promise<FlagRecord | undefined>;
}

let messages = 0;
async function start(store: WatchStore, clearDays = 30): Promise<Run> {
  const cards: ReviewCard[] = [];
  // The flag id each message's score was recorded with (the store lists flags by id only).
  const flagIds = new Map<string, string | undefined>();
  const recording = new Proxy(store, {
    get(target, name) {
      if (name === 'recordScore') {
        return (record: ScoreRecord, expiresAt: number) => {
          flagIds.set(record.messageId, record.flagId);
          return target.recordScore(record, expiresAt);
        };
      }
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const flagOf = async (messageId: string): Promise<FlagRecord | undefined> => {
    const flagId = flagIds.get(messageId);
    return flagId ? store.getFlag(SCOPE, flagId) : undefined;
  };
  const watcher = testWatcher({
    store: recording,
    detector,
    settings: { ...DEFAULT_WATCH_SETTINGS, judge: 'message', cardWindowMs: 1, cardsPerChannelHour: 1000, clearDays },
    idlePollMs: 5,
    platform: {
      reviewChannel: async () => 'MOD',
      async postCard(_channel, card) {
        cards.push(card);
        return `card-${cards.length}`;
      },
    },
  });
  watcher.start();
  return {
    store,
    watcher,
    cards,
    async post(channelId, authorId, body) {
      const scope = SCOPE;
      const messageId = `m${++messages}`;
      const scored = watcher.counters.scored;
      expect(await watcher.offer({ scope, channelId, messageId, authorId, postedAt: Date.now(), text: body })).toBe('queued');
      await waitUntil(() => watcher.counters.scored > scored, 'a score');
      // The card (if any) is posted right after the score is recorded.
      await waitUntil(async () => (await flagOf(messageId))?.card !== 'failed', 'the card');
      return flagOf(messageId);
    },
  };
}

let SCOPE = '';

describe.each(implementations)('%s: reviews teach the watcher', (kind, open) => {
  it('a member marked false positive twice gets no card on the same evidence, one on clearly stronger evidence naming both clearings, and cards again after the window', async () => {
    SCOPE = `discord:${kind}-clear-${Date.now()}`;
    const store = open(`clear-${kind}`);
    const run = await start(store);
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      await store.watchChannel(SCOPE, 'C2', 0); // shadow mode
      const now = Date.now();

      // Two flags of the same member, both cleared by moderators (the second clearly stronger than the first).
      const first = await run.post('C1', 'A1', text(93, 60));
      expect(first?.card).toBe('posted');
      await store.review(SCOPE, first!.flagId, 'false_positive', 'MOD1', now - 2 * DAY_MS, { clearForMs: 30 * DAY_MS });
      const second = await run.post('C1', 'A1', text(95, 90));
      expect(second?.card).toBe('posted');
      expect(run.cards.at(-1)!.clearings?.map((c) => c.reviewerId)).toEqual(['MOD1']);
      await store.review(SCOPE, second!.flagId, 'false_positive', 'MOD2', now - DAY_MS, { clearForMs: 30 * DAY_MS });
      expect((await store.clearingsOf(SCOPE, 'A1', Date.now())).map((c) => [c.reviewerId, c.probability, c.words])).toEqual([
        ['MOD1', 0.93, 60],
        ['MOD2', 0.95, 90],
      ]);

      // The same evidence (and a little more) is held back, in cards-on and shadow-mode channels alike.
      const cardsBefore = run.cards.length;
      expect((await run.post('C1', 'A1', text(95, 90)))?.card).toBe('cleared');
      expect((await run.post('C1', 'A1', text(99, 120)))?.card).toBe('cleared'); // more words, not clearly more
      expect((await run.post('C1', 'A1', text(94, 300)))?.card).toBe('cleared'); // enough words, a lower probability than 0.95
      expect((await run.post('C2', 'A1', text(95, 90)))?.card).toBe('cleared');
      expect(run.cards.length).toBe(cardsBefore);
      // Another member is not affected.
      expect((await run.post('C1', 'A2', text(93, 60)))?.card).toBe('posted');
      expect((await run.post('C2', 'A2', text(93, 60)))?.card).toBe('shadow');

      // Clearly stronger than both clearings: 135 words ≥ 1.5 × 90, 0.97 ≥ 0.95.
      expect(strongerThan({ probability: 0.97, wordsUsed: 135 }, { probability: 0.95, words: 90 })).toBe(true);
      expect(strongerThan({ probability: 0.97, wordsUsed: 134 }, { probability: 0.95, words: 90 })).toBe(false);
      const stronger = await run.post('C1', 'A1', text(97, 135));
      expect(stronger?.card).toBe('posted');
      const card = run.cards.at(-1)!;
      expect(card.flagId).toBe(stronger!.flagId);
      expect(card.clearings?.map((c) => c.reviewerId)).toEqual(['MOD1', 'MOD2']);

      const report = (await store.report(SCOPE, Date.now())).channels;
      expect(report.get('C1')!.week.cards.cleared).toBe(3);
      expect(report.get('C2')!.week.cards.cleared).toBe(1);

      // After the window: a clearing that ran out no longer holds anything back.
      const late = await run.post('C1', 'A3', text(93, 60));
      await store.review(SCOPE, late!.flagId, 'false_positive', 'MOD1', now - 31 * DAY_MS, { clearForMs: 30 * DAY_MS });
      expect(await store.clearingsOf(SCOPE, 'A3', Date.now())).toEqual([]);
      const again = await run.post('C1', 'A3', text(93, 60));
      expect(again?.card).toBe('posted');
      expect(run.cards.at(-1)!.clearings).toBeUndefined();
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });

  it('a clearing that moderators contradicted (as many confirmations of the member in the window) holds nothing back', async () => {
    SCOPE = `discord:${kind}-contested-${Date.now()}`;
    const store = open(`contested-${kind}`);
    const run = await start(store);
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      const first = await run.post('C1', 'A1', text(93, 60));
      await store.review(SCOPE, first!.flagId, 'false_positive', 'MOD1', Date.now(), { clearForMs: 30 * DAY_MS });
      expect((await run.post('C1', 'A1', text(93, 60)))?.card).toBe('cleared');
      const stronger = await run.post('C1', 'A1', text(99, 200));
      expect(stronger?.card).toBe('posted');
      await store.review(SCOPE, stronger!.flagId, 'confirmed', 'MOD2', Date.now(), { clearForMs: 30 * DAY_MS });
      // One clearing, one confirmation: the same evidence as the cleared flag gets a card, naming the clearing.
      expect((await run.post('C1', 'A1', text(93, 60)))?.card).toBe('posted');
      expect(run.cards.at(-1)!.clearings?.map((c) => c.reviewerId)).toEqual(['MOD1']);
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });

  it('keeps a clearing no longer than the scope’s retention, and a shorter retention set later shortens it', async () => {
    SCOPE = `discord:${kind}-retention-${Date.now()}`;
    const store = open(`retention-${kind}`);
    const run = await start(store);
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      const now = Date.now();
      // Kept 7 days: the 30-day clearing ends with them.
      await store.setRetention(SCOPE, 7, 30, now);
      const short = await run.post('C1', 'A1', text(93, 60));
      await store.review(SCOPE, short!.flagId, 'false_positive', 'MOD1', now, { clearForMs: 30 * DAY_MS });
      expect(await store.clearingsOf(SCOPE, 'A1', now + 6 * DAY_MS)).toHaveLength(1);
      expect(await store.clearingsOf(SCOPE, 'A1', now + 8 * DAY_MS)).toEqual([]);
      // Kept 30 days, then 10: the clearing made under 30 ends 10 days after its review.
      await store.setRetention(SCOPE, null, 30, now);
      const long = await run.post('C1', 'A2', text(93, 60));
      await store.review(SCOPE, long!.flagId, 'false_positive', 'MOD1', now, { clearForMs: 30 * DAY_MS });
      expect(await store.clearingsOf(SCOPE, 'A2', now + 20 * DAY_MS)).toHaveLength(1);
      await store.setRetention(SCOPE, 10, 30, now);
      expect(await store.clearingsOf(SCOPE, 'A2', now + 9 * DAY_MS)).toHaveLength(1);
      expect(await store.clearingsOf(SCOPE, 'A2', now + 11 * DAY_MS)).toEqual([]);
      // A longer retention does not lengthen a clearing past its window.
      await store.setRetention(SCOPE, 90, 30, now);
      expect(await store.clearingsOf(SCOPE, 'A2', now + 11 * DAY_MS)).toEqual([]);
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });

  it('with clearings off (0 days) keeps nothing and holds nothing back', async () => {
    SCOPE = `discord:${kind}-off-${Date.now()}`;
    const store = open(`off-${kind}`);
    const run = await start(store, 0);
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      const first = await run.post('C1', 'A1', text(93, 60));
      await store.review(SCOPE, first!.flagId, 'false_positive', 'MOD1', Date.now(), { clearForMs: 0 });
      expect(await store.clearingsOf(SCOPE, 'A1', Date.now())).toEqual([]);
      expect((await run.post('C1', 'A1', text(93, 60)))?.card).toBe('posted');
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });

  it('suggests a stricter preset only over the review minimum, as recomputed from the stored scores; applying it changes the preset', async () => {
    SCOPE = `slack:${kind}-precision-${Date.now()}`;
    const store = open(`precision-${kind}`);
    const run = await start(store, 0);
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      // Standard flags everything ≥ 0.90 here (the detector's likely_ai), strict only ≥ 0.97.
      // Confirmed: mostly very high; false positives: mostly just over the verdict.
      const plan: [number, 'confirmed' | 'false_positive' | 'dismissed'][] = [
        [99, 'confirmed'],
        [98, 'confirmed'],
        [99, 'confirmed'],
        [92, 'confirmed'],
        [91, 'false_positive'],
        [93, 'false_positive'],
        [92, 'false_positive'],
        [98, 'false_positive'],
        [99, 'confirmed'],
        [91, 'dismissed'],
        [92, 'false_positive'],
        [97, 'confirmed'],
      ];
      let reviews = 0;
      for (const [i, [percent, outcome]] of plan.entries()) {
        const flag = await run.post('C1', `M${i}`, text(percent, 60));
        expect(flag?.preset).toBe('standard');
        await store.review(SCOPE, flag!.flagId, outcome, 'MOD', Date.now());
        if (outcome !== 'dismissed') reviews += 1;
        const config = await store.getConfig(SCOPE);
        const suggestion = (await readPrecision(store, SCOPE, config, Date.now()))[0]?.suggestion;
        // Under the minimum, no suggestion whatever the precision.
        if (reviews < MIN_REVIEWS) expect(suggestion).toBeUndefined();
      }
      const config = await store.getConfig(SCOPE);
      const [channel] = await readPrecision(store, SCOPE, config, Date.now());
      const flags = await store.reviewedFlags(SCOPE, 0);
      // Recomputed here from the stored preset bits.
      const judged = flags.filter((f) => f.outcome !== 'dismissed');
      const confirmed = judged.filter((f) => f.outcome === 'confirmed');
      const fps = judged.filter((f) => f.outcome === 'false_positive');
      const strict = (f: FlagRecord) => (f.presets & PRESET_BITS.strict) !== 0;
      expect(judged.length).toBe(11);
      const standard = channel!.byPreset.find((p) => p.preset === 'standard')!;
      expect(standard).toMatchObject({ confirmed: 6, falsePositive: 5, dismissed: 1, reviews: 11 });
      expect(standard.interval).toEqual(wilson(6, 11));
      expect(standard.interval.low).toBeLessThan(6 / 11);
      expect(standard.interval.high).toBeGreaterThan(6 / 11);
      expect(channel!.falsePositiveMembers.map((m) => m.authorId).sort()).toEqual(['M10', 'M4', 'M5', 'M6', 'M7']);
      expect(channel!.suggestion).toMatchObject({
        from: 'standard',
        to: 'strict',
        reviews: 11,
        confirmed: confirmed.length,
        confirmedKept: confirmed.filter(strict).length,
        falsePositives: fps.length,
        falsePositivesDropped: fps.filter((f) => !strict(f)).length,
      });
      expect(channel!.suggestion!.confirmedKept).toBe(5);
      expect(channel!.suggestion!.falsePositivesDropped).toBe(4);

      // Told to the mod-log once; not again for the same preset until ten more reviews.
      expect(await suggestionToPost(store, SCOPE, 'C1', config, Date.now())).toMatchObject({ to: 'strict' });
      expect(await suggestionToPost(store, SCOPE, 'C1', config, Date.now())).toBeUndefined();

      // A bound the measured precision (6 of 11) already meets: nothing to suggest.
      await store.setPrecisionBound(SCOPE, 0.5);
      expect((await readPrecision(store, SCOPE, await store.getConfig(SCOPE), Date.now()))[0]!.suggestion).toBeUndefined();
      await store.setPrecisionBound(SCOPE, null);

      // Applying it is the admin's `preset` (the bot's button does the same); later flags are strict's.
      await store.setPreset(SCOPE, 'strict');
      run.watcher.invalidate(SCOPE);
      expect((await store.getConfig(SCOPE)).preset).toBe('strict');
      expect(await run.post('C1', 'N1', text(92, 60))).toBeUndefined();
      expect((await run.post('C1', 'N2', text(98, 60)))?.preset).toBe('strict');
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });

  it('exports reviewed flags as JSON Lines without any text, and deleting the scope removes the clearings', async () => {
    SCOPE = `discord:${kind}-export-${Date.now()}`;
    const store = open(`export-${kind}`);
    const run = await start(store);
    const marker = `secret${Date.now()}`;
    const moderator = `moderator${Date.now()}`;
    try {
      await store.watchChannel(SCOPE, 'C1', 0);
      await store.setCards(SCOPE, 'C1', true);
      const flag = await run.post('C1', 'A1', text(93, 60, marker));
      await store.review(SCOPE, flag!.flagId, 'false_positive', moderator, Date.now(), { clearForMs: 30 * DAY_MS });
      const jsonl = reviewsJsonl(await store.reviewedFlags(SCOPE, 0));
      const lines = jsonl.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const row = JSON.parse(lines[0]!);
      expect(Object.keys(row).sort()).toEqual(
        [
          'ai_probability',
          'author_id',
          'card',
          'channel_id',
          'confidence',
          'flag_id',
          'flagged_by',
          'message_id',
          'outcome',
          'posted_at',
          'preset',
          'request_id',
          'reviewed_at',
          'reviewer_id',
          'scope',
          'thread_id',
          'verdict',
          'words',
        ].sort(),
      );
      expect(row).toMatchObject({
        outcome: 'false_positive',
        preset: 'standard',
        words: 60,
        ai_probability: 0.93,
        flagged_by: ['standard', 'loose'],
      });
      expect(jsonl).not.toContain(marker);
      expect(jsonl).not.toContain('word word');

      expect(await store.clearingsOf(SCOPE, 'A1', Date.now())).toHaveLength(1);
      const bytes = (path: string) => (existsSync(path) ? readFileSync(path).includes(Buffer.from(moderator)) : false);
      // The moderator's id is in the watch file's bytes (or its WAL's) while the clearing is kept.
      if (store instanceof SqliteStore) expect(bytes(store.watchPath) || bytes(`${store.watchPath}-wal`)).toBe(true);
      await run.watcher.deleteScope(SCOPE);
      expect(await store.clearingsOf(SCOPE, 'A1', Date.now())).toEqual([]);
      expect(await store.reviewedFlags(SCOPE, 0)).toEqual([]);
      if (store instanceof SqliteStore) {
        expect(bytes(store.watchPath)).toBe(false);
        expect(bytes(`${store.watchPath}-wal`)).toBe(false);
        expect(store.watchPath.endsWith(WATCH_DATABASE_FILE)).toBe(true);
      }
    } finally {
      await run.watcher.stop();
      await store.close();
    }
  });
});
