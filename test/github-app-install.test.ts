import { generateKeyPairSync } from "node:crypto";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run as runCli } from "../src/cli/main.ts";
import { browserJar, expectRefused } from "./support/browser-jar.ts";
import { fakeIo } from "./support/cli.ts";
import { useEmulator } from "./support/emulator.ts";
import { type GithubAppApi, githubAppApi, SLUG } from "./support/github-app-api.ts";
import { pygithubFolder } from "./support/pygithub.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { githubDelivery } from "./support/signing.ts";

/**
 * A GitHub App installed from the browser (issue 30): a github connection knows its App (id,
 * name, private key); "Install the GitHub App" sends a browser (a cookie jar) to the App's
 * install page (a stand-in github.com, SVC_OAUTH_GITHUB_WEB_URL) with a state; GitHub sends it
 * back to /oauth/redirect/github with the installation, which GitHub confirms to the App (a JWT
 * the stand-in checks) before it is saved; then a session's PyGithub works as the installation.
 * Every refusal shows a page and changes nothing.
 */
const APP_ID = 4242;
const INSTALLATION = 77;
const HOOK_SECRET = "gh-app-hook-s3cret";
const app = generateKeyPairSync("rsa", { modulusLength: 2048 });
const APP_KEY = app.privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const saved = { ...process.env };

beforeAll(async () => {
  const folder = await pygithubFolder(await testPython());
  process.env.PYTHONPATH = [folder, saved.PYTHONPATH].filter(Boolean).join(delimiter);
}, 600_000);
const emu = useEmulator();
let gh: GithubAppApi;
let cid = "";

beforeAll(async () => {
  gh = await githubAppApi(app.publicKey, APP_ID, INSTALLATION);
  gh.setupUrl = `${emu.url}/oauth/redirect/github`;
  process.env.SVC_OAUTH_GITHUB_WEB_URL = gh.url;
});
afterAll(async () => {
  process.env = saved;
  await gh?.close();
});

const cli = async (stdin: string | undefined, ...argv: string[]) => {
  const { io, out, err } = fakeIo({ env: { SVC_URL: emu.url }, stdin });
  const code = await runCli(argv, io);
  return { code, out, err: err.filter((l) => !l.startsWith("deploying… ")) };
};
const setVar = (name: string, value: string) =>
  cli(undefined, "var", "set", "--connection", "ghapp/gh", name, value);
const setSecret = (name: string, value: string) =>
  cli(value, "var", "set", "--connection", "ghapp/gh", "--secret", name);
const vars = async () => {
  const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>("/envs/ghapp/vars");
  return Object.fromEntries(vars.map((v) => [v.name.replace(/^gh__/, ""), v.value]));
};
const startLink = () => `${emu.url}/oauth/start/github?cid=${cid}`;
const uiPage = async () => (await fetch(`${emu.url}/ui/projects/ghapp`)).text();

/** A flow started in `jar`, stopped at GitHub's install page, and the callback it sends back. */
async function atInstallPage(jar = browserJar()) {
  const res = await jar.follow(startLink(), { until: (u) => u.startsWith(gh.url) });
  const page = new URL(res.url);
  const back = await jar.follow(res.url, { until: (u) => u.startsWith(emu.url) });
  return { jar, page, state: page.searchParams.get("state")!, callback: back.url };
}

/** Asks `url` in `jar` and checks the page refused with `status`, naming `words`, changing nothing. */
async function refused(url: string, status: number, words: RegExp, jar = browserJar()) {
  await expectRefused(url, status, words, vars, jar);
}

