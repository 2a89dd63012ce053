/** Texts the watching tests post, and the least evidence the engine judges an author on. */
import { createDetector } from '../../src/detector/index.ts';

// Written for these tests in the register of a generated answer (each rated likely_ai on its own; a
// member who posts ENGINE_MIN_MESSAGES of them, well over the words needed, is likely_ai as an author).
export const AI_TEXTS = [
  'It is important to note that effective communication plays a crucial role in fostering collaboration within any community. By leveraging clear guidelines and consistent moderation practices, communities can create an inclusive environment where every member feels valued and heard. Furthermore, regular feedback mechanisms enable continuous improvement, ensuring that the community remains vibrant, engaging, and aligned with its core values over time.',
  "In today's fast-paced digital landscape, maintaining a healthy online community requires a thoughtful and multifaceted approach. Moderators must balance the need for open dialogue with the importance of safety and respect. Additionally, implementing transparent policies helps build trust among members. Ultimately, a well-moderated community can serve as a valuable resource, fostering meaningful connections and promoting positive interactions for everyone involved.",
  'Artificial intelligence has the potential to transform numerous industries by streamlining processes and enhancing decision-making capabilities. However, it is essential to consider the ethical implications associated with its widespread adoption. By prioritizing transparency, accountability, and fairness, organizations can harness the benefits of AI while mitigating potential risks. In conclusion, a balanced approach is key to ensuring responsible innovation that benefits society as a whole.',
  'Remote work offers numerous advantages for both employees and employers, including increased flexibility and reduced commuting time. However, it also presents unique challenges, such as maintaining effective communication and fostering a sense of team cohesion. To address these issues, organizations should invest in robust collaboration tools and establish clear expectations. By doing so, they can create a productive and supportive remote work environment.',
  'Sustainable gardening practices play a vital role in preserving the environment and promoting biodiversity. By utilizing composting, rainwater harvesting, and native plant species, gardeners can significantly reduce their ecological footprint. Moreover, these practices contribute to healthier soil and more resilient ecosystems. Ultimately, embracing sustainable gardening is a meaningful step toward a greener future for generations to come.',
];
/**
 * The fewest of AI_TEXTS, posted in order, that the engine (the one the service loads) calls their
 * author likely_ai on; under the evidence floor (40 words together) it answers `mixed` with
 * `too_little_evidence`, which no preset flags.
 */
export const ENGINE_MIN_MESSAGES = await (async () => {
  const engine = await createDetector();
  const n = AI_TEXTS.findIndex((_, i) => engine.detectAuthor(AI_TEXTS.slice(0, i + 1)).verdict === 'likely_ai') + 1;
  if (n === 0) throw new Error('No prefix of AI_TEXTS is likely_ai as an author: the fixtures no longer test watching.');
  return n;
})();
export const HUMAN_TEXT =
  'ok so i finally got the raid team together last night and honestly it was a mess lol. tank disconnected twice, our healer was eating pizza the whole time and kept forgetting to heal, and i died to the same dumb fire thing like four times. still we got the boss down at like 2am so whatever, worth it. anyone up for tonight? i can do 9ish my time';
