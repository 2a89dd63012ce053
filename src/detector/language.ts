/**
 * Language identification for en / tr, and a best guess for anything else so it can be refused
 * (a German text scored with the English model would get a meaningless probability).
 *
 * Works on the normalised text: script counts first (Cyrillic, Arabic, CJK, ... are refused
 * outright), then for Latin text the rate of each language's commonest function words plus the
 * letters only Turkish uses (ğ, ı, ş, İ).
 */
import type { Language } from './types.ts';

/** Function-word lists, written for this purpose: short, frequent, and mostly distinct between languages. */
const STOPWORDS: Record<string, string> = {
  en: 'the of and to a in is that it for was on are as with be by this have from or at not but an they which we you his her their has were been had there would will can all if more one its so what about also than into these them when some other should could our may such only who he she i my me do does did',
  tr: 've bir bu da de için ile çok ama gibi daha olarak ben bana beni benim ne mi mı mu mü o ki en her kadar sonra değil var yok olan oldu olduğu olduğunu şu diye ya veya hem ancak çünkü fakat tarafından bize biz siz sizin onun ise artık hiç bile şey hala hâlâ hesabıma hesabımdan',
  de: 'der die und den das ist nicht ein eine sich mit dem des auf für von zu im auch als sie es wird werden bei oder nach aus wie noch über ich wir durch sind hat einem einer',
  fr: 'le la les et des du un une est pas que qui dans pour sur au aux avec ce il elle ne se sont par plus mais nous vous ou été cette leur',
  es: 'el la los las y de que en un una es por con para del se no al lo como más pero sus le ya o este fue ha está son muy también',
  it: 'il di che la le è e per un una non sono con del della dei gli si al ha come ma più anche questo nel alla',
  pt: 'o a os as de que e do da em um uma para com não por se na no mais dos das como mas ao ele foi são está também',
  nl: 'de het een en van is dat niet op te in voor met zijn er maar ook als bij aan om dan wat nog heeft werd',
  id: 'yang dan di ke dari ini itu dengan untuk pada adalah tidak dalam akan juga ada oleh atau kami mereka',
};

const LANGS = Object.keys(STOPWORDS);
/** Word → bit mask of the languages whose list contains it (one lookup per word for all languages). */
const STOPMASK = new Map<string, number>();
LANGS.forEach((lang, bit) => {
  for (const w of STOPWORDS[lang]!.split(' ')) STOPMASK.set(w, (STOPMASK.get(w) ?? 0) | (1 << bit));
});

const SCRIPTS: Array<[string, RegExp]> = [
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['el', /\p{Script=Greek}/u],
  ['ar', /\p{Script=Arabic}/u],
  ['he', /\p{Script=Hebrew}/u],
  ['hi', /\p{Script=Devanagari}/u],
  ['th', /\p{Script=Thai}/u],
  ['ko', /\p{Script=Hangul}/u],
  ['ja', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['zh', /\p{Script=Han}/u],
];

export interface LanguageGuess {
  /** `en`, `tr`, or the code/script of an unsupported language (`de`, `cyrillic`, `unknown`, ...). */
  language: string;
  supported: boolean;
}

const RE_LETTER = /\p{L}/u;
const RE_WORD = /\p{L}+(?:'\p{L}+)*/gu;

/** Identification looks at most this many characters (from the start): plenty, and bounded in cost. */
const SAMPLE_CHARS = 3000;

export function identifyLanguage(fullText: string): LanguageGuess {
  const text = fullText.length > SAMPLE_CHARS ? fullText.slice(0, SAMPLE_CHARS) : fullText;
  let latin = 0;
  let asciiLatin = 0;
  let other = 0;
  let trLetters = 0;
  const scriptCounts = new Map<string, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) {
      latin++;
      asciiLatin++;
      continue;
    }
    if (c < 0x80 || (c >= 0xdc00 && c <= 0xdfff)) continue;
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (ch === 'ğ' || ch === 'Ğ' || ch === 'ı' || ch === 'İ' || ch === 'ş' || ch === 'Ş') trLetters++;
    if (!RE_LETTER.test(ch)) continue;
    if (c < 0x250 || (c >= 0x1e00 && c <= 0x1eff)) {
      latin++;
      continue;
    }
    other++;
    for (const [name, re] of SCRIPTS) {
      if (re.test(ch)) {
        scriptCounts.set(name, (scriptCounts.get(name) ?? 0) + 1);
        break;
      }
    }
  }
  if (latin === 0 && other === 0) return { language: 'unknown', supported: false };
  if (other > latin) {
    let best = 'unknown';
    let bestCount = 0;
    for (const [name, count] of scriptCounts) if (count > bestCount) [best, bestCount] = [name, count];
    return { language: best, supported: false };
  }

  // Plain lower-casing (fast for ASCII text); İ becomes i + U+0307, folded back to i.
  let lowered = text.toLowerCase();
  if (lowered.includes('\u0307')) lowered = lowered.replace(/\u0307/g, '');
  const lowerWords = lowered.match(RE_WORD) ?? [];
  const hitCounts = new Array<number>(LANGS.length).fill(0);
  for (const w of lowerWords) {
    const mask = STOPMASK.get(w);
    if (mask === undefined) continue;
    for (let b = 0; b < LANGS.length; b++) if (mask & (1 << b)) hitCounts[b]!++;
  }
  const hits = new Map<string, number>(LANGS.map((l, b) => [l, hitCounts[b]!]));
  const lowerEn = lowerWords;
  const nWords = Math.max(1, lowerEn.length);
  const trLetterRate = trLetters / Math.max(1, latin);
  const score = (lang: string): number => {
    const base = (hits.get(lang) ?? 0) / nWords;
    // ğ, ı, ş are about 5% of Turkish letters and absent from English; a strong cue even in short texts.
    return lang === 'tr' ? base + 3 * trLetterRate : base;
  };
  let best = 'en';
  for (const lang of LANGS) if (score(lang) > score(best)) best = lang;
  const bestScore = score(best);
  if (nWords >= 15 && bestScore < 0.08) {
    // Citation lists, tables and name lists have few function words; plain-ASCII Latin text is
    // then taken as English, anything with a real share of other Latin letters is refused.
    const nonAscii = latin - asciiLatin;
    if (nonAscii <= 0.02 * latin) return { language: 'en', supported: true };
    return { language: 'unknown', supported: false };
  }
  if (bestScore === 0) {
    // Too short to tell by function words: Turkish letters decide, otherwise assume English.
    return { language: trLetters > 0 ? 'tr' : 'en', supported: true };
  }
  return { language: best, supported: best === 'en' || best === 'tr' };
}

export function isLanguage(value: string): value is Language {
  return value === 'en' || value === 'tr';
}
