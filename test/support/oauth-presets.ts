// The OAuth presets other than Google's and Microsoft's, as their providers document them: what
// test/oauth-presets.test.ts authorizes each with, and what it expects to find saved. The client
// authentication, PKCE and scope separator here are the providers' (their docs), not read from
// src/providers/oauth-presets.ts: a preset that drifts from its provider fails here.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OidcClient, OidcOptions } from "./oidc.ts";
import type { Route } from "./stand-in-api.ts";

export interface PresetCase {
  integration: string;
  /** The connection's name in the project. */
  conn: string;
  provider: string;
  /** How the provider takes the client at its token endpoint. */
  auth: OidcClient["token_endpoint_auth_method"];
  /** Whether the provider takes PKCE (S256): the test server then requires it. */
  pkce: boolean;
  scheme: "legacy" | "modern";
  /** How the provider reads `scope` in the authorize URL; undefined: no scope is sent. */
  separator?: " " | ",";
  /** One scope the authorize URL asks for (and, when it reads the separator, is granted). */
  scope?: string;
  /** The scopes set on the app at the provider, when the authorize URL names none. */
  appScope?: string;
  /** Authorize-URL parameters the provider wants besides OAuth's. */
  params?: Record<string, string>;
  /** Connection vars set before authorizing (Auth0's tenant and the connection's own app). */
  vars?: Record<string, [value: string, secret: boolean]>;
  /** The provider's own fields in its token answer; its wording of a refused refresh token. */
  answer?: (body: Record<string, unknown>, status: number) => number | undefined;
  /** The facts saved beside the token. */
  facts: Record<string, string>;
  /** The stand-in API path the facts are read from, with the new token. */
  factsPath?: string;
  /** Settings pointing the facts' URL (its name) at the stand-in API (its path there). */
  factsUrl?: [what: string, path: string];
}

const CLOUD = "5a1e2f3c-0000-4000-8000-00000000c0f1";
const SITE = "https://example.atlassian.net";
const AUTH0 = "example.us.auth0.com";
const ATLASSIAN_SCOPES = ["read:confluence-content.all", "write:confluence-content"];

/** Slack's answer to a refresh token it no longer takes: 200, `ok: false`. */
function slackRefusal(b: Record<string, unknown>): number | undefined {
  if (b.error !== "invalid_grant") return undefined;
  for (const k of Object.keys(b)) delete b[k];
  Object.assign(b, { ok: false, error: "invalid_refresh_token" });
  return 200;
}

/** HubSpot's: 400, a `status` and a `message`. */
function hubspotRefusal(b: Record<string, unknown>): number | undefined {
  if (b.error !== "invalid_grant") return undefined;
  for (const k of Object.keys(b)) delete b[k];
  Object.assign(b, { status: "BAD_REFRESH_TOKEN", message: "missing or invalid refresh token" });
  return 400;
}

