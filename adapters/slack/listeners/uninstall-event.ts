/**
 * `app_uninstalled` and `tokens_revoked` (the bot's token): the app was removed from a workspace, so
 * everything kept about it is deleted: watched channels, queue, scores, outcomes and settings.
 */
import type { App } from '@slack/bolt';
import { teamScope, type SlackAppContext } from '../checks.ts';
import { clearEverySetting } from '../../chat/store/types.ts';

async function removeTeam(ctx: SlackAppContext, teamId: string, reason: string): Promise<void> {
  try {
    if (ctx.watch) await ctx.watch.removeTeam(teamId, reason);
    else {
      await ctx.state.updateSettings(teamScope(teamId), clearEverySetting());
      ctx.logger.info({ team: teamId, reason }, 'deleted everything kept about the workspace');
    }
  } catch (err) {
    ctx.logger.error({ team: teamId, err: (err as Error).message }, 'could not delete the workspace’s data');
  }
}

export function registerUninstallEvents(app: App, ctx: SlackAppContext): void {
  app.event('app_uninstalled', async ({ body }) => {
    const teamId = (body as { team_id?: string }).team_id;
    if (teamId) await removeTeam(ctx, teamId, 'app_uninstalled');
  });
  app.event('tokens_revoked', async ({ event, body }) => {
    const teamId = (body as { team_id?: string }).team_id;
    // A user's token revoked leaves the app installed; only the bot's own token ends it.
    const bots = (event as { tokens?: { bot?: unknown } }).tokens?.bot;
    if (teamId && Array.isArray(bots) && bots.length > 0) await removeTeam(ctx, teamId, 'tokens_revoked');
  });
}
