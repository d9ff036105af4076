import type { Storage } from "unstorage";
import type { Cluster } from "../cluster/cluster.ts";
import type { Logger } from "../log.ts";
import type { SecretBox } from "../secrets.ts";
import { appInstallFlow, type SaveInstallation } from "./app-install.ts";
import { authorizationFlow, type Callback } from "./authorize.ts";
import type { OAuthEnv } from "./client.ts";
import { authorizedListeners } from "./hooks.ts";
import { tokenRefresher } from "./refresh.ts";
import { oauthStates } from "./states.ts";
import { connectionVarStore, type VarStoreDeps } from "./store.ts";

/** What the OAuth service is made over (the platform composes it). */
export interface OAuthDeps {
  /** The project store, the secret box, the per-project lock and the change notice. */
  projects: VarStoreDeps;
  /** Where pending authorizations are kept (shared by every instance on it). */
  storage: Storage;
  cluster: Cluster;
  /** The client ids and secrets, and the `SVC_OAUTH_…` settings: the service's environment. */
  settings: OAuthEnv;
  log: Logger;
  now?: () => number;
  /** How a GitHub App installation is confirmed and saved (`saveInstallation`); absent: not offered. */
  installation?: SaveInstallation;
}

/**
 * Connections authorized with OAuth: the authorization flow (`flow`, served by
 * src/routes/oauth.ts; for github, its App's installation: app-install.ts), the refreshes (`tokens`: before a session, and the SDK's
 * `refresh_oauth`), and `onAuthorized`, the seam for what follows an authorization.
 * @example const oauth = createOAuth({ projects, storage, cluster, settings: process.env, log });
 */
export function createOAuth(d: OAuthDeps) {
  const now = d.now ?? Date.now;
  const vars = connectionVarStore(d.projects);
  const box: SecretBox = d.projects.secrets;
  const states = oauthStates(d.storage, d.cluster, box);
  const listeners = authorizedListeners(d.log);
  const { settings, log, cluster } = d;
  const oauth = authorizationFlow({ settings, states, vars, listeners, log, now });
  // github connects through its App's installation, on the same paths and states.
  const save = d.installation;
  const github = appInstallFlow({ settings, states, vars, log, now, save, listeners });
  const flow = {
    target: (cid: string, integration: string) =>
      integration === "github" ? github.target(cid) : oauth.target(cid, integration),
    start: (cid: string, integration: string, base: string, cookie: string) =>
      integration === "github"
        ? github.start(cid, base, cookie)
        : oauth.start(cid, integration, base, cookie),
    finish: (redirect: string, cb: Callback, cookie: string | undefined) =>
      redirect === "github" ? github.finish(cb, cookie) : oauth.finish(redirect, cb, cookie),
  };
  return {
    flow,
    tokens: tokenRefresher({ settings, vars, cluster, log, now }),
    onAuthorized: listeners.onAuthorized,
  };
}

export type OAuthService = ReturnType<typeof createOAuth>;
