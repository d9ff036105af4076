// Every OAuth preset but Google's and Microsoft's (test/oauth.test.ts), authorized end to end:
// the real service, a cookie-jar browser, oidc-provider standing in for each provider with the
// client authentication and PKCE the provider documents, and a loopback stand-in for the APIs the
// account's facts are read from. One service, one OAuth server, one project for all of them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VarView } from "../src/wire/views.ts";
import { browserJar } from "./support/browser-jar.ts";
import { useEmulator } from "./support/emulator.ts";
import {
  CASES,
  clientId,
  FACT_ROUTES,
  type PresetCase,
  presetClients,
  presetServerOptions,
  presetSettings,
  presetsProject,
} from "./support/oauth-presets.ts";
import { digest } from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";
import { type StandInApi, standInApi } from "./support/stand-in-api.ts";

const saved = { ...process.env };
const logLines: string[] = [];
const emu = useEmulator({}, (line) => logLines.push(line));
let oidc: OidcServer;
let api: StandInApi;
let triggers: Record<string, string> = {};
const cids: Record<string, string> = {};
/** Every answer of the management API the test read, as text: no token may be in one. */
const answers: string[] = [];

async function read<T>(path: string): Promise<T> {
  const body = await emu.api<T>(path);
  answers.push(JSON.stringify(body));
  return body;
}
/** A connection's vars by short name. */
async function varsOf(conn: string): Promise<Record<string, VarView>> {
  const { vars } = await read<{ vars: VarView[] }>("/envs/presets/vars");
  const mine = vars.filter((v) => v.name.startsWith(`${conn}__`));
  return Object.fromEntries(mine.map((v) => [v.name.slice(conn.length + 2), v]));
}

beforeAll(async () => {
  oidc = await oidcServer(presetClients(emu.url), 3600, presetServerOptions());
  api = await standInApi(FACT_ROUTES);
  Object.assign(process.env, presetSettings(oidc.url, api.url));
  triggers = await emu.deploy(presetsProject());
  for (const c of CASES) {
    for (const [name, [value, secret]] of Object.entries(c.vars ?? {})) {
      await emu.api(`/envs/presets/vars/${c.conn}__${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    }
  }
  const { connections } = await read<{ connections: { id: string; name: string }[] }>(
    "/connections?project=presets",
  );
  for (const c of connections) cids[c.name] = c.id;
}, 120_000);

afterAll(async () => {
  process.env = saved;
  await api?.close();
  await oidc?.close();
});

/** Runs a session of the project's trigger `name`; its prints (it must complete). */
async function session(name: string, method: string): Promise<string[]> {
  const res = await fetch(triggers[name]!, { method });
  const { session_id } = (await res.json()) as { session_id: string };
  const end = await emu.ended(session_id);
  expect(end.state, JSON.stringify(end.error)).toBe("completed");
  return emu.prints(session_id);
}

/** Authorizes the case's connection in a fresh browser; the page, the hop to the provider, the grant. */
async function authorize(c: PresetCase) {
  const jar = browserJar();
  const page = await jar.follow(`${emu.url}/oauth/start/${c.integration}?cid=${cids[c.conn]}`);
  const hop = page.hops.find((h) => h.location?.startsWith(oidc.url));
  const toProvider = new URL(hop?.location ?? "http://none/");
  const grant = oidc.grants.findLast(
    (g) => g.grant_type === "authorization_code" && g.client_id === clientId(c),
  );
  return { page, toProvider, grant };
}

describe.each(CASES)("$integration", (c) => {
  let done: Awaited<ReturnType<typeof authorize>>;
  beforeAll(async () => {
    done = await authorize(c);
  }, 30_000);

  it(`is authorized with ${c.provider}: the code taken with the provider's client authentication (${c.auth})`, () => {
    const { page, grant } = done;
    expect(page.text, page.text.slice(0, 400)).toContain(
      `presets/${c.conn} is authorized with ${c.provider}`,
    );
    expect(page.status).toBe(200);
    // The OAuth server takes this client only as the provider does (Basic or the body).
    expect(grant?.client_id).toBe(clientId(c));
    expect(page.text).not.toContain(grant!.access_token);
  });

  it(`asks ${c.pkce ? "with" : "without"} PKCE, the scopes and parameters as the provider reads them`, () => {
    const q = done.toProvider.searchParams;
    expect(q.get("code_challenge_method")).toBe(c.pkce ? "S256" : null);
    expect(q.has("code_challenge")).toBe(c.pkce);
    for (const [k, v] of Object.entries(c.params ?? {})) expect(q.get(k)).toBe(v);
    if (!c.separator) {
      // The app's own scopes, chosen at the provider, are granted.
      expect(q.has("scope")).toBe(false);
      expect(done.grant?.scope).toBe(c.appScope);
      return;
    }
    const scopes = q.get("scope")!.split(c.separator);
    expect(scopes).toContain(c.scope);
    expect(scopes.every((s) => s && !/[ ,]/.test(s))).toBe(true);
    // The server read them as the provider does, and granted them.
    expect(done.grant?.scope?.split(" ")).toContain(c.scope);
  });

  it(`saves the ${c.scheme} token vars, the tokens sealed, and the account's facts`, async () => {
    const v = await varsOf(c.conn);
    const names =
      c.scheme === "legacy"
        ? ["oauth_AccessToken", "oauth_RefreshToken", "oauth_TokenType", "oauth_Expiry"]
        : ["oauth_access_token", "oauth_refresh_token", "oauth_token_type", "oauth_expiry"];
    expect(v[names[0]!]).toMatchObject({ secret: true, value: "********" });
    expect(v[names[1]!]).toMatchObject({ secret: true, value: "********" });
    expect(v[names[2]!]?.value).toMatch(/^(Bearer|bearer|bot)$/);
    const expiry = v[names[3]!]!.value;
    if (c.scheme === "legacy")
      expect(expiry).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    else expect(expiry).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$|^$/);
    const auth = c.scheme === "legacy" ? "oauth" : "oauthDefault";
    expect(v.auth_type?.value).toBe(auth);
    const facts = Object.fromEntries(Object.keys(c.facts).map((k) => [k, v[k]?.value]));
    expect(facts).toEqual(c.facts);
    if (c.factsPath) {
      const [method, path] = c.factsPath.split(" ");
      const asked = api.received.filter((r) => r.method === method && r.path === path);
      expect(asked.at(-1)?.authorization).toBe(`Bearer ${done.grant!.access_token}`);
    }
  });
});

