/**
 * Cheap text perturbations of the kind RAID (Dugan et al., ACL 2024) uses to evade detectors. They
 * serve two purposes: `scripts/attack-eval.ts` measures how far each one moves the engine's scores,
 * and training can add perturbed copies of its texts so the classifier does not learn
 * "noisy text = human". Not loaded by the detector at run time.
 *
 * Every attack is a pure function of (text, random source): with a seeded PRNG the output is
 * deterministic. They are approximations written for this project, not RAID's exact code.
 */

export type Rand = () => number;

export interface AttackContext {
  /** Language of the text; English-only attacks (articles, spellings, synonyms) leave Turkish alone. */
  language: 'en' | 'tr';
  /** Human-written text to draw an inserted passage from (for `human_prefix`). */
  donor?: string;
}

export type Attack = (text: string, rand: Rand, ctx: AttackContext) => string;

const RE_WORD = /\p{L}+/gu;

function pick<T>(xs: readonly T[], rand: Rand): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

/**
 * Misspells about `rate` of the words of 3+ letters with one edit each: swapping two neighbouring
 * letters, dropping a letter, or doubling one (the first letter is kept, as in most real typos).
 */
export function misspell(rate: number): Attack {
  return (text, rand) =>
    text.replace(RE_WORD, (w) => {
      if (w.length < 3 || rand() >= rate) return w;
      const chars = [...w];
      const i = 1 + Math.floor(rand() * (chars.length - 1));
      const op = rand();
      if (op < 0.4 && i + 1 < chars.length) [chars[i], chars[i + 1]] = [chars[i + 1]!, chars[i]!];
      else if (op < 0.75) chars.splice(i, 1);
      else chars.splice(i, 0, chars[i]!);
      return chars.join('');
    });
}

/** Deletes English articles (a, an, the) with probability `rate` each. */
export function deleteArticles(rate: number): Attack {
  return (text, rand, ctx) => {
    if (ctx.language !== 'en') return text;
    return text.replace(/\b(?:the|an?)\s+(\S)/gi, (m, next: string) => {
      if (rand() >= rate) return m;
      // "The model" → "Model": keep the sentence-initial capital.
      return m[0] === m[0]!.toUpperCase() ? next.toUpperCase() : next;
    });
  };
}

/** Replaces each digit with a random digit with probability `rate`. */
export function swapNumbers(rate: number): Attack {
  return (text, rand) => text.replace(/\d/g, (d) => (rand() < rate ? String(Math.floor(rand() * 10)) : d));
}

/** American → British spellings: a small table plus the -ize/-yze endings. */
const US_TO_UK: Record<string, string> = {
  color: 'colour',
  colors: 'colours',
  behavior: 'behaviour',
  behaviors: 'behaviours',
  behavioral: 'behavioural',
  favor: 'favour',
  favorable: 'favourable',
  honor: 'honour',
  labor: 'labour',
  neighbor: 'neighbour',
  neighborhood: 'neighbourhood',
  humor: 'humour',
  rumor: 'rumour',
  flavor: 'flavour',
  harbor: 'harbour',
  center: 'centre',
  centers: 'centres',
  centered: 'centred',
  meter: 'metre',
  meters: 'metres',
  theater: 'theatre',
  fiber: 'fibre',
  liter: 'litre',
  defense: 'defence',
  offense: 'offence',
  license: 'licence',
  practice: 'practise',
  program: 'programme',
  programs: 'programmes',
  catalog: 'catalogue',
  dialog: 'dialogue',
  analog: 'analogue',
  traveling: 'travelling',
  traveled: 'travelled',
  traveler: 'traveller',
  modeling: 'modelling',
  modeled: 'modelled',
  labeling: 'labelling',
  labeled: 'labelled',
  canceled: 'cancelled',
  fueled: 'fuelled',
  counseling: 'counselling',
  enrollment: 'enrolment',
  fulfill: 'fulfil',
  skillful: 'skilful',
  gray: 'grey',
  aging: 'ageing',
  judgment: 'judgement',
  acknowledgment: 'acknowledgement',
  aluminum: 'aluminium',
  pediatric: 'paediatric',
  anemia: 'anaemia',
  estrogen: 'oestrogen',
  tumor: 'tumour',
  tumors: 'tumours',
  esophagus: 'oesophagus',
  maneuver: 'manoeuvre',
  plow: 'plough',
  check: 'cheque',
  tire: 'tyre',
  mold: 'mould',
  jewelry: 'jewellery',
};
const UK_EXCEPTIONS = new Set(['size', 'prize', 'seize', 'capsize', 'citizen', 'citizens']);

