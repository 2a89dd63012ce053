/**
 * The manifest for installs to many workspaces declares what the OAuth mode needs (redirect URL, the
 * uninstall events, org-wide installs, token rotation) and otherwise the same app as manifest.yml.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_SCOPES, REDIRECT_PATH } from '../../adapters/slack/oauth.ts';

const load = async (name: string): Promise<any> => parse(await readFile(new URL(`../../adapters/slack/${name}`, import.meta.url), 'utf8'));

describe('adapters/slack/manifest-oauth.yml', () => {
  it('adds the redirect URL, the uninstall events, org-wide installs and token rotation to the single-workspace manifest', async () => {
    const single = await load('manifest.yml');
    const many = await load('manifest-oauth.yml');
    expect(many.features).toEqual(single.features);
    expect(many.display_information).toEqual(single.display_information);
    expect(many.oauth_config.scopes.bot).toEqual([...DEFAULT_SCOPES]);
    expect(many.oauth_config.redirect_urls).toEqual([`https://your-host.example.com${REDIRECT_PATH}`]);
    expect(many.settings.event_subscriptions).toEqual({
      request_url: 'https://your-host.example.com/slack/events',
      bot_events: ['message.channels', 'message.groups', 'app_uninstalled', 'tokens_revoked'],
    });
    expect(many.settings).toMatchObject({ org_deploy_enabled: true, token_rotation_enabled: true, socket_mode_enabled: false });
    expect(single.settings).toMatchObject({ org_deploy_enabled: false, token_rotation_enabled: false });
  });
});