export const CASES: PresetCase[] = [
  {
    ...{ integration: "slack", conn: "slack_conn", provider: "Slack", auth: "client_secret_basic" },
    ...{ pkce: false, scheme: "modern", separator: ",", scope: "chat:write" },
    // Slack answers 200 with `ok`; a refresh token it no longer takes is `invalid_refresh_token`.
    answer: (b, status) => {
      if (status !== 200) return slackRefusal(b);
      Object.assign(b, {
        ok: true,
        token_type: "bot",
        app_id: "A0KRD7HC3",
        bot_user_id: "U0KRQLJ9H",
      });
      Object.assign(b, { team: { id: "T9TK3CUKW", name: "Softball Team" }, enterprise: null });
      Object.assign(b, { authed_user: { id: "U1234" } });
    },
    facts: {
      ...{ team_id: "T9TK3CUKW", team_name: "Softball Team", app_id: "A0KRD7HC3" },
      ...{ user_id: "U1234", user_name: "hookbot", bot_id: "B0KRQLJ9H", bot_user_id: "U0KRQLJ9H" },
      install_ids: "A0KRD7HC3//T9TK3CUKW",
    },
    factsPath: "POST /api/auth.test",
    factsUrl: ["AUTH_TEST_URL", "/api/auth.test"],
  },
  {
    ...{ integration: "confluence", conn: "confluence_conn", provider: "Confluence" },
    ...{ auth: "client_secret_post", pkce: false, scheme: "legacy", separator: " " },
    ...{ scope: "read:confluence-content.all" },
    params: { audience: "api.atlassian.com", prompt: "consent" },
    facts: {
      ...{ AccessID: CLOUD, AccessURL: SITE, AccessName: "example" },
      AccessScope: `[${ATLASSIAN_SCOPES.join(" ")}]`,
    },
    factsPath: "GET /oauth/token/accessible-resources",
    factsUrl: ["RESOURCES_URL", "/oauth/token/accessible-resources"],
  },
  {
    ...{ integration: "linear", conn: "linear_conn", provider: "Linear" },
    ...{ auth: "client_secret_post", pkce: true, scheme: "modern", separator: ",", scope: "write" },
    facts: {},
  },
  {
    ...{ integration: "hubspot", conn: "hubspot_conn", provider: "HubSpot" },
    ...{ auth: "client_secret_post", pkce: false, scheme: "legacy", separator: " " },
    scope: "crm.objects.contacts.read",
    // HubSpot words a refused refresh token its own way, without OAuth's `error`.
    answer: (b, status) => (status === 400 ? hubspotRefusal(b) : undefined),
    facts: { portal_id: "62515" },
    factsPath: "GET /integrations/v1/me",
    factsUrl: ["INFO_URL", "/integrations/v1/me"],
  },
  {
    ...{ integration: "zoom", conn: "zoom_conn", provider: "Zoom", auth: "client_secret_basic" },
    ...{ pkce: true, scheme: "modern", appScope: "meeting:read:meeting" },
    facts: {},
  },
  {
    ...{ integration: "salesforce", conn: "salesforce_conn", provider: "Salesforce" },
    ...{ auth: "client_secret_post", pkce: true, scheme: "modern", separator: " ", scope: "api" },
    // Salesforce says no lifetime; it says where the org's API is.
    answer: (b, status) => {
      if (status !== 200) return;
      delete b.expires_in;
      Object.assign(b, { instance_url: "https://example.my.salesforce.com", issued_at: "1" });
    },
    facts: { instance_url: "https://example.my.salesforce.com" },
  },
  {
    ...{ integration: "notion", conn: "notion_conn", provider: "Notion" },
    ...{ auth: "client_secret_basic", pkce: false, scheme: "modern", params: { owner: "user" } },
    appScope: "read_content",
    answer: (b, status) => {
      if (status !== 200) return;
      delete b.expires_in;
      Object.assign(b, { token_type: "bearer", workspace_id: "ws-1", workspace_name: "Docs" });
      Object.assign(b, { bot_id: "bot-1", owner: { type: "user" } });
    },
    facts: { workspace_id: "ws-1", workspace_name: "Docs", bot_id: "bot-1" },
  },
  {
    ...{ integration: "auth0", conn: "auth0_conn", provider: "Auth0" },
    ...{ auth: "client_secret_post", pkce: true, scheme: "legacy", separator: " " },
    ...{ scope: "read:users", params: { audience: `https://${AUTH0}/api/v2/` } },
    vars: {
      auth0_domain: [AUTH0, false],
      client_id: ["auth0-app", false],
      client_secret: ["auth0-s3cret", true],
    },
    facts: {},
  },
];

/** The client id and secret of a case's app. */
export const clientId = (c: PresetCase) => `${c.integration}-app`;
export const clientSecret = (c: PresetCase) => `${c.integration}-s3cret`;

/** The OAuth server's clients, one per case, calling back to `serviceUrl`. */
export function presetClients(serviceUrl: string): OidcClient[] {
  return CASES.map((c) => ({
    client_id: clientId(c),
    client_secret: clientSecret(c),
    redirect_uris: [`${serviceUrl}/oauth/redirect/${c.integration}`],
    token_endpoint_auth_method: c.auth,
  }));
}

