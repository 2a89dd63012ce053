/**
 * The watching part of `/detect-settings`: `watch #channel`, `unwatch #channel`,
 * `cards #channel on|shadow`, `exempt [remove] @group`, `preset strict|standard|loose`,
 * `retention <days>|default`, `report`, `delete-data [confirm]`. Workspace admins change them;
 * admins and members of the checkers group may read the report.
 */
import type { webApi } from '@slack/bolt';
import { MAX_RETENTION_DAYS } from '../../chat/watch/config.ts';
import { DEFAULT_PRESET, isPreset, PRESET_DESCRIPTIONS } from '../../chat/watch/presets.ts';
import { judgingSentence, reportLines } from '../../chat/watch/report.ts';
import { parsePrecisionBound, readPrecision } from '../../chat/watch/precision.ts';
import { clearingsForgotten, learningStatement, precisionBoundSet, precisionBoundUsage } from '../../chat/watch/learning.ts';
import { slackErrorCode, teamScope, type SlackAppContext } from '../checks.ts';
import { isWorkspaceAdmin } from '../settings.ts';
import { slackDate } from './card.ts';
import { SLACK_PRECISION_MARKUP } from './suggestion.ts';

type WebClient = webApi.WebClient;

export const WATCH_SETTINGS = [
  'watch',
  'unwatch',
  'cards',
  'exempt',
  'preset',
  'retention',
  'report',
  'delete-data',
  'precision',
  'clearings',
] as const;

export const WATCH_USAGE = [
  '• `/detect-settings watch #channel`: watch a channel’s new messages for AI writing (starts in shadow mode: flags counted, no cards); `unwatch #channel` stops',
  '• `/detect-settings cards #channel on`: post a review card per flag in the audit channel (`cards #channel shadow` stops the cards)',
  '• `/detect-settings exempt @user-group`: its members are never scored (`exempt remove @user-group`); admins and the checkers group always are exempt',
  '• `/detect-settings preset strict|standard|loose`, `retention <days>|default`, `report`, `delete-data`',
  '• `/detect-settings precision <share>|default`: the share of reviewed flags moderators should confirm before the report suggests a stricter preset (default 0.8); `clearings reset`: forget which members moderators cleared',
].join('\n');

/** Lines for `/detect-settings` (show): watched channels, exempt groups, preset and retention; empty without watching. */
export async function watchSummary(ctx: SlackAppContext, teamId: string): Promise<string> {
  const watching = ctx.watch;
  if (!watching) return '';
  try {
    const config = await watching.store.getConfig(teamScope(teamId));
    const channels = config.channels.map((c) => `<#${c.channelId}> (${c.cards ? 'cards on' : 'shadow mode'})`).join(', ');
    return [
      '',
      `• Watched channels: ${channels || 'none'}`,
      `• Exempt user groups: ${config.exemptIds.map((id) => `<!subteam^${id}>`).join(', ') || 'none'} (admins and the checkers group always are)`,
      `• Flagging preset: *${config.preset ?? DEFAULT_PRESET}*; records kept ${config.retentionDays ?? watching.settings.retentionDays} days`,
    ].join('\n');
  } catch (err) {
    ctx.logger.warn({ team: teamId, err: (err as Error).message }, 'could not read the watch settings');
    return '\n• Watched channels: unknown (the app’s store did not answer)';
  }
}

export function isWatchSetting(text: string): boolean {
  const name = text.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return (WATCH_SETTINGS as readonly string[]).includes(name);
}

function channelId(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return /^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$/.exec(value)?.[1] ?? (/^[CG][A-Z0-9]+$/.test(value) ? value : undefined);
}

function groupId(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return /^<!subteam\^(S[A-Z0-9]+)(?:\|[^>]*)?>$/.exec(value)?.[1] ?? (/^S[A-Z0-9]+$/.test(value) ? value : undefined);
}

function dataStatement(days: number): string {
  return `*What is kept:* for each scored message its score, the message and author ids, and later the moderators’ answers: never the text, never names. Kept ${days} days (\`/detect-settings retention\`); everything is deleted when the app is uninstalled, or with \`/detect-settings delete-data confirm\`.`;
}

/** What Slack needs before it sends an app a channel's messages: the scope for its kind, and the app as a member. */
async function channelReadiness(client: WebClient, channel: string): Promise<{ refusal?: string; warning?: string }> {
  let scopes: string[] | undefined;
  try {
    scopes = (await client.auth.test()).response_metadata?.scopes;
  } catch {
    scopes = undefined;
  }
  let isPrivate: boolean | undefined;
  let isMember: boolean | undefined;
  try {
    const info = await client.conversations.info({ channel });
    isPrivate = info.channel?.is_private;
    isMember = info.channel?.is_member;
  } catch (err) {
    // A private channel the app is not in is invisible to it.
    if (slackErrorCode(err) !== 'channel_not_found') throw err;
  }
  if (scopes) {
    const needed = isPrivate === undefined ? ['channels:history', 'groups:history'] : [isPrivate ? 'groups:history' : 'channels:history'];
    const missing = needed.filter((s) => !scopes.includes(s));
    if (missing.length === needed.length) {
      return {
        refusal: `The app lacks the \`${missing.join('` / `')}\` scope, so Slack would not send it this channel’s messages. Ask the app’s admin to add it (the manifest in adapters/slack/manifest.yml has the scopes and the \`message.channels\` / \`message.groups\` events) and reinstall the app. Nothing is being watched.`,
      };
    }
  }
  if (isMember !== true) {
    return {
      warning: `\n⚠️ The app is not a member of <#${channel}>: Slack sends it nothing from there until someone runs \`/invite @textdetect\` in the channel.`,
    };
  }
  return {};
}

