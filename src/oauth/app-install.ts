import { installableApp, notInstallable } from "../connections/github-install.ts";
import { HooklineError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { type Callback, type Finished, Refusal, takeState } from "./authorize.ts";
import type { OAuthEnv } from "./client.ts";
import type { AuthorizedListeners } from "./hooks.ts";
import { browserHash, type OAuthStates } from "./states.ts";
import type { ConnectionVarStore } from "./store.ts";

/**
 * Connects github connection `connection` of project `projectId` to installation
 * `installationId` once GitHub confirms it (src/deploy/github-installation.ts
 * `saveInstallation`); a HooklineError when GitHub does not. Returns the vars saved.
 */
export type SaveInstallation = (
  projectId: string,
  connection: string,
  installationId: string,
) => Promise<Record<string, string>>;

/** What the GitHub App installation flow is made of. */
export interface InstallParts {
  settings: OAuthEnv;
  states: OAuthStates;
  vars: ConnectionVarStore;
  log: Logger;
  now: () => number;
  /** How an installation is confirmed and saved; absent, nothing is installed from a browser. */
  save?: SaveInstallation | undefined;
  /** Told of each installation saved, as an OAuth authorization is (integration `github`). */
  listeners?: Pick<AuthorizedListeners, "emit">;
}

/**
 * A github connection connected to a GitHub App installation from the browser, as AutoKitteh
 * does it: `start` sends the browser to the App's install page (`…/apps/<app>/installations/new`)
 * with a state from the same store as OAuth's (random, single use, bound to the browser's
 * cookie, 10 minutes); GitHub sends it back to `/oauth/redirect/github` (the App's setup URL) with
 * `installation_id`, `setup_action` and the state; `finish` takes the state, then has GitHub
 * confirm the installation to the App before anything is saved. A refusal changes nothing.
 * @example const install = appInstallFlow(parts); const { url } = await install.start(cid, base, cookie);
 */
export function appInstallFlow(p: InstallParts) {
  return {
    target: (cid: string) => target(p, cid),
    start: (cid: string, base: string, cookie: string) => start(p, cid, base, cookie),
    finish: (cb: Callback, cookie: string | undefined) => finish(p, cb, cookie),
  };
}

/** The github connection `cid` names and its App, or a Refusal. */
async function target(p: InstallParts, cid: string) {
  const found = await p.vars.byId(cid);
  if (!found) throw new Refusal(404, "Unknown connection", `no connection "${cid}"`);
  if (found.conn.integration !== "github") {
    const what = `${found.conn.name} is a ${found.conn.integration} connection`;
    throw new Refusal(400, "Not a GitHub connection", what);
  }
  const vars = p.vars.vars(found);
  const app = installableApp(vars, p.settings);
  if (!app || !p.save) {
    throw new Refusal(409, "GitHub App not configured", notInstallable(vars, p.settings));
  }
  return { found, app };
}

/** A state kept, and the App's install page that carries it. */
async function start(p: InstallParts, cid: string, base: string, cookie: string) {
  const { found, app } = await target(p, cid);
  const { doc, conn } = found;
  const rec = {
    integration: "github",
    project_id: doc.project.id,
    connection: conn.name,
    connection_id: conn.id,
    redirect_uri: `${base}/oauth/redirect/github`,
    browser: browserHash(cookie),
  };
  const { state } = await p.states.begin(rec, false, p.now());
  const url = new URL(app.installUrl);
  url.searchParams.set("state", state);
  return { url: url.toString(), project: doc.project.name, connection: conn.name };
}

/** GitHub's redirect after the install page: the state taken, the installation confirmed, saved. */
async function finish(
  p: InstallParts,
  cb: Callback,
  cookie: string | undefined,
): Promise<Finished> {
  const rec = await takeState(p.states, cb.state, cookie, p.now()).catch((e) => {
    if (e.status === 403)
      return p.states.take(cb.state!, "", p.now()).then(() => {
        throw e;
      });
    throw e;
  });
  const found = await p.vars.byName(rec.project_id, rec.connection);
  if (rec.integration !== "github" || found?.conn.id !== rec.connection_id || !p.save) {
    throw new Refusal(400, "Wrong callback", "the callback does not match this authorization");
  }
  const where = `${found.doc.project.name}/${rec.connection}`;
  if (cb.setup_action === "request") {
    const why = "an owner of the account must approve the App's installation; GitHub asked them";
    throw new Refusal(403, "Approval needed", why);
  }
  if (cb.error || (cb.setup_action !== "install" && cb.setup_action !== "update")) {
    const said = (cb.error ?? "no setup_action").replace(/[^\w.-]/g, "").slice(0, 64);
    throw new Refusal(400, "Provider error", `GitHub answered ${said}`);
  }
  const id = cb.installation_id ?? "";
  if (!/^\d{1,19}$/.test(id)) {
    throw new Refusal(400, "Provider error", "GitHub sent no installation id");
  }
  try {
    await p.save(rec.project_id, rec.connection, id);
  } catch (e) {
    if (!(e instanceof HooklineError)) throw e;
    p.log.warn(`oauth ${where}: installation ${id} not confirmed: ${e.message}`);
    throw new Refusal(400, "Installation not confirmed", e.message);
  }
  p.log.info(`oauth ${where}: connected to GitHub App installation ${id}`);
  await p.listeners?.emit({
    projectId: rec.project_id,
    connection: rec.connection,
    connectionId: rec.connection_id,
    integration: "github",
  });
  return { project: found.doc.project.name, connection: rec.connection, provider: "GitHub" };
}
