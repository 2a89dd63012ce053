/**
 * What the watcher needs from Discord: reading a queued message again by id (after a restart only
 * ids are kept), the server's review channel and mode, and posting a card.
 */
import { DiscordAPIError, HTTPError, Routes, type APIMessage, type Client } from 'discord.js';
import { EmptyTextError } from '../../chat/errors.ts';
import { RetryLaterError, type ReviewCard, type WatchPlatform } from '../../chat/watch/watcher.ts';
import type { PendingItem } from '../../chat/watch/types.ts';
import { guildSettings, type BotContext } from '../check.ts';
import { describeDiscordError } from '../discord-errors.ts';
import { cardButtons, cardEmbed } from './card.ts';
import { watchedText } from './watched-text.ts';

export const DISCORD_SCOPE_PREFIX = 'discord:';

export function guildIdOf(scope: string): string {
  return scope.startsWith(DISCORD_SCOPE_PREFIX) ? scope.slice(DISCORD_SCOPE_PREFIX.length) : scope;
}

/** Server nickname, else display name, else user name: what members see next to the message. */
export function authorDisplayName(message: {
  author?: { username?: string; global_name?: string | null } | null;
  member?: { nick?: string | null } | null;
}): string | undefined {
  return message.member?.nick || message.author?.global_name || message.author?.username || undefined;
}

export function discordWatchPlatform(client: Client, ctx: BotContext): WatchPlatform {
  return {
    async fetchMessage(item: PendingItem) {
      try {
        const raw = (await client.rest.get(Routes.channelMessage(item.threadId ?? item.channelId, item.messageId))) as APIMessage;
        return { text: watchedText(raw).text, authorName: authorDisplayName(raw) };
      } catch (err) {
        if (err instanceof EmptyTextError) return undefined;
        // 404: deleted; 403: the bot lost access. Neither will change by waiting.
        if (err instanceof DiscordAPIError && err.status < 500 && err.status !== 429) {
          ctx.logger.info(
            { channelId: item.channelId, messageId: item.messageId, err: describeDiscordError(err) },
            'could not read a queued message again',
          );
          return undefined;
        }
        if (err instanceof DiscordAPIError || err instanceof HTTPError) throw new RetryLaterError(`Discord answered ${err.status}`);
        throw new RetryLaterError((err as Error)?.message ?? String(err));
      }
    },
    async reviewChannel(scope) {
      return (await guildSettings(ctx, guildIdOf(scope))).auditChannelId ?? ctx.settings.modLogChannelId;
    },
    async postCard(reviewChannelId: string, card: ReviewCard) {
      const sent = (await client.rest.post(Routes.channelMessages(reviewChannelId), {
        body: {
          embeds: [cardEmbed(card, guildIdOf(card.scope))],
          components: cardButtons(card.flagId),
          // The card names the author and moderators in plain text; nobody is pinged.
          allowed_mentions: { parse: [] },
          // A process killed after posting a card and before recording it leaves the flag without
          // one, and the next process posts it again (watcher.ts): with the flag as the nonce,
          // Discord returns the card already posted instead of showing a second one.
          nonce: card.flagId,
          enforce_nonce: true,
        },
      })) as APIMessage;
      return sent.id;
    },
    async mode(scope) {
      return (await guildSettings(ctx, guildIdOf(scope))).defaultMode ?? ctx.settings.messageMode;
    },
  };
}
