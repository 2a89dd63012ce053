/**
 * Keeps one bad gateway dispatch from taking the bot down.
 *
 * discord.js builds its objects from a dispatch synchronously inside the WebSocket's message handler,
 * so a payload it does not expect throws there, outside any handler of ours, and ends the process
 * with every check in flight. Discord's own documentation examples of INTERACTION_CREATE do that:
 * they have no `entitlements`, which discord.js reads unconditionally. So every dispatch goes
 * through `handlePacket` here: missing lists discord.js requires are read as empty, and a dispatch
 * that still throws is logged (event, interaction id, error name, never the token or any text) and
 * skipped; for an interaction, Discord is answered with a short ephemeral error so the person who
 * clicked sees one instead of "The application did not respond".
 */
import { Routes, type Client } from 'discord.js';
import type { Logger } from 'pino';
import { describeDiscordError } from './discord-errors.ts';

/** Ephemeral message flag (1 << 6) and CHANNEL_MESSAGE_WITH_SOURCE (4), as Discord numbers them. */
const EPHEMERAL = 64;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;

export const UNREADABLE_INTERACTION_REPLY =
  'The bot could not read this request from Discord, so nothing was checked. Try again; if it keeps happening, tell the bot admin (the log has the interaction id).';

interface Dispatch {
  t?: unknown;
  d?: unknown;
}

type HandlePacket = (packet?: Dispatch, shard?: unknown) => boolean;

/** The payload of an INTERACTION_CREATE dispatch; undefined for any other dispatch. */
function interactionData(packet: Dispatch | undefined): Record<string, unknown> | undefined {
  if (packet?.t !== 'INTERACTION_CREATE' || typeof packet.d !== 'object' || packet.d === null) return undefined;
  return packet.d as Record<string, unknown>;
}

/** The interaction id and token of an INTERACTION_CREATE dispatch, when it has them. */
function interactionOf(packet: Dispatch | undefined): { id: string; token: string } | undefined {
  const d = interactionData(packet);
  return typeof d?.id === 'string' && typeof d.token === 'string' ? { id: d.id, token: d.token } : undefined;
}

/**
 * Fields discord.js reads without checking, filled when a payload lacks them: `entitlements` (read
 * as a list), `authorizing_integration_owners` (read as a map; empty claims no installation) and
 * `application_id` (the address of the reply's webhook; an interaction reaching this bot is
 * addressed to this application).
 */
function fillRequiredDefaults(client: Client, packet: Dispatch | undefined): void {
  const d = interactionData(packet);
  if (!d) return;
  if (!Array.isArray(d.entitlements)) d.entitlements = [];
  if (typeof d.authorizing_integration_owners !== 'object' || d.authorizing_integration_owners === null)
    d.authorizing_integration_owners = {};
  if (typeof d.application_id !== 'string' && client.application) d.application_id = client.application.id;
  // A message with a poll: discord.js's Poll takes its channel id from the channel object when the
  // poll has none, and that object is null when the channel is not cached, which throws. The message
  // says which channel it is in.
  const resolved = (d.data as { resolved?: { messages?: unknown } } | undefined)?.resolved?.messages;
  if (resolved && typeof resolved === 'object') {
    for (const message of Object.values(resolved as Record<string, unknown>)) fillPollChannel(message, d.channel_id);
  }
}

function fillPollChannel(message: unknown, fallbackChannelId: unknown): void {
  if (typeof message !== 'object' || message === null) return;
  const m = message as { poll?: unknown; channel_id?: unknown };
  if (typeof m.poll !== 'object' || m.poll === null) return;
  const poll = m.poll as { channel_id?: unknown };
  const channelId = typeof m.channel_id === 'string' ? m.channel_id : fallbackChannelId;
  if (typeof poll.channel_id !== 'string' && typeof channelId === 'string') poll.channel_id = channelId;
}

export interface GatewayGuard {
  /** The id of the interaction being handled, or the last one seen, for process-level error logs. */
  lastInteractionId(): string | undefined;
}

export function guardGatewayDispatch(client: Client, logger: Logger): GatewayGuard {
  let lastInteractionId: string | undefined;
  // `handlePacket` is internal to discord.js's WebSocketManager (stable through v14); every dispatch,
  // including those queued before READY, goes through it.
  const ws = client.ws as unknown as { handlePacket: HandlePacket };
  const original = ws.handlePacket.bind(ws);
  ws.handlePacket = (packet, shard) => {
    const interaction = interactionOf(packet);
    if (interaction) lastInteractionId = interaction.id;
    try {
      fillRequiredDefaults(client, packet);
      // Watched messages with a poll, in a channel not (yet) cached, meet the same Poll constructor.
      if ((packet?.t === 'MESSAGE_CREATE' || packet?.t === 'MESSAGE_UPDATE') && typeof packet.d === 'object')
        fillPollChannel(packet.d, undefined);
      return original(packet, shard);
    } catch (err) {
      logger.error(
        { event: typeof packet?.t === 'string' ? packet.t : undefined, interactionId: interaction?.id, err: describeDiscordError(err) },
        'could not handle a gateway dispatch; skipped it and kept running',
      );
      if (interaction) answerUnreadable(client, logger, interaction);
      return true;
    }
  };
  return { lastInteractionId: () => lastInteractionId };
}

function answerUnreadable(client: Client, logger: Logger, interaction: { id: string; token: string }): void {
  client.rest
    .post(Routes.interactionCallback(interaction.id, interaction.token), {
      body: {
        type: CHANNEL_MESSAGE_WITH_SOURCE,
        data: { content: UNREADABLE_INTERACTION_REPLY, flags: EPHEMERAL, allowed_mentions: { parse: [] } },
      },
      auth: false,
    })
    .catch((err: unknown) =>
      logger.warn(
        { interactionId: interaction.id, err: describeDiscordError(err) },
        'could not tell Discord the interaction was unreadable',
      ),
    );
}