export const altSpelling: Attack = (text, _rand, ctx) => {
  if (ctx.language !== 'en') return text;
  return text.replace(RE_WORD, (w) => {
    const lower = w.toLowerCase();
    let out = US_TO_UK[lower];
    if (!out && !UK_EXCEPTIONS.has(lower)) {
      const m = /^(\p{L}{4,}?)(iz|yz)(e|es|ed|er|ers|ing|ation|ations)$/u.exec(lower);
      if (m) out = `${m[1]}${m[2] === 'iz' ? 'is' : 'ys'}${m[3]}`;
    }
    if (!out) return w;
    return w[0] === w[0]!.toUpperCase() ? out[0]!.toUpperCase() + out.slice(1) : out;
  });
};

/**
 * Word swaps that replace words typical of chat-model prose with plainer synonyms (a fixed table;
 * RAID picks synonyms with a model, which the project cannot run offline).
 */
const SYNONYMS: Record<string, readonly string[]> = {
  utilize: ['use'],
  utilizes: ['uses'],
  utilized: ['used'],
  utilizing: ['using'],
  demonstrate: ['show'],
  demonstrates: ['shows'],
  demonstrated: ['showed'],
  significant: ['important', 'major'],
  significantly: ['greatly', 'strongly'],
  additionally: ['also', 'besides'],
  furthermore: ['also', 'besides'],
  moreover: ['also', 'besides'],
  however: ['but', 'still'],
  therefore: ['so', 'thus'],
  crucial: ['key', 'vital'],
  essential: ['needed', 'key'],
  enhance: ['improve', 'boost'],
  enhances: ['improves'],
  enhanced: ['improved'],
  various: ['many', 'several'],
  numerous: ['many'],
  overall: ['in all'],
  comprehensive: ['full', 'broad'],
  ensure: ['make sure'],
  ensures: ['makes sure'],
  facilitate: ['help'],
  facilitates: ['helps'],
  obtain: ['get'],
  obtained: ['got', 'gained'],
  provide: ['give', 'offer'],
  provides: ['gives', 'offers'],
  provided: ['gave', 'gave'],
  approach: ['method', 'way'],
  approaches: ['methods', 'ways'],
  aim: ['goal'],
  aims: ['goals'],
  individuals: ['people'],
  potential: ['possible'],
  particularly: ['especially'],
  impact: ['effect'],
  impacts: ['effects'],
  analyze: ['study', 'examine'],
  analyzed: ['studied', 'examined'],
  explore: ['study', 'look at'],
  explores: ['studies', 'looks at'],
  investigate: ['study', 'examine'],
  investigates: ['studies', 'examines'],
  key: ['main'],
  important: ['big', 'major'],
  understanding: ['grasp', 'knowledge'],
  valuable: ['useful'],
  insights: ['findings', 'ideas'],
  role: ['part'],
  highlights: ['shows', 'stresses'],
  highlight: ['show', 'stress'],
  contribute: ['add'],
  contributes: ['adds'],
  effective: ['useful', 'good'],
  effectively: ['well'],
  challenges: ['problems', 'difficulties'],
  benefits: ['gains', 'advantages'],
  study: ['paper', 'work'],
  research: ['work', 'study'],
  results: ['findings', 'outcomes'],
  indicate: ['suggest', 'show'],
  indicates: ['suggests', 'shows'],
  within: ['in', 'inside'],
  regarding: ['about', 'on'],
  thus: ['so'],
  ultimately: ['in the end', 'finally'],
  increasingly: ['more and more'],
  rapidly: ['quickly', 'fast'],
};

export function synonymSwap(rate: number): Attack {
  return (text, rand, ctx) => {
    if (ctx.language !== 'en') return text;
    return text.replace(RE_WORD, (w) => {
      const options = SYNONYMS[w.toLowerCase()];
      if (!options || rand() >= rate) return w;
      const out = pick(options, rand);
      return w[0] === w[0]!.toUpperCase() ? out[0]!.toUpperCase() + out.slice(1) : out;
    });
  };
}

function sentences(text: string, language: 'en' | 'tr'): string[] {
  const seg = new Intl.Segmenter(language, { granularity: 'sentence' });
  return [...seg.segment(text)].map((s) => s.segment.trim()).filter(Boolean);
}

