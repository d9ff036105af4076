/**
 * The OAuth 2.0 presets: one per integration whose connections a user authorizes in a browser.
 * The provider's URLs, scopes and quirks are facts from the providers' documentation (and from
 * AutoKitteh, whose var names and redirect paths programs rely on); every URL can be replaced
 * with a `SVC_OAUTH_<PRESET>_…_URL` setting (see `presetUrl`), which tests use to point them at a
 * local OAuth server. GitHub is not here: it connects through a GitHub App installation.
 */

/**
 * How a connection's tokens are named: `legacy` is AutoKitteh's older scheme (`oauth_AccessToken`,
 * `oauth_RefreshToken`, `oauth_TokenType`, `oauth_Expiry` as Go prints a time, `auth_type=oauth`),
 * `modern` its newer one (`oauth_access_token`, … `oauth_expiry` in RFC 3339, `auth_type`
 * `oauthDefault` or `oauthPrivate`).
 */
export type VarScheme = "legacy" | "modern";

export interface OAuthPreset {
  /** The integration name, as the manifest's `integration:` says it. */
  name: string;
  /** The provider, as the button says it: "Authorize with Google". */
  provider: string;
  /** The callback's last path segment, `/oauth/redirect/<redirect>` (the Google APIs share one). */
  redirect: string;
  /** Prefix of the service's env vars with the client: `GOOGLE` → `GOOGLE_CLIENT_ID`. */
  env: string;
  authorizeUrl: string;
  tokenUrl: string;
  scopes: string[];
  /** How the scopes are joined in the authorize URL (Slack and Linear use a comma). */
  scopeSeparator?: string;
  /** `basic`: the client in an Authorization header; `post`: in the form body. */
  clientAuth: "basic" | "post";
  /** Whether the provider takes PKCE (S256); the service sends it wherever it does. */
  pkce: boolean;
  scheme: VarScheme;
  /** Extra authorize-URL parameters. */
  params?: Record<string, string>;
  /** The access token's lifetime when the provider does not say it (Salesforce), seconds. */
  defaultLifetime?: number;
  /**
   * The provider's refusals, besides OAuth's `invalid_grant`, that say a refresh token is no
   * longer good: the user must authorize again (Slack's `invalid_refresh_token`, HubSpot's
   * `BAD_REFRESH_TOKEN`).
   */
  regrant?: string[];
}

const GOOGLE_BASE = ["openid", "email", "profile"].map((s) =>
  s === "openid" ? s : `https://www.googleapis.com/auth/userinfo.${s}`,
);
const G = "https://www.googleapis.com/auth/";

function google(name: string, scopes: string[]): OAuthPreset {
  return {
    name,
    provider: "Google",
    redirect: "google",
    env: "GOOGLE",
    authorizeUrl: "https://accounts.google.com/o/oauth2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    scopes: [...GOOGLE_BASE, ...scopes.map((s) => G + s)],
    clientAuth: "post",
    pkce: true,
    scheme: "legacy",
    // A refresh token every time, so a re-authorization never leaves the connection without one.
    params: { access_type: "offline", prompt: "consent" },
  };
}

const GMAIL = ["gmail.modify", "gmail.settings.basic"];
const CALENDAR = ["calendar", "calendar.events"];
const FORMS = ["forms.body", "forms.responses.readonly"];
const YOUTUBE = ["youtube", "youtube.readonly", "youtube.upload"];

function atlassian(name: "jira" | "confluence", scopes: string[]): OAuthPreset {
  return {
    name,
    provider: name === "jira" ? "Jira" : "Confluence",
    redirect: name,
    env: name.toUpperCase(),
    authorizeUrl: "https://auth.atlassian.com/authorize",
    tokenUrl: "https://auth.atlassian.com/oauth/token",
    scopes: [...scopes, "read:account", "offline_access"],
    clientAuth: "post",
    pkce: false,
    scheme: "legacy",
    params: { audience: "api.atlassian.com", prompt: "consent" },
  };
}

// `{tenant}`: the connection's `private_tenant_id` (or `tenant_id`), else the service's
// MICROSOFT_TENANT_ID, else `common` (any work, school or personal account): client.ts.
const MICROSOFT = "https://login.microsoftonline.com/{tenant}/oauth2/v2.0";

