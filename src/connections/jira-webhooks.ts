import {
  type AtlassianCaller,
  accessibleSite,
  answerProblem,
  atlassianApiUrl,
  atlassianCall,
  atlassianTime,
  JIRA_WEBHOOK_EVENTS,
  WEBHOOK_LIFE_MS,
  webhookKey,
} from "./jira-atlassian.ts";
import type { ConnectionVars } from "./verdict.ts";
import { isObject } from "./verdict.ts";

/** A webhook whose expiry is nearer than this is refreshed (AutoKitteh's two weeks). */
export const WEBHOOK_RENEW_BEFORE_MS = 14 * 24 * 3600_000;

/** What `ensureJiraWebhook` looks at. */
export interface JiraWebhookInput {
  /** The connection's vars now (short names, secrets opened). */
  vars: ConnectionVars;
  /** Where Jira is to deliver: the connection's inbound URL, `<service URL>/inbound/<id>`. */
  inboundUrl: string;
  /** Epoch ms. */
  now: number;
  /** The Atlassian API (default: `atlassianApiUrl()`). */
  apiUrl?: string;
  /** A fresh OAuth access token (default: the `oauth_AccessToken` var). */
  accessToken?: string;
  fetch?: typeof fetch;
}

/**
 * What `ensureJiraWebhook` did. `skipped`: not an OAuth connection (nothing to register);
 * `kept`: registered, and far from its expiry; `registered`, `refreshed`: `set` holds the vars
 * to save; `failed`: `detail` says why, nothing to save but what `set` holds.
 */
export interface JiraWebhookResult {
  action: "skipped" | "kept" | "registered" | "refreshed" | "failed";
  detail: string;
  /** Vars to save (AutoKitteh's names): `WebhookID`, `WebhookExpiration`, `WebhookKey`, `Access…`. */
  set: Record<string, string>;
}

/** The JQL AutoKitteh's trick finds a webhook by (Atlassian's list does not show URLs). */
const jqlOf = (inboundUrl: string) => `project != "${inboundUrl.replaceAll('"', "")}"`;

/** A webhook of the list whose JQL names this inbound URL, or null. */
async function findWebhook(caller: AtlassianCaller, jira: string, inboundUrl: string) {
  const answer = await atlassianCall(caller, "GET", `${jira}/rest/api/3/webhook`);
  if (answerProblem(answer) || !isObject(answer.json)) return null;
  const values = Array.isArray(answer.json.values) ? answer.json.values.filter(isObject) : [];
  const mine = values.find((v) => v.jqlFilter === jqlOf(inboundUrl) && v.id !== undefined);
  return mine ? String(mine.id) : null;
}

/** Registers the dynamic webhook AutoKitteh registers, to the inbound URL: its id, or a problem. */
async function registerWebhook(
  caller: AtlassianCaller,
  jira: string,
  inboundUrl: string,
): Promise<{ id: string } | { problem: string }> {
  const body = {
    url: inboundUrl,
    webhooks: [{ events: JIRA_WEBHOOK_EVENTS, jqlFilter: jqlOf(inboundUrl) }],
  };
  const answer = await atlassianCall(caller, "POST", `${jira}/rest/api/3/webhook`, body);
  const problem = answerProblem(answer);
  if (problem) return { problem: `register: ${problem}` };
  const results = isObject(answer.json) ? answer.json.webhookRegistrationResult : undefined;
  const first = Array.isArray(results) && isObject(results[0]) ? results[0] : {};
  if (Array.isArray(first.errors) && first.errors.length) {
    return { problem: `register: ${JSON.stringify(first.errors).slice(0, 200)}` };
  }
  const id = first.createdWebhookId;
  return id === undefined ? { problem: "register: no createdWebhookId" } : { id: String(id) };
}

/** Extends a webhook's life by 30 days: its new expiry (epoch ms), `gone`, or a problem. */
async function refreshWebhook(
  caller: AtlassianCaller,
  jira: string,
  id: string,
  now: number,
): Promise<{ expires: number } | { gone: true } | { problem: string }> {
  const body = { webhookIds: [Number(id)] };
  const answer = await atlassianCall(caller, "PUT", `${jira}/rest/api/3/webhook/refresh`, body);
  if (answer.status === 404) return { gone: true };
  const problem = answerProblem(answer);
  if (problem) return { problem: `refresh: ${problem}` };
  const said = isObject(answer.json) ? atlassianTime(answer.json.expirationDate) : null;
  return { expires: said ?? now + WEBHOOK_LIFE_MS };
}

/** The vars of a webhook with this id and expiry. */
function webhookVars(vars: ConnectionVars, site: Record<string, string>, id: string, at: number) {
  const siteUrl = site.AccessURL ?? vars("AccessURL");
  return {
    ...site,
    WebhookID: id,
    WebhookExpiration: new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z"),
    ...(siteUrl && { WebhookKey: webhookKey(siteUrl, id) }),
  };
}

