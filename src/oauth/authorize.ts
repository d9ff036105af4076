import type { ConnectionVars } from "../connections/verdict.ts";
import type { Logger } from "../log.ts";
import { type OAuthPreset, presetOf } from "../providers/oauth-presets.ts";
import { ClientMissing, type OAuthEnv, oauthClient } from "./client.ts";
import { accountFacts } from "./facts.ts";
import type { AuthorizedListeners } from "./hooks.ts";
import { browserHash, type OAuthStates } from "./states.ts";
import type { ConnectionVarStore } from "./store.ts";
import { STATUS_VAR } from "./store.ts";
import { TokenError, tokenRequest, tokenVars } from "./tokens.ts";

/** What the browser is shown when a step is refused: a status and one sentence. */
export class Refusal extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    readonly title: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** What the authorization flow is made of. */
export interface FlowParts {
  settings: OAuthEnv;
  states: OAuthStates;
  vars: ConnectionVarStore;
  listeners: AuthorizedListeners;
  log: Logger;
  now: () => number;
}

/** The callback's query, as the provider sent it. */
export interface Callback {
  state?: string | undefined;
  code?: string | undefined;
  error?: string | undefined;
  /** A GitHub App installation's callback: the installation, and `install`, `update` or `request`. */
  installation_id?: string | undefined;
  setup_action?: string | undefined;
}

/** What a finished authorization says: the browser's page names them. */
export interface Finished {
  project: string;
  connection: string;
  /** As the page says it: "is authorized with Google". */
  provider: string;
}

/**
 * The two halves of an authorization: `start` (a connection id in, the provider's authorize URL
 * out, a state kept) and `finish` (the provider's callback in, the code exchanged, the tokens
 * sealed into the connection's vars). Everything refused is a Refusal and changes nothing.
 * @example const flow = authorizationFlow(parts); const { url } = await flow.start(cid, "gmail", base, cookie);
 */
export function authorizationFlow(p: FlowParts) {
  return {
    target: (cid: string, integration: string) => target(p, cid, integration),
    start: (cid: string, integration: string, base: string, cookie: string) =>
      start(p, cid, integration, base, cookie),
    finish: (redirect: string, cb: Callback, cookie: string | undefined) =>
      finish(p, redirect, cb, cookie),
  };
}

/** The connection `cid` names and its preset, or a Refusal. */
async function target(p: FlowParts, cid: string, integration: string) {
  const found = await p.vars.byId(cid);
  if (!found) throw new Refusal(404, "Unknown connection", `no connection "${cid}"`);
  const preset = presetOf(found.conn.integration);
  if (!preset || integration !== found.conn.integration) {
    const what = preset ? `is a ${found.conn.integration} connection` : "has no OAuth set-up here";
    throw new Refusal(400, "Not an OAuth connection", `${found.conn.name} ${what}`);
  }
  return { found, preset };
}

/** A state kept, and the provider's authorize URL that names it. */
async function start(p: FlowParts, cid: string, integration: string, base: string, cookie: string) {
  const { found, preset } = await target(p, cid, integration);
  const { doc, conn } = found;
  const client = clientOf(p.settings, preset, p.vars.vars(found));
  const redirect_uri = `${base}/oauth/redirect/${preset.redirect}`;
  const rec = {
    integration: conn.integration,
    project_id: doc.project.id,
    connection: conn.name,
    connection_id: conn.id,
    redirect_uri,
    browser: browserHash(cookie),
  };
  const { state, challenge } = await p.states.begin(rec, preset.pkce, p.now());
  const url = new URL(client.authorizeUrl);
  const q = url.searchParams;
  q.set("response_type", "code");
  q.set("client_id", client.clientId);
  q.set("redirect_uri", redirect_uri);
  if (preset.scopes.length) q.set("scope", preset.scopes.join(preset.scopeSeparator ?? " "));
  q.set("state", state);
  if (challenge) {
    q.set("code_challenge", challenge);
    q.set("code_challenge_method", "S256");
  }
  for (const [k, v] of Object.entries(client.params)) q.set(k, v);
  return { url: url.toString(), project: doc.project.name, connection: conn.name };
}

/**
 * The pending authorization a callback's `state` names, taken (single use) for the browser
 * whose cookie is `cookie`; a Refusal when missing, unknown, used, expired or another browser's.
 */
export async function takeState(
  states: OAuthStates,
  state: string | undefined,
  cookie: string | undefined,
  now: number,
) {
  if (!state) throw new Refusal(400, "Missing state", "the callback carries no state");
  const taken = await states.take(state, browserHash(cookie ?? ""), now);
  if (taken.kind === "other_browser") {
    throw new Refusal(403, "Another browser", "this authorization was started in another browser");
  }
  if (taken.kind === "unknown") {
    throw new Refusal(400, "Unknown state", "this authorization is unknown, used or expired");
  }
  return taken.rec;
}

/** The provider's callback: the state taken, the code exchanged, the tokens saved. */
async function finish(
  p: FlowParts,
  redirect: string,
  cb: Callback,
  cookie: string | undefined,
): Promise<Finished & { preset: OAuthPreset }> {
  const rec = await takeState(p.states, cb.state, cookie, p.now());
  const preset = presetOf(rec.integration);
  const found = await p.vars.byName(rec.project_id, rec.connection);
  if (!preset || preset.redirect !== redirect || found?.conn.id !== rec.connection_id) {
    throw new Refusal(400, "Wrong callback", "the callback does not match this authorization");
  }
  const where = `${found.doc.project.name}/${rec.connection}`;
  if (cb.error === "access_denied") {
    throw new Refusal(403, "Access denied", `access was not granted at ${preset.provider}`);
  }
  if (cb.error || !cb.code) {
    const said = (cb.error ?? "no code").replace(/[^\w.-]/g, "").slice(0, 64);
    throw new Refusal(400, "Provider error", `${preset.provider} answered ${said}`);
  }
  const client = clientOf(p.settings, preset, p.vars.vars(found));
  const grant: Record<string, string> = {
    grant_type: "authorization_code",
    code: cb.code,
    redirect_uri: rec.redirect_uri,
  };
  if (rec.verifier) grant.code_verifier = rec.verifier;
  const token = await tokenRequest(preset, client, grant, p.now).catch((e: unknown) => {
    if (!(e instanceof TokenError)) throw e;
    p.log.warn(`oauth ${where}: the code was refused (${e.code})`);
    throw new Refusal(400, "Code refused", `${preset.provider} refused the code (${e.code})`);
  });
  const facts = await accountFacts(p.settings, preset, token, (m) => p.log.warn(m));
  const authType = preset.scheme === "legacy" ? "oauth" : `oauth${cap(client.mode)}`;
  const writes = [
    ...tokenVars(preset.scheme, token),
    ...facts,
    { name: "auth_type", value: authType, secret: false },
  ];
  await p.vars.write(rec.project_id, rec.connection, writes, [STATUS_VAR]);
  p.log.info(`oauth ${where}: authorized with ${preset.provider}`);
  const event = { projectId: rec.project_id, connection: rec.connection, preset };
  await p.listeners.emit({ ...event, connectionId: rec.connection_id, integration: preset.name });
  const project = found.doc.project.name;
  return { project, connection: rec.connection, provider: preset.provider, preset };
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

function clientOf(settings: OAuthEnv, preset: OAuthPreset, vars: ConnectionVars) {
  try {
    return oauthClient(settings, preset, vars);
  } catch (e) {
    if (e instanceof ClientMissing) throw new Refusal(409, "OAuth app not configured", e.message);
    throw e;
  }
}

export type AuthorizationFlow = ReturnType<typeof authorizationFlow>;
