import { describe, expect, it } from "vitest";
import { standInApi } from "../../test/support/stand-in-api.ts";
import { presetOf } from "../providers/oauth-presets.ts";
import { ClientMissing, oauthClient } from "./client.ts";
import { accountFacts } from "./facts.ts";
import { startPath, ticketValid } from "./ticket.ts";
import { expiryText, parseExpiry, type TokenError, tokenRequest, tokenVars } from "./tokens.ts";

const AT = Date.UTC(2026, 10, 28, 16, 0, 0);

describe("token vars", () => {
  it("writes the expiry as each scheme does, and reads both back", () => {
    expect(expiryText("modern", AT + 400)).toBe("2026-11-28T16:00:00Z");
    expect(expiryText("legacy", AT)).toBe("2026-11-28 16:00:00 +0000 UTC");
    expect(parseExpiry("2026-11-28 16:00:00 +0000 UTC")).toBe(AT);
    expect(parseExpiry("2026-11-28 09:00:00.5 -0700 MST")).toBe(AT);
    expect(parseExpiry("2026-11-28T16:00:00Z")).toBe(AT);
    expect(parseExpiry(expiryText("legacy", undefined))).toBeUndefined();
    expect(parseExpiry("")).toBeUndefined();
  });

  it("names the tokens as AutoKitteh's two schemes do; a refresh without a new refresh token keeps the old", () => {
    const t = { access_token: "a", token_type: "Bearer", expires_at: AT, raw: {} };
    expect(
      tokenVars("legacy", { ...t, refresh_token: "r" }).map((v) => [v.name, v.secret]),
    ).toEqual([
      ["oauth_AccessToken", true],
      ["oauth_TokenType", false],
      ["oauth_Expiry", false],
      ["oauth_RefreshToken", true],
    ]);
    expect(tokenVars("modern", t).map((v) => v.name)).toEqual([
      "oauth_access_token",
      "oauth_token_type",
      "oauth_expiry",
    ]);
  });
});

describe("the client of a connection", () => {
  const gmail = presetOf("gmail")!;
  const none = () => undefined;

  it("is the service's from the environment, its URLs replaced by settings (the family's too)", () => {
    const settings = {
      GOOGLE_CLIENT_ID: "id",
      GOOGLE_CLIENT_SECRET: "s",
      SVC_OAUTH_GOOGLE_TOKEN_URL: "http://family/token",
      SVC_OAUTH_GMAIL_AUTHORIZE_URL: "http://gmail/auth",
    };
    expect(oauthClient(settings, gmail, none)).toMatchObject({
      clientId: "id",
      mode: "default",
      authorizeUrl: "http://gmail/auth",
      tokenUrl: "http://family/token",
      params: { access_type: "offline", prompt: "consent" },
    });
  });

  it("is the connection's own with private_client_id, and says what to set when there is none", () => {
    const vars = (n: string) => ({ private_client_id: "mine", private_client_secret: "ms" })[n];
    expect(oauthClient({}, gmail, vars)).toMatchObject({ clientId: "mine", mode: "private" });
    expect(() => oauthClient({}, gmail, none)).toThrow(ClientMissing);
    expect(() => oauthClient({}, gmail, none)).toThrow(/GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET/);
  });

  it("takes client_id / client_secret without private_ for auth0 only (a session sees the others')", () => {
    const vars = (n: string) =>
      ({ client_id: "c", client_secret: "s", auth0_domain: "t.auth0.com" })[n];
    const service = { GOOGLE_CLIENT_ID: "svc", GOOGLE_CLIENT_SECRET: "svc-s" };
    expect(oauthClient(service, gmail, vars)).toMatchObject({ clientId: "svc", mode: "default" });
    expect(oauthClient({}, presetOf("auth0")!, vars)).toMatchObject({
      clientId: "c",
      mode: "private",
    });
  });

  it("fills Auth0's tenant from auth0_domain", () => {
    const vars = (n: string) =>
      ({ client_id: "c", client_secret: "s", auth0_domain: "t.eu.auth0.com" })[n];
    const c = oauthClient({}, presetOf("auth0")!, vars);
    expect(c.tokenUrl).toBe("https://t.eu.auth0.com/oauth/token");
    expect(c.params.audience).toBe("https://t.eu.auth0.com/api/v2/");
  });
});

