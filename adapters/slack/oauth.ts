/**
 * Installing the app in many workspaces with Bolt's own OAuth support: Bolt serves `/slack/install`
 * and `/slack/oauth_redirect`, exchanges the code, signs the state (a JWT under `SLACK_STATE_SECRET`,
 * bound to the installer's browser by a cookie, so any replica can finish an install another one
 * started; made single-use here through the short-lived store) and rotates tokens; the installations live in the durable store (installation-store.ts).
 * This module adds the pages people see and what the app answers for a workspace that has no
 * installation (any more); uninstalls are handled in listeners/uninstall-event.ts.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyMiddlewareArgs, HTTPReceiverOptions, Installation, InstallURLOptions, Middleware, StateStore } from '@slack/bolt';
// @slack/oauth is CommonJS whose named exports Node cannot detect: take them from the default export.
import slackOAuth from '@slack/oauth';
import type { Logger } from 'pino';
import type { ShortLivedStore, SplitChatStore } from '../chat/store/index.ts';

const { ClearStateStore, InvalidStateError } = slackOAuth;
import { type DurableInstallationStore, InstallationNotFoundError } from './installation-store.ts';

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/** What the manifest asks for (adapters/slack/manifest.yml); `SLACK_SCOPES` overrides it. */
export const DEFAULT_SCOPES = [
  'commands',
  'chat:write',
  'users:read',
  'channels:read',
  'groups:read',
  'usergroups:read',
  // Member checks and watched channels read history (manifest.yml says which feature needs which).
  'channels:history',
  'groups:history',
  // The shortcut downloads a message's documents (url_private) to check them.
  'files:read',
] as const;

export interface SlackOAuthConfig {
  /** Basic Information → App Credentials. Env `SLACK_CLIENT_ID`. */
  clientId: string;
  /** Env `SLACK_CLIENT_SECRET`. */
  clientSecret: string;
  /** Signs the OAuth `state` (any long random string, the same on every replica). Env `SLACK_STATE_SECRET`. */
  stateSecret: string;
  /** Bot scopes requested. Env `SLACK_SCOPES` (comma-separated); default `DEFAULT_SCOPES`. */
  scopes: string[];
  /** Must match a Redirect URL of the app's OAuth settings when several are listed. Env `SLACK_REDIRECT_URI`; default unset. */
  redirectUri: string | undefined;
  /** Encrypts stored installations (tokens) at rest. Env `SLACK_INSTALLATION_KEY`; at least 32 characters. */
  installationKey: string;
  /** Slack's authorize page, for tests. Env `SLACK_AUTHORIZE_URL`; default Slack's. */
  authorizationUrl: string | undefined;
}

export const NOT_INSTALLED_REPLY =
  'textdetect is not installed in this workspace (any more), so nothing was checked. A workspace admin can install it again from the app’s install page.';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1d1c1d}
a.button{display:inline-block;background:#4a154b;color:#fff;padding:.6rem 1.2rem;border-radius:.3rem;text-decoration:none;font-weight:600}
code{background:#f4f4f4;padding:0 .25rem;border-radius:.2rem}</style></head>
<body>${body}</body></html>`;
}

/** `/slack/install`: what the app does and asks for, and the "Add to Slack" button (Bolt supplies the signed URL). */
export function installPage(url: string, scopes: readonly string[]): string {
  return page(
    'Add textdetect to Slack',
    `<h1>textdetect for Slack</h1>
<p>Moderators check, privately, how likely a message or a pasted text was written by an AI: <code>/detect</code>, or a
message's ⋯ menu → <em>Check for AI text</em>. Only the person who asked sees the result.</p>
<p><a class="button" href="${escapeHtml(url)}">Add to Slack</a></p>
<p>The app asks for: ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}. It never stores the texts it checks
beyond the time their result's buttons work, and an uninstall deletes everything it kept about the workspace.</p>
<p>Installing for a whole Enterprise Grid organisation: choose the organisation at the top right of Slack's next page.</p>`,
  );
}