/** What the OAuth server does besides OAuth, as each case's provider does. */
export function presetServerOptions(): OidcOptions {
  const answers: NonNullable<OidcOptions["answers"]> = {};
  const appScopes: Record<string, string> = {};
  for (const c of CASES) {
    if (c.answer) answers[clientId(c)] = c.answer;
    if (c.appScope) appScopes[clientId(c)] = c.appScope;
  }
  return {
    appScopes,
    pkceRequired: CASES.filter((c) => c.pkce).map(clientId),
    commaScopes: CASES.filter((c) => c.separator === ",").map(clientId),
    answers,
  };
}

/** The service's settings: each app's client (but Auth0's, the connection's own), URLs at the stand-ins. */
export function presetSettings(oidcUrl: string, apiUrl: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of CASES) {
    const key = c.integration.toUpperCase();
    if (!c.vars?.client_id) {
      out[`${key}_CLIENT_ID`] = clientId(c);
      out[`${key}_CLIENT_SECRET`] = clientSecret(c);
    }
    out[`SVC_OAUTH_${key}_AUTHORIZE_URL`] = `${oidcUrl}/auth`;
    out[`SVC_OAUTH_${key}_TOKEN_URL`] = `${oidcUrl}/token`;
    if (c.factsUrl) out[`SVC_OAUTH_${key}_${c.factsUrl[0]}`] = apiUrl + c.factsUrl[1];
  }
  return out;
}

/** The providers' APIs the facts are read from, as they answer. */
export const FACT_ROUTES: Record<string, Route> = {
  // Slack's auth.test: who the token is (here the bot), in which team.
  "POST /api/auth.test": () => [
    200,
    { ok: true, team: "Softball Team", user: "hookbot", team_id: "T9TK3CUKW", bot_id: "B0KRQLJ9H" },
  ],
  "GET /oauth/token/accessible-resources": () => [
    200,
    [{ id: CLOUD, url: SITE, name: "example", scopes: ATLASSIAN_SCOPES, avatarUrl: "" }],
  ],
  "GET /integrations/v1/me": () => [200, { portalId: 62515, timeZone: "US/Eastern" }],
};

/** The token var of a scheme. */
export const accessVar = (c: PresetCase) =>
  c.scheme === "legacy" ? "oauth_AccessToken" : "oauth_access_token";

/**
 * An AutoKitteh project (v1) with a connection per case and two webhooks: `check`, whose session
 * prints for each whether its token is in the environment, and the names of the vars holding a
 * client secret; `refresh`, whose session has the service refresh each token (`refresh_oauth`)
 * and prints its digest and whether it has an expiry.
 */
export function presetsProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookline-oauth-presets-"));
  const conns = CASES.map((c) => `    - name: ${c.conn}\n      integration: ${c.integration}\n`);
  writeFileSync(
    join(dir, "manifest.yaml"),
    `version: v1\nproject:\n  name: presets\n  connections:\n${conns.join("")}  triggers:
    - name: check
      type: webhook
      event_type: get
      call: program.py:on_check
    - name: refresh
      type: webhook
      event_type: post
      call: program.py:on_refresh
`,
  );
  const tokens = CASES.map((c) => `("${c.conn}", "${accessVar(c)}")`).join(", ");
  const pairs = CASES.map((c) => `("${c.integration}", "${c.conn}")`).join(", ");
  writeFileSync(
    join(dir, "program.py"),
    `import hashlib
import os

from autokitteh.connections import refresh_oauth


def on_check(event):
    for conn, var in [${tokens}]:
        print(conn, "token set" if os.environ.get(conn + "__" + var) else "token missing")
    print("client secrets here:", sorted(k for k, v in os.environ.items() if v.endswith("-s3cret")))


def on_refresh(event):
    for integration, conn in [${pairs}]:
        token, expiry = refresh_oauth(integration, conn)
        print(conn, hashlib.sha256(token.encode()).hexdigest(), expiry is not None)
`,
  );
  return dir;
}
