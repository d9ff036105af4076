// Authorizing a connection from the web UI in a real Chromium, outside dev mode: sign in, press
// "Authorize with Google", consent at a real OAuth server (oidc-provider), land on the page
// that says it is done. And the start link's ticket, which stands in for the API token.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployProject } from "../src/cli/deploy.ts";
import { run } from "../src/cli/main.ts";
import { browserJar } from "./support/browser-jar.ts";
import { fakeIo } from "./support/cli.ts";
import { gmailProject, googleClient, googleSettings } from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";
import { testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";

const CHROMIUM = "/usr/bin/chromium";
const required = Boolean(process.env.CI) || process.env.HOOKLINE_BROWSER_TESTS === "required";
const present = existsSync(CHROMIUM);
if (!present) {
  const why = `${CHROMIUM} is missing: install it with "apt-get install -y chromium"`;
  if (required) throw new Error(`the OAuth browser test must run here, but ${why}`);
  console.warn(`\n*** SKIPPING the OAuth browser test: ${why} ***\n`);
}
const TOKEN = "oauth-ui-test-token-0123456789";
const saved = { ...process.env };

describe("authorizing outside dev mode", () => {
  let emu: Awaited<ReturnType<typeof startQuietEmulator>>;
  let oidc: OidcServer;
  let url = "";
  let cid = "";
  let ctx: BrowserContext | undefined; // Chromium, when this machine has it
  let profile = "";
  const api = async <T>(path: string) =>
    (await (
      await fetch(`${url}/api/v1${path}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json()) as T;

  beforeAll(async () => {
    emu = await startQuietEmulator(await testPython(), { mode: "prod", apiToken: TOKEN });
    url = emu.emulator.url;
    oidc = await oidcServer([googleClient(url)]);
    Object.assign(process.env, googleSettings(oidc.url));
    const { io } = fakeIo({ env: { SVC_URL: url, SVC_API_TOKEN: TOKEN } });
    await deployProject(io, { manifest: join(gmailProject(), "manifest.yaml") });
    // Never authorized, and the same connection set up with a pasted service account's JSON.
    await deployProject(io, { manifest: join(gmailProject("fresh"), "manifest.yaml") });
    await deployProject(io, { manifest: join(gmailProject("pasted"), "manifest.yaml") });
    await fetch(`${url}/api/v1/envs/pasted/vars/gmail_conn__JSON`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ value: '{"type": "service_account"}', secret: true }),
    });
    const { connections } = await api<{ connections: { id: string }[] }>(
      "/connections?project=mailbox",
    );
    cid = connections[0]!.id;
    if (!present) return;
    profile = mkdtempSync(join(tmpdir(), "hookline-chromium-"));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
  }, 180_000);
  afterAll(async () => {
    await ctx?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    process.env = saved;
    await oidc?.close();
    await emu?.emulator.close();
    if (emu) rmSync(emu.dataHome, { recursive: true, force: true });
  });

  it("refuses a start without the token or a ticket, and with a forged ticket", async () => {
    const bare = await browserJar().follow(`${url}/oauth/start/gmail?cid=${cid}`);
    expect(bare.status).toBe(401);
    const forged = `${url}/oauth/start/gmail?cid=${cid}&ticket=9999999999999.AAAA`;
    expect((await browserJar().follow(forged)).status).toBe(401);
    // A good ticket starts an authorization, but makes no new link (it cannot outlive itself).
    const { io, out } = fakeIo({ env: { SVC_URL: url, SVC_API_TOKEN: TOKEN } });
    await run(["connection", "authorize", "mailbox/gmail_conn", "--no-open"], io);
    expect((await browserJar().follow(`${out[0]}&link=1`)).status).toBe(401);
    // The CLI's own ticket with its signature's tail forged (the first 8 characters kept).
    const [, head, sig] = /^(.*&ticket=\d+\.)([\w-]+)$/.exec(out[0]!)!;
    const tail = sig!.slice(8).replace(/./g, (c) => (c === "A" ? "B" : "A"));
    expect((await browserJar().follow(`${head}${sig!.slice(0, 8)}${tail}`)).status).toBe(401);
    expect(oidc.grants).toEqual([]);
  });

  it("cli connection authorize prints a link with a ticket that a browser can follow", async () => {
    const { io, out } = fakeIo({ env: { SVC_URL: url, SVC_API_TOKEN: TOKEN } });
    expect(await run(["connection", "authorize", "mailbox/gmail_conn"], io)).toBe(0);
    expect(out[0]).toMatch(/\/oauth\/start\/gmail\?cid=con_\w+&ticket=\d+\.[\w-]+$/);
    expect(out[0]).not.toContain(TOKEN);
    const page = await browserJar().follow(out[0]!);
    expect(page.status).toBe(200);
    expect(page.text).toContain("mailbox/gmail_conn is authorized with Google");
  });

  it("says a never-authorized connection needs authorization, and how; a pasted one is as it was", async () => {
    const { io, out } = fakeIo({ env: { SVC_URL: url, SVC_API_TOKEN: TOKEN } });
    expect(await run(["connection", "list"], io)).toBe(0);
    const row = (project: string) =>
      out.find((l) => /^gmail_conn\s+(\S+)/.exec(l)?.[1] === project);
    // Gmail's events come through Pub/Sub: the row shows the shared route, and its watch.
    expect(row("fresh")).toMatch(
      /gmail\s+needs authorization \(cli connection authorize fresh\/gmail_conn\), GmailWatchExpiration\s+http:\/\/\S+\/google\/pubsub\/gmail$/,
    );
    expect(row("pasted")).toMatch(
      /gmail\s+needs oauth_AccessToken, GmailWatchExpiration\s+http:\/\/\S+\/google\/pubsub\/gmail$/,
    );
    if (!present) return;
    const page = await ctx!.newPage();
    await page.goto(`${url}/ui/sign-in?next=/ui/projects/fresh`);
    await page.getByLabel("API token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/ui/projects/fresh");
    const cell = page
      .getByRole("row", { name: /gmail_conn/ })
      .getByRole("cell")
      .nth(2);
    expect(await cell.textContent()).toBe(
      "needs authorization, GmailWatchExpiration Authorize with Google",
    );
    await expect(cell.getByRole("link").getAttribute("href")).resolves.toMatch(
      /^\/ui\/authorize\/gmail\/con_/,
    );
    await page.goto(`${url}/ui/projects/pasted`);
    const pasted = page
      .getByRole("row", { name: /gmail_conn/ })
      .getByRole("cell")
      .nth(2);
    expect(await pasted.textContent()).toBe(
      "needs oauth_AccessToken, GmailWatchExpiration Authorize with Google",
    );
    // Signed out again, so the next test signs in as a new visitor does.
    await ctx!.clearCookies();
    await page.close();
  });

  it.skipIf(!present)(
    "in Chromium: signs in, presses Authorize with Google, consents, and lands on the done page",
    async () => {
      const page = await ctx!.newPage();
      await page.goto(`${url}/ui/projects/mailbox`);
      await page.waitForURL("**/ui/sign-in?next=*");
      await page.getByLabel("API token").fill(TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL("**/ui/projects/mailbox");
      const before = oidc.grants.length;
      await page.getByRole("link", { name: "Authorize with Google" }).click();
      await page.waitForURL("**/oauth/redirect/google?**");
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(
        "Connected",
      );
      expect(await page.content()).toContain("mailbox/gmail_conn is authorized with Google");
      expect(oidc.grants.slice(before).map((g) => g.grant_type)).toEqual(["authorization_code"]);
      // The state cookie is not readable by the page's scripts.
      expect(
        await page.evaluate(
          () => (globalThis as unknown as { document: { cookie: string } }).document.cookie,
        ),
      ).not.toContain("hookline_oauth");
      const { vars } = await api<{ vars: { name: string; value: string }[] }>("/envs/mailbox/vars");
      const access = vars.find((v) => v.name === "gmail_conn__oauth_AccessToken");
      expect(access?.value).toBe("********");
    },
  );
});