/** `/slack/oauth_redirect` after a successful install: what to do next. */
export function installedPage(installation: Installation): string {
  const next = `<ol>
<li>In any channel, type <code>/detect help</code>, then <code>/detect academic</code> followed by a paragraph.</li>
<li>On any message: ⋯ → <em>Check for AI text</em>. Only you see the result.</li>
<li>Workspace admins: <code>/detect-settings</code> sets the default mode, an audit channel (invite the app there with
<code>/invite @textdetect</code>) and who may check others' messages.</li>
</ol>`;
  if (installation.isEnterpriseInstall) {
    const org = installation.enterprise?.name ?? installation.enterprise?.id ?? 'your organisation';
    const add =
      installation.enterpriseUrl && installation.appId
        ? `${installation.enterpriseUrl}manage/organization/apps/profile/${installation.appId}/workspaces/add`
        : undefined;
    return page(
      'textdetect is installed',
      `<h1>textdetect is installed for ${escapeHtml(org)}</h1>
<p>Next, an organisation admin chooses the workspaces that get it${
        add ? `: <a class="button" href="${escapeHtml(add)}">Add to workspaces</a>` : ' (Slack admin → Integrations → Installed apps).'
      }</p>
<p>Then, in those workspaces:</p>${next}`,
    );
  }
  const team = installation.team?.id ?? '';
  const name = installation.team?.name ?? 'your workspace';
  const open = installation.appId ? `slack://app?team=${team}&id=${installation.appId}` : `slack://open?team=${team}`;
  return page(
    'textdetect is installed',
    `<h1>textdetect is installed in ${escapeHtml(name)}</h1>
<p><a class="button" href="${escapeHtml(open)}">Open Slack</a> or <a href="https://app.slack.com/client/${escapeHtml(team)}">open it in the browser</a>.</p>
<p>What to do next:</p>${next}`,
  );
}

/** How long an install link (its `state`) works; Bolt's default, and the state cookie's lifetime. */
export const STATE_TTL_SECONDS = 600;

/** A state that was already used to finish an install. */
export class StateAlreadyUsedError extends InvalidStateError {
  override name = 'StateAlreadyUsedError';
}

/**
 * Bolt's signed state (`ClearStateStore`: a JWT under `SLACK_STATE_SECRET`, 10 minutes), used once:
 * the first redirect that presents a valid state claims it in the short-lived store (Redis shared by
 * every replica, else SQLite) for longer than it lives, and every later one is refused, so a state
 * and its cookie cannot install a second workspace. Only a hash of the state is kept.
 */
export class SingleUseStateStore implements StateStore {
  readonly #signed: InstanceType<typeof ClearStateStore>;
  readonly #claims: Pick<ShortLivedStore, 'claim'>;

  constructor(stateSecret: string, claims: Pick<ShortLivedStore, 'claim'>) {
    this.#signed = new ClearStateStore(stateSecret, STATE_TTL_SECONDS);
    this.#claims = claims;
  }

  generateStateParam(installOptions: InstallURLOptions, now: Date): Promise<string> {
    return this.#signed.generateStateParam(installOptions, now);
  }

  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    // The signature and age first: a forged state never reaches the store.
    const options = await this.#signed.verifyStateParam(now, state);
    const key = `slack:oauth-state:${createHash('sha256').update(state).digest('base64url')}`;
    if (!(await this.#claims.claim(key, (STATE_TTL_SECONDS + 60) * 1000))) {
      throw new StateAlreadyUsedError('This state was already used to finish an install.');
    }
    return options;
  }
}

/** `/slack/oauth_redirect` when the install did not finish: why, and how to start again. */
export function installFailedPage(code: string | undefined, alreadyUsed = false): { status: number; html: string } {
  const again = `<p><a class="button" href="${INSTALL_PATH}">Start again</a></p>`;
  if (alreadyUsed) {
    return {
      status: 400,
      html: page(
        'Install link already used',
        `<h1>This install link was already used</h1>
<p>Each install link finishes one install. Nothing more was installed; to install the app in another workspace, start again.</p>${again}`,
      ),
    };
  }
  if (code === 'slack_oauth_installer_authorization_error') {
    return { status: 400, html: page('Install cancelled', `<h1>The install was cancelled</h1><p>Nothing was installed.</p>${again}`) };
  }
  if (code === 'slack_oauth_invalid_state' || code === 'slack_oauth_missing_state' || code === 'slack_oauth_missing_code') {
    return {
      status: 400,
      html: page(
        'Install link expired',
        `<h1>This install link has expired or was opened in another browser</h1>
<p>Install links work for 10 minutes, in the browser that opened the install page. Nothing was installed.</p>${again}`,
      ),
    };
  }
  return {
    status: 502,
    html: page(
      'Install failed',
      `<h1>Slack did not complete the install</h1><p>Nothing was installed (reason: <code>${escapeHtml(code ?? 'unknown')}</code>).
Try again; if it keeps failing, tell the app's operator.</p>${again}`,
    ),
  };
}