/**
 * Makes sure a jira connection holding OAuth vars (`oauth_AccessToken`, `auth_type` `oauth` or
 * unset) has the dynamic webhook AutoKitteh registers, delivering to `inboundUrl`: the site's
 * cloud id from `AccessID` (else `accessible-resources`, whose facts are saved too); a
 * `WebhookID` whose `WebhookExpiration` is more than 14 days away is kept, a nearer one
 * refreshed (`PUT /rest/api/3/webhook/refresh`); without one (or one Atlassian no longer
 * knows), one found by its JQL is refreshed, else one is registered (`POST /rest/api/3/webhook`
 * on `<api>/ex/jira/<cloud id>`, the six issue and comment events). Saves nothing itself: the
 * caller saves `set` as the connection's vars. Never throws for Atlassian's answers; a network
 * failure is `failed`.
 * @example const r = await ensureJiraWebhook({ vars, inboundUrl, now: Date.now() }); // r.set.WebhookID
 */
export async function ensureJiraWebhook(input: JiraWebhookInput): Promise<JiraWebhookResult> {
  const { vars } = input;
  const token = input.accessToken ?? vars("oauth_AccessToken");
  const auth = vars("auth_type");
  if (!token || (auth && auth !== "oauth")) {
    return { action: "skipped", detail: "no OAuth token (oauth_AccessToken)", set: {} };
  }
  const caller = { token, fetch: input.fetch ?? fetch };
  const apiUrl = input.apiUrl ?? atlassianApiUrl();
  try {
    return await ensureWith(caller, apiUrl, input);
  } catch (e) {
    return { action: "failed", detail: `Atlassian unreachable: ${(e as Error).message}`, set: {} };
  }
}

/** `ensureJiraWebhook` once the connection is known to hold an OAuth token. */
async function ensureWith(
  caller: AtlassianCaller,
  apiUrl: string,
  input: JiraWebhookInput,
): Promise<JiraWebhookResult> {
  const { vars, inboundUrl, now } = input;
  let site: Record<string, string> = {};
  if (!vars("AccessID")) {
    const found = await accessibleSite(caller, apiUrl);
    if ("problem" in found) return { action: "failed", detail: found.problem, set: {} };
    site = found.vars;
  }
  const jira = `${apiUrl}/ex/jira/${encodeURIComponent(site.AccessID ?? vars("AccessID")!)}`;
  const expires = atlassianTime(vars("WebhookExpiration"));
  let id = vars("WebhookID") ?? null;
  if (id && expires !== null && expires - now > WEBHOOK_RENEW_BEFORE_MS) {
    return {
      action: "kept",
      detail: `webhook ${id} lives until ${vars("WebhookExpiration")}`,
      set: site,
    };
  }
  id ??= await findWebhook(caller, jira, inboundUrl);
  if (id) {
    const refreshed = await refreshWebhook(caller, jira, id, now);
    if ("problem" in refreshed) return { action: "failed", detail: refreshed.problem, set: site };
    if ("expires" in refreshed) {
      const set = webhookVars(vars, site, id, refreshed.expires);
      return { action: "refreshed", detail: `webhook ${id} refreshed`, set };
    }
  }
  const made = await registerWebhook(caller, jira, inboundUrl);
  if (!("id" in made)) return { action: "failed", detail: made.problem, set: site };
  const set = webhookVars(vars, site, made.id, now + WEBHOOK_LIFE_MS);
  return { action: "registered", detail: `webhook ${made.id} registered`, set };
}

/**
 * Deletes a connection's dynamic webhook at Atlassian (`DELETE /rest/api/3/webhook` with its id
 * on `<api>/ex/jira/<AccessID>`), for a connection that is gone: null once deleted (or already
 * unknown to Atlassian), else the problem in words. Never throws.
 * @example await deleteJiraWebhook({ vars, inboundUrl: "", now: Date.now() }) // null, or "Atlassian answered 401 …"
 */
export async function deleteJiraWebhook(input: JiraWebhookInput): Promise<string | null> {
  const { vars } = input;
  const token = input.accessToken ?? vars("oauth_AccessToken");
  const id = vars("WebhookID");
  const cloud = vars("AccessID");
  if (!token || !id || !cloud) return "no OAuth token, WebhookID or AccessID to delete it with";
  const caller = { token, fetch: input.fetch ?? fetch };
  const jira = `${input.apiUrl ?? atlassianApiUrl()}/ex/jira/${encodeURIComponent(cloud)}`;
  try {
    const body = { webhookIds: [Number(id)] };
    const answer = await atlassianCall(caller, "DELETE", `${jira}/rest/api/3/webhook`, body);
    return answer.status === 404 ? null : answerProblem(answer);
  } catch (e) {
    return `Atlassian unreachable: ${(e as Error).message}`;
  }
}
