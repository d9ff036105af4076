import type { OAuthPreset, VarScheme } from "../providers/oauth-presets.ts";
import type { OAuthClient } from "./client.ts";

/** A token endpoint's answer, as far as the service keeps it. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  /** When the access token expires (epoch ms); undefined: the provider gave no lifetime. */
  expires_at?: number;
  /** The whole answer (Slack's team, app and user ids are in it); never logged. */
  raw: Record<string, unknown>;
}

/**
 * The provider refused a grant. `code` is its OAuth error (`invalid_grant`: the refresh token or
 * code is no longer good, the user must authorize again); `detail` says it for a page or a log
 * and never holds a token.
 */
export class TokenError extends Error {
  constructor(
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** How long a token endpoint may take. */
const TIMEOUT_MS = 15_000;

/**
 * Posts a grant to the token endpoint, the client authenticated as its preset says (HTTP Basic,
 * or `client_id` / `client_secret` in the body), and reads the answer (Slack's `ok: false`
 * included). Throws TokenError.
 * @example await tokenRequest(preset, client, { grant_type: "refresh_token", refresh_token: rt }, Date.now)
 */
export async function tokenRequest(
  preset: OAuthPreset,
  client: OAuthClient,
  grant: Record<string, string>,
  now: () => number,
): Promise<TokenSet> {
  const body = new URLSearchParams(grant);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (preset.clientAuth === "basic") {
    const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
  } else {
    body.set("client_id", client.clientId);
    body.set("client_secret", client.clientSecret);
  }
  let res: Response;
  try {
    const signal = AbortSignal.timeout(TIMEOUT_MS);
    res = await fetch(client.tokenUrl, { method: "POST", headers, body, signal });
  } catch (e) {
    throw new TokenError("unreachable", `the token endpoint did not answer (${errText(e)})`);
  }
  const json = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!json || typeof json !== "object") {
    throw new TokenError("bad_answer", `the token endpoint answered ${res.status}, not JSON`);
  }
  // OAuth's `error`; else HubSpot's `status` (BAD_REFRESH_TOKEN) on a refusal; else Slack's `ok`.
  const status = !res.ok && typeof json.status === "string" ? json.status : undefined;
  const error = json.error ?? status ?? (json.ok === false ? "error" : undefined);
  if (!res.ok || error) {
    const code = typeof error === "string" ? error : `http_${res.status}`;
    const text = json.error_description ?? (status && json.message);
    const said = typeof text === "string" ? text : "";
    throw new TokenError(code, said.slice(0, 200) || `the token endpoint answered ${res.status}`);
  }
  return tokenSet(preset, json, now());
}

function tokenSet(preset: OAuthPreset, json: Record<string, unknown>, now: number): TokenSet {
  const access = json.access_token;
  if (typeof access !== "string" || !access) {
    throw new TokenError("bad_answer", "the token endpoint's answer has no access_token");
  }
  const life = Number(json.expires_in ?? preset.defaultLifetime ?? Number.NaN);
  return {
    access_token: access,
    ...(typeof json.refresh_token === "string" && { refresh_token: json.refresh_token }),
    token_type: typeof json.token_type === "string" ? json.token_type : "Bearer",
    ...(Number.isFinite(life) && life > 0 && { expires_at: now + life * 1000 }),
    raw: json,
  };
}

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The names a scheme keeps a token under. */
export function tokenVarNames(scheme: VarScheme) {
  return scheme === "legacy"
    ? {
        access: "oauth_AccessToken",
        refresh: "oauth_RefreshToken",
        type: "oauth_TokenType",
        expiry: "oauth_Expiry",
      }
    : {
        access: "oauth_access_token",
        refresh: "oauth_refresh_token",
        type: "oauth_token_type",
        expiry: "oauth_expiry",
      };
}

/** A var to write: its short name (after `<connection>__`), value, and whether it is sealed. */
export interface VarWrite {
  name: string;
  value: string;
  secret: boolean;
}

/**
 * A token as a connection's vars, in its preset's scheme. A refresh that brought no new refresh
 * token leaves the stored one alone (it is not among the writes).
 * @example tokenVars("modern", set)[0] // { name: "oauth_access_token", value: "…", secret: true }
 */
export function tokenVars(scheme: VarScheme, t: TokenSet): VarWrite[] {
  const n = tokenVarNames(scheme);
  const out: VarWrite[] = [
    { name: n.access, value: t.access_token, secret: true },
    { name: n.type, value: t.token_type, secret: false },
    { name: n.expiry, value: expiryText(scheme, t.expires_at), secret: false },
  ];
  if (t.refresh_token) out.push({ name: n.refresh, value: t.refresh_token, secret: true });
  return out;
}

/**
 * An expiry as a scheme writes it: RFC 3339 (modern), or as Go prints a time (legacy,
 * `2026-11-28 16:00:00 +0000 UTC`, which AutoKitteh's Google helper parses). No expiry: "" in
 * the modern scheme, Go's zero time in the legacy one, as AutoKitteh writes them.
 * @example expiryText("modern", Date.UTC(2026, 10, 28, 16)) // "2026-11-28T16:00:00Z"
 */
export function expiryText(scheme: VarScheme, at: number | undefined): string {
  if (at === undefined) return scheme === "modern" ? "" : "0001-01-01 00:00:00 +0000 UTC";
  const iso = new Date(Math.floor(at / 1000) * 1000).toISOString().replace(".000Z", "Z");
  return scheme === "modern" ? iso : `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}

/**
 * An expiry var read back (either scheme); undefined when absent or unreadable (Go's zero time).
 * @example parseExpiry("2026-11-28 16:00:00 +0000 UTC") // 1795881600000
 */
export function parseExpiry(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const go = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)? ([+-]\d\d)(\d\d)/.exec(text);
  const t = go ? Date.parse(`${go[1]}T${go[2]}${go[3]}:${go[4]}`) : Date.parse(text);
  return Number.isFinite(t) && t > Date.UTC(1971, 0, 1) ? t : undefined;
}