/** The OAuth part of the HTTP receiver's options: Bolt's installer with our store and pages. */
export function oauthReceiverOptions(
  oauth: SlackOAuthConfig,
  installationStore: DurableInstallationStore,
  clientOptions: { slackApiUrl: string },
  logger: Logger,
  claims: Pick<ShortLivedStore, 'claim'>,
): Pick<HTTPReceiverOptions, 'clientId' | 'clientSecret' | 'scopes' | 'installationStore' | 'redirectUri' | 'installerOptions'> {
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    scopes: oauth.scopes,
    installationStore,
    ...(oauth.redirectUri ? { redirectUri: oauth.redirectUri } : {}),
    installerOptions: {
      installPath: INSTALL_PATH,
      redirectUriPath: REDIRECT_PATH,
      // The state cookie ties the redirect to the browser that opened the install page (CSRF);
      // the store makes each state single-use.
      stateVerification: true,
      stateStore: new SingleUseStateStore(oauth.stateSecret, claims),
      stateCookieExpirationSeconds: STATE_TTL_SECONDS,
      // oauth.v2.access and auth.test at the configured Web API address (tests, egress proxies).
      clientOptions,
      ...(oauth.authorizationUrl ? { authorizationUrl: oauth.authorizationUrl } : {}),
      renderHtmlForInstallPath: (url: string) => installPage(url, oauth.scopes),
      callbackOptions: {
        success: (installation: Installation, _options: InstallURLOptions, _req: IncomingMessage, res: ServerResponse) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(installedPage(installation));
        },
        failure: (error: Error & { code?: string }, _options: InstallURLOptions, _req: IncomingMessage, res: ServerResponse) => {
          logger.warn({ code: error.code, err_name: error.name }, 'Slack install did not finish');
          const { status, html } = installFailedPage(error.code, error instanceof StateAlreadyUsedError);
          res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
          res.end(html);
        },
      },
    },
  };
}

/** Where a workspace's check records start in the short-lived store (see ResultCache in checks.ts). */
export function checkPrefixForScope(scope: string): string {
  return `slack:check:${scope.startsWith('slack:') ? scope.slice('slack:'.length) : scope}:`;
}

/**
 * Remembers which workspaces an organisation-wide installation serves, so that uninstalling it
 * deletes each workspace's settings and records too. Once per workspace per process; never delays
 * the request.
 */
export function orgLinkMiddleware(stores: SplitChatStore, logger: Logger): Middleware<AnyMiddlewareArgs> {
  const linked = new Set<string>();
  return async ({ context, next }) => {
    const { enterpriseId, teamId, isEnterpriseInstall } = context;
    if (isEnterpriseInstall && enterpriseId && teamId && teamId !== enterpriseId && !linked.has(teamId)) {
      linked.add(teamId);
      stores.durable.linkScope(`slack:${enterpriseId}`, `slack:${teamId}`).catch((err: unknown) => {
        linked.delete(teamId);
        logger.warn({ err: (err as Error).message }, 'could not record a workspace of an organisation-wide installation');
      });
    }
    await next();
  };
}

/** True when Bolt could not authorize a request because no installation exists for its workspace. */
export function isInstallationMissing(error: unknown): boolean {
  for (let e = error as { original?: unknown } | undefined, depth = 0; e && depth < 5; e = e.original as typeof e, depth++) {
    if (e instanceof InstallationNotFoundError) return true;
  }
  return false;
}

/**
 * Wraps the app's error handler: a request from a workspace without an installation (events that
 * arrive after an uninstall, a command from a workspace whose installation was removed) is
 * acknowledged and logged as information, not as an error; a person who typed a command is told
 * the app is not installed.
 */
export function notInstalledErrorHandler(
  logger: Logger,
  slackApiUrl: string,
  fallback: (args: { error: Error; body: unknown }) => Promise<void>,
): (args: { error: Error; body: unknown }) => Promise<void> {
  return async (args) => {
    if (!isInstallationMissing(args.error)) return fallback(args);
    const body = args.body as Record<string, unknown> | undefined;
    let payload = body;
    try {
      if (typeof body?.payload === 'string') payload = JSON.parse(body.payload) as Record<string, unknown>;
    } catch {
      payload = undefined;
    }
    const event = payload?.event as { type?: unknown } | undefined;
    logger.info(
      { type: payload?.type ?? (payload?.command ? 'slash_command' : undefined), event_type: event?.type },
      'request for a workspace without an installation (uninstalled?); acknowledged, nothing done',
    );
    const responseUrl = typeof payload?.response_url === 'string' ? payload.response_url : undefined;
    if (responseUrl && isSlackHost(responseUrl, slackApiUrl)) {
      await fetch(responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text: NOT_INSTALLED_REPLY }),
        signal: AbortSignal.timeout(5_000),
      })
        .then((res) => res.arrayBuffer())
        .catch((err: unknown) => logger.warn({ err_name: (err as Error).name }, 'could not tell the user the app is not installed'));
    }
  };
}

function isSlackHost(url: string, slackApiUrl: string): boolean {
  try {
    const u = new URL(url);
    return (
      (u.protocol === 'https:' && (u.hostname === 'hooks.slack.com' || u.hostname.endsWith('.slack.com'))) ||
      u.host === new URL(slackApiUrl).host
    );
  } catch {
    return false;
  }
}
