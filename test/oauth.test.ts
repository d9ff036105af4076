// Connecting an account with OAuth, end to end: a real OAuth server (oidc-provider), the real
// service with real Python, a browser that is a cookie jar, an AutoKitteh project reading Gmail.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/cli/main.ts";
import type { VarView } from "../src/wire/views.ts";
import { browserJar, expectRefused } from "./support/browser-jar.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import {
  digest,
  gmailProject,
  googleClient,
  googleLibs,
  googleSettings,
  standInGmail,
} from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";

const saved = { ...process.env };
// Access tokens live 290 s: within the 5 minutes the service refreshes ahead, so every session
// starts after a refresh (and beyond the 3m45s google-auth wants of a token it is handed).
const TTL = 290;
// The sessions' Python finds the Google libraries on PYTHONPATH, which the service passes to its
// workers: set before the emulator starts (hooks run in order).
beforeAll(async () => {
  const libs = await googleLibs();
  process.env.PYTHONPATH = [libs, saved.PYTHONPATH].filter(Boolean).join(delimiter);
}, 600_000);
const emu = useEmulator();
let oidc: OidcServer;
let gmail: Awaited<ReturnType<typeof standInGmail>>;
let triggers: Record<string, string>;
let cid = "";

const vars = async () =>
  (await emu.api<{ vars: VarView[] }>("/envs/mailbox/vars")).vars.filter((v) =>
    v.name.startsWith("gmail_conn__"),
  );
const setVar = (name: string, value: string, secret = false) =>
  emu.api(`/envs/mailbox/vars/${name}`, { method: "PUT", body: JSON.stringify({ value, secret }) });
const startLink = () => `${emu.url}/oauth/start/gmail?cid=${cid}`;

async function session(trigger: string, method: string) {
  const res = await fetch(triggers[trigger]!, { method });
  const { session_id } = (await res.json()) as { session_id: string };
  const end = await emu.ended(session_id);
  // google-api-core warns about this Python's age on stderr: not the program's.
  const prints = (await emu.prints(session_id)).filter((p) => !/Warning|warnings\.warn/.test(p));
  return { end, prints };
}

