/**
 * Messages watching leaves out on either platform before anything is queued.
 */

/**
 * A bot command typed as a message (`!ban`, `?warn`, `-play`, `/giphy`): an instruction to another
 * bot, not prose. The prefixes are the defaults of common moderation and music bots.
 */
export function isCommandLike(raw: string): boolean {
  return /^\s*[!?./$%;~+=-][\p{L}]/u.test(raw);
}