describe("token requests", () => {
  it("authenticates the client as the preset says: Basic (Slack) or in the body (Google)", async () => {
    const api = await standInApi({
      "POST /token": () => [200, { ok: true, access_token: "xoxb", token_type: "bot" }],
    });
    try {
      const client = { clientId: "i d", clientSecret: "s:", mode: "default" as const };
      const urls = { authorizeUrl: "", tokenUrl: `${api.url}/token`, params: {} };
      await tokenRequest(presetOf("slack")!, { ...client, ...urls }, { code: "c" }, Date.now);
      await tokenRequest(presetOf("gmail")!, { ...client, ...urls }, { code: "c" }, Date.now);
      const [basic, post] = api.received;
      expect(basic!.authorization).toBe(`Basic ${Buffer.from("i%20d:s%3A").toString("base64")}`);
      expect(basic!.body).toBe("code=c");
      expect(post!.authorization).toBe("");
      expect(new URLSearchParams(post!.body).get("client_secret")).toBe("s:");
    } finally {
      await api.close();
    }
  });

  it("reads an OAuth error, and Slack's ok: false, as a TokenError", async () => {
    const api = await standInApi({
      "POST /a": () => [400, { error: "invalid_grant", error_description: "expired" }],
      "POST /b": () => [200, { ok: false, error: "invalid_code" }],
    });
    try {
      const c = (path: string) => ({
        clientId: "i",
        clientSecret: "s",
        mode: "default" as const,
        authorizeUrl: "",
        tokenUrl: api.url + path,
        params: {},
      });
      const err = (p: Promise<unknown>) =>
        p.then(
          () => null,
          (e: TokenError) => [e.code, e.detail],
        );
      expect(await err(tokenRequest(presetOf("gmail")!, c("/a"), {}, Date.now))).toEqual([
        "invalid_grant",
        "expired",
      ]);
      expect((await err(tokenRequest(presetOf("slack")!, c("/b"), {}, Date.now)))?.[0]).toBe(
        "invalid_code",
      );
    } finally {
      await api.close();
    }
  });
});

describe("start tickets", () => {
  it("are good for one connection, with the token that made them, until they expire", () => {
    const path = startPath("gmail", "con_1", "tok", 1000);
    const ticket = decodeURIComponent(/ticket=([^&]+)/.exec(path)![1]!);
    expect(ticketValid("tok", "con_1", ticket, 1000)).toBe(true);
    expect(ticketValid("tok", "con_2", ticket, 1000)).toBe(false);
    expect(ticketValid("other", "con_1", ticket, 1000)).toBe(false);
    expect(ticketValid("tok", "con_1", ticket, 1000 + 10 * 60_000)).toBe(false);
    expect(startPath("gmail", "con_1")).toBe("/oauth/start/gmail?cid=con_1");
  });

  it("refuse a forged signature however much of it is right: the tail, a cut, an addition", () => {
    const path = startPath("gmail", "con_1", "tok", 1000);
    const ticket = decodeURIComponent(/ticket=([^&]+)/.exec(path)![1]!);
    const [exp, sig] = ticket.split(".") as [string, string];
    const flip = (c: string) => (c === "A" ? "B" : "A");
    const forged = [
      `${exp}.${sig.slice(0, 8)}${"A".repeat(sig.length - 8)}`, // the first 8 right
      `${exp}.${sig.slice(0, -1)}${flip(sig.at(-1)!)}`, // all but the last right
      `${exp}.${sig.slice(0, 8)}`, // cut after 8
      `${exp}.${sig}A`, // one more
      `${exp}.`,
      `${Number(exp) + 1}.${sig}`, // another expiry under the same signature
    ];
    for (const f of forged) expect([f, ticketValid("tok", "con_1", f, 1000)]).toEqual([f, false]);
  });
});

