/**
 * Web API clients for work that no request carries a token for: watching (reading a queued message
 * again, users.info, usergroups.users.list, chat.getPermalink, posting a review card).
 *
 * With one workspace that is the app's own client (it holds `SLACK_BOT_TOKEN`). With installs to many
 * workspaces the app's client has no token, so each call first asks Bolt's installer to authorize
 * the workspace, as Bolt does for a request: it reads the installation from the installation store
 * and refreshes a rotating token that is about to expire (through the store's one-refresher lease).
 */
import { webApi, type AnyMiddlewareArgs, type InstallationQuery, type Middleware } from '@slack/bolt';
import type { DurableStore } from '../chat/store/index.ts';
import { isInstallationMissing } from './oauth.ts';
import type { WorkspaceClients } from './watch/api.ts';

type WebClient = webApi.WebClient;

/** The part of Bolt's `InstallProvider` used here (the HTTP receiver's `installer`). */
export interface Authorizer {
  authorize(source: InstallationQuery<boolean>): Promise<{ botToken?: string | undefined }>;
}

/** One workspace: the app's client, which carries SLACK_BOT_TOKEN. */
export function singleWorkspaceClients(client: WebClient): WorkspaceClients {
  return { forTeam: async () => client };
}

interface Placement {
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
}

const MAX_CLIENTS = 1_000;

export class InstalledWorkspaceClients implements WorkspaceClients {
  readonly #authorizer: Authorizer;
  readonly #durable: Pick<DurableStore, 'findParentScope'>;
  readonly #options: webApi.WebClientOptions;
  /** Which installation serves a workspace (its own, or its organisation's), as requests showed it. */
  readonly #placements = new Map<string, Placement>();
  /** By token: a rotated token gets a new client. */
  readonly #clients = new Map<string, WebClient>();

  constructor(authorizer: Authorizer, durable: Pick<DurableStore, 'findParentScope'>, options: webApi.WebClientOptions) {
    this.#authorizer = authorizer;
    this.#durable = durable;
    this.#options = options;
  }

  /** Notes, from each authorized request, whether its workspace is served by an organisation-wide installation. */
  middleware(): Middleware<AnyMiddlewareArgs> {
    return async ({ context, next }) => {
      const { teamId, enterpriseId, isEnterpriseInstall } = context;
      // Always the latest: a workspace may move between its own installation and its organisation's.
      if (teamId) {
        if (this.#placements.size > 50_000 && !this.#placements.has(teamId)) this.#placements.clear();
        this.#placements.set(teamId, { enterpriseId, isEnterpriseInstall: isEnterpriseInstall === true });
      }
      await next();
    };
  }

  async forTeam(teamId: string): Promise<WebClient> {
    let placement: Placement = this.#placements.get(teamId) ?? { enterpriseId: undefined, isEnterpriseInstall: false };
    let token: string | undefined;
    try {
      token = (await this.#authorizer.authorize({ teamId, ...placement })).botToken;
    } catch (err) {
      // After a restart, a workspace of an organisation-wide installation is found through the link
      // recorded when it first sent a request (oauth.ts, orgLinkMiddleware).
      if (!isInstallationMissing(err)) throw err;
      this.#placements.delete(teamId);
      const parent = await this.#durable.findParentScope(`slack:${teamId}`);
      if (!parent || placement.isEnterpriseInstall) throw err;
      placement = { enterpriseId: parent.replace(/^slack:/, ''), isEnterpriseInstall: true };
      token = (await this.#authorizer.authorize({ teamId, ...placement })).botToken;
    }
    if (!token) throw new Error(`The Slack installation serving ${teamId} has no bot token.`);
    this.#placements.set(teamId, placement);
    let client = this.#clients.get(token);
    if (!client) {
      if (this.#clients.size >= MAX_CLIENTS) this.#clients.clear();
      client = new webApi.WebClient(token, this.#options);
      this.#clients.set(token, client);
    }
    return client;
  }
}
