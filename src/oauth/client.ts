import type { ConnectionVars } from "../connections/verdict.ts";
import type { OAuthPreset } from "../providers/oauth-presets.ts";

/** Where an OAuth setting is read: the service's environment (process.env); not the service's `Settings` (src/config.ts). */
export type OAuthEnv = Record<string, string | undefined>;

/** The OAuth app a connection is authorized with, and where its provider answers. */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** `private`: the connection's own app (`private_client_id`); `default`: the service's. */
  mode: "default" | "private";
  authorizeUrl: string;
  tokenUrl: string;
  /** Extra authorize-URL parameters, placeholders filled. */
  params: Record<string, string>;
}

/**
 * The name of a preset's setting: `SVC_OAUTH_GMAIL_TOKEN_URL`.
 * @example settingName("gmail", "TOKEN_URL") // "SVC_OAUTH_GMAIL_TOKEN_URL"
 */
export const settingName = (preset: string, what: string) =>
  `SVC_OAUTH_${preset.toUpperCase()}_${what}`;

/**
 * A URL of a preset: `SVC_OAUTH_<PRESET>_<WHAT>`, else the same setting of the presets sharing
 * its callback (`SVC_OAUTH_GOOGLE_…` for gmail), else `fallback`.
 * @example presetUrl(settings, preset, "USERINFO_URL", "https://…/userinfo")
 */
export function presetUrl(
  settings: OAuthEnv,
  preset: OAuthPreset,
  what: string,
  fallback: string,
): string {
  return (
    settings[settingName(preset.name, what)] ||
    settings[settingName(preset.redirect, what)] ||
    fallback
  );
}

/** A client's id or secret is missing: the message says which setting or var to set. */
export class ClientMissing extends Error {}

/**
 * The OAuth app of a connection: its own (`private_client_id` / `private_client_secret`, or
 * Auth0's `client_id` / `client_secret`, which only an auth0 connection reads so) when it has
 * one, else the service's
 * (`<ENV>_CLIENT_ID` / `<ENV>_CLIENT_SECRET`). Throws ClientMissing naming what to set.
 * @example oauthClient(settings, presetOf("gmail")!, vars).clientId
 */
export function oauthClient(
  settings: OAuthEnv,
  preset: OAuthPreset,
  vars: ConnectionVars,
): OAuthClient {
  // Auth0's own app goes without `private_` (AutoKitteh's names); the others' only with it, so a
  // `client_secret` var of theirs, which a session sees, never becomes an OAuth app's secret.
  const own = (name: string) =>
    vars(`private_${name}`) ?? (preset.name === "auth0" ? vars(name) : undefined);
  const ownId = own("client_id");
  const mode = ownId ? "private" : "default";
  const clientId = ownId ?? settings[`${preset.env}_CLIENT_ID`];
  const clientSecret = ownId ? own("client_secret") : settings[`${preset.env}_CLIENT_SECRET`];
  if (!clientId || !clientSecret) {
    throw new ClientMissing(
      `set ${preset.env}_CLIENT_ID and ${preset.env}_CLIENT_SECRET in the service's environment, ` +
        "or the connection's private_client_id and private_client_secret",
    );
  }
  const fill = (s: string) => fillTenant(fillDomain(s, preset, vars), settings, vars);
  const params: Record<string, string> = {};
  for (const [k, val] of Object.entries(preset.params ?? {})) params[k] = fill(val);
  if (preset.name === "linear" && vars("actor")) params.actor = vars("actor")!;
  return {
    clientId,
    clientSecret,
    mode,
    authorizeUrl: presetUrl(settings, preset, "AUTHORIZE_URL", fill(preset.authorizeUrl)),
    tokenUrl: presetUrl(settings, preset, "TOKEN_URL", fill(preset.tokenUrl)),
    params,
  };
}

/** Auth0's URLs name the tenant: `{auth0_domain}` is the connection's `auth0_domain`. */
function fillDomain(s: string, preset: OAuthPreset, vars: ConnectionVars): string {
  if (!s.includes("{auth0_domain}")) return s;
  const domain = vars("auth0_domain");
  if (!domain) throw new ClientMissing(`set the connection's auth0_domain (${preset.name})`);
  return s.replaceAll("{auth0_domain}", domain);
}

/**
 * The Microsoft Entra tenant a connection signs in to: its `private_tenant_id` (AutoKitteh's
 * name) or `tenant_id`, else the service's `MICROSOFT_TENANT_ID`, else `common`. A tenant is a
 * GUID, a domain (`contoso.onmicrosoft.com`), `organizations` or `consumers`.
 * @example microsoftTenant({}, () => undefined) // "common"
 */
export function microsoftTenant(settings: OAuthEnv, vars: ConnectionVars): string {
  const tenant =
    vars("private_tenant_id") ?? vars("tenant_id") ?? (settings.MICROSOFT_TENANT_ID || "common");
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,99}$/.test(tenant)) {
    throw new ClientMissing(
      `the Microsoft tenant "${tenant.slice(0, 40)}" is no tenant id or domain: set the connection's private_tenant_id, or the service's MICROSOFT_TENANT_ID`,
    );
  }
  return tenant;
}

/** Microsoft's URLs name the tenant: `{tenant}` is `microsoftTenant`'s. */
function fillTenant(s: string, settings: OAuthEnv, vars: ConnectionVars): string {
  return s.includes("{tenant}") ? s.replaceAll("{tenant}", microsoftTenant(settings, vars)) : s;
}
