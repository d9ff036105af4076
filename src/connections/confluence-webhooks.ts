import { randomBytes } from "node:crypto";
import { CONFLUENCE_CATEGORIES, CONFLUENCE_WEBHOOK_EVENTS } from "./confluence.ts";
import { providerCall } from "./provider-call.ts";
import type { ConnectionVars } from "./verdict.ts";
import { isObject } from "./verdict.ts";

/** Confluence's REST resource for webhooks, under the site. */
const REST_PATH = "/wiki/rest/webhooks/1.0/webhook";

/** What a connection's webhook work is given: its vars, where deliveries go, and fetch. */
export interface HookInput {
  vars: ConnectionVars;
  /** The connection's inbound URL, `<service URL>/inbound/<id>` (for removals: ""). */
  inboundUrl: string;
  fetch?: typeof fetch;
}

/**
 * What registering did: `skipped` (nothing to register with), `kept` (registered already),
 * `registered` (save `set`; the names in `secret` sealed), `failed` (`detail` says why; `set`
 * holds what was registered before the failure).
 */
export interface HookResult {
  action: "skipped" | "kept" | "registered" | "failed";
  detail: string;
  set: Record<string, string>;
  secret: string[];
}

/** A Confluence site and how to call it: an API token with the Email (basic), else a PAT. */
interface Site {
  url: string;
  authorization: string;
  fetch: typeof fetch;
}

/** The connection's site and credentials, or null without a token or a site. */
function siteOf(input: HookInput): Site | null {
  const { vars } = input;
  const token = vars("Token") ?? vars("APIKeyOrPAT");
  const url = vars("base_url") ?? vars("BaseURL");
  if (!token || !url) return null;
  const email = vars("Email");
  const authorization = email
    ? `Basic ${Buffer.from(`${email}:${token}`).toString("base64")}`
    : `Bearer ${token}`;
  // The site, whether the var names it (`https://x.atlassian.net`) or its wiki, as the Python
  // client takes it off Atlassian's hosts (`…/wiki`): the webhook resource is under `/wiki`.
  const site = url.replace(/\/+$/, "").replace(/\/wiki$/, "");
  return { url: site, authorization, fetch: input.fetch ?? fetch };
}

/** One call to the site's webhook resource: its status and JSON (undefined when not JSON). */
function call(site: Site, method: string, path: string, body?: unknown) {
  const url = `${site.url}${REST_PATH}${path}`;
  return providerCall(site.fetch, url, { method, authorization: site.authorization, body });
}

/** The numeric id at the end of a webhook's `self` URL, or null. */
const idOf = (self: unknown) =>
  typeof self === "string" ? (/(\d+)\/?$/.exec(self)?.[1] ?? null) : null;

/**
 * Registers the webhooks AutoKitteh registers at the connection's Confluence site, one a
 * category (`POST <site>/wiki/rest/webhooks/1.0/webhook`, the category's events, a random
 * secret, URL `<inbound URL>/<category>`), for each category without its `WebhookID_<category>`;
 * a webhook of the site's list already delivering there is deleted first, as AutoKitteh does.
 * Saves nothing: `set` holds `WebhookID_<category>` and `WebhookSecret_<category>` (sealed).
 * Never throws.
 * @example await ensureConfluenceWebhooks({ vars, inboundUrl }) // { action: "registered", set: {…} }
 */
export async function ensureConfluenceWebhooks(input: HookInput): Promise<HookResult> {
  const site = siteOf(input);
  const result: HookResult = { action: "kept", detail: "", set: {}, secret: [] };
  if (!site && input.vars("oauth_AccessToken")) {
    // AutoKitteh's finding: Confluence takes no webhook registration from an OAuth 2.0 app.
    const detail =
      "Confluence registers webhooks only with an API token (Email and Token) or a PAT (Token), not an OAuth token: set them, with BaseURL";
    return { ...result, action: "failed", detail };
  }
  if (!site) return { ...result, action: "skipped", detail: "no Token and BaseURL" };
  const missing = CONFLUENCE_CATEGORIES.filter((c) => !input.vars(`WebhookID_${c}`));
  if (!missing.length) return { ...result, detail: "webhooks registered" };
  try {
    const list = await call(site, "GET", "");
    const hooks = Array.isArray(list.json) ? list.json.filter(isObject) : [];
    for (const category of missing) {
      const url = `${input.inboundUrl}/${category}`;
      for (const old of hooks.filter((h) => h.url === url)) {
        const id = idOf(old.self);
        if (id) await call(site, "DELETE", `/${id}`);
      }
      const secret = randomBytes(32).toString("hex");
      const events = CONFLUENCE_WEBHOOK_EVENTS[category];
      const body = { name: "Hookline", description: category, url, events, secret };
      const made = await call(site, "POST", "", body);
      const id = isObject(made.json) ? idOf(made.json.self) : null;
      if (made.status >= 300 || !id) {
        const said = made.text.trim().slice(0, 200) || "no webhook id";
        return {
          ...result,
          action: "failed",
          detail: `register ${category}: Confluence answered ${made.status}: ${said}`,
        };
      }
      result.set[`WebhookID_${category}`] = id;
      result.set[`WebhookSecret_${category}`] = secret;
      result.secret.push(`WebhookSecret_${category}`);
    }
  } catch (e) {
    return {
      ...result,
      action: "failed",
      detail: `Confluence unreachable: ${(e as Error).message}`,
    };
  }
  return {
    ...result,
    action: "registered",
    detail: `webhooks of ${missing.join(", ")} registered`,
  };
}

/**
 * Deletes the connection's webhooks at its Confluence site (`DELETE …/webhook/<id>` for each
 * `WebhookID_<category>`): null once done (a 404 counts as done), else the problem. Never throws.
 * @example await deleteConfluenceWebhooks({ vars, inboundUrl: "" }) // null
 */
export async function deleteConfluenceWebhooks(input: HookInput): Promise<string | null> {
  const site = siteOf(input);
  const ids = CONFLUENCE_CATEGORIES.map((c) => input.vars(`WebhookID_${c}`)).filter(Boolean);
  if (!site) return "no Token and BaseURL to delete them with";
  const problems: string[] = [];
  for (const id of ids) {
    try {
      const answer = await call(site, "DELETE", `/${id}`);
      if (answer.status >= 300 && answer.status !== 404) problems.push(`${id}: ${answer.status}`);
    } catch (e) {
      problems.push(`${id}: ${(e as Error).message}`);
    }
  }
  return problems.length ? `Confluence answered ${problems.join(", ")}` : null;
}

/** The vars a registration leaves, cleared once the connection is gone. */
export const CONFLUENCE_HOOK_VARS = CONFLUENCE_CATEGORIES.flatMap((c) => [
  `WebhookID_${c}`,
  `WebhookSecret_${c}`,
]);
