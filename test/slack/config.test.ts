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
      maxTextChars: 50_000,
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
