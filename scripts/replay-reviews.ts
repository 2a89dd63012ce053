/**
 * `npm run replay:reviews`: a month of one community replayed through the real watcher, three times:
 * learning off, clearings on, and clearings on with an admin applying the stricter preset the
 * mod-log suggests. Prints cards raised, false-positive cards, confirmed flags and the moderator
 * answers needed (docs/discord.md and docs/slack.md quote it).
 *
 * The community: 2,000 messages from 50 members in two watched channels (cards on) over 30 days,
 * posted in sessions (2 to 8 messages, 1 to 20 minutes apart, in one channel), as people chat.
 * Ten members use an AI assistant for most of what they post (60% of their messages), the other
 * forty now and then (5%); every message's text is a real text of the dev corpus
 * (../shared/data/*-dev.jsonl, general mode, English, 12 to 300 words), read at run time, AI-written
 * ones for AI messages and human-written ones otherwise. A person writes in one register: each
 * human-written text goes to the member whose band of mean word length it falls in (50 bands), so a
 * member's texts resemble each other as a person's do. Judgments are the real engine's, in process
 * (the author-level score of the member's recent messages, as the bots judge by default).
 *
 * Moderators answer every card by the truth (Confirm when one of the messages the card shows is
 * AI-written, False positive when none is) with 10% of answers flipped, on the real store (SQLite in
 * a temporary folder) through the same calls the bots make. The month's clock is simulated: the
 * watcher runs on it (`clock`: recent messages, clearings, card window and hourly cap) and reviews
 * are given the message's time.
 *
 *   npm run replay:reviews
 *   npm run replay:reviews -- --messages 2000 --members 50 --seed 33 --noise 0.1
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { SqliteStore, type WatchStore } from '../adapters/chat/store/index.ts';
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from '../adapters/chat/watch/config.ts';
import type { WatchDetector } from '../adapters/chat/watch/detector.ts';
import { countWords } from '../adapters/chat/message-text.ts';
import { suggestionToPost } from '../adapters/chat/watch/precision.ts';
import { isPreset } from '../adapters/chat/watch/presets.ts';
import { DAY_MS, type Outcome, type Preset } from '../adapters/chat/watch/types.ts';
import { type ReviewCard, Watcher } from '../adapters/chat/watch/watcher.ts';
import { createDetector } from '../src/detector/index.ts';
import type { DetectAuthorResponse } from '../src/contract.ts';
import { scriptArgs } from './lib/options.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = scriptArgs(import.meta.url, {
  options: {
    messages: { type: 'string', default: '2000' },
    members: { type: 'string', default: '50' },
    seed: { type: 'string', default: '33' },
    noise: { type: 'string', default: '0.1' },
    preset: { type: 'string', default: 'loose' },
    data: { type: 'string', default: join(ROOT, '..', 'shared', 'data') },
  },
});
const MESSAGES = Number(args.messages);
const MEMBERS = Number(args.members);
const NOISE = Number(args.noise);
const HEAVY_USERS = Math.round(MEMBERS / 5);
const HEAVY_SHARE = 0.6;
const LIGHT_SHARE = 0.05;
const SCOPE = 'discord:replay';
const CHANNELS = ['general', 'help'];
if (!isPreset(args.preset)) throw new Error(`--preset "${args.preset}" must be strict, standard or loose.`);
const PRESET: Preset = args.preset;

/** Mulberry32: the same community on every run with the same seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Text {
  text: string;
  ai: boolean;
}

function readTexts(folder: string): { human: Text[]; ai: Text[] } {
  const human: Text[] = [];
  const ai: Text[] = [];
  const seen = new Set<string>();
  for (const file of ['corpus-dev.jsonl', 'extra-dev.jsonl', 'v3-dev.jsonl', 'v4-dev.jsonl']) {
    for (const line of readFileSync(join(folder, file), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as { text: string; label: string; mode: string; language: string };
      const words = countWords(row.text);
      if (row.mode !== 'general' || row.language !== 'en' || words < 12 || words > 300 || seen.has(row.text)) continue;
      seen.add(row.text);
      (row.label === 'ai' ? ai : human).push({ text: row.text, ai: row.label === 'ai' });
    }
  }
  return { human, ai };
}

interface Post {
  at: number;
  member: number;
  channel: string;
  text: Text;
  messageId: string;
}

/** The month: who posts what, when. */
function community(texts: { human: Text[]; ai: Text[] }, seed: number, start: number): Post[] {
  const random = rng(seed);
  const meanLength = (t: Text) => t.text.replace(/[^\p{L}\s]/gu, '').length / Math.max(1, countWords(t.text));
  // One register per member: bands of mean word length.
  const bands: Text[][] = Array.from({ length: MEMBERS }, () => []);
  const sorted = [...texts.human].sort((a, b) => meanLength(a) - meanLength(b));
  for (const [i, t] of sorted.entries()) bands[Math.floor((i * MEMBERS) / sorted.length)]!.push(t);
  const aiPool = [...texts.ai].sort(() => random() - 0.5);
  let aiNext = 0;
  const posts: Post[] = [];
  // People chat in sessions: a few messages minutes apart, in one channel, then nothing for a while.
  // Each member posts MESSAGES / MEMBERS messages in sessions of 2 to 8, each session starting at a
  // random time of the month, its messages 1 to 20 minutes apart.
  const perMember = Math.floor(MESSAGES / MEMBERS);
  for (let member = 0; member < MEMBERS; member++) {
    // Members from the register bands are shuffled, so the heavy AI users are not one register.
    const band = bands[(member * 7 + 3) % MEMBERS]!;
    const share = member < HEAVY_USERS ? HEAVY_SHARE : LIGHT_SHARE;
    let left = perMember + (member < MESSAGES - perMember * MEMBERS ? 1 : 0);
    while (left > 0) {
      const size = Math.min(left, 2 + Math.floor(random() * 7));
      let at = start + Math.floor(random() * (30 * DAY_MS - 3 * 3_600_000));
      const channel = CHANNELS[Math.floor(random() * CHANNELS.length)]!;
      for (let k = 0; k < size; k++) {
        const ai = random() < share;
        const text = ai ? aiPool[aiNext++ % aiPool.length]! : band[Math.floor(random() * band.length)]!;
        posts.push({ at, member, channel, text, messageId: `m${posts.length}` });
        at += 60_000 + Math.floor(random() * 19 * 60_000);
      }
      left -= size;
    }
  }
  return posts.sort((a, b) => a.at - b.at);
}

