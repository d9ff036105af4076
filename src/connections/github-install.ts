import { HooklineError } from "../errors.ts";
import {
  appPrivateKey,
  PRIVATE_APP,
  PRIVATE_KEY_VAR,
  SERVICE_APP,
  SERVICE_APP_ENV,
  signAppJwt,
} from "./github-app.ts";
import type { ConnectionVars } from "./verdict.ts";

type Env = Record<string, string | undefined>;

/** The REST API a connection's App is reached at: `base_url`, GHES's `enterprise_url`, github.com. */
export function githubApiBase(vars: ConnectionVars, env: Env = process.env): string {
  const base = vars("base_url");
  if (base) return base.replace(/\/+$/, "");
  const enterprise = vars("enterprise_url") ?? env.GITHUB_ENTERPRISE_URL;
  return enterprise ? new URL("api/v3", enterprise).href : "https://api.github.com";
}

/** What GitHub says of an installation (`GET /app/installations/{id}`), the fields read here. */
interface Installation {
  id: number;
  app_slug?: string;
  target_id?: number;
  target_type?: string;
  account?: { login?: string };
  repository_selection?: string;
  permissions?: Record<string, string>;
  events?: string[];
  updated_at?: string;
}

/** The App an installation belongs to: the connection's own (it has a key), else the service's. */
function whichApp(vars: ConnectionVars, env: Env) {
  const own = vars(PRIVATE_KEY_VAR) !== undefined;
  const appId = own ? vars("app_id") : env[SERVICE_APP_ENV.appId];
  const key = appPrivateKey(own ? vars : (n) => (n === "auth_type" ? SERVICE_APP : vars(n)), env);
  if (!appId || !/^\d+$/.test(appId) || !key) {
    throw new HooklineError(
      "bad_request",
      own
        ? "this connection has a private_key but no app_id (the GitHub App's numeric id)"
        : `no GitHub App: set the connection's app_id and private_key, or the service's ${SERVICE_APP_ENV.appId} and ${SERVICE_APP_ENV.privateKey}`,
    );
  }
  return { appId, key, authType: own ? PRIVATE_APP : SERVICE_APP };
}

/**
 * The vars that connect a github connection to GitHub App installation `installationId`, as
 * AutoKitteh saves them after GitHub's redirect (`installation_id`): checked with GitHub first
 * (`GET /app/installations/{id}` with an App JWT), so an id from a URL is never taken on trust.
 * Refused (HooklineError) when the App is not set up, or GitHub does not know the installation.
 * @example await installationVars(vars, "77") // { app_id: "4242", install_id: "77", auth_type: "oauthPrivate", target_name: "octo", … }
 */
export async function installationVars(
  vars: ConnectionVars,
  installationId: string,
  options: { env?: Env; fetch?: typeof fetch } = {},
): Promise<Record<string, string>> {
  const env = options.env ?? process.env;
  if (!/^\d{1,19}$/.test(installationId)) {
    throw new HooklineError("bad_request", "installation_id: a GitHub installation id is a number");
  }
  const { appId, key, authType } = whichApp(vars, env);
  const now = Math.floor(Date.now() / 1000);
  const jwt = signAppJwt({ iat: now - 60, exp: now + 540, iss: Number(appId) }, key, "RS256");
  const url = `${githubApiBase(vars, env)}/app/installations/${installationId}`;
  const res = await (options.fetch ?? fetch)(url, {
    headers: { authorization: `Bearer ${jwt}`, accept: "application/vnd.github+json" },
  });
  const found = res.ok ? ((await res.json()) as Installation) : null;
  if (!found || String(found.id) !== installationId) {
    throw new HooklineError(
      "bad_request",
      `GitHub does not know installation ${installationId} of App ${appId} (${res.status})`,
    );
  }
  return savedVars(found, appId, installationId, authType);
}

/** AutoKitteh's names for what it keeps of an installation. */
function savedVars(i: Installation, appId: string, installationId: string, authType: string) {
  const name = i.account?.login ?? "";
  const out: Record<string, string> = {
    app_id: appId,
    app_name: i.app_slug ?? "",
    auth_type: authType,
    install_id: installationId,
    target_id: i.target_id === undefined ? "" : String(i.target_id),
    target_name: name,
    target_type: i.target_type ?? "",
    repositories: i.repository_selection ?? "",
    permissions: Object.entries(i.permissions ?? {})
      .map(([k, v]) => `${k}:${v}`)
      .join(" "),
    events: (i.events ?? []).join(" "),
    updated_at: i.updated_at ?? "",
  };
  out[`install_key__${appId}__${installationId}`] = name;
  return out;
}

