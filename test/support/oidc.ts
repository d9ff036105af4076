import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Client, type Ctx } from "oidc-provider";
import { PRESETS } from "../../src/oauth/index.ts";

/** One OAuth client registered at the test server. */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** `client_secret_basic` or `client_secret_post`, as the preset authenticates. */
  token_endpoint_auth_method: "client_secret_basic" | "client_secret_post";
}

/** One answer of the token endpoint, as the test sees it. */
export interface Grant {
  grant_type: string;
  client_id: string;
  access_token: string;
  refresh_token?: string;
  /** The scopes granted, space-separated as OAuth answers them. */
  scope?: string;
}

/** What some providers do besides plain OAuth 2.0, by client id. */
export interface OidcOptions {
  /** Clients refused a token without PKCE (S256), as a provider that requires it refuses them. */
  pkceRequired?: string[];
  /** Clients whose `scope` is comma-separated, as Slack and Linear read it. */
  commaScopes?: string[];
  /**
   * The scopes set on a client's app at the provider (Zoom's Marketplace, Notion's capabilities),
   * granted when its authorize URL names none.
   */
  appScopes?: Record<string, string>;
  /**
   * Reshapes a client's token answers as its provider words them: adds its own fields (Slack's
   * team, Notion's workspace), or words a refusal its way; a status returned replaces the answer's.
   */
  answers?: Record<string, (body: Record<string, unknown>, status: number) => number | undefined>;
}

export interface OidcServer {
  /** The issuer: `/auth`, `/token`, `/me` (userinfo) hang below it. */
  url: string;
  /** Every successful token request, in order. */
  grants: Grant[];
  /** Whether the next consents are refused (`access_denied`) instead of given. */
  deny: boolean;
  /** Whether `token` is an access token the server takes now (its userinfo answers 200). */
  valid(token: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Every scope a preset asks for: the server must know them to grant them. */
const SCOPES = [...new Set([...PRESETS.values()].flatMap((p) => p.scopes))];

/**
 * oidc-provider (a certified OAuth 2.0 / OpenID Connect server) on loopback at a random port,
 * with the given clients, refresh tokens rotated at every use, access tokens living
 * `accessTtl` seconds, and an interaction that logs in `user-1` and consents by itself, or
 * refuses (`server.deny = true`), as a user's click would.
 * @example const oidc = await oidcServer([{ client_id: "g", client_secret: "s", redirect_uris: [cb], token_endpoint_auth_method: "client_secret_post" }]);
 */
export async function oidcServer(
  clients: OidcClient[],
  accessTtl = 3600,
  opts: OidcOptions = {},
): Promise<OidcServer> {
  const grants: Grant[] = [];
  // The port first: the issuer names it.
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const provider = new Provider(url, {
    clients: clients.map((c) => ({
      ...c,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    })),
    scopes: [
      ...["openid", "offline_access", ...SCOPES],
      ...Object.values(opts.appScopes ?? {}).flatMap((s) => s.split(" ")),
    ],
    // Google names its email scope with a URL; it gives the same claims as OpenID's `email`.
    claims: {
      email: ["email", "email_verified"],
      "https://www.googleapis.com/auth/userinfo.email": ["email", "email_verified"],
      profile: ["name"],
    },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@example.com`, email_verified: true, name: "Ada" }),
    }),
    features: { devInteractions: { enabled: false } },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    issueRefreshToken: async (_ctx: unknown, client: Client) =>
      client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => true,
    pkce: {
      required: (_ctx: unknown, client: { clientId: string }) =>
        opts.pkceRequired?.includes(client.clientId) ?? false,
    },
    ttl: { AccessToken: accessTtl, AuthorizationCode: 60, Grant: 3600, Session: 3600 },
    cookies: { keys: ["hookline-test-oidc"] },
  });
  const server: OidcServer = {
    url,
    grants,
    deny: false,
    async valid(token) {
      const res = await fetch(`${server.url}/me`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return res.ok;
    },
    close: async () => {},
  };
  const methods = new Map(clients.map((c) => [c.client_id, c.token_endpoint_auth_method]));
  provider.use(async (ctx, next) => {
    const refused = ctx.path === "/token" && (await wrongClientAuth(ctx, methods));
    if (refused) {
      ctx.status = 401;
      ctx.body = { error: "invalid_client", error_description: refused };
      return;
    }
    const q = ctx.query;
    if (ctx.path === "/auth" && opts.commaScopes?.includes(String(q.client_id))) {
      ctx.query = { ...q, scope: String(q.scope ?? "").replaceAll(",", " ") };
    }
    const appScope = opts.appScopes?.[String(q.client_id)];
    if (ctx.path === "/auth" && q.scope === undefined && appScope) {
      ctx.query = { ...q, scope: appScope };
    }
    await next();
    const answer = opts.answers?.[String(ctx.oidc?.client?.clientId)];
    if (ctx.path === "/token" && answer)
      ctx.status = answer(ctx.body as never, ctx.status) ?? ctx.status;
  });
  provider.use(async (ctx, next) => {
    if (!ctx.path.startsWith("/interaction/")) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const result = server.deny
      ? { error: "access_denied", error_description: "the user refused" }
      : await consent(provider, String(details.params.client_id), String(details.params.scope));
    const to = await provider.interactionResult(ctx.req, ctx.res, result, {
      mergeWithLastSubmission: false,
    });
    ctx.redirect(to);
  });
  provider.on("grant.success", (ctx) => {
    const body = ctx.body as { access_token?: string; refresh_token?: string; scope?: string };
    grants.push({
      grant_type: String(ctx.oidc.params?.grant_type),
      client_id: String(ctx.oidc.client?.clientId),
      access_token: body.access_token ?? "",
      ...(body.refresh_token && { refresh_token: body.refresh_token }),
      ...(body.scope && { scope: body.scope }),
    });
  });
  http.on("request", provider.callback());
  server.close = () =>
    new Promise((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return server;
}

/**
 * Why a token request authenticates its client otherwise than the client is registered
 * (`client_secret_basic`: an Authorization header; `client_secret_post`: the form body), or "".
 * Providers that take one way refuse the other; oidc-provider takes either, so this refuses it
 * first. The body read here is left where oidc-provider reads an already-read body from.
 */
async function wrongClientAuth(ctx: Ctx, methods: Map<string, string>): Promise<string> {
  if (ctx.method !== "POST") return "";
  const chunks: Buffer[] = [];
  for await (const c of ctx.req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  (ctx.req as unknown as { body: Buffer }).body = raw;
  const form = new URLSearchParams(raw.toString("utf8"));
  const header = String(ctx.headers.authorization ?? "");
  const basic = /^Basic /i.test(header);
  const id = basic
    ? decodeURIComponent(Buffer.from(header.slice(6), "base64").toString("utf8").split(":")[0]!)
    : form.get("client_id");
  const used = basic
    ? "client_secret_basic"
    : form.has("client_secret")
      ? "client_secret_post"
      : "";
  const registered = methods.get(id ?? "");
  return registered && used !== registered
    ? `${id} authenticates with ${registered}, not ${used || "nothing"}`
    : "";
}

/** A login of `user-1` and a grant of every scope asked for. */
async function consent(provider: Provider, clientId: string, scope: string) {
  const accountId = "user-1";
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope(scope);
  return { login: { accountId }, consent: { grantId: await grant.save() } };
}
