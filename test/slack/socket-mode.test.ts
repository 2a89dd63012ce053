/**
 * Socket Mode (SLACK_APP_TOKEN set): the app opens its connection through apps.connections.open on
 * the fake Web API, then receives envelopes over a real WebSocket on loopback and acks each one by
 * envelope_id, as Slack's Socket Mode protocol requires.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { connectDetectionBackend, type DetectionBackend } from '../../adapters/chat/backend.ts';
import { startSlackApp, type RunningSlackApp } from '../../adapters/slack/app.ts';
import { loadSlackConfig } from '../../adapters/slack/config.ts';
import { createApiKey, startService, type RunningService } from '../../src/service/index.ts';
import { FakeSlack, triggerId } from '../../demo/slack/fake-slack.ts';
import { BOT_TOKEN, LONG_TEXT, slashCommandFields } from './harness.ts';
import { DetectProxy } from './proxy.ts';
import { WAIT_MS } from '../helpers/load.ts';

let dir: string;
let service: RunningService;
let proxy: DetectProxy;
let wss: WebSocketServer;
let slack: FakeSlack;
let backend: DetectionBackend;
let app: RunningSlackApp;
let socket: WebSocket | undefined;
const acks = new Map<string, { at: number; payload: unknown }>();
const ackWaiters = new Map<string, (v: { at: number; payload: unknown }) => void>();

function waitForAck(envelopeId: string): Promise<{ at: number; payload: unknown }> {
  const seen = acks.get(envelopeId);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => ackWaiters.set(envelopeId, resolve));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'textdetect-slack-socket-'));
  const file = join(dir, 'keys.json');
  const { key } = await createApiKey(file, { name: 'socket-test' });
  service = await startService({ host: '127.0.0.1', port: 0, apiKeysFile: file, logger: pino({ level: 'silent' }) });
  proxy = new DetectProxy(service.url);
  await proxy.start();

  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { envelope_id: string; payload?: unknown };
      const entry = { at: performance.now(), payload: msg.payload };
      acks.set(msg.envelope_id, entry);
      ackWaiters.get(msg.envelope_id)?.(entry);
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: 1,
        debug_info: { host: 'fake', approximate_connection_time: 3600 },
        connection_info: { app_id: 'A0TEST' },
      }),
    );
  });
  const port = (wss.address() as AddressInfo).port;

  slack = new FakeSlack({ botToken: BOT_TOKEN, socketUrl: `ws://127.0.0.1:${port}/link` });
  await slack.start();
  backend = await connectDetectionBackend({ DETECT_API_URL: proxy.url, DETECT_API_KEY: key });
  const config = loadSlackConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_APP_TOKEN: 'xapp-1-A0TEST-1-secret',
    SLACK_API_URL: slack.apiUrl,
    DATA_DIR: join(dir, 'data'),
  });
  app = await startSlackApp(config, { detector: backend.detector, logger: pino({ level: 'silent' }) });
});

afterAll(async () => {
  await app?.stop();
  await backend?.close();
  for (const client of wss?.clients ?? []) client.terminate();
  await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
  await slack?.stop();
  await proxy?.stop();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Socket Mode', () => {
  it('connects with the app token and serves no HTTP', () => {
    expect(app.eventsUrl).toBeUndefined();
    const open = slack.callsOf('apps.connections.open');
    expect(open.length).toBeGreaterThan(0);
    expect(open[0]?.token).toBe('xapp-1-A0TEST-1-secret');
  });

  it('acks a slash command envelope at once, even with a slow service, then answers ephemerally', async () => {
    proxy.delayMs = 3500;
    try {
      const { fields, responseUrl } = slashCommandFields({ slack }, `legal ${LONG_TEXT}`, { token: 'unused' });
      const envelopeId = 'env-command-1';
      const sent = performance.now();
      socket!.send(JSON.stringify({ envelope_id: envelopeId, type: 'slash_commands', accepts_response_payload: true, payload: fields }));
      const ack = await waitForAck(envelopeId);
      const ackMs = ack.at - sent;
      console.info(`[measure] Socket Mode ack with a 3.5 s service: ${ackMs.toFixed(1)} ms`);
      expect(ackMs).toBeLessThan(3000);
      const id = responseUrl.split('/').pop();
      const reply = await slack.waitFor((c) => c.method === 'response_url' && c.responseId === id, WAIT_MS);
      expect(reply.args.response_type).toBe('ephemeral');
      expect(JSON.stringify(reply.args.blocks)).toContain('Mode: *legal*');
      expect(proxy.detectBodies.at(-1)).toMatchObject({ text: LONG_TEXT, mode: 'legal' });
    } finally {
      proxy.delayMs = 0;
    }
  });

  it('answers help in the ack payload itself', async () => {
    const envelopeId = 'env-help-1';
    socket!.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: 'slash_commands',
        accepts_response_payload: true,
        payload: {
          team_id: slack.teamId,
          channel_id: 'C0GENERAL',
          user_id: 'U0MOD',
          command: '/detect',
          text: 'help',
          response_url: slack.responseUrl(),
          trigger_id: triggerId(),
        },
      }),
    );
    const ack = await waitForAck(envelopeId);
    expect(JSON.stringify(ack.payload)).toContain('/detect <mode> <text>');
  });

  it('handles the message shortcut over the socket', async () => {
    const envelopeId = 'env-shortcut-1';
    socket!.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: 'interactive',
        accepts_response_payload: false,
        payload: {
          type: 'message_action',
          callback_id: 'detect_message',
          trigger_id: triggerId(),
          response_url: slack.responseUrl(),
          team: { id: slack.teamId, domain: 'test' },
          user: { id: 'U0MOD', team_id: slack.teamId },
          channel: { id: 'C0GENERAL', name: 'general' },
          message_ts: '1700000900.000100',
          message: { type: 'message', user: 'U0AUTHOR', ts: '1700000900.000100', text: LONG_TEXT },
        },
      }),
    );
    await waitForAck(envelopeId);
    const reply = await slack.waitFor((c) => c.method === 'chat.postEphemeral' && JSON.stringify(c.args.blocks).includes('1700000900'));
    expect(reply.args).toMatchObject({ channel: 'C0GENERAL', user: 'U0MOD' });
  });

  it('acknowledges an envelope no listener handles (another app’s command), so Slack does not retry it', async () => {
    const envelopeId = 'env-unknown-command-1';
    const sent = performance.now();
    socket!.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: 'slash_commands',
        accepts_response_payload: true,
        payload: {
          team_id: slack.teamId,
          channel_id: 'C0GENERAL',
          user_id: 'U0MOD',
          command: '/weather',
          text: '94070',
          response_url: slack.responseUrl(),
          trigger_id: triggerId(),
        },
      }),
    );
    const ack = await waitForAck(envelopeId);
    // Inside Slack's 3 s, with room for a loaded machine.
    expect(ack.at - sent).toBeLessThan(2_500);
  });
});