export async function handleWatchSetting(
  ctx: SlackAppContext,
  command: { team_id: string; user_id: string; text: string },
  client: WebClient,
  answer: (text: string) => Promise<void>,
): Promise<void> {
  const watching = ctx.watch;
  const teamId = command.team_id;
  const log = ctx.logger.child({ team: teamId, user: command.user_id, command: '/detect-settings' });
  if (!watching) {
    await answer('Watching is not set up in this app. Ask the app’s admin.');
    return;
  }
  const [rawName = '', ...args] = command.text.trim().split(/\s+/);
  const name = rawName.toLowerCase();
  const scope = teamScope(teamId);
  const store = watching.store;
  const invalidate = (): void => watching.watcher.invalidate(scope);
  const config = await store.getConfig(scope);
  const retentionDays = config.retentionDays ?? watching.settings.retentionDays;

  if (name === 'report') {
    if (!(await watching.isModerator(teamId, command.user_id))) {
      await answer('Only workspace admins and members of the checkers group can read the watching report.');
      return;
    }
    const now = Date.now();
    const data = await store.report(scope, now);
    const lines = reportLines(data, config, {
      preset: config.preset ?? DEFAULT_PRESET,
      retentionDays,
      precision: await readPrecision(store, scope, config, now),
      markup: {
        ...SLACK_PRECISION_MARKUP,
        date: (ms) => `<!date^${Math.floor(ms / 1000)}^{date_short}|${new Date(ms).toISOString().slice(0, 10)}>`,
      },
    });
    await answer(lines.join('\n'));
    return;
  }
  if (!(await isWorkspaceAdmin(client, command.user_id))) {
    log.info({ code: 'settings_forbidden' }, 'watch setting refused');
    await answer('Only workspace admins and owners can change these settings. `/detect-settings` alone shows them.');
    return;
  }

  switch (name) {
    case 'watch': {
      const channel = channelId(args[0]);
      if (!channel) {
        await answer(
          `“${args[0] ?? '(nothing)'}” is not a channel. Type # and pick the channel, e.g. \`/detect-settings watch #general\`.`,
        );
        return;
      }
      const readiness = await channelReadiness(client, channel);
      if (readiness.refusal) {
        log.info({ channel, code: 'missing_scope' }, 'watch refused');
        await answer(readiness.refusal);
        return;
      }
      const { channel: watched, added } = await store.watchChannel(scope, channel, Date.now());
      invalidate();
      log.info({ channel, added }, 'watching a channel');
      if (!added) {
        await answer(
          `<#${channel}> is already watched (since ${slackDate(watched.since)}, ${watched.cards ? 'review cards on' : 'shadow mode'}).`,
        );
        return;
      }
      await answer(
        [
          `👀 Watching <#${channel}> (and its threads) in *shadow mode*: ${judgingSentence(watching.settings)} Flags are recorded and counted, but no card is posted yet: check \`/detect-settings report\` after a few days, then turn cards on with \`/detect-settings cards #channel on\`.${readiness.warning ?? ''}`,
          'Left out: bots and apps, system messages (joins, topic changes…), command-like messages, edits of messages already scored, workspace admins and owners, the checkers group, and exempt user groups (`/detect-settings exempt @group`).',
          'The app never deletes, hides or replies to anything in the channel; flags are shown only in the audit (review) channel.',
          dataStatement(retentionDays),
        ].join('\n\n'),
      );
      return;
    }
    case 'unwatch': {
      const channel = channelId(args[0]);
      if (!channel) {
        await answer(`“${args[0] ?? '(nothing)'}” is not a channel. Type # and pick it, e.g. \`/detect-settings unwatch #general\`.`);
        return;
      }
      const removed = await store.unwatchChannel(scope, channel);
      invalidate();
      log.info({ channel, removed }, 'unwatching a channel');
      await answer(
        removed
          ? `Stopped watching <#${channel}>; its messages still waiting are not scored. Its records stay until they expire (${retentionDays} days) or \`/detect-settings delete-data confirm\`.`
          : `<#${channel}> was not watched.`,
      );
      return;
    }
    case 'cards': {
      const channel = channelId(args[0]);
      const state = args[1]?.toLowerCase();
      if (!channel || !['on', 'shadow', 'off'].includes(state ?? '')) {
        await answer('Use `/detect-settings cards #channel on` (cards in the audit channel) or `/detect-settings cards #channel shadow`.');
        return;
      }
      if (!config.channels.some((c) => c.channelId === channel)) {
        await answer(`<#${channel}> is not watched. Start with \`/detect-settings watch #channel\`; it begins in shadow mode.`);
        return;
      }
      const on = state === 'on';
      const review = await watching.reviewChannel(teamId);
      if (on && !review) {
        await answer('Review cards go to the audit channel, and none is set: choose one with `/detect-settings audit #channel` first.');
        return;
      }
      await store.setCards(scope, channel, on);
      invalidate();
      log.info({ channel, cards: on }, 'review cards changed');
      await answer(
        on
          ? `🗂️ Review cards are on for <#${channel}>: each flag is posted in <#${review}> with *Confirm*, *False positive* and *Dismiss* (invite the app there). At most ${watching.settings.cardsPerChannelHour} cards per hour from this channel, and one per member per ${Math.round(watching.settings.cardWindowMs / 60_000)} minutes; the others are counted in the report. Nothing is ever done in the channel itself.`
          : `<#${channel}> is in shadow mode again: flags are recorded and counted, no card is posted.`,
      );
      return;
    }
    case 'exempt': {
      const remove = args[0]?.toLowerCase() === 'remove';
      const group = groupId(remove ? args[1] : args[0]);
      if (!group) {
        await answer('Type @ and pick a user group, e.g. `/detect-settings exempt @regulars` (or `exempt remove @regulars`).');
        return;
      }
      const exempt = await store.setExempt(scope, group, !remove);
      invalidate();
      log.info({ group, remove }, 'exempt groups changed');
      const list = exempt.length > 0 ? exempt.map((id) => `<!subteam^${id}>`).join(', ') : 'none';
      await answer(
        `${remove ? `<!subteam^${group}> is no longer exempt.` : `Members of <!subteam^${group}> are not scored in watched channels.`} Exempt groups: ${list} (admins and the checkers group always are).`,
      );
      return;
    }
    case 'preset': {
      const preset = args[0]?.toLowerCase() ?? '';
      if (!isPreset(preset)) {
        await answer(`“${args[0] ?? '(nothing)'}” is not a preset. Use strict, standard or loose.`);
        return;
      }
      await store.setPreset(scope, preset === DEFAULT_PRESET ? null : preset);
      invalidate();
      log.info({ preset }, 'watch preset changed');
      await answer(
        `Watched messages are now flagged with the *${preset}* preset: ${PRESET_DESCRIPTIONS[preset]}. \`/detect-settings report\` shows what each preset would have flagged.`,
      );
      return;
    }
    case 'retention': {
      const raw = args[0]?.toLowerCase() ?? '';
      const days = raw === 'default' ? null : Number(raw);
      if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
        await answer(`Use \`/detect-settings retention <days>\` with 1 to ${MAX_RETENTION_DAYS} days, or \`retention default\`.`);
        return;
      }
      await store.setRetention(scope, days, watching.settings.retentionDays, Date.now());
      invalidate();
      log.info({ days }, 'watch retention changed');
      await answer(
        `Scores, ids and review outcomes are now kept ${days ?? watching.settings.retentionDays} days${days === null ? ' (the app’s default)' : ''}; records already kept follow the new period.`,
      );
      return;
    }
    case 'precision': {
      const raw = args[0]?.toLowerCase() ?? '';
      const bound = raw === 'default' ? null : parsePrecisionBound(raw);
      if (bound === undefined) {
        await answer(precisionBoundUsage('`/detect-settings precision <share>`'));
        return;
      }
      await store.setPrecisionBound(scope, bound);
      invalidate();
      log.info({ bound }, 'precision bound changed');
      await answer(precisionBoundSet(bound));
      return;
    }
    case 'clearings': {
      if (args[0]?.toLowerCase() !== 'reset') {
        await answer(`${learningStatement(watching.settings.clearDays)}\n\n\`/detect-settings clearings reset\` forgets them.`);
        return;
      }
      const forgotten = await store.deleteClearings(scope);
      log.info({ forgotten }, 'clearings reset');
      await answer(clearingsForgotten(forgotten));
      return;
    }
    case 'delete-data': {
      if (args[0]?.toLowerCase() !== 'confirm') {
        await answer(
          'Nothing was deleted. `/detect-settings delete-data confirm` deletes everything the app keeps about this workspace: watched channels, exempt groups, preset, retention, messages waiting for a score, scores, ids and review outcomes, the members moderators cleared, the texts kept behind the result buttons of its checks (their buttons stop working), and the workspace’s other settings (mode, audit channel, checkers). Cards already posted stay in the audit channel.',
        );
        return;
      }
      await watching.removeTeam(teamId, '/detect-settings delete-data');
      await answer(
        'Deleted everything the app kept about this workspace: watched channels, exempt groups, preset, retention, waiting messages, scores, ids, review outcomes, clearings, the texts kept behind the result buttons of its checks, and the workspace’s settings. Nothing is watched now; the commands keep working with the app’s defaults. Cards already posted stay in the audit channel (their buttons no longer record anything).',
      );
      return;
    }
    default:
      return;
  }
}