beforeAll(async () => {
  const callback = `${emu.url}/oauth/redirect/google`;
  oidc = await oidcServer(
    [
      googleClient(emu.url),
      {
        client_id: "teams-own-app",
        client_secret: "teams-own-s3cret",
        redirect_uris: [`${emu.url}/oauth/redirect/microsoft`],
        token_endpoint_auth_method: "client_secret_post",
      },
      {
        client_id: "other-app",
        client_secret: "other-s3cret",
        redirect_uris: [callback],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    TTL,
  );
  Object.assign(process.env, {
    ...googleSettings(oidc.url),
    SVC_OAUTH_MICROSOFT_AUTHORIZE_URL: `${oidc.url}/auth`,
    SVC_OAUTH_MICROSOFT_TOKEN_URL: `${oidc.url}/token`,
  });
  gmail = await standInGmail((t) => oidc.valid(t));
  triggers = await emu.deploy(gmailProject());
  await setVar("gmail_conn__base_url", gmail.url);
  const { connections } = await emu.api<{ connections: { id: string }[] }>(
    "/connections?project=mailbox",
  );
  cid = connections[0]!.id;
}, 600_000);

afterAll(async () => {
  process.env = saved;
  await gmail?.close();
  await oidc?.close();
});

describe("the refusals: each shows a page, says what happened, and changes nothing", () => {
  /** A flow started in `jar`, stopped where the browser would go to the provider. */
  async function started(jar = browserJar()) {
    const res = await jar.follow(startLink(), { until: (u) => u.startsWith(oidc.url) });
    const auth = new URL(res.url);
    return { jar, auth, state: auth.searchParams.get("state")! };
  }
  /** Asks the callback and checks the page refused with `status`, naming `words`. */
  const refused = (url: string, status: number, words: RegExp, jar = browserJar()) =>
    expectRefused(url, status, words, vars, jar);

  it("missing state", async () => {
    await refused(`${emu.url}/oauth/redirect/google?code=abc`, 400, /Missing state/);
  });

  it("a state from another browser (and its own browser can still finish)", async () => {
    const { jar, auth } = await started();
    const atProvider = await jar.follow(auth.toString(), { until: (u) => u.startsWith(emu.url) });
    await refused(atProvider.url, 403, /started in another browser/);
    const own = await jar.follow(atProvider.url);
    expect(own.status).toBe(200);
  });

  it("a replayed state", async () => {
    const { jar, auth } = await started();
    const atProvider = await jar.follow(auth.toString(), { until: (u) => u.startsWith(emu.url) });
    expect((await jar.follow(atProvider.url)).status).toBe(200);
    await refused(atProvider.url, 400, /unknown, used or expired/, jar);
  });

  it("a code made for another client", async () => {
    const { jar, auth, state } = await started();
    // The same user, the same callback, but the other app's code (an attacker's injection).
    const other = new URL(auth);
    other.searchParams.set("client_id", "other-app");
    other.searchParams.delete("code_challenge");
    other.searchParams.delete("code_challenge_method");
    const theirs = await jar.follow(other.toString(), { until: (u) => u.startsWith(emu.url) });
    const code = new URL(theirs.url).searchParams.get("code")!;
    const forged = `${emu.url}/oauth/redirect/google?state=${state}&code=${code}`;
    await refused(forged, 400, /Google refused the code \(invalid_grant\)/, jar);
  });

  it("a provider error", async () => {
    const { jar, state } = await started();
    const url = `${emu.url}/oauth/redirect/google?state=${state}&error=server_error`;
    await refused(url, 400, /Google answered server_error/, jar);
  });

  it("consent denied", async () => {
    const { jar, auth } = await started();
    oidc.deny = true;
    try {
      const atProvider = await jar.follow(auth.toString(), { until: (u) => u.startsWith(emu.url) });
      expect(new URL(atProvider.url).searchParams.get("error")).toBe("access_denied");
      await refused(atProvider.url, 403, /access was not granted/, jar);
    } finally {
      oidc.deny = false;
    }
  });
});

describe("authorize, then sessions use the token the service keeps fresh", () => {
  it("authorizes with Google: tokens sealed, the account's email kept, the page says so", async () => {
    const jar = browserJar();
    const page = await jar.follow(startLink());
    expect(page.status).toBe(200);
    expect(page.text).toContain("mailbox/gmail_conn is authorized with Google");
    const issued = oidc.grants.filter((g) => g.grant_type === "authorization_code").at(-1)!;
    // No token in any URL the browser saw, nor in the page.
    for (const hop of page.hops)
      expect(hop.url + (hop.location ?? "")).not.toContain(issued.access_token);
    expect(page.text).not.toContain(issued.access_token);
    // The state cookie is HttpOnly, bound to /oauth.
    const set = page.hops.flatMap((h) => h.setCookie).find((c) => c.startsWith("hookline_oauth="));
    expect(set).toMatch(/HttpOnly/i);
    const byName = Object.fromEntries((await vars()).map((v) => [v.name.slice(12), v]));
    expect(byName.oauth_AccessToken).toMatchObject({ secret: true, value: "********" });
    expect(byName.oauth_RefreshToken).toMatchObject({ secret: true, value: "********" });
    expect(byName.oauth_Expiry?.value).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    expect(byName.auth_type?.value).toBe("oauth");
    expect(byName.user_email?.value).toBe("user-1@example.com");
  });

  it("keeps the tokens across a redeploy, as vars set with the CLI are kept", async () => {
    const before = await vars();
    await emu.deploy(gmailProject());
    expect(await vars()).toEqual(before);
  });

  it("refreshes a token about to expire before the session starts: its env holds the new one", async () => {
    const before = oidc.grants.length;
    const { end, prints } = await session("env_token", "POST");
    expect(end.state).toBe("completed");
    const refreshes = oidc.grants.slice(before);
    expect(refreshes.map((g) => g.grant_type)).toEqual(["refresh_token"]);
    expect(prints).toEqual([
      `env token: ${digest(refreshes[0]!.access_token)}`,
      "client secret here: False False",
    ]);
  });

  it("reads the mailbox through autokitteh.google.gmail_client with a token the service refreshed", async () => {
    const before = oidc.grants.length;
    const { end, prints } = await session("read", "GET");
    expect(end.state, JSON.stringify(end)).toBe("completed");
    expect(prints).toEqual(["messages: m1"]);
    const sent = gmail.tokens.at(-1)!;
    const refreshed = oidc.grants.slice(before).filter((g) => g.grant_type === "refresh_token");
    expect(refreshed.length).toBeGreaterThan(0);
    expect(refreshed.map((g) => g.access_token)).toContain(sent);
    expect(await oidc.valid(sent)).toBe(true);
  });

  it("refreshes through the service when google-auth finds the token expired mid-session", async () => {
    const before = oidc.grants.length;
    const { end, prints } = await session("read_stale", "DELETE");
    expect(end.state, JSON.stringify(end.error)).toBe("completed");
    expect(prints).toEqual(["messages: m1"]);
    // One before the session, one asked by google-auth's refresh handler (refresh_oauth).
    const grants = oidc.grants.slice(before).map((g) => g.grant_type);
    expect(grants).toEqual(["refresh_token", "refresh_token"]);
    expect(gmail.tokens.at(-1)).toBe(oidc.grants.at(-1)!.access_token);
  });

  it("answers refresh_oauth with a new token; each rotated refresh token was saved", async () => {
    const before = oidc.grants.length;
    const { end, prints } = await session("refresh", "PUT");
    expect(end.state, JSON.stringify(end)).toBe("completed");
    const last = oidc.grants.at(-1)!;
    expect(oidc.grants.length).toBeGreaterThan(before);
    // The new token, printed, is masked in the log as the session's secrets are.
    expect(prints).toEqual([
      `refreshed: ${digest(last.access_token)} True`,
      "the token itself: ********",
    ]);
    // Every refresh so far used the refresh token the one before it rotated: a consumed one
    // would have been refused (and the grant revoked) by the server.
    const refreshes = oidc.grants.filter((g) => g.grant_type === "refresh_token");
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
    const { prints: again } = await session("read", "GET");
    expect(again).toEqual(["messages: m1"]);
  });

  it("masks a token refreshed mid-session in the session's error and log", async () => {
    const { end } = await session("refresh_raise", "PATCH");
    const token = oidc.grants.at(-1)!.access_token;
    expect(end.state).toBe("error");
    expect(end.error?.message).toBe("RuntimeError: the API refused the token ********");
    expect(end.error?.traceback).toContain("the API refused the token ********");
    const log = JSON.stringify(await emu.api(`/sessions/${end.id}/log`));
    expect(log).toContain("the API refused the token ********");
    expect(`${JSON.stringify(end)} ${log}`).not.toContain(token);
  });

  it("marks the connection needs authorization on invalid_grant, in the CLI and the UI", async () => {
    await setVar("gmail_conn__oauth_RefreshToken", "not-a-refresh-token", true);
    const { end } = await session("refresh", "PUT");
    expect(end.state).toBe("error");
    expect(end.error?.message).toMatch(
      /OAuthRefreshError: .*refused the refresh \(invalid_grant\)/,
    );
    const { io, out } = fakeIo({ env: { SVC_URL: emu.url } });
    expect(await run(["connection", "list"], io)).toBe(0);
    expect(out.find((l) => l.startsWith("gmail_conn"))).toMatch(/needs authorization/);
    const ui = await (await fetch(`${emu.url}/ui/projects/mailbox`)).text();
    expect(ui).toContain("needs authorization");
    expect(ui).toContain("Authorize with Google");
    // Authorizing again clears it.
    expect((await browserJar().follow(startLink())).status).toBe(200);
    const { io: io2, out: out2 } = fakeIo({ env: { SVC_URL: emu.url } });
    await run(["connection", "list"], io2);
    expect(out2.find((l) => l.startsWith("gmail_conn"))).not.toMatch(/needs authorization/);
  });

  it("cli connection authorize prints the start link (and opens nothing here)", async () => {
    const { io, out } = fakeIo({ env: { SVC_URL: emu.url } });
    expect(await run(["connection", "authorize", "mailbox/gmail_conn"], io)).toBe(0);
    expect(out).toEqual([startLink()]);
    const { io: bad, err } = fakeIo({ env: { SVC_URL: emu.url } });
    expect(await run(["connection", "authorize", "mailbox/nope"], bad)).toBe(1);
    expect(err.join("\n")).toMatch(/no connection "nope"/);
  });
});

describe("the modern scheme, with the connection's own OAuth app", () => {
  it("authorizes a microsoft connection with PKCE: oauth_access_token sealed, RFC 3339 expiry, oauthPrivate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookline-oauth-teams-"));
    writeFileSync(
      join(dir, "manifest.yaml"),
      "version: v2\nproject:\n  name: teams\nconnections:\n  - name: ms\n    integration: microsoft\n",
    );
    await emu.deploy(dir);
    const put = (name: string, value: string, secret: boolean) =>
      emu.api(`/envs/teams/vars/ms__${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    await put("private_client_id", "teams-own-app", false);
    await put("private_client_secret", "teams-own-s3cret", true);
    const { connections } = await emu.api<{ connections: { id: string }[] }>(
      "/connections?project=teams",
    );
    const jar = browserJar();
    const page = await jar.follow(`${emu.url}/oauth/start/microsoft?cid=${connections[0]!.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("teams/ms is authorized with Microsoft");
    const toProvider = page.hops.find((h) => h.location?.startsWith(oidc.url))!.location!;
    expect(new URL(toProvider).searchParams.get("code_challenge_method")).toBe("S256");
    expect(oidc.grants.at(-1)).toMatchObject({
      grant_type: "authorization_code",
      client_id: "teams-own-app",
    });
    const { vars: all } = await emu.api<{ vars: VarView[] }>("/envs/teams/vars");
    const v = Object.fromEntries(all.map((x) => [x.name.slice(4), x]));
    expect(v.oauth_access_token).toMatchObject({ secret: true, value: "********" });
    expect(v.oauth_refresh_token).toMatchObject({ secret: true, value: "********" });
    expect(v.oauth_expiry?.value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(v.auth_type?.value).toBe("oauthPrivate");
  });
});
