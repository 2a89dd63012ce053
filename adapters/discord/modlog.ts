/**
 * The optional audit channel (`DISCORD_MODLOG_CHANNEL_ID`): one line per message check saying who
 * checked which message, the verdict and the request id, so a team can review moderation decisions.
 * It never quotes the checked text: the link is enough for anyone allowed to see the message.
 */
import { escapeMarkdown, Routes, type REST } from 'discord.js';
import type { Logger } from 'pino';
import type { Mode } from '../../src/contract.ts';
import type { DetectResponse } from '../../src/contract.ts';
import { describeDiscordError } from './discord-errors.ts';
import { describeAnswer, formatPercent } from '../../src/words.ts';

export interface ModLogEntry {
  /** Who ran the check. */
  userId: string;
  /** Link to the checked message. */
  link: string;
  /** Author of the checked message, when known. */
  authorId: string | undefined;
  mode: Mode;
  /** The checked file's name, for a document of the message (escaped: shown as typed). */
  file?: string | undefined;
  outcome: { result: DetectResponse } | { errorCode: string; requestId: string | undefined };
}

export function modLogLine(entry: ModLogEntry): string {
  const what = entry.file ? `the file “${escapeMarkdown(entry.file)}” of ${entry.link}` : entry.link;
  const who = `<@${entry.userId}> checked ${what}${entry.authorId ? ` (by <@${entry.authorId}>)` : ''} in ${entry.mode} mode`;
  if ('result' in entry.outcome) {
    const r = entry.outcome.result;
    // Below the evidence floor there is no verdict and no percentage to record.
    const words = describeAnswer(r);
    const outcome = `${words.emoji} ${words.label}${words.tooShort ? '' : `, ${formatPercent(r.ai_probability)}`}`;
    return `${who}: ${outcome} · request \`${r.request_id}\``;
  }
  const id = entry.outcome.requestId ? ` · request \`${entry.outcome.requestId}\`` : '';
  return `${who}: check failed (${entry.outcome.errorCode})${id}`;
}

/** Posts mod-log lines; the channel is chosen per check (the server's `/detect-settings modlog`, else DISCORD_MODLOG_CHANNEL_ID). */
export class ModLog {
  readonly #rest: REST;
  readonly #logger: Logger;

  constructor(rest: REST, logger: Logger) {
    this.#rest = rest;
    this.#logger = logger;
  }

  /** Posts the line; a failure is logged, never shown to the moderator (their answer matters more). */
  async record(channelId: string, entry: ModLogEntry): Promise<void> {
    await this.post(channelId, modLogLine(entry));
  }

  /** Posts one line of any kind (member checks write their own); failures are logged like `record`'s. */
  async post(channelId: string, line: string): Promise<void> {
    try {
      await this.#rest.post(Routes.channelMessages(channelId), {
        // Mentions render as names but must not ping the moderator or the message's author.
        body: { content: line, allowed_mentions: { parse: [] } },
      });
    } catch (err) {
      this.#logger.warn(
        { err: describeDiscordError(err), channelId },
        'could not post to the mod-log channel: check /detect-settings modlog (or DISCORD_MODLOG_CHANNEL_ID) and that the bot can View Channel and Send Messages there',
      );
    }
  }
}