describe("a GitHub App installed from the browser", () => {
  it("offers nothing until the connection's App is known", async () => {
    const manifest = join(repoRoot, "test", "fixtures", "github-app", "autokitteh.yaml");
    expect((await cli(undefined, "deploy", "--manifest", manifest)).err).toEqual([]);
    const { connections } = await emu.api<{ connections: { id: string }[] }>(
      "/connections?project=ghapp",
    );
    cid = connections[0]!.id;
    expect(await uiPage()).not.toContain("Install the GitHub App");
    await refused(startLink(), 409, /GitHub App not configured.*app_name/s);
    for (const [name, value] of [
      ["app_id", String(APP_ID)],
      ["base_url", gh.url],
    ]) {
      expect((await setVar(name!, value!)).code).toBe(0);
    }
    expect((await setSecret("private_key", APP_KEY)).code).toBe(0);
    expect((await setSecret("webhook_secret", HOOK_SECRET)).code).toBe(0);
    // Known but for its name: the refusal names the var and the service's setting.
    await refused(
      startLink(),
      409,
      /GitHub App not configured.*has no name: set the connection&#39;s app_name var .* or the service&#39;s GITHUB_APP_NAME/s,
    );
    expect(await uiPage()).not.toContain("Install the GitHub App");
    // Without app_name, the service's GITHUB_APP_NAME names the install page.
    process.env.GITHUB_APP_NAME = SLUG;
    expect(await uiPage()).toContain("Install the GitHub App");
    const { page } = await atInstallPage();
    expect(`${page.origin}${page.pathname}`).toBe(`${gh.url}/apps/${SLUG}/installations/new`);
    delete process.env.GITHUB_APP_NAME;
    expect((await setVar("app_name", SLUG)).code).toBe(0);
    const ui = await uiPage();
    expect(ui).toContain("Install the GitHub App");
    expect(ui).toContain(`href="/ui/authorize/github/${cid}"`);
  });

  it("sends the browser to the App's install page with a state, bound to the browser", async () => {
    const { page, state, callback } = await atInstallPage();
    expect(`${page.origin}${page.pathname}`).toBe(`${gh.url}/apps/${SLUG}/installations/new`);
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const back = new URL(callback);
    expect(`${back.origin}${back.pathname}`).toBe(gh.setupUrl);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      installation_id: String(INSTALLATION),
      setup_action: "install",
      state,
    });
  });

  it("refuses a missing state, another browser's, an installation GitHub does not confirm, an unapproved one", async () => {
    const q = `installation_id=${INSTALLATION}&setup_action=install`;
    await refused(`${emu.url}/oauth/redirect/github?${q}`, 400, /Missing state/);
    const theirs = await atInstallPage();
    await refused(theirs.callback, 403, /started in another browser/);
    const forged = await atInstallPage();
    const other = `${emu.url}/oauth/redirect/github?installation_id=999&setup_action=install&state=${forged.state}`;
    await refused(
      other,
      400,
      /Installation not confirmed.*does not know installation 999/s,
      forged.jar,
    );
    expect(gh.calls.at(-1)).toMatchObject({ path: "/app/installations/999", status: 404 });
    const asked = await atInstallPage();
    const request = asked.callback.replace("setup_action=install", "setup_action=request");
    await refused(request, 403, /Approval needed/, asked.jar);
  });

  it("saves the installation GitHub confirms, and answers the Connected page", async () => {
    const { jar, callback } = await atInstallPage();
    const before = gh.calls.length;
    const page = await jar.follow(callback);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Connected");
    expect(page.text).toContain("ghapp/gh is authorized with GitHub");
    // GitHub was asked, as the App (a JWT its public key verifies), before anything was saved.
    expect(gh.calls.slice(before)).toMatchObject([
      { method: "GET", path: `/app/installations/${INSTALLATION}`, status: 200 },
    ]);
    expect(await vars()).toMatchObject({
      app_id: String(APP_ID),
      app_name: SLUG,
      install_id: String(INSTALLATION),
      auth_type: "oauthPrivate",
      target_name: "octo",
      private_key: "********",
    });
    const listed = await cli(undefined, "connection", "list", "--project", "ghapp");
    expect(listed.out.find((l) => l.startsWith("gh "))).toMatch(/github\s+ready/);
    // The same callback again: its state was used.
    await refused(callback, 400, /unknown, used or expired/, jar);
  });

  it("a session's PyGithub works as the installation the browser connected", async () => {
    const inbound = await emu.api<{ connections: { inbound_path: string }[] }>(
      "/connections?project=ghapp",
    );
    const payload = {
      action: "opened",
      issue: { number: 5 },
      repository: { full_name: "octo/widgets" },
      installation: { id: INSTALLATION },
    };
    const url = emu.url + inbound.connections[0]!.inbound_path;
    const res = await fetch(url, githubDelivery(HOOK_SECRET, "issues", payload));
    expect(res.status).toBe(202);
    const { session_ids } = (await res.json()) as { session_ids: string[] };
    const end = await emu.ended(session_ids[0]!);
    expect(end.state, JSON.stringify(end)).toBe("completed");
    expect(await emu.prints(session_ids[0]!)).toEqual([
      "repo octo/widgets issue #5",
      "private keys in the environment: []",
    ]);
    expect(gh.calls.slice(-2).map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
      `POST /app/installations/${INSTALLATION}/access_tokens 201`,
      "GET /repos/octo/widgets 200",
    ]);
  });

  it("cli connection authorize prints the start link of a github connection", async () => {
    const { code, out } = await cli(undefined, "connection", "authorize", "ghapp/gh");
    expect(code).toBe(0);
    expect(out).toEqual([startLink()]);
  });
});