/** Shuffles the order of the sentences (Fisher–Yates). */
export const shuffleSentences: Attack = (text, rand, ctx) => {
  const s = sentences(text, ctx.language);
  for (let i = s.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  return s.join(' ');
};

/** Inserts a paragraph break after each sentence with probability `rate` (RAID's "insert paragraphs"). */
export function paragraphBreaks(rate: number): Attack {
  return (text, rand, ctx) => {
    const s = sentences(text, ctx.language);
    return s.map((x, i) => (i + 1 < s.length ? x + (rand() < rate ? '\n\n' : ' ') : x)).join('');
  };
}

/** Prepends the first sentences (up to ~`words` words) of a human-written donor text as its own paragraph. */
export function humanPrefix(words: number): Attack {
  return (text, _rand, ctx) => {
    if (!ctx.donor) return text;
    const out: string[] = [];
    let n = 0;
    for (const s of sentences(ctx.donor, ctx.language)) {
      if (n >= words) break;
      out.push(s);
      n += s.split(/\s+/).length;
    }
    return `${out.join(' ')}\n\n${text}`;
  };
}

/** Latin letters with a Cyrillic twin; replaced with probability `rate` each. */
const TO_CYRILLIC: Record<string, string> = {
  a: '\u0430',
  e: '\u0435',
  o: '\u043e',
  p: '\u0440',
  c: '\u0441',
  y: '\u0443',
  x: '\u0445',
  i: '\u0456',
  A: '\u0410',
  B: '\u0412',
  E: '\u0415',
  K: '\u041a',
  M: '\u041c',
  H: '\u041d',
  O: '\u041e',
  P: '\u0420',
  C: '\u0421',
  T: '\u0422',
};
export function homoglyphs(rate: number): Attack {
  return (text, rand) => text.replace(/[aeopcyxiABEKMHOPCT]/g, (ch) => (rand() < rate ? TO_CYRILLIC[ch]! : ch));
}

/** Inserts a zero-width space after a character with probability `rate`. */
export function zeroWidth(rate: number): Attack {
  return (text, rand) => text.replace(/[^\s]/gu, (ch) => (rand() < rate ? `${ch}\u200b` : ch));
}

/** Replaces a space with extra or odd whitespace (double space, NBSP, tab) with probability `rate`. */
export function oddWhitespace(rate: number): Attack {
  return (text, rand) => text.replace(/ /g, (sp) => (rand() < rate ? pick(['  ', '\u00a0', '\t', ' \u2003'], rand) : sp));
}

/** Swaps the case of a letter with probability `rate`. */
export function swapCase(rate: number): Attack {
  return (text, rand) =>
    text.replace(/\p{L}/gu, (ch) => {
      if (rand() >= rate) return ch;
      const up = ch.toUpperCase();
      return up === ch ? ch.toLowerCase() : up;
    });
}

/** The attacks `scripts/attack-eval.ts` runs, by name. `normalised` ones must leave scores unchanged. */
export const ATTACKS: ReadonlyArray<{ name: string; attack: Attack; normalised?: boolean; description: string }> = [
  { name: 'homoglyph', attack: homoglyphs(0.1), normalised: true, description: '10% of eligible letters → Cyrillic twins' },
  { name: 'zero_width', attack: zeroWidth(0.1), normalised: true, description: 'U+200B after 10% of characters' },
  { name: 'whitespace', attack: oddWhitespace(0.2), normalised: true, description: '20% of spaces → double/NBSP/tab/em space' },
  { name: 'case_swap', attack: swapCase(0.1), normalised: true, description: '10% of letters case-swapped' },
  { name: 'number_swap', attack: swapNumbers(0.5), description: '50% of digits replaced' },
  { name: 'misspell_5', attack: misspell(0.05), description: '5% of words with one typo' },
  { name: 'misspell_15', attack: misspell(0.15), description: '15% of words with one typo' },
  { name: 'article_del', attack: deleteArticles(0.5), description: 'half of a/an/the removed (en)' },
  { name: 'alt_spelling', attack: altSpelling, description: 'American → British spellings (en)' },
  { name: 'synonym_table', attack: synonymSwap(0.7), description: '70% of ~100 "AI-typical" words swapped (en)' },
  { name: 'para_breaks', attack: paragraphBreaks(0.5), description: 'paragraph break after half the sentences' },
  { name: 'shuffle', attack: shuffleSentences, description: 'sentence order shuffled' },
  { name: 'human_prefix', attack: humanPrefix(50), description: '~50 words of another human text prepended' },
  {
    name: 'combo',
    attack: (t, r, c) => misspell(0.05)(deleteArticles(0.5)(altSpelling(synonymSwap(0.7)(t, r, c), r, c), r, c), r, c),
    description: 'synonyms + alt spelling + article deletion + 5% typos',
  },
];