/** The real engine in process, as the service answers POST /v1/detect/author; the same windows are scored once for all runs. */
async function engineDetector(): Promise<WatchDetector & { calls: number }> {
  const engine = await createDetector();
  const memo = new Map<string, DetectAuthorResponse>();
  const detector = {
    calls: 0,
    async detect(): Promise<never> {
      throw new Error('not used: judged by author');
    },
    async detectAuthor(request: { messages: string[]; mode?: string }) {
      const key = request.messages.join('\u0000');
      let result = memo.get(key);
      if (!result) {
        detector.calls += 1;
        const r = engine.detectAuthor(request.messages, { mode: 'general' });
        result = { ...r, warnings: [...r.warnings], request_id: `replay_${detector.calls}` } as DetectAuthorResponse;
        memo.set(key, result);
      }
      return result;
    },
    roomForBackground: async () => true,
  };
  return detector as unknown as WatchDetector & { calls: number };
}

interface Outcome3 {
  cards: number;
  truePositiveCards: number;
  falsePositiveCards: number;
  confirmed: number;
  /** Cards moderators answered False positive (the truth's false positives and the flipped answers). */
  markedFalsePositive: number;
  answers: number;
  held: number;
  presetChanges: string[];
  /** Suggestions the mod-log was told. */
  suggestions: number;
  /** Members behind the false-positive cards. */
  falsePositiveMembers: Set<string>;
  /** Every card's stored scores and its truth, for the bound below. */
  scored: { probability: number; words: number; ai: boolean }[];
}

