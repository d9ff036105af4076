import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserJar } from "./support/browser-jar.ts";
import { folderFiles, useEmulator } from "./support/emulator.ts";
import { type StandInPubsub, standInPubsub } from "./support/google-pubsub.ts";
import { googleClient, googleSettings } from "./support/oauth-project.ts";
import { type OidcServer, oidcServer } from "./support/oidc.ts";

/**
 * "Authorize with Google" for a Gmail connection, end to end: oidc-provider plays Google's
 * OAuth server, a stand-in Gmail API takes only the tokens it issued, a cookie jar is the
 * browser. The mailbox's watch (`users.watch` on the topic of `GMAIL_PUBSUB_TOPIC`) is made
 * with the issued token before the browser's "Connected" page is answered.
 */
const FIXTURE = `${import.meta.dirname}/fixtures/connections-pubsub`;
const saved = { ...process.env };
process.env.GMAIL_PUBSUB_TOPIC = "projects/p/topics/gmail"; // read when the service starts
const emu = useEmulator();
let oidc: OidcServer;
let google: StandInPubsub;

beforeAll(async () => {
  oidc = await oidcServer([googleClient(emu.url)]);
  google = await standInPubsub("none", "unused");
  google.accepts = (t) => oidc.grants.some((g) => g.access_token === t);
  Object.assign(process.env, googleSettings(oidc.url));
});

afterAll(async () => {
  process.env = saved;
  await google?.close();
  await oidc?.close();
});

const vars = async () => {
  const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>(
    "/envs/gmail_auth/vars",
  );
  return Object.fromEntries(vars.map((x) => [x.name.replace(/^mail__/, ""), x.value]));
};

describe("Authorize with Google (Gmail)", () => {
  it("makes the mailbox's watch before the Connected page is answered", async () => {
    const files = folderFiles(FIXTURE);
    delete files["autokitteh.yaml"];
    const manifest = [
      "version: v1",
      "project:",
      "  name: gmail_auth",
      "  connections:",
      "    - name: mail",
      "      integration: gmail",
      `      vars: [{name: base_url, value: "${google.url}"}]`,
      "  triggers:",
      "    - {name: on_mail, connection: mail, call: program.py:on_mail}",
    ].join("\n");
    await emu.api("/deploy", {
      method: "POST",
      body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
    });
    const { connections } = await emu.api<{ connections: { id: string }[] }>(
      "/connections?project=gmail_auth",
    );
    expect(google.calls).toEqual([]);
    const page = await browserJar().follow(
      `${emu.url}/oauth/start/gmail?cid=${connections[0]!.id}`,
    );
    // Taken at once, before anything else can run: what the page's answer waited for.
    const watches = google.gmail.watches;
    const atPage = await vars();
    expect(page.status).toBe(200);
    expect(page.text).toContain("gmail_auth/mail is authorized with Google");
    expect(watches).toBe(1);
    expect(google.gmail.topic).toBe("projects/p/topics/gmail");
    expect(atPage).toMatchObject({ GmailHistoryID: "100", oauth_AccessToken: "********" });
    expect(atPage.GmailWatchExpiration).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(atPage.user_email).toBeTruthy();
    expect(google.calls.every((c) => c.authorized)).toBe(true);
    const listed = await emu.api<{ connections: { status: { state: string } }[] }>(
      "/connections?project=gmail_auth",
    );
    expect(listed.connections[0]!.status.state).toBe("ready");
  });
});