/** The settings of the service's own App and of GitHub's web pages (the install page's host). */
export const INSTALL_ENV = {
  /** The service's App's name (its slug), AutoKitteh's `GITHUB_APP_NAME` with the `SVC_` prefix. */
  appName: "SVC_GITHUB_APP_NAME",
  /** GitHub's web address, `https://github.com` unless set (a stand-in, a proxy). */
  webUrl: "SVC_OAUTH_GITHUB_WEB_URL",
} as const;

/** What a github connection needs before its App can be installed from the browser. */
export const NO_INSTALLABLE_APP =
  "set the connection's app_id, app_name and private_key (its own GitHub App), or the " +
  `service's ${SERVICE_APP_ENV.appId}, ${SERVICE_APP_ENV.privateKey} and ${INSTALL_ENV.appName}`;

/** The words of a refusal for an App known but for its name (its install page's path). */
export const NO_APP_NAME =
  "the GitHub App has no name: set the connection's app_name var (the App's slug, as in " +
  `https://github.com/apps/<app_name>) or the service's GITHUB_APP_NAME (or ${INSTALL_ENV.appName})`;

/** The name (slug) of the App: a connection's own App's `app_name`, else the service's. */
function appName(vars: ConnectionVars, env: Env, own: boolean): string | undefined {
  return (own ? vars("app_name") : undefined) || env[INSTALL_ENV.appName] || env.GITHUB_APP_NAME;
}

/**
 * Why a connection's App cannot be installed from the browser (`installableApp` is null): its
 * name alone missing (NO_APP_NAME), or more (NO_INSTALLABLE_APP).
 * @example notInstallable((n) => ({ private_key: "…", app_id: "1" })[n], {}) // NO_APP_NAME
 */
export function notInstallable(vars: ConnectionVars, env: Env = process.env): string {
  const own = vars(PRIVATE_KEY_VAR) !== undefined;
  const appId = own ? vars("app_id") : env[SERVICE_APP_ENV.appId];
  const key = own || env[SERVICE_APP_ENV.privateKey];
  return appId && key && !appName(vars, env, own) ? NO_APP_NAME : NO_INSTALLABLE_APP;
}

/**
 * The GitHub App a connection's browser installs, and its install page: the connection's own
 * App (`app_id`, `app_name`, `private_key`) when it has a key, else the service's (`SVC_GITHUB_APP_ID`,
 * `SVC_GITHUB_PRIVATE_KEY`). Its name is the connection's `app_name` (its own App), else the
 * service's `SVC_GITHUB_APP_NAME`, else AutoKitteh's `GITHUB_APP_NAME`. The page is
 * `<web>/apps/<name>/installations/new` (`<web>`: `SVC_OAUTH_GITHUB_WEB_URL`, else github.com),
 * or GHES's `<enterprise_url>/github-apps/<name>/installations/new`. Null when an App is not known.
 * @example installableApp(vars)?.installUrl // "https://github.com/apps/hookline-test/installations/new"
 */
export function installableApp(
  vars: ConnectionVars,
  env: Env = process.env,
): { name: string; own: boolean; installUrl: string } | null {
  const own = vars(PRIVATE_KEY_VAR) !== undefined;
  const name = appName(vars, env, own);
  const appId = own ? vars("app_id") : env[SERVICE_APP_ENV.appId];
  const key = own || env[SERVICE_APP_ENV.privateKey];
  if (!name || !/^[\w.-]+$/.test(name) || !appId || !/^\d+$/.test(appId) || !key) return null;
  const web = env[INSTALL_ENV.webUrl];
  const enterprise = vars("enterprise_url") ?? env.GITHUB_ENTERPRISE_URL;
  const page = web
    ? `${web.replace(/\/+$/, "")}/apps/`
    : enterprise
      ? `${enterprise.replace(/\/+$/, "")}/github-apps/`
      : "https://github.com/apps/";
  return { name, own, installUrl: `${page}${encodeURIComponent(name)}/installations/new` };
}