async function replay(
  posts: Post[],
  detector: WatchDetector,
  options: { clearDays: number; applySuggestions: boolean; seed: number },
): Promise<Outcome3> {
  const folder = await mkdtemp(join(tmpdir(), 'replay-reviews-'));
  const store = new SqliteStore(folder);
  let simNow = 0;
  // The month's clock is the watcher's own `clock` option (recent messages, clearings, the card
  // window and cap); the store's background sweep is left out, its retention being a year here.
  const clocked = new Proxy(store as WatchStore, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      if (name === 'sweep') return async () => undefined;
      return value.bind(target);
    },
  });
  const settings: WatchSettings = {
    ...DEFAULT_WATCH_SETTINGS,
    clearDays: options.clearDays,
    retentionDays: 365,
  };
  const truth = new Map(posts.map((p) => [p.messageId, p.text.ai]));
  const cards: ReviewCard[] = [];
  const watcher = new Watcher({
    store: clocked,
    detector,
    settings,
    logger: pino({ level: 'silent' }),
    configTtlMs: 0,
    idlePollMs: 2,
    clock: () => simNow,
    platform: {
      fetchMessage: async () => undefined,
      reviewChannel: async () => 'modlog',
      async postCard(_channel, card) {
        cards.push(card);
        return `card${cards.length}`;
      },
      mode: async () => 'general',
    },
  });
  await store.setPreset(SCOPE, PRESET);
  for (const channel of CHANNELS) {
    await store.watchChannel(SCOPE, channel, 0);
    await store.setCards(SCOPE, channel, true);
  }
  const random = rng(options.seed + 1);
  const result: Outcome3 = {
    cards: 0,
    truePositiveCards: 0,
    falsePositiveCards: 0,
    confirmed: 0,
    markedFalsePositive: 0,
    answers: 0,
    held: 0,
    presetChanges: [],
    suggestions: 0,
    falsePositiveMembers: new Set(),
    scored: [],
  };
  watcher.start();
  try {
    for (const post of posts) {
      simNow = post.at;
      const before = watcher.counters.scored + watcher.counters.gone + watcher.counters.refused;
      const cardsBefore = cards.length;
      const offered = await watcher.offer({
        scope: SCOPE,
        channelId: post.channel,
        messageId: post.messageId,
        authorId: `member${post.member}`,
        postedAt: post.at,
        text: post.text.text,
      });
      if (offered !== 'queued') continue;
      while (watcher.counters.scored + watcher.counters.gone + watcher.counters.refused === before)
        await new Promise((r) => setTimeout(r, 1));
      // The card, if any, is posted right after the score is recorded.
      await new Promise((r) => setTimeout(r, 2));
      for (const card of cards.slice(cardsBefore)) {
        // An author-level card shows the member's most AI-like recent messages, linked: it is right
        // when one of them is AI-written, whichever message's arrival raised it.
        const shown = card.judgment.highlights.map((h) => h.messageId ?? card.messageId);
        const ai = (shown.length > 0 ? shown : [card.messageId]).some((id) => truth.get(id) === true);
        const flipped = random() < NOISE;
        const outcome: Outcome = ai !== flipped ? 'confirmed' : 'false_positive';
        result.cards += 1;
        result.scored.push({ probability: card.judgment.probability, words: card.judgment.wordsUsed, ai });
        if (ai) result.truePositiveCards += 1;
        else {
          result.falsePositiveCards += 1;
          result.falsePositiveMembers.add(card.authorId);
        }
        if (outcome === 'confirmed') result.confirmed += 1;
        else result.markedFalsePositive += 1;
        result.answers += 1;
        await store.review(SCOPE, card.flagId, outcome, 'moderator', simNow, { clearForMs: options.clearDays * DAY_MS });
        if (options.applySuggestions) {
          const suggestion = await suggestionToPost(store, SCOPE, card.channelId, await store.getConfig(SCOPE), simNow);
          // The admin presses Apply under the mod-log note when the trade it shows is a good one: at
          // least 90% of the confirmed flags kept (the replay's own target) and half the false positives dropped.
          const good =
            suggestion !== undefined &&
            suggestion.confirmedKept >= 0.9 * suggestion.confirmed &&
            suggestion.falsePositivesDropped >= 0.5 * suggestion.falsePositives;
          if (suggestion) result.suggestions += 1;
          if (suggestion && good) {
            await store.setPreset(SCOPE, suggestion.to);
            watcher.invalidate(SCOPE);
            result.presetChanges.push(`${suggestion.from}→${suggestion.to} on day ${Math.floor((simNow - posts[0]!.at) / DAY_MS) + 1}`);
          }
        }
      }
    }
    const report = await store.report(SCOPE, posts.at(-1)!.at);
    for (const counts of report.channels.values()) result.held += counts.month.cards.cleared;
  } finally {
    await watcher.stop();
    await store.close();
    await rm(folder, { recursive: true, force: true });
  }
  return result;
}