describe("what a preset reads after the exchange", () => {
  const set = (raw: Record<string, unknown>) => ({
    access_token: "tok",
    token_type: "Bearer",
    raw,
  });

  it("Slack: the install's ids from oauth.v2.access and auth.test", async () => {
    const api = await standInApi({
      "POST /auth.test": () => [200, { ok: true, bot_id: "B1", user: "ada", team_id: "T1" }],
    });
    try {
      const raw = { app_id: "A1", team: { id: "T1", name: "Acme" }, authed_user: { id: "U1" } };
      const settings = { SVC_OAUTH_SLACK_AUTH_TEST_URL: `${api.url}/auth.test` };
      const facts = await accountFacts(settings, presetOf("slack")!, set(raw), () => {});
      expect(Object.fromEntries(facts.map((f) => [f.name, f.value]))).toEqual({
        team_id: "T1",
        team_name: "Acme",
        app_id: "A1",
        user_id: "U1",
        user_name: "ada",
        bot_id: "B1",
        install_ids: "A1//T1",
      });
      expect(api.received[0]!.authorization).toBe("Bearer tok");
    } finally {
      await api.close();
    }
  });

  it("Atlassian: of several sites, the one whose granted scopes are the product's", async () => {
    const sites = [
      {
        id: "c-conf",
        url: "https://wiki.example",
        name: "w",
        scopes: ["read:confluence-content.all"],
      },
      { id: "c-jira", url: "https://jira.example", name: "j", scopes: ["read:jira-work"] },
    ];
    const api = await standInApi({ "GET /resources": () => [200, sites] });
    try {
      const settings = {
        SVC_OAUTH_JIRA_RESOURCES_URL: `${api.url}/resources`,
        SVC_OAUTH_CONFLUENCE_RESOURCES_URL: `${api.url}/resources`,
      };
      const idOf = async (name: string) =>
        (await accountFacts(settings, presetOf(name)!, set({}), () => {})).find(
          (f) => f.name === "AccessID",
        )?.value;
      expect(await idOf("jira")).toBe("c-jira");
      expect(await idOf("confluence")).toBe("c-conf");
    } finally {
      await api.close();
    }
  });

  it("Atlassian: the site's cloud id and URL; HubSpot: the portal; a failed read leaves them out", async () => {
    const api = await standInApi({
      "GET /resources": () => [
        200,
        [{ id: "c-1", url: "https://x.atlassian.net", name: "x", scopes: ["a"] }],
      ],
      "GET /me": () => [200, { portalId: 42 }],
    });
    try {
      const settings = {
        SVC_OAUTH_JIRA_RESOURCES_URL: `${api.url}/resources`,
        SVC_OAUTH_HUBSPOT_INFO_URL: `${api.url}/me`,
        SVC_OAUTH_CONFLUENCE_RESOURCES_URL: `${api.url}/nowhere`,
      };
      const jira = await accountFacts(settings, presetOf("jira")!, set({}), () => {});
      expect(jira.map((f) => `${f.name}=${f.value}`)).toEqual([
        "AccessID=c-1",
        "AccessURL=https://x.atlassian.net",
        "AccessName=x",
        "AccessScope=[a]",
      ]);
      const hubspot = await accountFacts(settings, presetOf("hubspot")!, set({}), () => {});
      expect(hubspot).toEqual([{ name: "portal_id", value: "42", secret: false }]);
      const warned: string[] = [];
      const none = await accountFacts(
        settings,
        presetOf("confluence")!,
        set({}),
        (m) => void warned.push(m),
      );
      expect(none).toEqual([]);
      expect(warned[0]).toMatch(/account details not read .*answered 404/);
      expect(warned[0]).not.toContain("tok");
    } finally {
      await api.close();
    }
  });
});
