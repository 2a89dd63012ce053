/**
 * `app_uninstalled` and `tokens_revoked` (the bot's token): the app was removed from a workspace or
 * an organisation, so everything kept about it is deleted, by this one listener: the installation,
 * the settings and the buttons' records of the workspace (of an organisation-wide installation:
 * of each of its workspaces), and what other parts registered with `onScopeDeleted` (watching: its
 * watched channels, queue, scores, flags and outcomes), for each of those workspaces. Bolt skips
 * authorization for these two events, since the tokens are gone already. A reinstall starts clean.
 */
import type { App } from '@slack/bolt';
import { type ScopeDeletedHook, SplitChatStore } from '../../chat/store/index.ts';
import { clearEverySetting } from '../../chat/store/types.ts';
import { teamScope, type SlackAppContext } from '../checks.ts';
import { installationKey } from '../installation-store.ts';
import { checkPrefixForScope } from '../oauth.ts';

export interface UninstallEvents {
  /** Runs `hook` for every scope an uninstall deletes; returns what stops it (the app stopping). */
  onScopeDeleted(hook: ScopeDeletedHook): () => void;
}

interface UninstallContext {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

export function registerUninstallEvents(app: App, ctx: SlackAppContext): UninstallEvents {
  const stores = ctx.state instanceof SplitChatStore ? ctx.state : undefined;
  // A state store that is not the split one (tests may pass their own) keeps its hooks here.
  const hooks = new Set<ScopeDeletedHook>();

  /** The installation's key: the organisation's for an organisation-wide installation, else the workspace's. */
  const keyOf = (context: UninstallContext, body: unknown): string | undefined => {
    const teamId = context.teamId ?? (body as { team_id?: string } | undefined)?.team_id;
    if (!ctx.config.oauth) return teamId ? teamScope(teamId) : undefined;
    try {
      return installationKey({ ...context, teamId });
    } catch {
      return undefined;
    }
  };

  const forget = async (context: UninstallContext, body: unknown, reason: string): Promise<void> => {
    const key = keyOf(context, body);
    if (!key) {
      ctx.logger.warn({ reason }, 'uninstall event without a workspace or organisation id; nothing deleted');
      return;
    }
    try {
      let scopes: string[];
      if (stores) {
        scopes = await stores.deleteScope(key, checkPrefixForScope);
      } else {
        await ctx.state.updateSettings(key, clearEverySetting());
        for (const hook of hooks) await hook(key);
        scopes = [key];
      }
      ctx.logger.info({ installation: key, reason, scopes: scopes.length }, 'deleted everything kept about the installation');
    } catch (err) {
      ctx.logger.error({ installation: key, reason, err: (err as Error).message }, 'could not delete the installation’s data');
    }
  };

  app.event('app_uninstalled', async ({ context, body }) => {
    await forget(context, body, 'app_uninstalled');
  });
  app.event('tokens_revoked', async ({ event, context, body }) => {
    const bots = (event as { tokens?: { bot?: unknown } }).tokens?.bot;
    if (Array.isArray(bots) && bots.length > 0) {
      await forget(context, body, 'tokens_revoked');
      return;
    }
    // Only user tokens: the app keeps none, so there is nothing to delete.
    ctx.logger.info({ team: context.teamId }, 'user tokens revoked; the app stores none');
  });

  return {
    onScopeDeleted(hook) {
      if (stores) return stores.onScopeDeleted(hook);
      hooks.add(hook);
      return () => void hooks.delete(hook);
    },
  };
}