const seed = Number(args.seed);
const texts = readTexts(resolve(args.data));
const start = Date.now() - 31 * DAY_MS;
const posts = community(texts, seed, start);
const aiMessages = posts.filter((p) => p.text.ai).length;
console.log(
  `Community: ${posts.length} messages from ${MEMBERS} members in ${CHANNELS.length} channels over 30 days; ${aiMessages} AI-written (${((100 * aiMessages) / posts.length).toFixed(1)}%): ${HEAVY_USERS} members ${HEAVY_SHARE * 100}% of their messages, the others ${LIGHT_SHARE * 100}%. Texts: ${texts.human.length} human-written and ${texts.ai.length} AI-written dev texts. Preset at the start: ${PRESET}. Moderators answer every card by the truth, ${NOISE * 100}% of answers flipped.`,
);
const detector = await engineDetector();
const runs: [string, { clearDays: number; applySuggestions: boolean }][] = [
  ['learning off', { clearDays: 0, applySuggestions: false }],
  ['clearings (30 days)', { clearDays: 30, applySuggestions: false }],
  ['clearings + good suggestions applied', { clearDays: 30, applySuggestions: true }],
];
const results: [string, Outcome3][] = [];
for (const [name, options] of runs) {
  const started = Date.now();
  const r = await replay(posts, detector, { ...options, seed });
  results.push([name, r]);
  console.log(
    `${name.padEnd(38)} cards ${String(r.cards).padStart(4)} · false-positive cards ${String(r.falsePositiveCards).padStart(3)} · AI-written cards ${String(r.truePositiveCards).padStart(3)} · confirmed ${String(r.confirmed).padStart(3)} · marked false positive ${String(r.markedFalsePositive).padStart(3)} · moderator answers ${String(r.answers).padStart(4)} · held back by clearings ${String(r.held).padStart(3)}${options.applySuggestions ? ` · suggestions ${r.suggestions}, applied: ${r.presetChanges.join(', ') || 'none'}` : ''} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}
const off = results[0]![1];
console.log(
  `Learning off: ${off.falsePositiveCards} false-positive cards from ${off.falsePositiveMembers.size} members; a clearing acts on a member's later cards only, so each member's first false-positive card stays.`,
);
// What any learning could do with these cards. A clearing acts on a member's later cards only, so
// at best each member's first false-positive card stays. A community-wide bar on the stored scores
// (a probability and a number of words under which no card is raised), here chosen knowing the
// truth, which no moderator's answers can do better than: the most false-positive cards it drops
// while keeping 90% of the AI-written cards.
{
  const byClearing = off.falsePositiveCards === 0 ? 0 : (off.falsePositiveCards - off.falsePositiveMembers.size) / off.falsePositiveCards;
  const ps = [...new Set(off.scored.map((c) => c.probability))].sort((a, b) => a - b);
  const ws = [...new Set(off.scored.map((c) => c.words))].sort((a, b) => a - b);
  const ai = off.scored.filter((c) => c.ai).length;
  let best = { dropped: 0, p: 0, w: 0 };
  for (const p of [0, ...ps])
    for (const w of [0, ...ws]) {
      const kept = off.scored.filter((c) => c.probability >= p && c.words >= w);
      if (kept.filter((c) => c.ai).length < 0.9 * ai) continue;
      const dropped = off.falsePositiveCards - kept.filter((c) => !c.ai).length;
      if (dropped > best.dropped) best = { dropped, p, w };
    }
  console.log(
    `Bound: clearings can drop at most ${(100 * byClearing).toFixed(0)}% of these false-positive cards (each member's first stays); the best community-wide bar on the stored scores, chosen knowing the truth, drops ${off.falsePositiveCards === 0 ? 0 : ((100 * best.dropped) / off.falsePositiveCards).toFixed(0)}% (${best.dropped} of ${off.falsePositiveCards}: probability ≥ ${best.p.toFixed(3)}, ≥ ${best.w} words) while keeping 90% of the AI-written cards.`,
  );
}
for (const [name, r] of results.slice(1)) {
  const fpCut = off.falsePositiveCards === 0 ? 0 : 1 - r.falsePositiveCards / off.falsePositiveCards;
  const kept = off.truePositiveCards === 0 ? 1 : r.truePositiveCards / off.truePositiveCards;
  const keptConfirmed = off.confirmed === 0 ? 1 : r.confirmed / off.confirmed;
  console.log(
    `${name}: false-positive cards ${(100 * fpCut).toFixed(0)}% fewer (target ≥ 50%; cards marked false positive ${off.markedFalsePositive === 0 ? 0 : (100 * (1 - r.markedFalsePositive / off.markedFalsePositive)).toFixed(0)}% fewer), AI-written cards kept ${(100 * kept).toFixed(0)}%, confirmed flags kept ${(100 * keptConfirmed).toFixed(0)}% (target ≥ 90%), moderator answers ${(100 * (1 - r.answers / off.answers)).toFixed(0)}% fewer`,
  );
}
