import { describe, expect, it } from 'vitest';
import { auditChannelFor, defaultModeFor, loadSlackConfig } from '../../adapters/slack/config.ts';

const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' };

describe('loadSlackConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadSlackConfig(base);
    expect(c).toMatchObject({
      port: 3000,
      host: undefined,
      slackApiUrl: 'https://slack.com/api/',
      command: '/detect',
      defaultMode: 'general',
      auditChannel: undefined,
      appToken: undefined,
      dedupTtlMs: 600_000,
      resultTtlMs: 3_600_000,
      maxTextChars: 750_000,
    });
  });

  it('reads per-workspace modes and audit channels, falling back to the app-wide ones', () => {
    const c = loadSlackConfig({
      ...base,
      SLACK_DEFAULT_MODE: 'academic',
      SLACK_DEFAULT_MODE_T0LAW: 'legal',
      SLACK_AUDIT_CHANNEL: 'C0ALL',
      SLACK_AUDIT_CHANNEL_T0LAW: 'G0LAWAUDIT',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
    });
    expect(defaultModeFor(c, 'T0LAW')).toBe('legal');
    expect(defaultModeFor(c, 'T0OTHER')).toBe('academic');
    expect(auditChannelFor(c, 'T0LAW')).toBe('G0LAWAUDIT');
    expect(auditChannelFor(c, undefined)).toBe('C0ALL');
    expect(c.slackApiUrl).toBe('http://127.0.0.1:9/api/');
  });

  it('stops with a sentence naming the variable on bad settings', () => {
    expect(() => loadSlackConfig({})).toThrow(/SLACK_BOT_TOKEN is not set/);
    expect(() => loadSlackConfig({ SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/SLACK_SIGNING_SECRET is not set/);
    expect(loadSlackConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }).appToken).toBe('xapp-1');
    expect(() => loadSlackConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xoxb-wrong' })).toThrow(/xapp-/);
    expect(() => loadSlackConfig({ ...base, SLACK_DEFAULT_MODE: 'legl' })).toThrow(/SLACK_DEFAULT_MODE="legl"/);
    expect(() => loadSlackConfig({ ...base, SLACK_DEFAULT_MODE_general: 'legal' })).toThrow(/not a Slack workspace id/);
    expect(() => loadSlackConfig({ ...base, SLACK_AUDIT_CHANNEL: '#audit' })).toThrow(/must be a channel id/);
    expect(() => loadSlackConfig({ ...base, SLACK_PORT: 'eighty' })).toThrow(/SLACK_PORT="eighty"/);
    expect(() => loadSlackConfig({ ...base, SLACK_API_URL: 'nope' })).toThrow(/SLACK_API_URL="nope"/);
    expect(() => loadSlackConfig({ ...base, SLACK_COMMAND: 'detect' })).toThrow(/SLACK_COMMAND/);
  });
});

describe('loadSlackConfig: installs to many workspaces (OAuth)', () => {
  const oauth = {
    SLACK_SIGNING_SECRET: 's',
    SLACK_CLIENT_ID: '111.222',
    SLACK_CLIENT_SECRET: 'cs',
    SLACK_STATE_SECRET: 'state',
    SLACK_INSTALLATION_KEY: 'k'.repeat(32),
  };

  it('is chosen by SLACK_CLIENT_ID, with the manifest’s scopes by default; single-workspace mode has none', () => {
    const c = loadSlackConfig(oauth);
    expect(c.botToken).toBeUndefined();
    expect(c.oauth).toEqual({
      clientId: '111.222',
      clientSecret: 'cs',
      stateSecret: 'state',
      scopes: [
        'commands',
        'chat:write',
        'users:read',
        'channels:read',
        'groups:read',
        'usergroups:read',
        'channels:history',
        'groups:history',
        'files:read',
      ],
      redirectUri: undefined,
      installationKey: 'k'.repeat(32),
      authorizationUrl: undefined,
    });
    expect(loadSlackConfig({ ...oauth, SLACK_SCOPES: 'commands, chat:write' }).oauth?.scopes).toEqual(['commands', 'chat:write']);
    expect(loadSlackConfig(base).oauth).toBeUndefined();
    expect(loadSlackConfig({ ...base, DATABASE_URL: 'postgresql://u@db/bots' }).databaseUrl).toBe('postgresql://u@db/bots');
  });

  it('names what is missing or conflicting', () => {
    expect(() => loadSlackConfig({ ...oauth, SLACK_CLIENT_SECRET: '' })).toThrow(/^SLACK_CLIENT_SECRET is not set: copy the Client Secret/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_STATE_SECRET: '' })).toThrow(/^SLACK_STATE_SECRET is not set/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_INSTALLATION_KEY: '' })).toThrow(/^SLACK_INSTALLATION_KEY is not set/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_INSTALLATION_KEY: 'short' })).toThrow(/at least 32 characters/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_APP_TOKEN: 'xapp-1' })).toThrow(/cannot be combined with SLACK_CLIENT_ID/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_SCOPES: 'commands;chat:write' })).toThrow(/SLACK_SCOPES=/);
    expect(() => loadSlackConfig({ ...oauth, SLACK_REDIRECT_URI: 'not a url' })).toThrow(
      /SLACK_REDIRECT_URI="not a url" is not a valid URL/,
    );
    expect(() => loadSlackConfig({ ...base, DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL is not a postgres:\/\//);
    expect(() => loadSlackConfig({ ...base, REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL="localhost:6379" is not a redis:\/\//);
  });
});

describe('SLACK_BOT_TOKEN format', () => {
  it('refuses a value that is not a bot token, naming its kind and never echoing it', () => {
    const env = { SLACK_SIGNING_SECRET: 's' };
    expect(() => loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'fake' })).toThrow(
      /SLACK_BOT_TOKEN is not a Slack bot token: .*starts with xoxb-/,
    );
    expect(() => loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'xoxp-123-456' })).toThrow(/SLACK_BOT_TOKEN is a user token \(xoxp-\)/);
    expect(() => loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'xapp-1-A-1-abc' })).toThrow(/an app-level token \(xapp-\)/);
    expect(() => loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'xoxe.xoxb-1-abc' })).toThrow(/rotating token/);
    try {
      loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'secret-value-123' });
    } catch (err) {
      expect((err as Error).message).not.toContain('secret-value');
    }
    expect(loadSlackConfig({ ...env, SLACK_BOT_TOKEN: 'xoxb-1-2' }).botToken).toBe('xoxb-1-2');
  });
});
