import type { OAuthPreset } from "../providers/oauth-presets.ts";
import { type OAuthEnv, presetUrl } from "./client.ts";
import type { TokenSet, VarWrite } from "./tokens.ts";

/** What a preset reads about the account after the code exchange, as AutoKitteh names it. */
type Reader = (token: TokenSet, get: (url: string) => Promise<unknown>) => Promise<Fact[]>;
type Fact = [name: string, value: unknown];

const str = (x: unknown) => (x === undefined || x === null ? "" : String(x));
const obj = (x: unknown) => (x && typeof x === "object" ? (x as Record<string, unknown>) : {});

/** Google: who consented (`user_email`, …) and the scopes granted (`user_scope`). */
const google: Reader = async (t, get) => {
  const u = obj(await get("USERINFO_URL"));
  return [
    ["user_id", u.id ?? u.sub],
    ["user_email", u.email],
    ["user_name", u.name],
    ["user_given_name", u.given_name],
    ["user_family_name", u.family_name],
    ["user_hd", u.hd],
    ["user_scope", t.raw.scope],
  ];
};

/**
 * Atlassian: the site the token reaches for `product` (the first whose granted scopes name it,
 * else the first), its cloud id (`AccessID`) and URL (`AccessURL`).
 */
const atlassian =
  (product: "jira" | "confluence"): Reader =>
  async (_t, get) => {
    const list: unknown = await get("RESOURCES_URL");
    const sites = (Array.isArray(list) ? list : []).map(obj);
    const grants = (s: Record<string, unknown>) =>
      Array.isArray(s.scopes) && s.scopes.some((x) => String(x).includes(product));
    return siteFacts(sites.find(grants) ?? sites[0] ?? {});
  };

/** An Atlassian site's facts, by AutoKitteh's names. */
const siteFacts = (site: Record<string, unknown>): [string, unknown][] => {
  const scopes = Array.isArray(site.scopes) ? `[${site.scopes.join(" ")}]` : "";
  return [
    ["AccessID", site.id],
    ["AccessURL", site.url],
    ["AccessName", site.name],
    ["AccessScope", scopes],
  ];
};

/** Slack: the install's team, app and bot, from oauth.v2.access and auth.test. */
const slack: Reader = async (t, get) => {
  const r = t.raw;
  const who = obj(await get("AUTH_TEST_URL"));
  const team = obj(r.team);
  const enterprise = obj(r.enterprise);
  return [
    ["team_id", team.id ?? who.team_id],
    ["team_name", team.name ?? who.team],
    ["enterprise_id", enterprise.id ?? who.enterprise_id],
    ["app_id", r.app_id],
    ["user_id", obj(r.authed_user).id ?? who.user_id],
    ["user_name", who.user],
    ["bot_id", who.bot_id],
    ["bot_user_id", r.bot_user_id],
    ["install_ids", `${str(r.app_id)}/${str(enterprise.id)}/${str(team.id)}`],
  ];
};

/** HubSpot: the account (`portal_id`) its events name. */
const hubspot: Reader = async (_t, get) => [["portal_id", obj(await get("INFO_URL")).portalId]];

/** Notion and Salesforce say what they need in the token's answer itself. */
const notion: Reader = async (t) => [
  ["workspace_id", t.raw.workspace_id],
  ["workspace_name", t.raw.workspace_name],
  ["bot_id", t.raw.bot_id],
];
const salesforce: Reader = async (t) => [["instance_url", t.raw.instance_url]];

const GOOGLE_USERINFO = "https://www.googleapis.com/oauth2/v2/userinfo";
const ATLASSIAN_RESOURCES = "https://api.atlassian.com/oauth/token/accessible-resources";

/** Each reader with the default URL of each setting it reads. */
const READERS: Record<string, { read: Reader; urls: Record<string, string> }> = {
  google: { read: google, urls: { USERINFO_URL: GOOGLE_USERINFO } },
  jira: { read: atlassian("jira"), urls: { RESOURCES_URL: ATLASSIAN_RESOURCES } },
  confluence: { read: atlassian("confluence"), urls: { RESOURCES_URL: ATLASSIAN_RESOURCES } },
  slack: { read: slack, urls: { AUTH_TEST_URL: "https://slack.com/api/auth.test" } },
  hubspot: { read: hubspot, urls: { INFO_URL: "https://api.hubapi.com/integrations/v1/me" } },
  notion: { read: notion, urls: {} },
  salesforce: { read: salesforce, urls: {} },
};

/**
 * The facts a preset keeps beside the token (plain vars; empty ones left out). A failed read is
 * told to `warn` and leaves its facts out: the token is what the connection needs.
 * @example await accountFacts(settings, presetOf("gmail")!, tokens, log.warn) // [{ name: "user_email", … }]
 */
export async function accountFacts(
  settings: OAuthEnv,
  preset: OAuthPreset,
  token: TokenSet,
  warn: (msg: string) => void,
): Promise<VarWrite[]> {
  const reader = READERS[preset.redirect === "google" ? "google" : preset.name];
  if (!reader) return [];
  const get = async (what: string) => {
    const url = presetUrl(settings, preset, what, reader.urls[what] ?? "");
    const res = await fetch(url, {
      method: preset.name === "slack" ? "POST" : "GET",
      headers: { authorization: `Bearer ${token.access_token}`, accept: "application/json" },
      signal: AbortSignal.timeout(15_000),
    });
    if (!res.ok) throw new Error(`${url.split("?")[0]} answered ${res.status}`);
    return res.json();
  };
  try {
    const facts = await reader.read(token, get);
    return facts
      .map(([name, value]) => ({ name, value: str(value), secret: false }))
      .filter((f) => f.value !== "");
  } catch (e) {
    warn(`oauth ${preset.name}: account details not read (${(e as Error).message})`);
    return [];
  }
}
