/** The manifest must declare exactly what the code listens for, with the scopes the code's calls need. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadSlackConfig } from '../../adapters/slack/config.ts';
import { DEFAULT_SCOPES } from '../../adapters/slack/oauth.ts';
import { SETTINGS_COMMAND } from '../../adapters/slack/settings.ts';
import { MESSAGE_SHORTCUT_CALLBACK_ID, MESSAGE_SHORTCUT_NAME } from '../../adapters/slack/listeners/detect-message-shortcut.ts';

describe('adapters/slack/manifest.yml', () => {
  it('declares the command, the shortcut, interactivity and the scopes', async () => {
    const manifest = await readFile(new URL('../../adapters/slack/manifest.yml', import.meta.url), 'utf8');
    const command = loadSlackConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' }).command;
    expect(manifest).toMatch(new RegExp(`^\\s+- command: ${command}$`, 'm'));
    expect(manifest).toMatch(
      new RegExp(`^\\s+- name: ${MESSAGE_SHORTCUT_NAME}\\n\\s+type: message\\n\\s+callback_id: ${MESSAGE_SHORTCUT_CALLBACK_ID}$`, 'm'),
    );
    expect(manifest).toMatch(/^\s+interactivity:\n\s+is_enabled: true\n\s+request_url: https:\/\/\S+\/slack\/events$/m);
    const scopes = [...manifest.matchAll(/^\s+- ([a-z]+:[a-z.]+|commands)$/gm)].map((m) => m[1]);
    // The manifest asks for what an OAuth install asks for by default.
    expect(scopes).toEqual([...DEFAULT_SCOPES]);
    // `/detect @member` needs the member's id, which Slack sends only for escaped commands.
    // The lines up to `should_escape` must belong to the same command (no `- command:` in between).
    expect(manifest).toMatch(new RegExp(`^\\s+- command: ${command}\\n(\\s+(?!- command:)\\S.*\\n)*?\\s+should_escape: true$`, 'm'));
    // Watching: the message events of public and private channels, and the removal of the app.
    expect(manifest).toMatch(
      /^\s+event_subscriptions:\n\s+request_url: https:\/\/\S+\/slack\/events\n\s+bot_events:\n(\s+#.*\n)*\s+- message\.channels\n\s+- message\.groups\n(\s+#.*\n)*\s+- app_uninstalled\n\s+- tokens_revoked$/m,
    );
    expect(manifest).toMatch(new RegExp(`^\\s+- command: ${SETTINGS_COMMAND}\\n(\\s+\\S.*\\n)*?\\s+should_escape: true$`, 'm'));
    // Tabs are invalid YAML indentation.
    expect(manifest).not.toContain('\t');
  });
});
