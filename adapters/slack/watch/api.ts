/**
 * What the rest of the Slack app sees of watching (`SlackAppContext.watch`), and how watching gets a
 * Web API client for a workspace. An interface of its own so that the check context (checks.ts) does
 * not import the watcher that imports the check context: runtime.ts implements it, app.ts wires it.
 */
import type { webApi } from '@slack/bolt';
import type { WatchSettings } from '../../chat/watch/config.ts';
import type { WatchStore } from '../../chat/store/types.ts';
import type { Watcher } from '../../chat/watch/watcher.ts';

type WebClient = webApi.WebClient;

/**
 * A Web API client carrying a workspace's bot token. With one workspace it is the app's own client;
 * with installs to many workspaces it is authorized from the workspace's installation (Bolt's
 * installer, which also rotates the token), since background work has no request to borrow a token from.
 */
export interface WorkspaceClients {
  forTeam(teamId: string): Promise<WebClient>;
}

export interface SlackWatchingApi {
  readonly store: WatchStore;
  readonly watcher: Watcher;
  readonly settings: WatchSettings;
  /** Workspace admins and owners, and members of the checkers group. */
  isModerator(teamId: string, userId: string): Promise<boolean>;
  /** Moderators and members of an exempt user group are never scored. */
  isExempt(teamId: string, userId: string, exemptIds: string[]): Promise<boolean>;
  /** The review channel of a workspace: its audit channel. */
  reviewChannel(teamId: string): Promise<string | undefined>;
  /** `/detect-settings delete-data confirm`: everything the app keeps about a workspace. */
  removeTeam(teamId: string, reason: string): Promise<void>;
  ready(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}