const LIST: OAuthPreset[] = [
  google("google", [...GMAIL, ...CALENDAR, ...FORMS, ...YOUTUBE, "drive.file", "spreadsheets"]),
  google("gmail", GMAIL),
  google("googlecalendar", CALENDAR),
  google("googledrive", ["drive.file"]),
  google("googleforms", FORMS),
  google("googlesheets", ["spreadsheets"]),
  google("youtube", YOUTUBE),
  {
    name: "slack",
    provider: "Slack",
    redirect: "slack",
    env: "SLACK",
    authorizeUrl: "https://slack.com/oauth/v2/authorize",
    tokenUrl: "https://slack.com/api/oauth.v2.access",
    scopes: [
      ...["app_mentions:read", "channels:history", "channels:read", "chat:write"],
      ...["commands", "groups:history", "groups:read", "im:history", "im:read", "im:write"],
      ...["reactions:read", "reactions:write", "users:read", "users:read.email"],
    ],
    scopeSeparator: ",",
    clientAuth: "basic",
    pkce: false,
    scheme: "modern",
    regrant: ["invalid_refresh_token"],
  },
  atlassian("jira", ["read:jira-work", "read:jira-user", "write:jira-work", "manage:jira-webhook"]),
  atlassian("confluence", [
    ...["read:confluence-content.all", "write:confluence-content", "read:confluence-space.summary"],
    ...["search:confluence", "read:confluence-user"],
  ]),
  {
    name: "linear",
    provider: "Linear",
    redirect: "linear",
    env: "LINEAR",
    authorizeUrl: "https://linear.app/oauth/authorize",
    tokenUrl: "https://api.linear.app/oauth/token",
    scopes: ["read", "write"],
    scopeSeparator: ",",
    clientAuth: "post",
    pkce: true,
    scheme: "modern",
  },
  {
    name: "hubspot",
    provider: "HubSpot",
    redirect: "hubspot",
    env: "HUBSPOT",
    authorizeUrl: "https://app.hubspot.com/oauth/authorize",
    tokenUrl: "https://api.hubapi.com/oauth/v1/token",
    scopes: ["companies", "contacts", "deals", "owners"].flatMap((o) =>
      o === "owners"
        ? [`crm.objects.${o}.read`]
        : [`crm.objects.${o}.read`, `crm.objects.${o}.write`],
    ),
    clientAuth: "post",
    pkce: false,
    scheme: "legacy",
    regrant: ["BAD_REFRESH_TOKEN"],
  },
  {
    name: "auth0",
    provider: "Auth0",
    redirect: "auth0",
    env: "AUTH0",
    // Each tenant has its own: `https://<auth0_domain>/…`, from the connection's var (urls.ts).
    authorizeUrl: "https://{auth0_domain}/authorize",
    tokenUrl: "https://{auth0_domain}/oauth/token",
    scopes: ["openid", "profile", "email", "offline_access", "read:users"],
    clientAuth: "post",
    pkce: true,
    scheme: "legacy",
    params: { audience: "https://{auth0_domain}/api/v2/" },
  },
  {
    name: "microsoft",
    provider: "Microsoft",
    redirect: "microsoft",
    env: "MICROSOFT",
    authorizeUrl: `${MICROSOFT}/authorize`,
    tokenUrl: `${MICROSOFT}/token`,
    scopes: [
      ...["ChannelMessage.Read.All", "ChannelMessage.Send", "Chat.ReadWrite.All"],
      ...["Team.ReadBasic.All", "User.Read", "email", "offline_access", "openid", "profile"],
    ],
    clientAuth: "post",
    pkce: true,
    scheme: "modern",
  },
  {
    name: "zoom",
    provider: "Zoom",
    redirect: "zoom",
    env: "ZOOM",
    authorizeUrl: "https://zoom.us/oauth/authorize",
    tokenUrl: "https://zoom.us/oauth/token",
    scopes: [], // the app's own, chosen in Zoom's Marketplace
    clientAuth: "basic",
    pkce: true,
    scheme: "modern",
  },
  {
    name: "salesforce",
    provider: "Salesforce",
    redirect: "salesforce",
    env: "SALESFORCE",
    authorizeUrl: "https://login.salesforce.com/services/oauth2/authorize",
    tokenUrl: "https://login.salesforce.com/services/oauth2/token",
    scopes: ["api", "refresh_token"],
    clientAuth: "post",
    pkce: true,
    scheme: "modern",
    defaultLifetime: 2 * 60 * 60,
  },
  {
    name: "notion",
    provider: "Notion",
    redirect: "notion",
    env: "NOTION",
    authorizeUrl: "https://api.notion.com/v1/oauth/authorize",
    tokenUrl: "https://api.notion.com/v1/oauth/token",
    scopes: [],
    clientAuth: "basic",
    pkce: false,
    scheme: "modern",
    params: { owner: "user" },
  },
];

/** The presets by integration name. */
export const PRESETS: ReadonlyMap<string, OAuthPreset> = new Map(LIST.map((p) => [p.name, p]));

/**
 * The preset of an integration, or undefined when it is not connected with OAuth here.
 * @example presetOf("gmail")?.redirect // "google"
 */
export const presetOf = (integration: string) => PRESETS.get(integration);

/**
 * The presets whose callback is `/oauth/redirect/<redirect>`.
 * @example presetsByRedirect("google").length // 7
 */
export const presetsByRedirect = (redirect: string) => LIST.filter((p) => p.redirect === redirect);