describe("after all the authorizations", () => {
  it("the project page offers each provider's button", async () => {
    const ui = await (await fetch(`${emu.url}/ui/projects/presets`)).text();
    for (const c of CASES) expect(ui).toContain(`Authorize with ${c.provider}`);
  });

  it("Salesforce's token, whose answer gives no lifetime, is taken to live 2 hours", async () => {
    const { oauth_expiry } = await varsOf("salesforce_conn");
    const left = Date.parse(oauth_expiry!.value) - Date.now();
    expect(left).toBeGreaterThan(2 * 3600_000 - 120_000);
    expect(left).toBeLessThanOrEqual(2 * 3600_000);
  });

  it("a session sees every token in its environment, and no client secret", async () => {
    expect(await session("check", "GET")).toEqual([
      ...CASES.map((c) => `${c.conn} token set`),
      "client secrets here: []",
    ]);
  });

  it("refresh_oauth refreshes each, the client authenticated as at the code exchange", async () => {
    const before = oidc.grants.length;
    const prints = await session("refresh", "POST");
    const refreshes = oidc.grants.slice(before);
    expect(refreshes.map((g) => g.grant_type)).toEqual(CASES.map(() => "refresh_token"));
    expect(refreshes.map((g) => g.client_id)).toEqual(CASES.map(clientId));
    // The session got each new token; a lifetime where the provider said one (Notion: none).
    expect(prints).toEqual(
      CASES.map(
        (c, i) =>
          `${c.conn} ${digest(refreshes[i]!.access_token)} ${c.integration !== "notion" ? "True" : "False"}`,
      ),
    );
    // Each rotated refresh token was saved: a second round takes them (a used one is refused).
    const again = oidc.grants.length;
    await session("refresh", "POST");
    expect(oidc.grants.slice(again).map((g) => g.client_id)).toEqual(CASES.map(clientId));
  });

  it("a refresh token the provider no longer takes, refused in its own words (Slack's, HubSpot's), marks the connection", async () => {
    const stale: [string, string, string, string][] = [
      ["slack_conn", "oauth_refresh_token", "oauth_expiry", "2000-01-01T00:00:00Z"],
      ["hubspot_conn", "oauth_RefreshToken", "oauth_Expiry", "2000-01-01 00:00:00 +0000 UTC"],
    ];
    const put = (name: string, value: string, secret: boolean) =>
      emu.api(`/envs/presets/vars/${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    for (const [conn, refresh, expiry, past] of stale) {
      await put(`${conn}__${refresh}`, "not-a-refresh-token", true);
      await put(`${conn}__${expiry}`, past, false);
    }
    const from = logLines.length;
    // Refreshed before the session, refused: the session still starts, with what is stored.
    expect((await session("check", "GET")).at(-1)).toBe("client secrets here: []");
    for (const [conn] of stale) {
      expect((await varsOf(conn)).oauth_status?.value, conn).toBe("needs_authorization");
    }
    const said = logLines.slice(from).join("\n");
    expect(said).toMatch(/slack_conn: refresh refused \(invalid_refresh_token\)/);
    expect(said).toMatch(/hubspot_conn: refresh refused \(BAD_REFRESH_TOKEN\)/);
  });

  it("no token nor client secret is in an API answer or a log line", async () => {
    await read(`/connections?project=presets`);
    await read("/projects/presets");
    const secrets = oidc.grants.flatMap((g) => [g.access_token, g.refresh_token ?? ""]);
    secrets.push(...CASES.map((c) => `${c.integration}-s3cret`));
    expect(logLines.join("\n")).toMatch(/oauth presets\/slack_conn: authorized with Slack/);
    // Confluence takes no webhook registration from an OAuth token: the authorization says so.
    expect(logLines.join("\n")).toMatch(
      /confluence connection presets\/confluence_conn: webhook not registered: Confluence registers webhooks only with an API token/,
    );
    for (const s of secrets.filter(Boolean)) {
      expect(answers.join("\n")).not.toContain(s);
      expect(logLines.join("\n")).not.toContain(s);
    }
  });
});
