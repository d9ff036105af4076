import { providerCall } from "./provider-call.ts";
import { isObject } from "./verdict.ts";

/** The Jira events a dynamic webhook can carry, as AutoKitteh registers them (not the two it drops). */
export const JIRA_WEBHOOK_EVENTS = [
  "jira:issue_created",
  "jira:issue_updated",
  "jira:issue_deleted",
  "comment_created",
  "comment_updated",
  "comment_deleted",
] as const;

/** How long Atlassian keeps a dynamic webhook after its registration or refresh. */
export const WEBHOOK_LIFE_MS = 30 * 24 * 3600_000;

/**
 * The Atlassian API's base URL: `SVC_OAUTH_JIRA_API_URL`, else AutoKitteh's `ATLASSIAN_BASE_URL`,
 * else `https://api.atlassian.com`; without a trailing slash.
 * @example atlassianApiUrl({}) // "https://api.atlassian.com"
 */
export function atlassianApiUrl(env: Record<string, string | undefined> = process.env): string {
  const url = env.SVC_OAUTH_JIRA_API_URL || env.ATLASSIAN_BASE_URL || "https://api.atlassian.com";
  return url.replace(/\/+$/, "");
}

/** What an Atlassian call answered: its status and JSON (undefined when not JSON). */
export interface AtlassianAnswer {
  status: number;
  json: unknown;
}

/** Who calls Atlassian: the OAuth access token, and the fetch to call with (tests: the real one). */
export interface AtlassianCaller {
  token: string;
  fetch: typeof fetch;
}

/**
 * One call to Atlassian's REST API with the connection's OAuth token, JSON both ways, within
 * 10 s. A network failure or time-out throws.
 * @example await atlassianCall(caller, "GET", `${api}/oauth/token/accessible-resources`)
 */
export async function atlassianCall(
  caller: AtlassianCaller,
  method: string,
  url: string,
  body?: unknown,
): Promise<AtlassianAnswer> {
  const authorization = `Bearer ${caller.token}`;
  const { status, json } = await providerCall(caller.fetch, url, { method, authorization, body });
  return { status, json };
}

/**
 * An answer that is not a success, in words for the log (Atlassian's `errorMessages` or
 * `errors` when it gives them, cut short), or null for a 2xx.
 * @example answerProblem({ status: 403, json: { errorMessages: ["Only apps can access this resource."] } })
 */
export function answerProblem(answer: AtlassianAnswer): string | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  const j = isObject(answer.json) ? answer.json : {};
  const said = j.errorMessages ?? j.errors ?? j.message;
  const text = said === undefined ? "" : `: ${JSON.stringify(said).slice(0, 200)}`;
  const hint =
    answer.status === 401 ? " (the OAuth token was refused: refresh it, or authorize again)" : "";
  return `Atlassian answered ${answer.status}${text}${hint}`;
}

/**
 * A time Atlassian gives (epoch ms, or a date like `2019-06-01T12:42:30.000+0000`) as epoch
 * ms, or null.
 * @example atlassianTime("2019-06-01T12:42:30.000+0000") // 1559392950000
 */
export function atlassianTime(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value !== "string" || value === "") return null;
  const t = Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
  return Number.isNaN(t) ? null : t;
}

/**
 * AutoKitteh's `WebhookKey` of a webhook: the site's subdomain and the webhook's id.
 * @example webhookKey("https://example.atlassian.net", "1000") // "example/1000"
 */
export function webhookKey(siteUrl: string, id: string): string {
  const host = siteUrl.replace(/^[a-z]+:\/\//i, "").split(/[./]/)[0] ?? "";
  return `${host}/${id}`;
}

/**
 * The one site an OAuth token reaches (`GET /oauth/token/accessible-resources`), as the vars
 * AutoKitteh saves of it: `AccessID` (the cloud id), `AccessURL`, `AccessName`, `AccessScope`,
 * `AccessAvatarURL`. A problem in words when there is not exactly one.
 * @example await accessibleSite(caller, "https://api.atlassian.com") // { vars: { AccessID: "…", … } }
 */
export async function accessibleSite(
  caller: AtlassianCaller,
  apiUrl: string,
): Promise<{ vars: Record<string, string> } | { problem: string }> {
  const answer = await atlassianCall(caller, "GET", `${apiUrl}/oauth/token/accessible-resources`);
  const problem = answerProblem(answer);
  if (problem) return { problem: `accessible resources: ${problem}` };
  const sites = Array.isArray(answer.json) ? answer.json.filter(isObject) : [];
  if (sites.length !== 1) {
    return { problem: `the OAuth token reaches ${sites.length} Atlassian sites, not one` };
  }
  const site = sites[0]!;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const scopes = Array.isArray(site.scopes) ? site.scopes.map(String) : [];
  const vars = {
    AccessID: text(site.id),
    AccessURL: text(site.url),
    AccessName: text(site.name),
    AccessScope: `[${scopes.join(" ")}]`,
    AccessAvatarURL: text(site.avatarUrl),
  };
  return vars.AccessID ? { vars } : { problem: "the accessible resource has no id" };
}
